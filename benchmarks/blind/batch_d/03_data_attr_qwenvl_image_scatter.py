"""Qwen-VL style fine-tuning with the LLM and lm_head frozen and only the
visual encoder trainable. To dodge an in-place error the image features are
written into the text hidden states through `.data`, which cuts the ViT out of
the graph, so loss.backward() raises (QwenLM/Qwen-VL#124).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class VisualEncoder(nn.Module):
    def __init__(self, d=16, n_query=3):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, stride=4)
        self.attn_pool = nn.Linear(d, n_query)

    def forward(self, images):
        p = self.patch(images).flatten(2).transpose(1, 2)      # B, P, d
        w = self.attn_pool(p).softmax(dim=1)                 # B, P, Q
        return w.transpose(1, 2) @ p                         # B, Q, d


class QWenModel(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.drop = nn.Dropout(0.0)
        self.h = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.ln_f = nn.LayerNorm(d)
        self.visual = VisualEncoder(d)

    def forward(self, input_ids, images, img_pos):
        hidden_states = self.drop(self.wte(input_ids))
        if images is not None:
            images = self.visual(images)
            for idx, (i, a, b) in enumerate(img_pos):
                hidden_states.data[i][a + 1: b] = images.data[idx]  # <-- CUT
        return self.ln_f(self.h(hidden_states))


class QWenLMHeadModel(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.transformer = QWenModel(vocab, d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, images, img_pos, labels):
        logits = self.lm_head(self.transformer(input_ids, images, img_pos))
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def run():
    torch.manual_seed(0)
    model = QWenLMHeadModel()
    # training_args.fix_llm: train only the visual part
    model.requires_grad_(False)
    model.transformer.visual.requires_grad_(True)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    input_ids = torch.randint(0, 50, (2, 10))
    images = torch.randn(2, 3, 8, 8)
    img_pos = [(0, 1, 5), (1, 2, 6)]  # (sample, <img> index, </img> index)
    loss = model(input_ids, images, img_pos, input_ids.clone())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
