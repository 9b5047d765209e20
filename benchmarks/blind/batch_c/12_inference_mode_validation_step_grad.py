"""Test-time adaptation inside a Lightning-style validation_step. The trainer runs the
validation loop under torch.inference_mode() (Lightning's default), and the step wraps
its adaptation in torch.enable_grad(), which does not leave inference mode: the logits
are inference tensors without a graph and the entropy loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TTAModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        norm_params = list(self.backbone[1].parameters())
        self.tta_optimizer = torch.optim.SGD(norm_params, lr=1e-3)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        with torch.enable_grad():
            logits = self(x)  # <-- CUT
            probs = logits.softmax(dim=1)
            entropy = -(probs * probs.clamp_min(1e-8).log()).sum(dim=1).mean()
            self.tta_optimizer.zero_grad()
            entropy.backward()
            self.tta_optimizer.step()
        return (logits.argmax(dim=1) == y).float().mean()


class MiniTrainer:
    def __init__(self, inference_mode=True):
        self.inference_mode = inference_mode

    def fit(self, module, optimizer, train_batches):
        module.train()
        for i, batch in enumerate(train_batches):
            loss = module.training_step(batch, i)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def validate(self, module, val_batches):
        module.eval()
        context = torch.inference_mode() if self.inference_mode else torch.no_grad()
        with context:
            return [module.validation_step(batch, i) for i, batch in enumerate(val_batches)]


def run():
    torch.manual_seed(0)
    module = TTAModule()
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
    train_batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(2)]
    val_batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,)))]
    trainer = MiniTrainer()
    trainer.fit(module, optimizer, train_batches)
    accs = trainer.validate(module, val_batches)
    return {"module": module, "accs": accs}
