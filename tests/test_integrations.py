"""The watch inside real training frameworks: a PyTorch Lightning Trainer.fit and a Hugging Face
Trainer.train on tiny models, with a bug injected mid-run (no mocks: the frameworks run)."""
from __future__ import annotations

import inspect
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope


def line_of(marker: str) -> int:
    src = inspect.getsource(__import__(__name__))
    return next(no for no, ln in enumerate(src.splitlines(), 1) if ln.rstrip().endswith(marker))


def site_lines(expl: dict) -> set:
    site = expl.get("site") or {}
    return {site.get("lineno"), *(f[1] for f in site.get("stack") or ())}


# ----------------------------------------------------------------------------- Lightning
pl = pytest.importorskip("lightning.pytorch")


class LitNet(pl.LightningModule):
    def __init__(self, odd_no_grad=False):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 2)
        self.odd_no_grad = odd_no_grad

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.odd_no_grad and self.global_step % 2 == 1:
            with torch.no_grad():
                h = torch.relu(self.enc(x))  # L:odd
        else:
            h = torch.relu(self.enc(x))
        return F.cross_entropy(self.head(h), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class FreezeAt(pl.Callback):
    def __init__(self, step):
        self.step = step

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.global_step == self.step:
            pl_module.enc.requires_grad_(False)  # L:freeze


def fit(model, callbacks, steps=6):
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(64, 6), torch.randint(0, 2, (64,)))
    trainer = pl.Trainer(max_steps=steps, accelerator="cpu", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, callbacks=callbacks)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        trainer.fit(model, DataLoader(ds, batch_size=8))
    return [str(w.message) for w in seen if "gradscope" in str(w.message)]


def test_lightning_freeze_at_step_3_is_caught():
    from gradscope.integrations.lightning import GradscopeCallback

    cb = GradscopeCallback()
    said = fit(LitNet(), [FreezeAt(3), cb])
    assert [(a.kind, a.step, a.params) for a in cb.alerts] == [("stopped", 3, ["enc.weight", "enc.bias"])]
    a = cb.alerts[0]
    assert "enc.weight.requires_grad True -> False" in a.changes
    assert a.explanation["cause"] == "frozen_param"
    assert any("step 3" in s and "enc.weight" in s for s in said)  # a warning, as it happened
    # the callback's line that froze the layer, in the explanation and in the warning
    assert a.explanation["site"]["lineno"] == line_of("# L:freeze")
    assert any(f"frozen at test_integrations.py:{line_of('# L:freeze')} in FreezeAt.on_train_batch_start" in s
               for s in said), said


def test_lightning_no_grad_on_odd_steps_is_named_at_its_line():
    from gradscope.integrations.lightning import GradscopeCallback

    cb = GradscopeCallback()
    model = LitNet(odd_no_grad=True)
    fit(model, [cb])
    stopped = [a for a in cb.alerts if a.kind == "stopped"]
    assert stopped and stopped[0].step == 1 and stopped[0].params == ["enc.weight", "enc.bias"]
    a = stopped[0]
    assert a.explanation["cause"] == "no_grad_block", a.explanation
    assert line_of("# L:odd") in site_lines(a.explanation)
    assert all(not p._post_accumulate_grad_hooks for p in model.parameters())


class LitGAN(pl.LightningModule):
    """Manual optimization with toggle_optimizer (Lightning freezes the other model for each step); ``bug``: the
    generator step detaches the fake batch."""

    def __init__(self, bug):
        super().__init__()
        self.automatic_optimization = False
        self.G, self.D, self.bug = nn.Linear(2, 3), nn.Linear(3, 1), bug

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        z, real = batch
        self.toggle_optimizer(opt_g)
        fake = self.G(z).detach() if self.bug else self.G(z)  # L:gan_detach
        g_loss = F.softplus(-self.D(fake)).mean()
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        self.untoggle_optimizer(opt_g)
        self.toggle_optimizer(opt_d)
        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(self.G(z).detach())).mean()
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        self.untoggle_optimizer(opt_d)

    def configure_optimizers(self):
        return torch.optim.SGD(self.G.parameters(), lr=0.1), torch.optim.SGD(self.D.parameters(), lr=0.1)


def _fit_gan(model):
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(8, 2), torch.randn(8, 3))
    trainer = pl.Trainer(max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(model, DataLoader(ds, batch_size=4))


def test_lightning_toggle_optimizer_freeze_is_not_blamed_beside_the_user_s_detach():
    """toggle_optimizer freezes D while G steps (Lightning's own, temporary): the generator loss fails because the
    user detached the fake batch, and that detach is named, not Lightning's freeze."""
    model = LitGAN(bug=True)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            _fit_gan(model)
    f = tr.failure
    assert f.cause == "detach", f
    assert f.site.lineno == line_of("# L:gan_detach") and f.site.filename.endswith("test_integrations.py"), f


def test_lightning_toggle_optimizer_detach_is_verified_by_re_running_the_fit():
    """Verification re-runs the whole Lightning fit (a fresh Trainer each time) with the user's detach undone: the
    generator's backward then succeeds, so the detach is verified; Lightning's toggle (a framework freeze) is not
    named, and the model is as before afterwards."""
    import copy

    model = LitGAN(bug=True)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            _fit_gan(model)
    before = copy.deepcopy(model.state_dict())
    v = tr.verify(_fit_gan, model)
    assert v.repeatable, v
    f = tr.failure
    assert f.cause == "detach" and f.verified == "verified", f
    assert f.site.lineno == line_of("# L:gan_detach") and "backward succeeds" in f.verification, f
    for k, t in model.state_dict().items():
        assert torch.equal(t, before[k]), k


def test_lightning_gan_with_toggle_optimizer_is_quiet():
    """The same GAN without the bug: Lightning's toggles are no problem, and both models got gradients."""
    model = LitGAN(bug=False)
    with gradscope.trace() as tr:
        _fit_gan(model)
    assert tr.failure is None
    assert tr.problems() == [], tr.problems()
    assert tr.why(model.G.weight).cause == "ok" and tr.why(model.D.weight).cause == "ok"


def test_lightning_correct_run_is_quiet_and_logs_grad_norms():
    from gradscope.integrations.lightning import GradscopeCallback

    class Logged(LitNet):
        def __init__(self):
            super().__init__()
            self.logged = []

        def log_dict(self, d, **kw):
            self.logged.append(dict(d))
            return super().log_dict(d, **kw)

    cb = GradscopeCallback(log_grad_norms=True)
    model = Logged()
    said = fit(model, [cb])
    assert cb.alerts == [] and said == []
    assert model.logged and set(model.logged[-1]) == {"grad_norm/enc", "grad_norm/head", "grad_norm/total"}
    assert all(v > 0 for v in model.logged[-1].values())


# ----------------------------------------------------------------------------- Hugging Face
transformers = pytest.importorskip("transformers")


class HFNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x, labels=None):
        logits = self.head(torch.relu(self.enc(x)))
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def hf_train(model, callbacks, tmp_path, steps=6):
    from transformers import Trainer, TrainingArguments

    torch.manual_seed(0)
    data = [{"x": torch.randn(6), "labels": int(i % 2)} for i in range(64)]
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=steps, per_device_train_batch_size=8,
                             save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True, logging_steps=1000,
                             remove_unused_columns=False, seed=0)
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=callbacks)
    trainer.train()
    return trainer


def test_hf_trainer_freeze_at_step_3_is_caught(tmp_path):
    from transformers import TrainerCallback

    from gradscope.integrations.hf import GradscopeTrainerCallback

    class Freeze(TrainerCallback):
        def on_step_begin(self, args, state, control, model=None, **kw):
            if state.global_step == 3:
                model.enc.requires_grad_(False)  # H:freeze

    cb = GradscopeTrainerCallback()
    model = HFNet()
    hf_train(model, [Freeze(), cb], tmp_path)
    assert [(a.kind, a.step, a.params) for a in cb.alerts] == [("stopped", 3, ["enc.weight", "enc.bias"])]
    assert cb.alerts[0].explanation["cause"] == "frozen_param"
    assert cb.alerts[0].explanation["site"]["lineno"] == line_of("# H:freeze")
    assert f"frozen at test_integrations.py:{line_of('# H:freeze')}" in str(cb.alerts[0])
    assert all(not p._post_accumulate_grad_hooks for p in model.parameters())


def test_hf_trainer_correct_run_is_quiet(tmp_path):
    from gradscope.integrations.hf import GradscopeTrainerCallback

    cb = GradscopeTrainerCallback()
    hf_train(HFNet(), [cb], tmp_path)
    assert cb.alerts == []
    assert cb.watch.steps == 6
