"""All-in-one image restoration with prompt blocks (va1shn9v/PromptIR#6): the prompt
generation block mixes learnable prompt components with input-dependent weights,
but forward reads `self.prompt_param.data`. The weights and the conv after it train;
the prompt components themselves are never updated (their .grad stays None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompt1.prompt_param"
EXPECT = "grad_none"


class PromptGenBlock(nn.Module):
    def __init__(self, prompt_dim=8, prompt_len=3, prompt_size=4, lin_dim=8):
        super().__init__()
        self.prompt_param = nn.Parameter(torch.rand(1, prompt_len, prompt_dim, prompt_size, prompt_size))
        self.linear_layer = nn.Linear(lin_dim, prompt_len)
        self.conv3x3 = nn.Conv2d(prompt_dim, prompt_dim, kernel_size=3, stride=1, padding=1, bias=False)

    def forward(self, x):
        B, C, H, W = x.shape
        emb = x.mean(dim=(-2, -1))
        prompt_weights = F.softmax(self.linear_layer(emb), dim=1)
        prompt = prompt_weights.unsqueeze(-1).unsqueeze(-1).unsqueeze(-1) * \
            self.prompt_param.data.unsqueeze(0).repeat(B, 1, 1, 1, 1, 1).squeeze(1)  # <-- CUT
        prompt = torch.sum(prompt, dim=1)
        prompt = F.interpolate(prompt, (H, W), mode="bilinear")
        return self.conv3x3(prompt)


class PromptIRLite(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 3, padding=1)
        self.encoder = nn.Sequential(nn.Conv2d(dim, dim, 3, padding=1), nn.GELU())
        self.prompt1 = PromptGenBlock(prompt_dim=dim, lin_dim=dim)
        self.noise_level1 = nn.Conv2d(2 * dim, dim, 1)
        self.output = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, inp_img):
        feat = self.encoder(self.patch_embed(inp_img))
        dec_param = self.prompt1(feat)
        feat = self.noise_level1(torch.cat([feat, dec_param], 1))
        return self.output(feat) + inp_img


def run():
    torch.manual_seed(0)
    model = PromptIRLite()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    clean = torch.rand(2, 3, 16, 16)
    degrad = clean + 0.1 * torch.randn(2, 3, 16, 16)
    optimizer.zero_grad()
    restored = model(degrad)
    loss = F.l1_loss(restored, clean)
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
