"""The ``%%gradscope`` cell magic, driven through a real IPython InteractiveShell."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("IPython")

import gradscope  # noqa: E402

BUGGY_CELL = """\
import torch
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = x * 2
z = y.detach() * w
z.sum().backward()
"""

INPLACE_CELL = """\
import torch
a = torch.randn(4, requires_grad=True)
h = torch.sigmoid(a)
h.mul_(2)
h.sum().backward()
"""


@pytest.fixture(scope="module")
def ip():
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    shell.run_line_magic("load_ext", "gradscope")
    yield shell
    shell.user_ns.pop("_gradscope_trace", None)


def test_magic_traces_the_cell_and_explains_the_cut(ip, capsys):
    ip.run_cell_magic("gradscope", "--why x", BUGGY_CELL)
    tr = ip.user_ns["_gradscope_trace"]
    assert isinstance(tr, gradscope.Trace)
    assert ip.user_ns["x"].grad is None  # the cell ran in the user namespace
    e = tr.why(ip.user_ns["x"])
    assert e.cause == "detach"
    assert e.site.lineno == 5 and "y.detach()" in e.site.code
    out = capsys.readouterr().out
    assert "why x?" in out and "x.grad is None" in out and "detach" in out


def test_magic_name_option_and_last_expression(ip, capsys):
    ip.run_cell_magic("gradscope", "--name mytrace --quiet", BUGGY_CELL + "x.shape\n")
    assert isinstance(ip.user_ns["mytrace"], gradscope.Trace)
    assert "torch.Size([3])" in capsys.readouterr().out  # the last expression is displayed


def test_magic_shows_failure_diagnosis(ip, capsys):
    ip.run_cell_magic("gradscope", "--quiet", INPLACE_CELL)  # does not raise: shows the error + diagnosis
    tr = ip.user_ns["_gradscope_trace"]
    assert tr.failure is not None and tr.failure.cause == "inplace_saved_tensor"
    assert tr.failure.site is not None and tr.failure.site.lineno == 4
    out = capsys.readouterr()
    text = out.out + out.err
    assert "RuntimeError" in text and "why the cell failed" in text


def test_magic_unknown_why_name_is_reported(ip, capsys):
    ip.run_cell_magic("gradscope", "--quiet --why nope", BUGGY_CELL)
    assert "gradscope: error:" in capsys.readouterr().out


def test_magic_report_and_graph(ip, capsys):
    ip.run_cell_magic("gradscope", "--graph", BUGGY_CELL)
    out = capsys.readouterr().out
    assert "ops recorded" in out and "backward from z.sum()" in out  # the text report (terminal shell)
    assert re.search(r"\d+ nodes, \d+ edges", out)  # the diagram's text description (no SVG in a terminal)


def test_sites_in_cells_read_as_cell_numbers(ip):
    ip.run_cell_magic("gradscope", "--quiet", BUGGY_CELL)
    tr = ip.user_ns["_gradscope_trace"]
    site = tr.why(ip.user_ns["x"]).site
    assert re.fullmatch(r"In\[\d+\]:5", site.short), site.short  # not the cell's hashed file name
    assert site.filename != site.label  # the real file name stays (excerpts, JSON round trip)
