"""General diagnosis rules (issue 11), each on a real torch run.

Every test runs a small training step under ``gradscope.trace()`` and checks what the explanation
says: its cause, the line it names (found from a marker comment in this file, never hard-coded) and
the user's names in its text. Each test names the failure class of issue 11 it covers.
"""
from __future__ import annotations

import linecache
import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from gradscope import _source

THIS = __file__


def line_of(mark: str) -> int:
    """The line of this file that ends with ``# <mark>``."""
    hits = [i for i, text in enumerate(linecache.getlines(THIS), 1) if text.rstrip().endswith(f"# {mark}")]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def stack_lines(site) -> list:
    return [f.lineno for f in site.stack if f.filename == THIS]


# --- class 1: a region cause is reported at the line that opened the region ------------------------------

def _with_block():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    with torch.no_grad():  # region-with
        y = x * w  # op-in-with
    loss = (y * b).sum()
    loss.backward()
    return w


class _Decorated(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    @torch.no_grad()  # region-decorator
    def features(self, x):
        return self.body(x)  # op-in-decorated

    def forward(self, x):
        return self.head(self.features(x))


def _decorated():
    m = _Decorated()
    m(torch.randn(2, 3)).sum().backward()
    return m.body.weight


def _set_grad_enabled_call():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    torch.set_grad_enabled(False)  # region-call
    try:
        y = w * 2  # op-after-call
    finally:
        torch.set_grad_enabled(True)
    (y * b).sum().backward()
    return w


def _inference_block():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    with torch.inference_mode():  # region-inference
        y = (w * 2).clone()  # op-in-inference
    (y.clone() * b).sum().backward()
    return w


@pytest.mark.parametrize("make, cause, opener, op", [
    (_with_block, "no_grad_block", "region-with", "op-in-with"),
    (_decorated, "no_grad_block", "region-decorator", "op-in-decorated"),
    (_set_grad_enabled_call, "no_grad_block", "region-call", "op-after-call"),
    (_inference_block, "inference_mode", "region-inference", "op-in-inference"),
], ids=["with", "decorator", "set_grad_enabled", "inference_mode"])
def test_region_cause_is_reported_at_the_region_opener(make, cause, opener, op):
    with gradscope.trace() as tr:
        out = make()
    exp = tr.why(out)
    assert exp.cause == cause, exp
    assert exp.site.filename == THIS and exp.site.lineno == line_of(opener), exp
    # the op that ran inside the region stays visible as evidence: in the site's stack and in the text
    assert line_of(op) in stack_lines(exp.site), exp.site.stack
    assert f":{line_of(op)}" in exp.summary and f":{line_of(opener)}" in exp.summary, exp.summary


# --- class 2: a multi-line statement is reported at its first line, with the whole statement --------------

def _multi_line_argmax():
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    pred = torch.randn(4, 3) * w
    loss = torch.nn.functional.mse_loss(  # statement-start
        b,
        pred.argmax(
            dim=1).float(),  # argmax-line
    )
    loss.backward()
    return w


def test_multi_line_statement_is_reported_at_its_first_line():
    with gradscope.trace() as tr:
        w = _multi_line_argmax()
    exp = tr.why(w)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == line_of("statement-start"), exp.site
    assert exp.site.code.startswith("loss = torch.nn.functional.mse_loss(") and "argmax(dim=1).float()" in exp.site.code
    assert "#" not in exp.site.code  # comments of the inner lines are not code
    assert f":{line_of('statement-start')} " in exp.summary
    assert line_of("argmax-line") - 1 in stack_lines(exp.site)  # the line the argmax ran on stays in the stack


def test_statement_reader_on_source_text():
    src = ("class A:\n"
           "    @decorate(\n"
           "        1)\n"
           "    def f(self, x):\n"
           "        if (x >\n"
           "                0):\n"
           "            y = g(x,\n"
           "                  2)  # two\n"
           "        return y\n")
    linecache.cache["<rules-demo>"] = (len(src), None, src.splitlines(True), "<rules-demo>")
    assert _source.statement("<rules-demo>", 8) == (7, "y = g(x, 2)")
    assert _source.statement("<rules-demo>", 6) == (5, "if (x > 0):")  # a compound statement: its header only
    assert _source.statement("<rules-demo>", 3) == (2, "@decorate(1)")
    assert _source.statement("<rules-demo>", 9) is None  # one line: nothing to change
    assert _source.statement("<no-such-file>", 3) is None


# --- class 6: autograd.grad "one of the inputs was not used" names what cut the input ---------------------

def _grad_through_numpy():
    x = torch.randn(4, requires_grad=True)
    y = x * 2
    z = torch.from_numpy(np.tanh(y.detach().numpy()))  # numpy-trip
    out = (z * torch.ones(4, requires_grad=True)).sum()
    return torch.autograd.grad(out, x)


def test_autograd_grad_unused_input_names_the_cut():
    with pytest.raises(RuntimeError, match="not have been used"), gradscope.trace() as tr:
        _grad_through_numpy()
    exp = tr.failure
    assert exp.cause == "numpy_roundtrip", exp
    assert exp.site.lineno == line_of("numpy-trip")
    assert exp.summary.startswith("torch.autograd.grad failed: the input `x`"), exp.summary


# --- error messages: one table ------------------------------------------------------------------------------

def test_error_table_is_one_ordered_table_of_existing_handlers():
    from gradscope.diagnosis import ERRORS, REGISTRY

    assert len(ERRORS) >= 9
    for pattern, handler in ERRORS:
        assert isinstance(pattern, re.Pattern)
        assert "failure" in REGISTRY[handler].statuses, handler
    msgs = {
        "one of the variables needed for gradient computation has been modified by an inplace operation":
            "inplace_modified_saved_tensor",
        "element 0 of tensors does not require grad and does not have a grad_fn": "no_grad_fn",
        "Trying to backward through the graph a second time": "backward_twice",
        "One of the differentiated Tensors appears to not have been used in the graph.": "grad_input_unused",
        "the derivative for 'x' is not implemented.": "no_derivative",
    }
    for msg, want in msgs.items():
        assert next(h for p, h in ERRORS if p.search(msg)) == want, msg


# --- class 4: a module that was never called is reported where it is defined --------------------------------

class _WithSpare(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.spare_proj = nn.Linear(3, 3)  # spare-defined

    def forward(self, x):
        return self.body(x)


class _EarlyExit(nn.Module):
    def __init__(self, skip: bool):
        super().__init__()
        self.skip = skip
        self.first = nn.Linear(3, 3)
        self.refine = nn.Linear(3, 3)  # refine-defined

    def forward(self, x):
        h = self.first(x)
        if self.skip:
            return h  # early-exit
        return self.refine(h)


def test_never_called_module_is_reported_at_its_definition():
    with gradscope.trace() as tr:
        m = _WithSpare()
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.spare_proj.weight)
    assert exp.cause == "unused_parameter"
    assert exp.site is not None and exp.site.lineno == line_of("spare-defined"), exp
    assert "self.spare_proj = nn.Linear(3, 3)" in exp.summary


def test_early_return_names_the_return_and_the_definition():
    with gradscope.trace() as tr:
        m = _EarlyExit(skip=True)
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.refine.weight)
    assert exp.cause == "unused_parameter"
    assert exp.site.lineno == line_of("early-exit"), exp
    assert [s.lineno for s in exp.extra_sites] == [line_of("refine-defined")]
    assert "also:" in str(exp) and exp.to_json()["extra_sites"][0]["lineno"] == line_of("refine-defined")


# --- class 5: the cause is the mechanism the user wrote -------------------------------------------------------

def _manual_update():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    (w * x).sum().backward()
    with torch.no_grad():
        w = w - 0.1 * w.grad  # manual-update
    return w


def test_manual_update_under_no_grad_is_a_rebind_not_a_missing_requires_grad():
    with gradscope.trace() as tr:
        w = _manual_update()
    exp = tr.why(w)
    assert exp.cause == "no_grad_block", exp
    assert exp.site.lineno == line_of("manual-update")
    assert "rebound" in exp.summary and "`w -= lr * w.grad`" in exp.fix


def _losses_rewrapped():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    loss_cls = (a * 2).sum()
    loss_box = (b * 3).sum()
    both = torch.Tensor([loss_cls, loss_box])  # rewrap
    (both.sum() * torch.ones(1, requires_grad=True)).sum().backward()
    return a


def test_rewrap_of_a_list_of_tensors_gets_a_stack_fix_from_the_users_list():
    with warnings.catch_warnings(), gradscope.trace() as tr:
        warnings.simplefilter("ignore")  # (torch warns about converting a grad-requiring tensor to a number)
        a = _losses_rewrapped()
    exp = tr.why(a)
    assert exp.cause == "tensor_rewrap"
    assert exp.site.lineno == line_of("rewrap")
    assert "`torch.stack([loss_cls, loss_box])`" in exp.fix, exp.fix


# --- class 7: what torch does on the user's behalf is not the user's cut --------------------------------------

def test_dtype_conversion_of_the_model_is_not_the_cut_of_a_skipped_layer():
    with gradscope.trace() as tr:
        m = _EarlyExit(skip=True)
        m.double()  # the conversion assigns param.data inside torch under no_grad
        m(torch.randn(2, 3, dtype=torch.float64)).sum().backward()
    exp = tr.why(m.refine.weight)
    assert exp.cause == "unused_parameter", exp
    assert exp.site.lineno == line_of("early-exit")
    setup = [e for e in tr.data.events if e.context == "setup"]
    assert setup and not any(e.kind == "cut" and e.context == "user" for e in tr.data.events), \
        [str(e) for e in tr.data.events if e.kind == "cut"]


def _detach_then_log():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    loss = ((w * x).sum() - 1).pow(2).detach()  # detached-loss
    total = loss + (b * x).sum()
    logged = loss.item()  # logged
    total.backward()
    return w, logged


def test_detach_then_logging_blames_the_detach():
    with gradscope.trace() as tr:
        w, _ = _detach_then_log()
    exp = tr.why(w)
    assert exp.cause == "detach", exp
    assert exp.site.lineno == line_of("detached-loss")


class _WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("offsets", torch.arange(3).float())

    def forward(self, x):
        return self.lin(x) + self.offsets


@pytest.mark.parametrize("freeze_loop", [False, True])
def test_a_buffer_is_explained_as_a_buffer(freeze_loop):
    with gradscope.trace() as tr:
        m = _WithBuffer()
        if freeze_loop:  # a loop over the state dict also "freezes" the buffer: it is still not a frozen parameter
            for t in m.state_dict(keep_vars=True).values():
                t.requires_grad_(False)
            m.lin.weight.requires_grad_(True)
            m.lin.bias.requires_grad_(True)
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.offsets)
    assert exp.cause != "frozen_param"
    assert "buffer" in exp.summary and "nn.Parameter" in exp.fix
    assert "requires_grad=True" not in exp.fix


# --- class 8: a write through .data into a tensor autograd saved (a .detach() alias shares the version
# counter: autograd raises, and the failure path explains it) --------------------------------------------

def _write_through_data(write):
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    s = torch.sigmoid(w * x)
    write(s)
    loss = (s * s).sum()
    loss.backward()
    return w


def test_write_through_data_into_a_saved_tensor_is_named_and_harmful():
    def write(s):
        s.data.mul_(0)  # alias-write

    with gradscope.trace() as tr:
        w = _write_through_data(write)
    assert torch.count_nonzero(w.grad) == 0
    exp = tr.why(w)
    assert exp.cause == "inplace_saved_tensor", exp
    assert exp.site.lineno == line_of("alias-write")
    assert "mul_()" in exp.summary and "`s`" in exp.summary
    harmful = [e for e in tr.cuts() if e.verdict == "harmful"]
    assert any(e.kind == "inplace" and e.site.lineno == line_of("alias-write") for e in harmful), harmful


def test_write_through_data_after_backward_is_not_a_corruption():
    w = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        s = torch.sigmoid(w * 2)
        (s * s).sum().backward()
        s.data.mul_(0)  # after backward: the graph is spent
    exp = tr.why(w)
    assert exp.cause == "ok", exp


# --- class 3: several cuts on the way are all named ------------------------------------------------------------

def _two_cuts():
    p = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    gate = (x > p).float()  # cut-compare
    scaled = p.detach() * 2  # cut-detach
    loss = (gate * scaled * torch.ones(3, requires_grad=True)).sum()
    loss.backward()
    return p


def _cut_and_zero_weight():
    p = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    gate = (x > p).float()  # cut-compare-2
    weight = torch.zeros(3)
    loss = (gate + p * weight).sum()  # zero-weight
    loss.backward()
    return p


def test_every_cut_on_the_way_is_named_main_one_first():
    with gradscope.trace() as tr:
        p = _two_cuts()
    exp = tr.why(p)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == line_of("cut-compare")
    assert [s.lineno for s in exp.extra_sites] == [line_of("cut-detach")]
    assert f":{line_of('cut-detach')}" in exp.summary and "p.detach()" in exp.summary
    assert exp.summary.startswith("p.grad is None: p went through the comparison `>`"), exp.summary


def test_a_zero_weight_and_a_comparison_are_both_named():
    with gradscope.trace() as tr:
        p = _cut_and_zero_weight()
    exp = tr.why(p)
    assert exp.cause == "zero_gradient"
    assert exp.site.lineno == line_of("zero-weight")
    assert [s.lineno for s in exp.extra_sites] == [line_of("cut-compare-2")]


def test_a_single_cut_names_no_other():
    with gradscope.trace() as tr:
        w = _detach_then_log()[0]
    assert tr.why(w).extra_sites == []


# --- class 6: the right family when the evidence is there --------------------------------------------------------

class _TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(self.body(x))


def test_optimizer_built_before_a_layer_was_replaced():
    m = _TwoLayer()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    old = m.head.weight
    m.head = nn.Linear(3, 1)  # (before the trace: no module_set event to see)
    with gradscope.trace() as tr:
        opt.zero_grad()
        m(torch.randn(2, 3)).sum().backward()
        opt.step()  # stale-step
    exp = tr.why(old)
    assert exp.cause == "param_recreated", exp
    assert "`head`" in exp.summary and "`opt.add_param_group({'params': head.parameters()})`" in exp.fix, exp.fix
    assert exp.site.lineno == line_of("stale-step")


def test_framework_hook_that_steps_and_clears_grad():
    m = _TwoLayer()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step_in_backward(p):
        opt.step()
        p.grad = None  # hook-clears

    for p in m.parameters():
        p.register_post_accumulate_grad_hook(step_in_backward)
    with gradscope.trace() as tr:
        m(torch.randn(2, 3)).sum().backward()
    assert m.body.weight.grad is None
    exp = tr.why(m.body.weight)
    assert exp.cause == "hook_modified", exp
    assert exp.site.lineno == line_of("hook-clears")
    assert "`step_in_backward`" in exp.summary


# --- class 9: a condition kept an unfreeze from reaching a parameter ---------------------------------------------

def _unfreeze(model, flag):
    for p in model.parameters():
        if p.requires_grad:  # unfreeze-guard
            p.requires_grad = flag  # unfreeze-set


def _unfreeze_subset(model):
    for p in model.head.parameters():
        p.requires_grad_(True)  # unfreeze-subset


@pytest.mark.parametrize("how, mark", [("guard", "unfreeze-guard"), ("subset", "unfreeze-subset")])
def test_an_unfreeze_that_did_not_reach_a_parameter(how, mark):
    m = _TwoLayer()
    m.body.weight.requires_grad_(False)
    with gradscope.trace() as tr:
        if how == "guard":
            _unfreeze(m, True)
        else:
            _unfreeze_subset(m)
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.body.weight)
    assert exp.cause == "frozen_param", exp
    assert "body.weight" in exp.summary and f":{line_of(mark)}" in exp.summary
    if how == "guard":  # the condition is the site
        assert exp.site.lineno == line_of(mark), exp
        assert f":{line_of('unfreeze-set')}" in exp.summary and "`if p.requires_grad:`" in exp.summary
    else:  # no condition to show: the freeze stays the cause, and the text says the unfreeze did not reach it
        assert exp.site.lineno != line_of(mark)
        assert "did not reach body.weight" in exp.summary


# --- wording: fix templates are built from the user's code, never from a scenario's names --------------------------

#: names a literal code span in a fix template may use: torch's API roots, Python keywords and builtins, and the
#: generic loop/placeholder names of an idiom (a method after a dot is API and always allowed)
_TEMPLATE_NAMES = {"torch", "nn", "F", "np", "for", "in", "with", "if", "else", "not", "and", "or", "None", "True", "False",
                   "lambda", "zip", "sum", "p", "g", "n", "grads", "params", "mean", "std", "soft", "hard", "lr",
                   # gradscope's own command line (`gradscope run --eager-compile`)
                   "gradscope", "run", "eager", "compile"}


def _literal_text(node):
    """The literal parts of a string expression; f-string placeholders become NUL (user text goes there)."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "\x00" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_text(node.body) + "\x00" + _literal_text(node.orelse)
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        return _literal_text(node.elts[-1])  # (head, why, fix) tuples: the fix
    if isinstance(node, ast.Call) and node.args:
        return "\x00".join(_literal_text(a) for a in node.args)
    return "\x00"


def _fix_templates():
    import ast
    import importlib
    import inspect
    import pkgutil

    from gradscope import diagnosis

    # every module of the diagnosis package (the wording and the rules alike)
    mods = [importlib.import_module(f"gradscope.diagnosis.{m.name}") for m in pkgutil.iter_modules(diagnosis.__path__)
            if m.name != "__main__"]
    assert {"wording", "templates", "rules_none", "rules_failure", "cuts"} <= {m.__name__.rsplit(".", 1)[-1] for m in mods}
    out = []
    for node in (n for m in [diagnosis, *mods] for n in ast.walk(ast.parse(inspect.getsource(m)))):
        if isinstance(node, ast.keyword) and node.arg == "fix":
            out.append((node.value.lineno, _literal_text(node.value)))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "fix" for t in node.targets):
            out.append((node.lineno, _literal_text(node.value)))
        elif isinstance(node, ast.FunctionDef) and node.name in ("_zero_fix", "_out_of_place"):
            out += [(r.lineno, _literal_text(r.value)) for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "texts" for t in node.targets):
            out += [(v.lineno, _literal_text(v)) for v in getattr(node.value, "values", ())]
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 3:
            # a template returning (summary, detail, fix) / (head, detail, fix): its fix
            out.append((node.value.elts[2].lineno, _literal_text(node.value.elts[2])))
    return out


def test_fix_templates_name_no_scenario_variables_or_values():
    found = _fix_templates()
    assert len(found) > 40  # (the scan reaches the templates)
    bad = []
    for lineno, text in found:
        for span in re.findall(r"`([^`]*)`", text):
            if "\x00" in span:
                continue  # filled from the user's code
            code = re.sub(r"<[^>]*>", "", span)  # <state>, <module>: placeholders
            names = {m.group(1) for m in re.finditer(r"(?<![.\w])([A-Za-z_]\w*)", code)}
            strays = names - _TEMPLATE_NAMES
            numbers = re.findall(r"(?<![\w.])(\d+\.\d+|[2-9]\d*)(?![\w.])", code)
            if strays or numbers or re.search(r"['\"]", code):
                bad.append((lineno, span, sorted(strays), numbers))
    assert not bad, bad


def test_the_report_shows_the_extra_sites():
    from gradscope.report import explanation_to_text

    with gradscope.trace() as tr:
        p = _two_cuts()
    out = explanation_to_text(tr.why(p), width=120)
    assert f"also at: test_rules.py:{line_of('cut-detach')}  scaled = p.detach() * 2" in out, out


class _DiscardingNet(nn.Module):
    """A forward that computes fc2 and drops its output."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        self.fc2(x)  # R:discarded
        return x.sum(1, keepdim=True).repeat(1, 2)


def test_a_use_after_the_last_backward_does_not_explain_a_missing_gradient():
    """A layer whose output the training forward discards, then an evaluation under no_grad after the
    last backward: the no_grad region came too late to cut anything; the discarded output is the cause."""
    model = _DiscardingNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            loss = F.mse_loss(model(torch.randn(3, 4)), torch.randn(3, 2))
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            model(torch.randn(3, 4))
    e = tr.why(model.fc2.weight)
    assert e.cause == "unused_parameter", e
    assert e.site.lineno == line_of("R:discarded")


def test_module_to_is_not_the_cut_when_everything_was_frozen():
    """`model = Net().to(device)` sets each parameter's .data inside torch (Module._apply): when a freeze
    then makes backward fail, the freeze is named, not the .to() line."""
    def main():
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to("cpu")
        model.requires_grad_(False)  # R:freeze-all
        model(torch.randn(3, 4)).sum().backward()

    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            main()
    f = tr.failure
    assert f.cause == "frozen_param", f
    assert f.site.lineno == line_of("R:freeze-all")


def test_an_evaluation_between_epochs_does_not_explain_a_discarded_layer():
    """The training forward discards a layer's output; an evaluation under no_grad runs between the
    training steps: the discarded output is the cause, not the evaluation's no_grad region."""
    model = _DiscardingNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            loss = F.mse_loss(model(torch.randn(3, 4)), torch.randn(3, 2))
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():  # evaluation after each epoch
                model(torch.randn(3, 4))
    e = tr.why(model.fc2.weight)
    assert e.cause == "unused_parameter", e
    assert e.site.lineno == line_of("R:discarded")


# --- rules no other test reaches (each is the recorded case of its rule: tests/fixtures/rule_cases.py) -------------

class _Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.enabled = False
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        if not self.enabled:
            return x  # R:gate-bypass
        return self.proj(x)


class _Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 3)
        self.gate = _Gate()

    def forward(self, x):
        return self.gate(self.inp(x))


def test_a_module_that_returned_its_input_unchanged_is_the_site():
    model = _Gated()
    with gradscope.trace() as tr:
        model(torch.randn(2, 3)).sum().backward()
    exp = tr.why(model.gate.proj.weight)
    assert exp.cause == "unused_parameter" and exp.site.lineno == line_of("R:gate-bypass"), exp
    assert "returned its input unchanged" in exp.summary and "gate.proj.weight" in exp.summary


def test_a_leaf_whose_backward_failed_is_explained_by_the_failure():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="inplace"):
        with gradscope.trace() as tr:
            y = x.sigmoid()
            y.mul_(2)  # R:leaf-inplace
            y.sum().backward()
    exp = tr.why(x)
    assert exp.cause == "inplace_saved_tensor" and exp.site.lineno == line_of("R:leaf-inplace"), exp
    assert exp.summary.startswith("x.grad is None: the backward that should have reached it failed."), exp.summary


@pytest.mark.parametrize("value, cause", [(0.0, "zero_gradient"), (float("nan"), "nonfinite_gradient")])
def test_a_gradient_no_backward_produced_is_not_pinned_on_an_operation(value, cause):
    """.grad written by hand (no backward in the trace made it): the cause, without a made-up site."""
    w = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        (w * 2).sum()
        w.grad = torch.full((3,), value)
    exp = tr.why(w)
    assert exp.cause == cause and exp.site is None, exp
    assert "did not" in exp.detail  # (says that the trace did not see where it came from)


# --- a parameter that left the model: the replacement decides, whatever else happened to it ---------------------

def _train_once(m, opt, x):
    opt.zero_grad()
    m(x).sum().backward()
    opt.step()


@pytest.mark.parametrize("also", ["frozen", "cleared"])
def test_a_parameter_that_left_the_model_is_the_replacement(also):
    m = _TwoLayer()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(2, 3)
    with gradscope.trace() as tr:
        _train_once(m, opt, x)  # the step before the replacement fills every .grad
        old = m.head.weight
        if also == "frozen":
            for p in m.parameters():
                p.requires_grad = False
            m.body.weight.requires_grad_(True)
        m.head = nn.Linear(3, 1)  # head-replaced
        opt.zero_grad()  # clears the old head's .grad: the next backward cannot fill it
        _train_once(m, opt, x)  # (a second call of the same step: a different stack than the first)
    assert old.grad is None
    exp = tr.why(old)
    assert exp.cause == "param_recreated", exp
    assert exp.site.lineno == line_of("head-replaced")
    assert "head" in exp.summary
    # the body parameter that stayed in the model is not read as replaced
    assert tr.why(m.body.weight).cause != "param_recreated"


# --- several cuts on a failing backward: the cut the user wrote comes before a gradient without create_graph ------

@pytest.mark.parametrize("explicit", [True, False])
def test_an_explicit_cut_before_a_gradient_without_create_graph(explicit):
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            inner = (x @ w).pow(2).mean()
            (g,) = torch.autograd.grad(inner, w)  # inner-grad
            if explicit:
                fast = w.data - 0.1 * g  # data-cut
            else:
                fast = -0.1 * g
            (x @ fast).pow(2).mean().backward()
    exp = tr.failure
    if explicit:
        assert exp.cause == "data_attr", exp
        assert exp.site.lineno == line_of("data-cut")
        assert line_of("inner-grad") in [s.lineno for s in exp.extra_sites]
    else:
        assert exp.cause == "autograd_grad_not_backward", exp
        assert exp.site.lineno == line_of("inner-grad")


def test_a_no_grad_region_before_a_gradient_without_create_graph():
    """A region is a cut the user wrote too: a meta-learning query loss computed inside `with torch.no_grad():`
    from fast weights (which still require grad through w) is the no_grad block, not the autograd.grad
    without create_graph further up; that one is named as an extra site."""
    w = torch.randn(4, requires_grad=True)
    x, xq = torch.randn(5, 4), torch.randn(3, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            (g,) = torch.autograd.grad((x @ w).pow(2).mean(), w)  # region-inner-grad
            fast = w - 0.1 * g
            with torch.no_grad():  # region-opened
                query = (xq @ fast).pow(2).mean()
            query.backward()
    exp = tr.failure
    assert exp.cause == "no_grad_block", exp
    assert exp.site.lineno == line_of("region-opened")
    assert line_of("region-inner-grad") in [s.lineno for s in exp.extra_sites]


class _Mixer(nn.Module):
    """Per-channel scales kept as one-element parameters and packed into one tensor by the legacy
    constructor (its values go through Python floats: no recorded lineage links the new tensor back)."""

    def __init__(self, legacy):
        super().__init__()
        self.legacy = legacy
        self.scales = nn.ParameterList([nn.Parameter(torch.tensor([0.5])) for _ in range(3)])
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        if self.legacy:
            w = torch.FloatTensor([self.scales[0], self.scales[1], self.scales[2]])  # MIXER-LEGACY
        else:
            w = torch.Tensor([s for s in self.scales])  # MIXER-REWRAP
        return self.proj(x * w.view(1, -1))


@pytest.mark.parametrize("legacy", [True, False])
def test_a_legacy_constructor_of_parameters_is_a_rewrap_not_an_item_call(legacy):
    """Issue 11 class 5: torch.Tensor([p, q]) / torch.FloatTensor([...]) of tensors is a re-wrap (torch
    calls float() on each internally; the user wrote no .item()), with a torch.stack fix, also when no
    recorded path links the new tensor back to the parameters."""
    m = _Mixer(legacy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradscope.trace() as tr:
            m(torch.randn(2, 3)).pow(2).mean().backward()
    assert m.scales[0].grad is None and m.proj.weight.grad is not None
    exp = tr.why(m.scales[0])
    assert exp.cause == "tensor_rewrap", (exp.cause, exp.summary)
    assert exp.site.lineno == line_of("MIXER-LEGACY" if legacy else "MIXER-REWRAP")
    assert "torch.stack(" in exp.fix and ".item()" not in exp.fix, exp.fix


class _ZeroingHook:
    """A hook object (not a function) whose value-returning line is not its last return."""

    def __call__(self, grad):
        try:
            return torch.zeros_like(grad)  # object-hook-zeroes
        except RuntimeError:
            print("no grad")  # (the implicit `return None` is on this line)


def test_a_hook_object_is_named_by_its_class_and_its_value_returning_line():
    m = _TwoLayer()
    m.body.weight.register_hook(_ZeroingHook())
    with gradscope.trace() as tr:
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.body.weight)
    assert exp.cause == "hook_modified", exp
    assert exp.site.lineno == line_of("object-hook-zeroes"), exp.site
    assert "_ZeroingHook.__call__" in exp.summary and "object at 0x" not in exp.summary, exp.summary


def _poly_loss(logits, labels):
    onehot = F.one_hot(labels, num_classes=logits.shape[-1]).to(dtype=logits.dtype)
    pt = (onehot * F.softmax(logits, dim=-1)).sum(-1)
    return (F.cross_entropy(logits, labels, reduction="none") + (1 - pt)).mean()


def test_backward_without_grad_names_the_creation_of_its_one_floating_point_input():
    """Nothing in the loss requires grad and no cut removed it: the one floating-point tensor it was made
    from (integer labels cannot carry a gradient) was created without requires_grad: that line."""
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            scores = torch.rand([6, 4])  # made-without-grad
            labels = torch.randint(0, 4, [6])
            _poly_loss(scores, labels).backward()
    exp = tr.failure
    assert exp.cause == "requires_grad_false", exp
    assert exp.site.lineno == line_of("made-without-grad"), exp.site
    assert "scores" in exp.summary and "torch.rand(..., requires_grad=True)" in exp.fix, exp.fix

    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr2:  # two candidates: which one was meant to learn is not said by the trace
            w, x = torch.zeros(4, 2), torch.randn(3, 4)
            (x @ w).sum().backward()  # two-inputs
    assert tr2.failure.cause == "requires_grad_false"
    assert tr2.failure.site.lineno == line_of("two-inputs")


class _WithOptimizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)


class _WiderHead(_WithOptimizer):
    def __init__(self):
        super().__init__()
        self.extra = nn.Linear(3, 2)
        self.head = nn.Linear(6, 1)  # rebuilt-wider

    def forward(self, x):
        return self.head(torch.cat([self.body(x), self.extra(x)], dim=1))


def test_a_layer_rebuilt_with_another_width_after_the_optimizer_is_the_stale_optimizers_cause():
    """The base class builds the optimizer; the subclass then rebuilds a layer with another shape: the
    optimizer's old parameter is the replaced one (its module path), not a parameter never used."""
    with gradscope.trace() as tr:
        m = _WiderHead()
        m.opt.zero_grad()
        m(torch.randn(2, 3)).sum().backward()
        m.opt.step()
    old = m.opt.param_groups[0]["params"][2]  # the first head's weight
    exp = tr.why(old)
    assert exp.cause == "param_recreated", exp
    assert exp.site.lineno == line_of("rebuilt-wider"), exp.site
    assert "`head`" in exp.summary, exp.summary


def test_a_loss_differentiated_only_by_autograd_grad_is_named_although_another_backward_ran():
    """A hand-rolled two-stage pipeline: the last stage's loss goes through torch.autograd.grad (to send the
    input gradient upstream), the first stage's output through .backward(): the last stage's weights get
    no .grad, and no cut is to blame."""
    stages = [nn.Linear(4, 6), nn.Linear(6, 2)]
    with gradscope.trace() as tr:
        act = stages[0](torch.randn(3, 4))
        recv = act.detach().requires_grad_(True)
        loss = stages[1](recv).pow(2).mean()
        (g,) = torch.autograd.grad(loss, [recv])  # grad-only
        act.backward(g)
    assert stages[0].weight.grad is not None and stages[1].weight.grad is None
    exp = tr.why(stages[1].weight)
    assert exp.cause == "autograd_grad_not_backward", exp
    assert exp.site.lineno == line_of("grad-only"), exp.site
    assert "`loss`" in exp.summary and "loss.backward()" in exp.fix, exp
    assert tr.why(stages[0].weight).cause == "ok"


class _GatedSkip(nn.Module):
    def __init__(self, use_skip):
        super().__init__()
        self.use_skip = use_skip
        self.lin = nn.Linear(3, 3)
        self.skip_weight = nn.Parameter(torch.ones(3))  # (defined here: not the line to name)
        self.task_scale = nn.ParameterDict({k: nn.Parameter(torch.zeros(())) for k in ("a", "b")})

    def forward(self, x, prev=None):
        h = self.lin(x)
        if prev is not None and self.use_skip:  # skip-guard
            h = h + prev * self.skip_weight
        return h

    def combined(self, losses, weights):
        total = 0.0
        for k, loss in losses.items():
            if weights[k] == 0.0:
                continue  # zero-weight-skip
            total = total + torch.exp(-self.task_scale[k]) * loss + self.task_scale[k]
        return total


def test_a_parameter_read_only_behind_a_skip_is_named_at_the_skip():
    """Never used, because the one line that reads it sits in an `if` that did not hold, or after an
    `if ...: continue` that skipped it: that condition or that continue, not where it is defined."""
    m = _GatedSkip(use_skip=True)
    with gradscope.trace() as tr:
        h = m(torch.randn(2, 3))  # prev is None: the skip connection never runs
        losses = {"a": h.pow(2).mean(), "b": h.abs().mean()}
        m.combined(losses, {"a": 1.0, "b": 0.0}).backward()
    exp = tr.why(m.skip_weight)
    assert exp.cause == "unused_parameter", exp
    assert exp.site.lineno == line_of("skip-guard"), exp.site
    exp_b = tr.why(m.task_scale["b"])
    assert exp_b.cause == "unused_parameter" and exp_b.site.lineno == line_of("zero-weight-skip"), exp_b
    assert "`continue`" in exp_b.summary, exp_b.summary
    assert tr.why(m.task_scale["a"]).cause == "ok"


class _NetA(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _NetB(_NetA):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.mid = nn.Linear(6, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.mid(torch.relu(self.fc1(x)))))


def test_a_model_built_again_after_its_optimizer_is_named_at_the_line_that_built_it():
    """`net = NetA(); opt = Adam(net.parameters()); net = NetB()`: the optimizer holds none of what the
    forward trains; the old model was never called (its parameters are named by class and path) and its
    layer at the same path has another width: param_recreated at the rebinding, not inside NetB."""
    with gradscope.trace() as tr:
        net = _NetA()
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        net = _NetB()  # built-again
        opt.zero_grad()
        F.cross_entropy(net(torch.randn(5, 4)), torch.randint(0, 2, (5,))).backward()
        opt.step()
    old = opt.param_groups[0]["params"][0]
    exp = tr.why(old)
    assert exp.cause == "param_recreated", exp
    assert exp.site.lineno == line_of("built-again"), exp.site
    assert tr.data.tensors[tr.resolve(old)].name == "_neta.fc1.weight"
    # every parameter of the old model is that one problem (not a look-alike layer of the new one per parameter)
    olds = opt.param_groups[0]["params"]
    assert {(tr.why(p).cause, tr.why(p).site.lineno) for p in olds} == {("param_recreated", line_of("built-again"))}
    assert len(tr.problems()) == 1, [x.summary for x in tr.problems()]
    src = tr.graph().source  # the drawing says the same cause as the report, not "not used"
    assert src.count("param recreated") == len(olds) + 1 and "not used" not in src  # (each node, and the title)
