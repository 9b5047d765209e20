"""gradscope.watch over whole training runs: alerts name the step, the parameters and (from the
full trace of the next step) the cause and the line; correct runs raise no alert."""
from __future__ import annotations

import gc
import json
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules import module as _M
from torch.optim import optimizer as _O

import gradscope
from gradscope.watch.log import TraceFileError
from gradscope.watch.log import read_log


def line_of(marker: str) -> int:
    import inspect

    src = inspect.getsource(__import__(__name__))
    for no, ln in enumerate(src.splitlines(), 1):
        if ln.rstrip().endswith(marker):
            return no
    raise AssertionError(marker)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.enc(x)))


def data(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(16, 6, generator=g), torch.randint(0, 2, (16,), generator=g)


def train(model, opt, steps, w=None, before=None, forward=None):
    for step in range(steps):
        if before:
            before(step)
        x, y = data(step)
        out = forward(step, x) if forward else model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad()


def test_a_freeze_mid_run_is_caught_at_its_step_with_the_line():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def before(step):
        if step == 3:
            model.enc.requires_grad_(False)  # W:freeze

    with gradscope.watch(model, opt) as w:
        train(model, opt, 6, before=before)
    assert [(a.kind, a.step) for a in w.alerts] == [("stopped", 3)]
    a = w.alerts[0]
    assert a.params == ["enc.weight", "enc.bias"]
    assert a.since == 2
    assert "enc.weight.requires_grad True -> False" in a.changes
    # the freeze ran before the traced step, between the last healthy step and this one: the watch saw
    # the write, and the trace of the next step explains it at the line that froze the layer
    assert a.explanation["cause"] == "frozen_param"
    assert a.explanation["site"]["lineno"] == line_of("# W:freeze")
    assert a.traced_step == 4
    text = str(a)
    assert "step 3" in text and "enc.weight" in text and "frozen_param" in text


def test_no_grad_on_odd_steps_is_caught_at_the_first_odd_step():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def forward(step, x):
        if step % 2 == 1:
            with torch.no_grad():
                h = torch.relu(model.enc(x))  # W:odd
        else:
            h = torch.relu(model.enc(x))
        return model.head(h)

    with gradscope.watch(model, opt) as w:
        train(model, opt, 6, forward=forward)
    stopped = [a for a in w.alerts if a.kind == "stopped"]
    assert [a.step for a in stopped] == [1, 3, 5]  # it recovers on even steps, and stops again
    assert stopped[0].params == ["enc.weight", "enc.bias"]
    # step 2 (traced first) is healthy, so tracing goes on to step 3, which shows the cut
    a = stopped[0]
    assert a.traced_step == 3
    assert a.explanation["cause"] == "no_grad_block"
    assert line_of("# W:odd") in (a.explanation["site"]["lineno"],
                                  *(f[1] for f in a.explanation["site"].get("stack") or ()))


def test_a_layer_that_never_gets_a_gradient():
    class Skip(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(6, 8)
            self.extra = nn.Linear(8, 8)
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            h = torch.relu(self.enc(x))
            return self.head(h)

    torch.manual_seed(0)
    model = Skip()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.watch(model, opt, never_after=3) as w:
        train(model, opt, 5)
    assert [(a.kind, a.step, a.params) for a in w.alerts] == [("never", 2, ["extra.weight", "extra.bias"])]
    assert w.alerts[0].explanation["cause"] == "unused_parameter"


def test_first_non_finite_gradient():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)

    def forward(step, x):
        out = model(x)
        if step == 2:
            out = out * torch.tensor(float("inf"))
        return out

    with gradscope.watch(model, opt, trace_on_alert=False) as w:
        train(model, opt, 4, forward=forward)
    kinds = [(a.kind, a.step) for a in w.alerts]
    assert ("nonfinite", 2) in kinds
    a = next(a for a in w.alerts if a.kind == "nonfinite")
    assert "head.weight" in a.params


def test_gradients_but_no_change_names_the_missing_optimizer():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.head.parameters(), lr=0.1)  # enc is trained by nobody
    with gradscope.watch(model, opt) as w:
        train(model, opt, 4)
    assert [(a.kind, a.step) for a in w.alerts] == [("unchanged", 2)]
    a = w.alerts[0]
    assert a.params == ["enc.weight", "enc.bias"]
    assert "no optimizer holds them" in a.message


@pytest.mark.parametrize("shape", ["tutorial", "accumulation", "frozen_backbone", "target_network", "gan", "gan_toggle"])
def test_correct_runs_raise_no_alert(shape):
    torch.manual_seed(0)
    if shape == "tutorial":
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with gradscope.watch(model, opt) as w:
            train(model, opt, 6)
    elif shape == "accumulation":
        model = Net()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        with gradscope.watch(model, opt) as w:
            for step in range(8):
                x, y = data(step)
                (F.cross_entropy(model(x), y) / 2).backward()
                if step % 2 == 1:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    opt.step()
                    opt.zero_grad(set_to_none=True)
    elif shape == "frozen_backbone":
        model = Net()
        model.enc.requires_grad_(False)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
        with gradscope.watch(model, opt) as w:
            train(model, opt, 6)
    elif shape == "gan_toggle":  # D frozen for G's update and unfrozen for its own, every step
        G, D = nn.Sequential(nn.Linear(4, 6)), nn.Sequential(nn.Linear(6, 1))
        opt_g, opt_d = torch.optim.Adam(G.parameters(), 1e-3), torch.optim.Adam(D.parameters(), 1e-3)
        with gradscope.watch([G, D], [opt_d, opt_g]) as w:
            for step in range(6):
                z, real = torch.randn(8, 4), torch.randn(8, 6)
                for p in D.parameters():
                    p.requires_grad = True
                d_loss = F.softplus(-D(real)).mean() + F.softplus(D(G(z).detach())).mean()
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                for p in D.parameters():
                    p.requires_grad = False
                g_loss = F.softplus(-D(G(z))).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
    elif shape == "target_network":
        policy, target = Net(), Net()
        target.load_state_dict(policy.state_dict())  # target's params still require grad
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        with gradscope.watch([policy, target], opt) as w:
            for step in range(6):
                x, _ = data(step)
                with torch.no_grad():
                    tq = target(x).max(1).values
                loss = F.smooth_l1_loss(policy(x).max(1).values, tq)
                loss.backward()
                opt.step()
                opt.zero_grad()
                if step % 3 == 2:
                    target.load_state_dict(policy.state_dict())
    else:
        G, D = nn.Sequential(nn.Linear(4, 6)), nn.Sequential(nn.Linear(6, 1))
        opt_g, opt_d = torch.optim.Adam(G.parameters(), 1e-3), torch.optim.Adam(D.parameters(), 1e-3)
        with gradscope.watch([G, D], [opt_d, opt_g]) as w:
            for step in range(6):
                z, real = torch.randn(8, 4), torch.randn(8, 6)
                fake = G(z)
                d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                g_loss = F.softplus(-D(fake)).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
    assert w.alerts == [], w.summary()
    assert w.steps >= 4


def test_watch_changes_no_gradient_and_cleans_up():
    def run(watched):
        torch.manual_seed(0)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        n_global = (len(_O._global_optimizer_pre_hooks),
                    len(_O._global_optimizer_post_hooks),
                    len(_M._global_forward_pre_hooks))
        if watched:
            with gradscope.watch(model, opt):
                train(model, opt, 3)
        else:
            train(model, opt, 3)
        assert all(not p._post_accumulate_grad_hooks for p in model.parameters())
        assert n_global == (len(_O._global_optimizer_pre_hooks),
                            len(_O._global_optimizer_post_hooks),
                            len(_M._global_forward_pre_hooks))
        return [p.detach().clone() for p in model.parameters()]

    for a, b in zip(run(False), run(True)):
        assert torch.equal(a, b)


def test_cleans_up_when_the_run_raises():
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="boom"):
        with gradscope.watch(model, opt):
            train(model, opt, 1)
            raise ValueError("boom")
    assert all(not p._post_accumulate_grad_hooks for p in model.parameters())
    assert not {"requires_grad", "requires_grad_"} & set(nn.Parameter.__dict__)


def test_the_watch_keeps_no_model_alive():
    import weakref

    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    w = gradscope.watch(model, opt)
    with w:
        train(model, opt, 2)
    ref = weakref.ref(model)
    del model, opt
    gc.collect()
    assert ref() is None
    assert w.steps == 2


def test_memory_is_bounded_and_the_log_reads_back(tmp_path):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "run.watch.jsonl"

    def before(step):
        if step == 150:
            model.enc.requires_grad_(False)

    with gradscope.watch(model, opt, log=path, window=16) as w:
        train(model, opt, 200, before=before)
    assert all(len(h.recent()) == 16 for h in w.history.values())
    tl = read_log(path)
    assert tl.names == ["enc.weight", "enc.bias", "head.weight", "head.bias"]
    assert tl.steps == list(range(200))
    assert tl.norms["enc.weight"][149] > 0 and tl.norms["enc.weight"][150] is None
    assert all(isinstance(v, float) for v in tl.norms["head.weight"])
    assert [(a.kind, a.step) for a in tl.alerts] == [("stopped", 150)]
    assert tl.alerts[0].explanation["cause"] == "frozen_param"  # the later line, with the explanation, wins
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["schema"] == "gradscope.watch"


@pytest.mark.parametrize("content, msg", [
    ("", "empty"),
    ("not json\n", "not JSON"),
    ('{"schema": "other"}\n', "not a gradscope watch log"),
    ('{"schema": "gradscope.watch", "version": 99, "params": []}\n', "version 99"),
    ('{"schema": "gradscope.watch", "version": 1, "params": ["a"]}\nxx\n{"step": 0, "g": [1.0]}\n', "line 2"),
])
def test_a_corrupt_log_gets_one_clear_error(tmp_path, content, msg):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(TraceFileError, match=msg):
        read_log(p)


def test_a_log_cut_mid_line_reads_up_to_the_cut_and_says_so(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "run.watch.jsonl"
    p.write_text('{"schema": "gradscope.watch", "version": 1, "params": ["a"]}\n{"step": 0, "g": [1.0]}\n'
                 '{"step": 1, "g": [0.5]}\n{"step": 2, "g": [0.')
    tl = read_log(p)
    assert tl.steps == [0, 1] and tl.norms["a"] == [1.0, 0.5]
    assert tl.notes == ["run.watch.jsonl: its last line (4) was cut off (the run was killed or is still writing it); "
                        "read the 2 lines before it"]
    shown = subprocess.run([sys.executable, "-m", "gradscope", "show", str(p)], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0 and "note: run.watch.jsonl: its last line (4) was cut off" in shown.stdout, shown
    p.write_text('{"schema": "gradscope.watch", "version": 1, "params": ["a"]}\n{"step": 0, "g": [1.0]}\n')
    assert read_log(p).notes == []  # (a whole log: nothing to say)


def test_non_finite_norms_survive_the_log(tmp_path):
    from gradscope.watch.log import WatchLog

    path = tmp_path / "w.jsonl"
    log = WatchLog(["a", "b", "c"], path=path)
    log.add_step(0, {"a": math.inf, "b": None}, None)
    log.close()
    tl = read_log(path)
    assert tl.norms["a"] == [math.inf] and tl.norms["b"] == ["?"] and tl.norms["c"] == [None]


def test_models_and_optimizers_are_found_when_not_given():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def before(step):
        if step == 2:
            model.head.requires_grad_(False)

    with gradscope.watch() as w:
        train(model, opt, 4, before=before)
    assert [(a.kind, a.step, a.params) for a in w.alerts] == [("stopped", 2, ["head.weight", "head.bias"])]


SCRIPT = '''
import torch, torch.nn as nn, torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.enc(x)))


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        if step == 3:
            model.enc.requires_grad_(False)
        x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        print("step", step)


if __name__ == "__main__":
    main()
'''


def test_gradscope_run_watch_on_an_unmodified_script(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    log, svg = tmp_path / "run.watch.jsonl", tmp_path / "timeline.svg"
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    r = subprocess.run([sys.executable, "-m", "gradscope", "run", "--watch", "--save", str(log), "--out", str(svg),
                        str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == plain.returncode == 0, r.stderr
    assert plain.stdout in r.stdout  # the script's own output is unchanged (the summary follows it)
    assert "gradscope watch: step 3: enc.weight, enc.bias stopped receiving gradients" in r.stderr
    assert "frozen_param" in r.stderr
    line = next(no for no, ln in enumerate(SCRIPT.splitlines(), 1) if ln.strip() == "model.enc.requires_grad_(False)")
    froze = f"frozen at train.py:{line} in main: model.enc.requires_grad_(False)"
    assert froze in r.stderr  # the line that froze the layer, as the alert happened
    assert f"frozen_param (train.py:{line})" in r.stderr  # and the explanation, from the next step's trace
    assert "\r" not in r.stderr  # no progress line when stderr is not a terminal
    assert "6 steps, 4 parameters watched, 1 alert\n" in r.stdout
    assert "enc" in r.stdout and "stopped" in r.stdout
    svg_text = svg.read_text()
    assert svg_text.startswith("<svg") and "step 3: stopped" in svg_text
    shown = subprocess.run([sys.executable, "-m", "gradscope", "show", str(log)], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "stopped" in shown.stdout and "step 3" in shown.stdout
    assert froze in shown.stdout


# --- the line that froze a parameter between two steps ---------------------------------------------
def one_step(model, opt, step):
    x, y = data(step)
    F.cross_entropy(model(x), y).backward()
    opt.step()
    opt.zero_grad()


def freeze_layer(module):
    for p in module.parameters():
        p.requires_grad = False  # F:helper


def loop_param_method(model, opt, steps, at):
    for step in range(steps):
        if step == at:
            for p in model.enc.parameters():
                p.requires_grad_(False)  # F:method
        one_step(model, opt, step)


def loop_attribute(model, opt, steps, at):
    for step in range(steps):
        if step == at:
            for p in model.enc.parameters():
                p.requires_grad = False  # F:attribute
        one_step(model, opt, step)


def loop_helper(model, opt, steps, at):
    for step in range(steps):
        if step == at:
            freeze_layer(model.enc)  # F:call
        one_step(model, opt, step)


def loop_module(model, opt, steps, at):
    for step in range(steps):
        if step == at:
            model.enc.requires_grad_(False)  # F:module
        one_step(model, opt, step)


@pytest.mark.parametrize("loop, marker, caller", [
    (loop_param_method, "# F:method", None),
    (loop_attribute, "# F:attribute", None),
    (loop_helper, "# F:helper", "# F:call"),
    (loop_module, "# F:module", None),
], ids=["requires_grad_", "attribute", "helper", "module.requires_grad_"])
@pytest.mark.parametrize("traced", [True, False], ids=["traced", "untraced"])
def test_a_freeze_between_steps_names_the_line_that_froze(loop, marker, caller, traced):
    import os

    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    with gradscope.watch(model, opt, trace_on_alert=traced) as w:
        loop(model, opt, 6, at=3)
    assert [(a.kind, a.step) for a in w.alerts] == [("stopped", 3)]
    a = w.alerts[0]
    line = line_of(marker)
    assert len(a.frozen_at) == 1, a.frozen_at
    f = a.frozen_at[0]
    assert f["params"] == ["enc.weight", "enc.bias"] and f["step"] == 3
    assert os.path.basename(f["site"]["filename"]) == "test_watch.py" and f["site"]["lineno"] == line
    stack = [fr[1] for fr in f["site"]["stack"]]
    text = str(a)
    assert f"frozen at test_watch.py:{line} in " in text
    if caller:  # in a helper: the loop's line that called it
        assert stack[-2:] == [line_of(caller), line]
        assert f"called from test_watch.py:{line_of(caller)} in loop_helper: freeze_layer(model.enc)" in text
    if traced:  # the next step's trace explains it at the freeze, not at the line that next used the layer
        assert a.explanation["cause"] == "frozen_param"
        assert a.explanation["site"]["lineno"] == line
        assert f"was frozen at test_watch.py:{line}" in a.explanation["summary"]
        assert "before the trace started" not in a.explanation["summary"]
    else:
        assert a.explanation is None


def test_the_frozen_line_is_in_the_log_and_in_show(tmp_path):
    from gradscope.render.timeline import TimelineTable
    from rich.console import Console

    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    path = tmp_path / "run.watch.jsonl"
    with gradscope.watch(model, opt, log=path):
        loop_helper(model, opt, 5, at=2)
    tl = read_log(path)
    [a] = tl.alerts
    assert a.frozen_at[0]["site"]["lineno"] == line_of("# F:helper")
    console = Console(record=True, width=200)
    console.print(TimelineTable(tl))
    out = console.export_text()
    assert f"frozen at test_watch.py:{line_of('# F:helper')} in freeze_layer: p.requires_grad = False" in out
    assert f"called from test_watch.py:{line_of('# F:call')} in loop_helper" in out


@pytest.mark.parametrize("how", ["plain_tensor", "class_call"])
def test_a_freeze_the_watch_cannot_see_is_reported_as_such(how):
    torch.manual_seed(0)
    if how == "plain_tensor":  # an optimizer over plain leaf tensors: not nn.Parameters
        w1, w2 = torch.randn(6, 8, requires_grad=True), torch.randn(8, 2, requires_grad=True)
        opt = torch.optim.SGD([w1, w2], lr=0.1)

        def freeze():
            w1.requires_grad_(False)

        def fwd(x):
            return torch.relu(x @ w1) @ w2
    else:  # torch.Tensor's own method called on the class: nn.Parameter's attributes are not on the way
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def freeze():
            torch.Tensor.requires_grad_(model.enc.weight, False)

        fwd = model
    with gradscope.watch(optimizer=opt) as w:
        for step in range(5):
            if step == 2:
                freeze()
            x, y = data(step)
            F.cross_entropy(fwd(x), y).backward()
            opt.step()
            opt.zero_grad()
    stopped = [a for a in w.alerts if a.kind == "stopped"]
    assert [a.step for a in stopped] == [2]
    [f] = stopped[0].frozen_at
    assert f["site"] is None and f["step"] == 2
    assert f["unseen"] == ("it is not an nn.Parameter" if how == "plain_tensor" else
                           "not written through nn.Parameter's requires_grad_ or .requires_grad =")
    text = str(stopped[0])
    assert "frozen between step 1 and step 2, outside any trace, by a line the watch does not see" in text
    assert "gradscope.trace()" in text
    # the next step's trace is told that it was frozen (not "created without requires_grad"), with no line
    e = stopped[0].explanation
    assert e["cause"] == "frozen_param" and e["site"] is None, e
    assert "was frozen (requires_grad=False)" in e["summary"]
    if how == "plain_tensor":
        assert e["target"] == "w1"  # named after the user's variable, as at a first use


def test_watching_changes_nothing_a_mode_or_the_program_sees():
    from torch.overrides import TorchFunctionMode

    class Seen(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append(func)
            return func(*args, **(kwargs or {}))

    def run():
        torch.manual_seed(0)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        out = []
        with Seen() as mode:
            p = model.enc.weight
            out.append(p.requires_grad)
            p.requires_grad = False
            p.requires_grad_(True)
            model.enc.requires_grad_(False)
            out.append((p.requires_grad, model.enc.bias.requires_grad, type(p)))
        for bad in (lambda: setattr(p, "requires_grad", 1), lambda: p.requires_grad_("x"),
                    lambda: delattr(p, "requires_grad")):
            with pytest.raises(Exception) as e:
                bad()
            out.append((type(e.value), str(e.value)))
        return out, mode.calls

    plain = run()
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.watch(model, opt):
        prop = nn.Parameter.__dict__["requires_grad"]
        assert type(prop.fget).__name__ == "method-wrapper"  # a read runs TensorBase's C getter, no Python
        watched = run()
    assert watched == plain
    assert not {"requires_grad", "requires_grad_"} & set(nn.Parameter.__dict__)


def test_two_watches_and_a_trace_share_the_parameter_attributes():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    a, b = gradscope.watch(model, opt), gradscope.watch(model, opt)
    a.start()
    b.start()
    a.stop()
    assert "requires_grad" in nn.Parameter.__dict__  # b still watches
    with gradscope.trace() as tr:
        loop_module(model, opt, 3, at=1)
    b.stop()
    assert not {"requires_grad", "requires_grad_"} & set(nn.Parameter.__dict__)
    assert [(x.kind, x.step) for x in b.alerts][:1] == [("stopped", 1)]
    assert b.alerts[0].frozen_at[0]["site"]["lineno"] == line_of("# F:module")
    # the trace saw the freeze through its own mode, once per parameter (the watch's attributes add no call)
    freezes = [e for e in tr.data.events if e.kind == "requires_grad"]
    assert len(freezes) == 2 and {e.site.lineno for e in freezes} == {line_of("# F:module")}


def test_a_failure_recording_a_freeze_is_said_not_swallowed(monkeypatch):
    """If gradscope's own recording of a freeze fails, the user's write still happens and the alert says
    that gradscope failed to record the line (not that the write was of a kind the watch cannot see)."""
    from gradscope.watch import _watcher

    def broken(self, p, value, f):
        raise RuntimeError("planted failure")

    monkeypatch.setattr(_watcher.Watcher, "_flag_written", broken)
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.watch(model, opt) as w:
        for step in range(5):
            if step == 2:
                model.enc.weight.requires_grad_(False)
            x, y = data(step)
            F.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
    assert model.enc.weight.requires_grad is False  # the user's write happened
    stopped = [a for a in w.alerts if a.kind == "stopped"]
    assert stopped and stopped[0].frozen_at, w.alerts
    f = stopped[0].frozen_at[0]
    assert f["site"] is None and f["unseen"] == "gradscope failed to record it: RuntimeError: planted failure", f
