"""Fine-tuning only the classification head of a model wrapped in nn.DataParallel (on a CPU box
DataParallel just calls the module). The freeze loop keeps trainable the parameters whose name
starts with "head", but under the wrapper every name starts with "module.", so everything is
frozen and loss.backward() raises "element 0 of tensors does not require grad".
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AudioTagger(nn.Module):
    def __init__(self, n_mels=20, n_tags=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv1d(n_mels, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
        self.head = nn.Linear(32, n_tags)

    def forward(self, mel):
        return self.head(self.backbone(mel).flatten(1))


def prepare_for_finetune(model, trainable_prefix="head"):
    for name, p in model.named_parameters():
        p.requires_grad = name.startswith(trainable_prefix)  # <-- CUT
    return [p for p in model.parameters() if p.requires_grad]


def run():
    torch.manual_seed(0)
    model = nn.DataParallel(AudioTagger())
    params = prepare_for_finetune(model)
    opt = torch.optim.Adam(params if params else model.parameters(), lr=1e-3)
    mel = torch.randn(4, 20, 50)
    tags = (torch.rand(4, 5) < 0.3).float()
    loss = F.binary_cross_entropy_with_logits(model(mel), tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
