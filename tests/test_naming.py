"""Names as a first-class part of the recorder: every parameter of a called nn.Module is named by its module
path, whatever the lifetime of the frames that held the model; names are unique within a trace and resolvable
with and without the root's variable; wrappers (DDP, torch.compile, parametrizations) do not show in them.

The models are real small nn.Modules; the CLI and the pytest fixture are run for real."""
from __future__ import annotations

import gc

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from gradscope.errors import UnknownTargetError

REPO = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


NET_NAMES = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


def param_names(tr):
    return {t.name for t in tr.data.tensors.values() if t.role == "param"}


def tid(tr, t):
    return tr._rec.tid_of(t)


def assert_named_by_path(tr, expected, prefix=""):
    names = param_names(tr)
    assert names == {prefix + n for n in expected}, names
    assert not any(n is None or n.startswith("t") and n[1:].isdigit() for n in names), names


# --------------------------------------------------------------------------- 1. lost names
def _main_returns_before_stop():
    model = Net()
    loss = model(torch.randn(3, 4)).sum()
    loss.backward()


def test_model_local_to_a_function_that_returned_is_named_by_module_path():
    with gradscope.trace() as tr:
        _main_returns_before_stop()  # `model` is gone before the trace stops
    assert_named_by_path(tr, NET_NAMES)
    w = next(t for t in tr.data.tensors.values() if t.name == "fc1.weight")
    assert tr.resolve("fc1.weight") == w.tid
    assert tr.resolve("model.fc1.weight") == w.tid  # the root's variable at the call site
    assert tr.why("fc1.weight").cause == "ok"
    text = _report(tr)
    assert "fc1.weight" in text and "fc2.bias" in text


def _build():
    return Net()


def _train(model):
    model(torch.randn(2, 4)).pow(2).mean().backward()


def test_model_from_a_helper_passed_to_another_helper_is_named_by_module_path():
    def main():
        _train(_build())

    with gradscope.trace() as tr:
        main()
    assert_named_by_path(tr, NET_NAMES)
    assert tr.why("model.fc2.weight").target in ("fc2.weight", "model.fc2.weight")


def _report(tr, width=120):
    from rich.console import Console
    import io

    buf = io.StringIO()
    tr.report(console=Console(file=buf, width=width, color_system=None, force_terminal=False))
    return buf.getvalue()


SCRIPT = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h.detach()  # BUG
        return self.fc2(h)


def main():
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
"""


def test_gradscope_run_of_a_script_with_main_names_parameters_and_answers_why(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, "-m", "gradscope", "run", "--json", "--why", "fc1.weight", "train.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    doc = json.loads(r.stdout)
    assert {p["name"] for p in doc["params"]} == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}, r.stderr
    why = doc["why"]["fc1.weight"]
    assert why["cause"] == "detach" and why["site"]["lineno"] == SCRIPT.splitlines().index(
        "        h = h.detach()  # BUG") + 1


def test_gradscope_trace_fixture_names_a_model_built_by_a_helper(pytester):
    from test_testing import _plugin_args

    pytester.makepyfile(test_model=textwrap.dedent("""\
        import torch
        from torch import nn

        def make():
            return nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))

        def step():
            net = make()
            net(torch.ones(2, 3)).sum().backward()

        def test_named(gradscope_trace):
            step()
            assert gradscope_trace.why("0.weight").cause == "ok"
            assert gradscope_trace.why("net.2.bias").cause == "ok"
            names = sorted(t.name for t in gradscope_trace.data.tensors.values() if t.role == "param")
            assert names == ["net.0.bias", "net.0.weight", "net.2.bias", "net.2.weight"], names
    """))
    result = pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_unknown_name_error_lists_names_from_the_trace():
    enc, head = nn.Linear(3, 3), nn.Linear(3, 1)
    with gradscope.trace() as tr:
        head(enc(torch.ones(2, 3))).sum().backward()
    with pytest.raises(UnknownTargetError) as ei:
        tr.why("qqqq")
    msg = str(ei.value)
    assert "'enc.weight'" in msg or "'head.weight'" in msg, msg
    assert "fc1" not in msg

    x = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr2:
        hidden = x * 2
        hidden.sum().backward()
    with pytest.raises(UnknownTargetError) as ei:
        tr2.why("qqqq")
    assert "fc1" not in str(ei.value) and ("'x'" in str(ei.value) or "'hidden'" in str(ei.value)), str(ei.value)


def test_an_unnamed_tensor_resolves_by_its_label():
    with gradscope.trace() as tr:
        a = torch.ones(3, requires_grad=True)
        (torch.ones(3, requires_grad=True) * a).sum().backward()
    unnamed = [t for t in tr.data.tensors.values() if not t.name]
    assert unnamed
    t = unnamed[0]
    assert tr.resolve(t.label()) == t.tid


# --------------------------------------------------------------------------- 2. wrong names
encoder = nn.Linear(4, 4)
decoder = nn.Linear(4, 4)
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))


def _autoencode(x):
    z = encoder(x).detach()  # starves the encoder
    return decoder(z)


def test_two_global_modules_of_one_class_get_their_variables_names():
    with gradscope.trace() as tr:
        _autoencode(torch.randn(2, 4)).pow(2).mean().backward()
    assert_named_by_path(tr, {"encoder.weight", "encoder.bias", "decoder.weight", "decoder.bias"})
    assert tr.resolve("encoder.weight") == tid(tr, encoder.weight)
    assert tr.resolve("decoder.weight") == tid(tr, decoder.weight)
    assert tr.why("encoder.weight").cause == "detach"
    assert tr.why("decoder.weight").cause == "ok"


def _use_global_model(x):
    return model(x).sum()


def test_a_global_sequential_is_named_the_same_in_every_trace():
    with gradscope.trace() as tr1:
        _use_global_model(torch.randn(2, 4)).backward()
    with gradscope.trace() as tr2:
        model(torch.randn(2, 4)).sum().backward()
    expected = {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    assert param_names(tr1) == expected
    assert param_names(tr2) == expected
    assert tr1.resolve("0.weight") == tid(tr1, model[0].weight)
    assert tr1.resolve("model.2.bias") == tid(tr1, model[2].bias)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))


class Config:
    pass


def _mul(x, s):
    return x * s


def test_tensors_passed_by_attribute_are_named_by_it():
    m = Scaled()
    cfg = Config()
    cfg.temperature = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        y = _mul(torch.randn(3), m.scale)
        y = _mul(y, cfg.temperature)
        y.sum().backward()
    assert tr.data.tensors[tid(tr, m.scale)].name in ("m.scale", "scale")
    assert tr.resolve("m.scale") == tid(tr, m.scale) and tr.resolve("scale") == tid(tr, m.scale)
    assert tr.data.tensors[tid(tr, cfg.temperature)].name == "cfg.temperature"


# --------------------------------------------------------------------------- 9. names from real programs
class TinyResNet(nn.Module):
    """The children layout of a torchvision ResNet (conv1, bn1, relu, maxpool, layer1, avgpool, fc)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = nn.Sequential(Block(), Block())
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 10)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(x)))


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.resnet = TinyResNet()
        self.resnet = nn.Sequential(*list(self.resnet.children())[:-1])  # drop the classifier
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.resnet(x).flatten(1))


def test_a_submodule_rebuilt_in_init_gets_its_current_names():
    def main():
        model = FeatureNet()  # built inside the trace, as under `gradscope run`
        model(torch.randn(2, 3, 8, 8)).sum().backward()

    with gradscope.trace() as tr:
        main()
    names = param_names(tr)
    assert "resnet.4.0.conv1.weight" in names and "resnet.0.weight" in names, names
    assert not any("layer1" in n or n.startswith("resnet.conv1") for n in names), names
    assert tr.problems() == []  # nothing was recreated: the kept layers are the same parameters


def test_layers_in_a_plain_python_list_get_distinct_names():
    layers = [nn.Linear(4, 4) for _ in range(3)]

    def forward(x):
        for layer in layers:
            x = torch.tanh(layer(x))
        return x

    with gradscope.trace() as tr:
        forward(torch.randn(2, 4)).sum().backward()
    assert_named_by_path(tr, {f"layers.{i}.{p}" for i in range(3) for p in ("weight", "bias")})
    assert tr.resolve("layers.2.weight") == tid(tr, layers[2].weight)


class DQN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(4, 8)
        self.layer2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.layer2(F.relu(self.layer1(x)))


policy_net = DQN()
target_net = DQN()
target_net.load_state_dict(policy_net.state_dict())


def _optimize_model(state, next_state):
    q = policy_net(state).max(1).values
    with torch.no_grad():
        target = target_net(next_state).max(1).values
    F.smooth_l1_loss(q, 0.9 * target + 1).backward()


def test_a_policy_and_a_target_network_of_one_class_get_distinct_names():
    with gradscope.trace() as tr:
        _optimize_model(torch.randn(5, 4), torch.randn(5, 4))
    names = param_names(tr)
    assert {"policy_net.layer1.weight", "target_net.layer1.weight"} <= names, names
    assert tr.resolve("policy_net.layer1.weight") == tid(tr, policy_net.layer1.weight)
    assert tr.resolve("target_net.layer1.weight") == tid(tr, target_net.layer1.weight)
    with pytest.raises(UnknownTargetError, match="ambiguous.*policy_net.layer1.weight"):
        tr.resolve("layer1.weight")  # either network's: the error names both, never picks one


class Conv1D(nn.Module):
    """HF transformers' Conv1D: parameters held directly, used through torch.addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = Conv1D(16, 8)
        self.c_proj = Conv1D(8, 16)

    def forward(self, x):
        return x + self.c_proj(F.gelu(self.c_fc(x)))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = nn.ModuleList([GPT2Block() for _ in range(2)])

    def forward(self, x):
        for block in self.h:
            x = block(x)
        return x


def test_hf_style_conv1d_parameters_are_named_by_module_path():
    def main():
        tensor = TinyGPT()  # a local named like the library's
        tensor(torch.randn(2, 3, 8)).sum().backward()

    with gradscope.trace() as tr:
        main()
    assert_named_by_path(tr, {f"h.{i}.{m}.{p}" for i in range(2) for m in ("c_fc", "c_proj")
                              for p in ("weight", "bias")})


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.classifier = nn.Linear(4, 2)

    def forward(self, x):
        return self.classifier(torch.relu(self.encoder(x)))


def test_a_root_without_a_visible_variable_gets_no_class_name_prefix():
    head = nn.Linear(2, 1)
    with gradscope.trace() as tr:
        head(Classifier()(torch.randn(2, 4))).sum().backward()  # the classifier has no variable
    assert param_names(tr) == {"encoder.weight", "encoder.bias", "classifier.weight", "classifier.bias",
                               "head.weight", "head.bias"}
    assert tr.data.tensors[tr.resolve("encoder.weight")].shape == (4, 4)

    models = {"clf": Classifier()}  # an element of a dict: named by it
    with gradscope.trace() as tr1:
        head(models["clf"](torch.randn(2, 4))).sum().backward()
    assert "models.clf.encoder.weight" in param_names(tr1)
    assert tr1.resolve("encoder.weight") == tid(tr1, models["clf"].encoder.weight)

    with gradscope.trace() as tr2:
        nn.Sequential(nn.Linear(3, 3))(torch.ones(1, 3)).sum().backward()
    assert param_names(tr2) == {"0.weight", "0.bias"}


# --------------------------------------------------------------------------- wrappers
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_wrapped_model_is_named_without_module_prefix():
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{_free_port()}")
    try:
        ddp = DDP(Net())
        with gradscope.trace() as tr:
            ddp(torch.randn(3, 4)).sum().backward()
        assert_named_by_path(tr, NET_NAMES)
        assert tr.resolve("fc1.weight") == tid(tr, ddp.module.fc1.weight)
        assert tr.resolve("ddp.fc1.weight") == tid(tr, ddp.module.fc1.weight)
    finally:
        ddp = None  # (the reducer before its process group: see tests/test_rules_failure.py's DDP test)
        gc.collect()
        dist.destroy_process_group()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_model_is_named_without_orig_mod(backend):
    torch._dynamo.reset()
    net = Net()
    cmodel = torch.compile(net, backend=backend)
    with gradscope.trace() as tr:
        cmodel(torch.randn(3, 4)).sum().backward()
    names = param_names(tr)
    assert names == NET_NAMES, names
    assert tr.resolve("cmodel.fc1.weight") == tid(tr, net.fc1.weight)
    torch._dynamo.reset()


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


def test_parametrized_weight_is_named_as_the_users_weight():
    from torch.nn.utils import parametrize

    net = Net()
    lin = nn.Linear(8, 8)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    net.fc1 = nn.Sequential(net.fc1, nn.ReLU(), lin)
    with gradscope.trace() as tr:
        net(torch.randn(3, 4)).sum().backward()
    names = param_names(tr)
    assert "fc1.2.weight" in names and not any("parametrizations" in n for n in names), names
    assert tr.resolve("fc1.2.weight") == tid(tr, lin.parametrizations.weight.original)


class TransformerModel(nn.Transformer):
    """pytorch/examples word_language_model: nn.Transformer whose built-in decoder is replaced in __init__."""

    def __init__(self, ntoken=11, ninp=8, nhead=2, nhid=16, nlayers=1):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                         num_decoder_layers=1, dropout=0.0)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src):
        output = self.encoder(self.input_emb(src))
        return F.log_softmax(self.decoder(output), dim=-1)


def test_a_submodule_replaced_in_init_leaves_no_false_problems():
    def main():
        model = TransformerModel()  # built inside the trace, as under `gradscope run`
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        src = torch.randint(0, 11, (5, 2))
        loss = F.nll_loss(model(src).view(-1, 11), src.view(-1))
        loss.backward()
        opt.step()

    with gradscope.trace() as tr:
        main()
    assert tr.problems() == []
    names = param_names(tr)
    assert {"decoder.weight", "input_emb.weight", "encoder.layers.0.linear1.weight"} <= names, names


def test_aliases_survive_save_and_load(tmp_path):
    with gradscope.trace() as tr:
        _main_returns_before_stop()
    tr.save(tmp_path / "t.json")
    back = gradscope.load(tmp_path / "t.json")
    assert back.resolve("model.fc2.bias") == back.resolve("fc2.bias") == tr.resolve("fc2.bias")


class Trainer:
    def __init__(self):
        self.encoder = nn.Linear(4, 4)
        self.decoder = nn.Linear(4, 4)

    def step(self, x):
        z = torch.relu(self.encoder(x))
        return self.decoder(z.detach()).sum()  # starves the encoder


def test_modules_held_by_a_trainer_object_are_named_by_its_attributes():
    def run():
        t = Trainer()
        t.step(torch.randn(2, 4)).backward()

    with gradscope.trace() as tr:
        run()
    assert_named_by_path(tr, {"encoder.weight", "encoder.bias", "decoder.weight", "decoder.bias"})
    assert tr.why("encoder.weight").cause == "detach" and tr.why("decoder.bias").cause == "ok"


class MakesLayersInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        x = nn.Dropout(0.0)(self.fc(x))  # a parameter-free module made in each call
        return nn.Linear(4, 1)(x)  # BUG-shaped: a new layer in each call, with no variable


def test_modules_made_inside_forward_keep_the_models_names():
    model = MakesLayersInForward()
    with gradscope.trace() as tr:
        for _ in range(3):
            model(torch.randn(2, 4)).sum().backward()
    names = sorted(param_names(tr))
    assert {"model.fc.weight", "model.fc.bias"} <= set(names), names
    assert tr.resolve("fc.weight") == tid(tr, model.fc.weight)
    made = [n for n in names if not n.startswith("model.")]
    assert len(made) == 6 and len(set(made)) == 6 and all(n.startswith("linear") for n in made), names
    assert len(tr._rec.modules.roots) <= 4


def test_a_submodule_rebuilt_from_its_own_children_after_construction_keeps_their_names():
    model = nn.Sequential()
    model.add_module("backbone", TinyResNet())
    model.add_module("head", nn.Linear(4, 2))
    with gradscope.trace() as tr:
        model.backbone = nn.Sequential(*list(model.backbone.children())[:-1])  # drop the classifier
        h = model.backbone(torch.randn(2, 3, 8, 8)).flatten(1)
        model.head(h.detach()).sum().backward()  # a real cut: the backbone is starved
    conv = model.backbone[4][0].conv1.weight
    assert tr.data.tensors[tid(tr, conv)].name == "backbone.4.0.conv1.weight"
    assert tr.why(conv).cause == "detach"  # not "param_recreated": the kept layers are the same parameters


def test_a_tied_weight_answers_to_both_module_paths():
    """GPT-2 style tying: lm_head.weight = wte.weight, the model built inside the trace (so the trace
    also saw lm_head's own first weight, which left the model): both paths name the tied parameter."""
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)
            self.lm_head = nn.Linear(4, 10, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, idx):
            return self.lm_head(self.wte(idx))

    with gradscope.trace() as tr:
        model = LM()
        model(torch.tensor([[1, 2, 3]])).sum().backward()
    tied = tr.resolve(model.wte.weight)
    assert tr.resolve("wte.weight") == tied
    assert tr.resolve("lm_head.weight") == tied
    assert tr.resolve("model.lm_head.weight") == tied
    assert tr.why("lm_head.weight").cause == "ok"


def test_models_made_one_per_iteration_get_consecutive_prefixes():
    """A loop that makes a new module per iteration under one variable: every one keeps its own name
    (``m``, ``m_2``, ... ``m_N``, no gap and no repeat); the numbers are counted once per base name
    (benchmarks/many_roots.py: the cost per iteration stays flat as roots accumulate)."""
    import torch
    import torch.nn as nn

    import gradscope

    with gradscope.trace() as tr:
        for _ in range(30):
            m = nn.Linear(2, 2)
            m(torch.randn(1, 2)).sum()
    names = sorted(t.name for t in tr.data.tensors.values() if t.role == "param" and t.name.endswith(".weight"))
    assert sorted(names) == sorted(["m.weight"] + [f"m_{k}.weight" for k in range(2, 31)]), names


# --------------------------------------------------------------------------- many roots, named one at a time
def _roots_made_per_iteration():
    for _ in range(12):  # a module pair per iteration (PyTorch's own ConvTranspose2d output_size tests)
        conv = nn.Conv2d(3, 2, 3)
        t_conv = nn.ConvTranspose2d(2, 3, 3)
        t_conv(conv(torch.randn(1, 3, 8, 8)), output_size=[8, 8]).sum()
        nn.ReLU()(torch.randn(2))  # a root without tensors, gone at once


def _submodule_first_then_its_model():
    model = Classifier()
    model.encoder(torch.randn(2, 4))  # a root, then inside a bigger one
    head = nn.Linear(2, 1)
    head(model(torch.randn(2, 4))).sum().backward()
    for _ in range(3):
        m = nn.Linear(2, 2)
        m(torch.randn(1, 2)).sum()
    shared = nn.Linear(2, 2)
    for _ in range(3):  # a new wrapper per iteration around one live layer
        nn.Sequential(shared, nn.Tanh())(torch.randn(1, 2)).sum().backward()


def _snapshot(fn, incremental, monkeypatch):
    from gradscope._record._modules import Modules

    monkeypatch.setattr(Modules, "_incremental_names", incremental)
    torch.manual_seed(0)
    with gradscope.trace() as tr:
        fn()
    d = tr.data
    return ({t: (i.name, i.role) for t, i in d.tensors.items()},
            [e.op for e in d.events if e.kind in ("module", "module_set")],
            {k: d.meta.get(k) for k in ("name_aliases", "model_tensors", "tied_params", "left_model")})


def _policy_and_target():
    _optimize_model(torch.randn(5, 4), torch.randn(5, 4))


@pytest.mark.parametrize("fn", [_roots_made_per_iteration, _submodule_first_then_its_model, _policy_and_target])
def test_a_new_root_named_on_its_own_gets_the_names_a_full_pass_gives(fn, monkeypatch):
    """Each new model is named without re-walking and renaming every earlier one (quadratic over
    thousands of roots) when that changes no other name: tensor names, module paths and aliases equal
    those of a full pass per root."""
    inc, full = _snapshot(fn, True, monkeypatch), _snapshot(fn, False, monkeypatch)
    assert inc == full
    names = {n for n, _ in inc[0].values()}
    expected = {_roots_made_per_iteration: {"conv.weight", "conv_12.weight", "t_conv_12.bias"},
                _submodule_first_then_its_model: {"model.encoder.weight", "head.weight", "m_3.weight", "0.weight"},
                _policy_and_target: {"policy_net.layer1.weight", "target_net.layer1.weight"}}[fn]
    assert expected <= names, sorted(n for n in names if n)


class _LossMadeInForward(nn.Module):
    """transformers' shape: the loss module is made (and dropped) inside forward, a root gone at stop."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x, y):
        return nn.CrossEntropyLoss()(self.fc(x) * self.scale, y)


def _train_steps_on_one_model():
    model = _LossMadeInForward()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])).backward()
        opt.step()


def _buffer_replaced_in_the_step():
    model = _LossMadeInForward()
    model(torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])).backward()
    model.scale = torch.full((3,), 2.0)  # (a buffer re-assigned: no registration hook sees it)


def _layer_replaced_in_the_step():
    model = Classifier()
    model(torch.randn(2, 4)).sum().backward()
    model.encoder = nn.Linear(4, 2)


def _layer_deleted_in_the_step():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    model(torch.randn(2, 4)).sum().backward()
    del model[2]


@pytest.mark.parametrize("fn", [_train_steps_on_one_model, _buffer_replaced_in_the_step, _layer_replaced_in_the_step,
                                _layer_deleted_in_the_step, _roots_made_per_iteration, _submodule_first_then_its_model,
                                _policy_and_target])
def test_the_names_kept_at_stop_are_those_a_full_pass_gives(fn, monkeypatch):
    """At stop a model unchanged since it was named keeps its names without the full pass
    (Modules.rename_at_stop): tensor names, module paths and aliases equal those of the full pass, also
    when the model changed in a way no registration hook reports (a buffer re-assigned, a layer deleted)."""
    from gradscope._record._modules import Modules

    kept = _snapshot(fn, True, monkeypatch)
    monkeypatch.setattr(Modules, "rename_at_stop", Modules.rename)
    full = _snapshot(fn, True, monkeypatch)
    assert kept == full


def test_an_unchanged_model_is_not_renamed_at_stop(monkeypatch):
    """The skip is taken in the common case (a model built before the trace, its loss module made in forward and
    gone at stop)."""
    from gradscope._record._modules import Modules

    full = []
    real = Modules.rename
    monkeypatch.setattr(Modules, "rename", lambda self: full.append(1) or real(self))
    model = _LossMadeInForward()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])).backward()
            opt.step()
    assert full == []
    assert {"fc.weight", "fc.bias", "scale"} <= {i.name for i in tr.data.tensors.values()}


def test_a_root_per_iteration_is_walked_once(monkeypatch):
    """Naming N models made one per iteration walks each once, plus a few full passes (the second root,
    a group's first clash), not every earlier model again per new one."""
    from gradscope._record._modules import Modules

    walks = []
    real = Modules._walk_root

    def walk(self, r):  # (a gone root is not walked)
        w = real(self, r)
        if w is not None:
            walks.append(r)
        return w

    monkeypatch.setattr(Modules, "_walk_root", walk)
    full = []
    real_rename = Modules.rename
    monkeypatch.setattr(Modules, "rename", lambda self: full.append(1) or real_rename(self))
    with gradscope.trace() as tr:
        for _ in range(60):
            m = nn.Linear(2, 2)
            m(torch.randn(1, 2)).sum()
    n_stop = full.count(1)
    assert n_stop <= 3, n_stop  # (the second root; the group's first clash; the stop)
    assert len(walks) <= 60 + 3, len(walks)
    assert tr.resolve("m_60.weight") is not None


def test_a_parameters_grad_read_in_a_manual_update_is_named_after_it():
    """pytorch/examples regression: `param.data.add_(-0.1 * param.grad)`: the gradient the update reads is
    `fc.weight.grad` in the trace (the report and the diagram), not an anonymous input."""
    fc = nn.Linear(4, 1)
    with gradscope.trace() as tr:
        for _ in range(2):
            fc.zero_grad()
            F.smooth_l1_loss(fc(torch.randn(8, 4)), torch.randn(8, 1)).backward()
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
    grads = [e.inputs[0].tid for e in tr.events if e.op.endswith(".mul") and e.inputs]
    names = {tr.data.tensors[t].name for t in grads}
    assert names == {"fc.weight.grad", "fc.bias.grad"}, names


class _Pose(nn.Module):
    def __init__(self):
        super().__init__()
        self.position = nn.Parameter(torch.zeros(3))
        self.head = nn.Linear(3, 1)

    def moved(self, x):  # used through a method, never called as a module
        return self.head.weight @ (x + self.position)


def test_parameters_of_models_never_called_are_named_by_their_class_and_path():
    """A model built in the trace whose forward never runs (its methods use its parameters, or it was
    replaced before it was called while an optimizer kept its parameters) has no root to name them: its
    class and module path, numbered per copy, never `t<N>`."""
    with gradscope.trace() as tr:
        target, pose = _Pose(), _Pose()
        opt = torch.optim.SGD(pose.parameters(), lr=0.1)
        opt.zero_grad()
        pose.moved(torch.randn(3)).sum().backward()
        with torch.no_grad():
            target.moved(torch.randn(3))
    names = {tr.data.tensors[tr.resolve(p)].name for p in (*target.parameters(), *pose.parameters())}
    assert names == {"_pose.position", "_pose.head.weight", "_pose.head.bias",
                     "_pose_2.position", "_pose_2.head.weight", "_pose_2.head.bias"}, names
    assert not any(n.startswith("t") and n[1:].isdigit() for n in names)
    assert tr.why(pose.position).cause == "ok"


def test_model_called_only_through_its_methods_is_named_from_the_callers_variable():
    class PINN(nn.Module):
        def __init__(self):
            super().__init__()
            self.u = nn.Linear(2, 1)
            self.log_nu = nn.Parameter(torch.tensor(-1.0))

        def residual(self, x):
            return self.u(x) * self.log_nu.exp()

    pinn = PINN()
    with gradscope.trace() as tr:
        pinn.residual(torch.randn(5, 2)).pow(2).mean().backward()
    names = {t.name for t in tr.data.tensors.values() if t.role == "param"}
    assert {"u.weight", "u.bias", "log_nu"} <= names, names


def test_why_names_a_tensor_by_the_variable_of_the_block_that_ran_the_trace():
    """A tensor with no recorded name is called by the variable holding it in the frame that entered the
    trace, read when the recording stops (not from the frame that asks): from a helper too, and from inside."""
    w = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        a, b = w * 2, w * 3  # (a tuple assignment: no name from the line)
        (a.detach() * b).sum().backward()
        inside = tr.why(a).target  # (while recording: the frame is read now)

    def ask(trace, t):
        return trace.why(t).target

    assert inside == "a"
    assert tr.why(a).target == "a" and ask(tr, a) == "a"
    assert tr._rec.variable_name(b) == "b"
    assert tr._rec.variable_name(torch.ones(1)) is None


class _Agent:
    """A plain object (not a module) that holds a trainable parameter, as SAC's temperature."""

    def __init__(self):
        self.log_alpha = nn.Parameter(torch.zeros(1))


def _clear(opt):
    opt.zero_grad()  # (a helper frame that has returned before the model is called)


@pytest.mark.parametrize("where", ["in_step", "in_helper"])
def test_parameters_first_seen_in_zero_grad_are_named_by_model_path_or_by_the_object_holding_them(where):
    """zero_grad() is where a fresh trace per step first sees every parameter: a called model names its own by
    module path; a parameter of a plain object is named after it (`agent.log_alpha`), also when the zero_grad()
    ran in a helper that returned before the model was called."""
    agent, model = _Agent(), nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD([*model.parameters(), agent.log_alpha], lr=0.1)

    def step():
        if where == "in_step":
            opt.zero_grad()
        else:
            _clear(opt)
        (model(torch.randn(2, 3)).sum() * agent.log_alpha.exp()).sum().backward()
        opt.step()

    step()  # (every parameter has a .grad: the traced zero_grad() clears each)
    with gradscope.trace() as tr:
        step()
    names = [tr.data.tensors[tr.resolve(p)].name for p in (*model.parameters(), agent.log_alpha)]
    assert names == ["model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias", "agent.log_alpha"]
    assert [e for e in tr.events if e.kind == "grad_set"][0].inputs, "the zero_grad() clears were recorded"


class _Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.classifier = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(self.body(x).relu())


def test_a_head_replaced_after_the_optimizer_was_built_is_named_by_its_place_in_the_optimizer():
    """Fine-tuning's classic: the classifier rebuilt for 2 classes after the optimizer took the 3-class one. The old
    head's parameters, held by the optimizer alone, are named where the user can find them (an expression that
    evaluates to them) and explained as the stale optimizer, not as parameters nobody used."""
    torch.manual_seed(0)
    model = _Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    old_id = id(model.classifier.weight)  # (no variable holds it: a variable's name would win)
    model.classifier = nn.Linear(8, 2)
    with gradscope.trace() as tr:
        loss = model(torch.randn(5, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    names = [p.name for p in tr.summary().params]
    assert "opt.param_groups[0]['params'][2]" in names and "opt.param_groups[0]['params'][3]" in names, names
    assert id(eval("opt.param_groups[0]['params'][2]")) == old_id  # (the name is the way to it)
    exp = tr.why("opt.param_groups[0]['params'][2]")
    assert exp.cause == "param_recreated", exp
    assert "`model.classifier`, which no optimizer holds" in exp.summary, exp.summary
    assert "`opt.add_param_group({'params': model.classifier.parameters()})`" in exp.fix, exp.fix
    assert names.count("classifier.weight") == 1, names
