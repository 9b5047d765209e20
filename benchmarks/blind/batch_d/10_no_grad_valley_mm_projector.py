"""Valley-style video LLM: the frozen CLIP vision tower is run inside
`with torch.no_grad():` to save memory, but the trainable mm_projector call
sits in the same block. The projector is supposed to be tuned in stage 1, yet
it never gets a gradient (RupertLuo/Valley#13).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.mm_projector.weight"
EXPECT = "grad_none"


class ValleyLlamaModel(nn.Module):
    def __init__(self, vocab=40, d_vis=12, d=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.vision_tower = nn.Sequential(nn.Conv2d(3, d_vis, 4, stride=4), nn.Flatten(2))
        self.mm_projector = nn.Linear(d_vis, d)
        self.layers = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.norm = nn.LayerNorm(d)

    def encode_video(self, frames):
        with torch.no_grad():
            feats = self.vision_tower(frames).transpose(1, 2)   # T, P, d_vis
            video_tokens = self.mm_projector(feats.mean(0, keepdim=True))  # <-- CUT
        return video_tokens

    def forward(self, input_ids, frames, video_pos):
        inputs_embeds = self.embed_tokens(input_ids)
        video_tokens = self.encode_video(frames)
        n = video_tokens.shape[1]
        inputs_embeds = torch.cat([inputs_embeds[:, :video_pos], video_tokens.expand(inputs_embeds.size(0), -1, -1),
                                   inputs_embeds[:, video_pos + n:]], dim=1)
        return self.norm(self.layers(inputs_embeds))


class ValleyForCausalLM(nn.Module):
    def __init__(self, vocab=40):
        super().__init__()
        self.model = ValleyLlamaModel(vocab)
        self.lm_head = nn.Linear(16, vocab, bias=False)


def run():
    torch.manual_seed(0)
    llm = ValleyForCausalLM()
    model = llm.model
    # stage 1: tune_mm_mlp_adapter -> only the projector and the LM head train
    llm.requires_grad_(False)
    model.mm_projector.requires_grad_(True)
    llm.lm_head.requires_grad_(True)
    opt = torch.optim.AdamW([p for p in llm.parameters() if p.requires_grad], lr=2e-3)
    input_ids = torch.randint(0, 40, (1, 12))
    frames = torch.randn(4, 3, 8, 8)
    hidden = model(input_ids, frames, video_pos=2)
    logits = llm.lm_head(hidden)
    loss = F.cross_entropy(logits[0, :-1], input_ids[0, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "llm": llm, "loss": loss}
