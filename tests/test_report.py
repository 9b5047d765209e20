"""Tests for gradscope.render.report: the rich report, explanation panels, plain text and HTML.

Golden files: ``tests/golden/report_<case>_<width>.txt`` hold the report of the hand-built
cases in ``tests/render_cases.py`` printed with
``Console(width=N, color_system=None, record=True, force_terminal=False)`` at 60 and 120
columns (trailing spaces stripped). After an intended change, regenerate with

    GRADSCOPE_REGEN_GOLDEN=1 pytest tests/test_graph.py tests/test_report.py

and read the diff: the report must still read well without colour at both widths.
"""
from __future__ import annotations

import io
import os
import pathlib
import re

import pytest
from rich.console import Console
from rich.theme import Theme

import render_cases as rc
from gradscope.core.explanation import Explanation
from gradscope.core.explanation import PathStep
from gradscope.core.explanation import StepSummary
from gradscope.core.model import Frame
from gradscope.core.model import Site
from gradscope.render.report import (ExplanationPanel, TraceReport, explanation_html, explanation_to_text, html_report, wrap_name,
                              print_report)

GOLDEN = pathlib.Path(__file__).parent / "golden"
REGEN = os.environ.get("GRADSCOPE_REGEN_GOLDEN") == "1"
WIDTHS = (60, 120)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run GRADSCOPE_REGEN_GOLDEN=1 pytest and review the diff"
    assert actual == path.read_text(encoding="utf-8"), \
        f"{name} differs from the golden file; if intended, regenerate (see module doc)"


def render(renderable, width: int) -> str:
    con = Console(width=width, color_system=None, record=True, force_terminal=False, file=io.StringIO())
    con.print(renderable)
    return "\n".join(line.rstrip() for line in con.export_text().split("\n"))


def flat(text: str) -> str:
    """The words of a report on one line: panel borders and wrapping removed."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("│"):
            line = line[1:]
        if line.endswith("│"):
            line = line[:-1]
        out.append(line)
    return " ".join(" ".join(out).split())


def report(case: str, width: int) -> str:
    data, summary = rc.CASES[case]()
    return render(TraceReport(data, summary), width)


# ----------------------------------------------------------------------------- goldens
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", sorted(rc.CASES))
def test_report_matches_golden(case, width):
    text = report(case, width)
    check_golden(f"report_{case}_{width}.txt", text)
    assert max(len(line) for line in text.splitlines()) <= width
    assert not ANSI.search(text)


# ----------------------------------------------------------------------------- content
@pytest.mark.parametrize("width", WIDTHS)
def test_numpy_report_names_the_params_the_cut_its_line_and_the_fix(width):
    text = report("numpy_mlp", width)
    flat_ = flat(text)  # wrapping differs per width; the words must not
    assert "gradscope · 6 ops recorded · backward from loss" in flat_
    assert "1 optimizer step" in flat_
    assert "✗ 1 problem: fc1.weight, fc1.bias get no gradient" in flat_
    for row in ("fc1.weight [8, 4] ✗ None", "fc1.bias [8] ✗ None"):
        assert row in flat_, row
    # narrow reports write the norm in place of the word "received"
    assert ("fc2.weight [1, 8] ✓ 0.576" if width < 80 else "fc2.weight [1, 8] ✓ received 0.576") in flat_
    assert flat_.count("numpy roundtrip @ model.py:25") == 2  # one cause line per starved parameter
    assert "0.576" in flat_ and "0.619" in flat_
    assert "detach() model.py:25" in flat_ and "numpy() model.py:25" in flat_
    assert "h = torch.from_numpy(h.detach().numpy().clip(0.0, 1.0))" in flat_
    assert "1 benign cut (harmless, e.g. logging): item() @ train.py:42" in flat_
    assert "problem 1 of 1 · numpy_roundtrip" in flat_
    assert "❱ 25 │ h = torch.from_numpy(h.detach().numpy()" in flat_
    assert "✗ detach() model.py:25 ← cut here: .detach().numpy()" in flat_
    assert "fix: keep the computation in torch: h = h.clamp(0.0, 1.0)" in flat_
    assert "What the trace could not see" not in flat_


def test_failure_panel_comes_first_and_says_backward_failed():
    text = report("inplace_failure", 120)
    assert "✗ backward failed: an in-place write changed a tensor saved for backward" in text
    assert "backward failed · inplace_saved_tensor" in text
    assert "❱ 11 │ h.mul_(2)" in text
    assert "fc1.weight   [8, 4]   ✗ None" in text and "inplace saved tensor @ model.py:11" in text
    assert "Cuts that stop gradients" not in text  # no cuts in this step
    assert "the traced block raised" not in text  # the failure panel already explains it


def test_ok_report_is_green_and_frozen_params_are_not_problems():
    text = report("frozen_nograd", 60)
    assert "✓ OK: every trainable parameter got a gradient" in text
    assert re.search(r"encoder\.0\.weight\s+\[32, 16\]\s+– frozen", text)
    assert "problem" not in text and "╭" not in text
    con = Console(width=80, color_system="standard", force_terminal=True, file=io.StringIO())
    data, summary = rc.frozen_nograd()
    con.print(TraceReport(data, summary))
    assert "\x1b[1;32m✓" in con.file.getvalue()  # bold green verdict


def test_colours_come_from_named_styles_a_theme_can_override():
    data, summary = rc.numpy_mlp()
    plain = Console(width=100, color_system="standard", force_terminal=True, file=io.StringIO())
    plain.print(TraceReport(data, summary))
    out = plain.file.getvalue()
    assert "\x1b[1;31m✗ " in out  # bold red verdict
    themed = Console(width=100, color_system="standard", force_terminal=True, file=io.StringIO(),
                     theme=Theme({"gradscope.none": "magenta", "gradscope.bad": "blue"}))
    themed.print(TraceReport(data, summary))
    out2 = themed.file.getvalue()
    assert "\x1b[35m✗ None" in out2 and "\x1b[34m✗ " in out2
    assert ANSI.sub("", out) == ANSI.sub("", out2)  # same words either way


def test_many_params_fold_the_healthy_ones():
    data, summary = rc.blocks(40, 6, cut_block=5)  # 6*2+1 starved, 69 healthy
    text = report_from(data, summary, 120)
    bad = [p for p in summary.params if p.status != "received"]
    good = [p for p in summary.params if p.status == "received"]
    assert len(bad) == 11 and len(good) == 71
    for p in bad:
        assert re.search(rf"\b{re.escape(p.name)}\s+\[64, 64\]\s+✗ None", text), p.name
    shown_good = [p for p in good if re.search(rf"\b{re.escape(p.name)}\s", text)]
    assert len(shown_good) == 30 - 11 - 1
    assert f"… and {len(good) - len(shown_good)} more with gradients" in text
    assert f"Parameters ({len(summary.params)}) · 11 without a healthy gradient" in text
    table = text.split("Cuts that stop gradients")[0]
    assert len([line for line in table.splitlines() if re.match(r"^(embed|blocks|head)", line)]) == 29


def test_many_starved_params_are_grouped_by_cause_and_site():
    data, summary = rc.blocks(40, 6, cut_block=30)  # 61 starved, 21 healthy
    text = report_from(data, summary, 100)
    words = flat(text)
    assert "embed.weight … blocks.29.mlp.w1 61 params ✗ None detach @ model.py:60" in words
    assert "blocks.3.attn.w0" not in text  # inside the group
    assert "more with gradients" not in words  # 1 group row + 21 healthy rows fit in 30
    assert "head.weight [10, 64] ✓ received" in words
    assert len(text.split("Cuts that stop gradients")[0].splitlines()) < 40


def report_from(data, summary, width):
    return render(TraceReport(data, summary), width)


def test_problems_with_the_same_cause_site_and_fix_share_one_panel():
    data, summary = rc.numpy_mlp()
    first = summary.problems[0]
    twin = Explanation(first.cause, first.site, target="fc3.weight", summary="fc3.weight: same story",
                       fix=first.fix, status="none")
    summary.problems.append(twin)
    text = report_from(data, summary, 100)
    assert text.count("╭─") == 1
    assert "also: fc3.weight" in text
    assert "problem 1 of 1" in text


def test_unseen_notes_and_truncation_are_reported():
    data, summary = rc.numpy_mlp()
    data.truncated = True
    summary.unseen = ["a DataLoader worker process (its ops are not recorded)"]
    text = report_from(data, summary, 80)
    assert "What the trace could not see" in text
    assert "• a DataLoader worker process (its ops are not recorded)" in text
    assert "recording stopped early (truncated)" in text


def test_exception_without_failure_is_mentioned_in_the_header():
    data, summary = rc.inplace_failure()
    summary.failure = None
    text = report_from(data, summary, 120)
    assert "the traced block raised RuntimeError: one of the variables needed" in text


def test_no_backward_is_said():
    text = report_from(rc.numpy_mlp()[0], StepSummary(n_ops=3, verdict="no backward ran", ok=False), 80)
    assert "gradscope · 3 ops recorded · no backward ran" in text
    assert "✗ no backward ran" in text


def test_a_loop_backwarding_from_the_same_name_says_it_once_with_the_count():
    data, summary = rc.numpy_mlp()
    summary.n_backward = 3
    summary.backward_roots = ["loss", "loss", "loss"]
    assert "backward from loss (3x)" in report_from(data, summary, 120)
    summary.backward_roots = ["d_loss", "g_loss", "d_loss"]
    assert "backward from d_loss, g_loss (3x)" in report_from(data, summary, 120)


# ----------------------------------------------------------------------------- source excerpt
def _explanation(site, **kw):
    return Explanation("detach", site, target="w", summary="w.grad is None: y.detach() cut w off.",
                       fix="use y instead of y.detach()", **kw)


def test_excerpt_reads_the_file_with_two_lines_of_context(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("import torch\n\n\ndef f(x, w):\n    y = x * 2\n    z = y.detach() * w\n"
                   "    return z.sum()\n\n# end\n", encoding="utf-8")
    site = Site(str(src), 6, "f", "z = y.detach() * w",
                (Frame("train.py", 9, "main", "loss = f(x, w)"), Frame(str(src), 6, "f", "z = y.detach() * w")))
    text = render(ExplanationPanel(_explanation(site)), 70)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "❱" in line)
    assert lines[at - 2].startswith("│   4 │ def f(x, w):")
    assert lines[at - 1].startswith("│   5 │     y = x * 2")
    assert lines[at].startswith("│ ❱ 6 │     z = y.detach() * w")
    assert lines[at + 1].startswith("│   7 │     return z.sum()")
    assert "8 │" not in text  # blank lines after the site are not shown
    assert "called from train.py:9: loss = f(x, w)" in text
    assert "model.py:6inf" in re.sub(r"[\s│]", "", text)  # the file's path (may wrap in the panel)


def test_excerpt_falls_back_to_the_recorded_code(tmp_path):
    missing = Site(str(tmp_path / "gone.py"), 12, "f", "z = y.detach() * w")
    text = explanation_to_text(_explanation(missing), width=60)
    assert "❱ 12 │ z = y.detach() * w" in text
    assert " 11 │" not in text
    # a file that changed since the trace: the recorded line, not today's line 3
    changed = tmp_path / "changed.py"
    changed.write_text("a = 1\nb = 2\nc = 3\nd = 4\n", encoding="utf-8")
    text = explanation_to_text(_explanation(Site(str(changed), 3, "f", "z = y.detach() * w")), width=60)
    assert "❱ 3 │ z = y.detach() * w" in text and "c = 3" not in text


def test_long_paths_are_folded_around_the_cut():
    steps = [PathStep(f"op{i}", site=Site("m.py", i, "f")) for i in range(30)]
    steps[15] = PathStep("detach()", site=Site("m.py", 15, "f"), flows=False, note="cut here")
    text = explanation_to_text(_explanation(Site("m.py", 15, "f", "h = h.detach()"), path=steps), width=80)
    assert "✗ detach()  m.py:15  ← cut here" in text
    assert "op14" in text and "op16" in text and "op0" in text and "op29" in text
    before, after = text.split("detach()  m.py:15")
    assert "⋮ 12 more steps" in before and "⋮ 11 more steps" in after
    assert "op7" not in text


def test_explanation_to_text_is_plain():
    site = Site("t.py", 3, "f", "z = y.detach() * w")
    text = explanation_to_text(_explanation(site, detail="detach() returns a tensor without history."), 60)
    assert not ANSI.search(text) and "╭" not in text and "│ " not in text.split("\n")[0]
    assert text.splitlines()[0] == "w.grad is None: y.detach() cut w off."
    assert "cause: detach (a .detach() cut the tensor off from autograd)" in text
    assert "why:  detach() returns a tensor without history." in text
    assert "fix:  use y instead of y.detach()" in text
    assert max(len(line) for line in text.splitlines()) <= 60


def test_explanation_panel_colours_ok_and_unknown():
    ok = Explanation("ok", None, target="w", summary="w.grad is there.", status="received")
    unk = Explanation("unknown", None, target="w", summary="not enough evidence.")
    for exp, code in ((ok, "\x1b[32m╭"), (unk, "\x1b[33m╭")):
        con = Console(width=60, color_system="standard", force_terminal=True, file=io.StringIO())
        con.print(ExplanationPanel(exp))
        assert code in con.file.getvalue()


# ----------------------------------------------------------------------------- entry points
def test_print_report_defaults_to_stdout(capsys):
    data, summary = rc.numpy_mlp()
    print_report(data, summary)
    out = capsys.readouterr().out
    assert "fc1.weight" in out and "numpy roundtrip @ model.py:25" in out


def test_html_report_and_explanation_html():
    data, summary = rc.numpy_mlp()
    html = html_report(data, summary)
    assert html.lstrip().startswith("<pre") and html.rstrip().endswith("</pre>")  # a fragment for Jupyter
    text = re.sub(r"<[^>]+>", "", html)
    assert "fc1.weight" in text and "numpy roundtrip @ model.py:25" in text
    assert re.search(r"color: #(800000|ff0000|cc0000|c0392b|[0-9a-f]{6})", html)  # coloured, inline styles
    eh = explanation_html(summary.problems[0])
    assert "numpy_roundtrip" in eh and "fix:" in eh and "<pre" in eh


# ----------------------------------------------------------------------------- real traces
torch = pytest.importorskip("torch")


class _NumpyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.from_numpy(h.detach().numpy())  # CUT-LINE
        return self.fc2(h)


CUT_LINE = next(i for i, line in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
                if line.rstrip().endswith("# CUT-LINE") and "from_numpy" in line)


@pytest.mark.parametrize("width", WIDTHS)
def test_real_trace_report(width):
    import gradscope

    model = _NumpyMLP()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradscope.trace() as tr:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        print(f"loss {loss.item():.3f}")
    con = Console(width=width, color_system=None, record=True, force_terminal=False, file=io.StringIO())
    tr.report(console=con)
    text = "\n".join(line.rstrip() for line in con.export_text().split("\n"))
    words = flat(text)
    assert max(len(line) for line in text.splitlines()) <= width
    assert re.search(r"fc1\.weight \[8, 4\] ✗ None", words)
    assert re.search(r"fc2\.weight \[1, 8\] ✓ (received )?\d", words)
    assert f"test_report.py:{CUT_LINE}" in words
    # the real file is read: the marked line and its neighbours
    assert f"❱ {CUT_LINE} │ h = torch.from_numpy(h.detach().numpy()) # CUT-LINE" in words
    assert f"{CUT_LINE - 1} │ h = torch.relu(self.fc1(x))" in words
    # and rich renders the Trace and the Explanation through this module
    con2 = Console(width=width, color_system=None, record=True, force_terminal=False, file=io.StringIO())
    con2.print(tr.why(model.fc1.weight))
    assert f"❱ {CUT_LINE} │" in con2.export_text()


# ----------------------------------------------------------------------------- names at 60 columns
LONG_OK = "encoder.layer.11.attention.self.query.weight"
LONG_BAD = "encoder.layer.11.attention.output.LayerNorm.weight"


def _long_names_case():
    """HF-BERT-length names; the starved parameter comes after the healthy ones."""
    b = rc.Builder()
    s = rc.site("model.py", 7, "x = self.norm(x.detach())")
    ok = b.param(LONG_OK, (16, 16), "received", 0.25)
    bad = b.param(LONG_BAD, (16,), "none")
    data = b.data()
    summary = StepSummary(n_events=0, n_ops=2, backward_roots=["loss"], n_backward=1, n_optimizer_steps=0,
                          params=[rc.pstatus(b, ok), rc.pstatus(b, bad, "detach", s)], harmful_cuts=[],
                          benign_cuts=[], problems=[], failure=None, verdict="1 problem", ok=False)
    return data, summary


def names_in_first_column(table: str) -> list:
    """The parameter column's names, re-joined where wrap_name broke them after a dot."""
    names: list = []
    for line in table.splitlines():
        cell = line.split("  ")[0].strip()
        if not cell or cell.startswith(("parameter", "─", "Parameters")):
            continue
        if names and names[-1].endswith("."):
            names[-1] += cell
        else:
            names.append(cell)
    return names


@pytest.mark.parametrize("width", [60, 120])
def test_parameter_names_stay_whole_and_broken_ones_come_first(width):
    text = report_from(*_long_names_case(), width)
    table = text.split("\n\n")[1]
    assert max(len(line) for line in text.splitlines()) <= width
    assert names_in_first_column(table) == [LONG_BAD, LONG_OK]  # whole, and the broken one first
    if width == 120:
        assert re.search(rf"^{re.escape(LONG_BAD)}\s+\[16\]\s+✗ None\s+detach @ model.py:7", table, re.M)


def test_wrap_name_breaks_after_dots_and_shortens_only_a_too_long_part():
    assert wrap_name("fc1.weight", 30) == ["fc1.weight"]
    assert wrap_name(LONG_OK, 24) == ["encoder.layer.11.", "attention.self.query.", "weight"]
    assert all(len(line) <= 24 for line in wrap_name(LONG_BAD, 24))
    assert "".join(wrap_name(LONG_BAD, 24)) == LONG_BAD
    (short,) = wrap_name("a" * 20 + "b" * 20, 12)
    assert len(short) == 12 and short.startswith("aaaa") and short.endswith("bbbb") and "…" in short


def test_report_width_needs_no_console(capsys):
    import gradscope
    import torch

    lin = torch.nn.Linear(3, 2)
    with gradscope.trace() as tr:
        lin(torch.randn(4, 3).detach()).sum().backward()
    for width in (60, 120):
        tr.report(width=width)
        out = capsys.readouterr().out
        assert "Parameters (2)" in out
        assert max(len(line) for line in out.splitlines()) <= width
        assert "\x1b[" not in out  # captured stdout is not a terminal: no colour codes
    tr.report(width=120)
    wide = capsys.readouterr().out
    assert "shape" in wide and "norm" in wide  # the 120-column layout, not the terminal's default
    with pytest.raises(gradscope.GradscopeError, match="width must be a whole number of columns"):
        tr.report(width=5)


def test_the_report_shows_the_extra_sites():
    """An explanation with several cuts prints the others as `also at:` lines (a real run of test_rules_none.py)."""
    import gradscope
    from test_rules_none import _two_cuts, line_of

    with gradscope.trace() as tr:
        p = _two_cuts()
    out = explanation_to_text(tr.why(p), width=120)
    assert f"also at: test_rules_none.py:{line_of('cut-detach')}  scaled = p.detach() * 2" in out, out


@pytest.mark.parametrize("width", [60, 80, 120])
def test_a_long_file_name_never_breaks_inside_the_site_of_the_cause(tmp_path, width):
    """The parameter table's cause cell at any width: a site too long for the column loses the left of its file
    name (`…_long_name.py:6`), never a piece of its line number on a line of its own."""
    import runpy

    script = tmp_path / "fsdp2_model_bug_with_a_long_name.py"
    script.write_text(
        "import torch, torch.nn as nn, gradscope\n"
        "torch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        "with gradscope.trace() as tr:\n"
        "    h = model[1](model[0](torch.randn(3, 4)))\n"
        "    h = h.detach()\n"
        "    model[2](h).sum().backward()\n")
    tr = runpy.run_path(str(script))["tr"]
    buf = io.StringIO()
    tr.report(Console(file=buf, width=width, force_terminal=False, color_system=None), width=width)
    table = buf.getvalue().split("Parameters (4)")[1].split("Cuts that")[0]
    rows = [ln.rstrip() for ln in table.splitlines()]
    sites = [ln.split()[-1] for ln in rows if "long_name.py" in ln]
    assert len(sites) == 2, table  # (model.0.weight and model.0.bias)
    assert all(s.endswith("name.py:6") for s in sites), table
    assert all(s.startswith(("fsdp2_", "…")) for s in sites), table  # (the site whole on one line)
    assert not any(ln.strip() in ("6", ":6") for ln in rows), table
    if width >= 120:  # (room for the whole name)
        assert all("fsdp2_model_bug_with_a_long_name.py:6" in ln for ln in rows if "long_name" in ln), table
