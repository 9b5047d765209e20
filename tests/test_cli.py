"""The ``gradscope`` command line, run for real in subprocesses on real training scripts."""
from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import requires_dot

REPO = Path(__file__).resolve().parents[1]
CONSOLE_SCRIPT = Path(sys.executable).with_name("gradscope")

BUGGY = """\
import os
import re
import sys

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h.detach()  # BUG: cuts fc1 off from the loss
        return self.fc2(h)


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    opt.step()
print("script-argv", sys.argv)
print("script-name", __name__)
print("script-path0", sys.path[0])
print("script-cwd", os.getcwd())
code = os.environ.get("EXIT_CODE", "")
if code:
    sys.exit(int(code) if code.isdigit() else code)
"""

INPLACE = """\
import torch
from torch import nn

fc = nn.Linear(4, 8)
out = nn.Linear(8, 1)
h = torch.sigmoid(fc(torch.randn(16, 4)))
h.mul_(2)  # BUG: sigmoid saved h for backward
loss = out(h).pow(2).mean()
loss.backward()
print("unreachable")
"""

HEALTHY = """\
import torch
from torch import nn

model = nn.Linear(3, 1)
model(torch.randn(5, 3)).pow(2).mean().backward()
"""


def line_of(src: str, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    return next(i for i, line in enumerate(src.splitlines(), 1) if needle in line)


BUG_LINE = line_of(BUGGY, "h = h.detach()")


def gradscope(*args, cwd, env=None, console_script=False, timeout=180):
    """Run ``python -m gradscope ARGS`` (or the installed console script) and return the result."""
    e = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", **(env or {}))
    e.pop("FORCE_COLOR", None)
    cmd = [str(CONSOLE_SCRIPT)] if console_script else [sys.executable, "-m", "gradscope"]
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def buggy(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "train.py").write_text(BUGGY)
    return d / "train.py"


def assert_one_error_line(p):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gradscope: error:"), p.stderr
    assert "Traceback" not in p.stderr + p.stdout


def test_run_names_the_cut_and_behaves_like_python(buggy, tmp_path):
    p = gradscope("run", "proj/train.py", "pos", "--lr", "3", "--", "-x", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    # the script ran as __main__ with its own argv, its directory first on sys.path, our cwd
    assert "script-argv ['proj/train.py', 'pos', '--lr', '3', '--', '-x']" in out
    assert "script-name __main__" in out
    assert f"script-path0 {buggy.parent}" in out
    assert f"script-cwd {tmp_path}" in out
    # the report names the cut: file:line and cause
    assert f"train.py:{BUG_LINE}" in out
    assert "detach" in out
    assert "fc1.weight" in out


def test_console_script_json(buggy, tmp_path):
    if not CONSOLE_SCRIPT.exists():
        pytest.skip("the gradscope console script is not installed (pip install -e .)")
    p = gradscope("run", "--json", buggy, console_script=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # nothing but JSON on stdout, although the script prints
    assert "script-argv" in p.stderr
    assert doc["ok"] is False and doc["verdict"]
    [problem] = doc["problems"]  # one cut starves both fc1 parameters
    assert problem["cause"] == "detach" and problem["targets"] == ["fc1.weight", "fc1.bias"]
    assert problem["site"]["lineno"] == BUG_LINE and problem["site"]["filename"].endswith("train.py")
    params = {r["name"]: r for r in doc["params"]}
    assert params["fc1.weight"]["status"] == "none" and params["fc1.weight"]["cause"] == "detach"
    assert params["fc1.weight"]["site"]["lineno"] == BUG_LINE
    assert params["fc2.weight"]["status"] == "received" and params["fc2.weight"]["norm"] > 0
    assert [c["site"]["lineno"] for c in doc["cuts"]] == [BUG_LINE] * 3  # one per training step
    assert doc["failure"] is None


def test_json_why_and_steps(buggy, tmp_path):
    p = gradscope("run", "--json", "--steps", "1", "--why", "fc1.bias", buggy, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["n_backward"] == 1  # recording stopped after the first backward
    assert doc["why"]["fc1.bias"]["cause"] == "detach"
    assert doc["why"]["fc1.bias"]["site"]["lineno"] == BUG_LINE


@pytest.mark.parametrize("code,expected", [("3", 3), ("0", 0), ("bye", 1)])
def test_system_exit_code_passes_through(buggy, tmp_path, code, expected):
    p = gradscope("run", "--json", buggy, cwd=tmp_path, env={"EXIT_CODE": code})
    assert p.returncode == expected, p.stderr
    doc = json.loads(p.stdout)
    assert doc["exit_code"] == expected
    assert doc["failure"] is None  # sys.exit() ends a script; it is not a failed step
    assert "script-argv" in p.stderr
    if code == "bye":
        assert "\nbye\n" in p.stderr  # like Python: the message goes to stderr


def test_script_exception_traceback_then_diagnosis(tmp_path):
    script = tmp_path / "inplace.py"
    script.write_text(INPLACE)
    p = gradscope("run", script, cwd=tmp_path)
    assert p.returncode == 1
    err = p.stderr
    assert "unreachable" not in p.stdout
    # the script's own traceback, like Python prints it, without gradscope's or runpy's frames
    tb = err.index("Traceback (most recent call last):")
    assert f'File "{script}", line {line_of(INPLACE, "loss.backward()")}' in err
    assert "RuntimeError" in err and "inplace operation" in err
    assert "runpy" not in err and "gradscope/cli.py" not in err
    # then the diagnosis: the in-place write, with its line
    diag = err.index("gradscope: why the script failed")
    assert diag > tb
    assert "inplace_saved_tensor" in err[diag:]
    assert f"inplace.py:{line_of(INPLACE, 'h.mul_(2)')}" in err[diag:]


def test_save_then_show_round_trip(buggy, tmp_path):
    saved = tmp_path / "t.json"
    p = gradscope("run", "--quiet", "--save", saved, buggy, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert saved.exists() and f"trace saved to {saved}" in p.stdout
    s = gradscope("show", saved, "--why", "fc1.weight", cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    assert f"train.py:{BUG_LINE}" in s.stdout and "detach" in s.stdout
    j = gradscope("show", saved, "--json", cwd=tmp_path)
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert any(e["cause"] == "detach" and e["site"]["lineno"] == BUG_LINE for e in doc["problems"])


@requires_dot
def test_out_svg(buggy, tmp_path):
    svg = tmp_path / "flow.svg"
    p = gradscope("run", "--quiet", "--out", svg, buggy, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"diagram written to {svg}" in p.stdout + p.stderr
    text = svg.read_text()
    assert "<svg" in text and "fc1" in text


def test_errors_are_one_line_subprocess(tmp_path):
    (tmp_path / "corrupt.json").write_text('{"schema": "gradscope.trace", "version": 1, "events": [{"ind')
    cases = [("run", tmp_path / "missing.py"), ("show", tmp_path / "corrupt.json"), ("frobnicate",)]
    with ThreadPoolExecutor(2) as pool:  # independent processes: run them side by side
        results = list(pool.map(lambda args: gradscope(*args, cwd=tmp_path), cases))
    for p in results:
        assert_one_error_line(p)
    assert "missing.py" in results[0].stderr
    assert "corrupt.json" in results[1].stderr and "not valid JSON" in results[1].stderr
    assert "frobnicate" in results[2].stderr


@pytest.mark.parametrize("case", ["unknown-why", "not-a-trace", "absent-trace", "bad-steps", "bad-out", "directory"])
def test_errors_are_one_line_in_process(tmp_path, capsys, case):
    from gradscope.cli import main

    (tmp_path / "healthy.py").write_text(HEALTHY)
    (tmp_path / "other.json").write_text('{"hello": 1}')
    args, needle = {
        "unknown-why": (["run", "--why", "no_such_tensor", tmp_path / "healthy.py"], "no_such_tensor"),
        "not-a-trace": (["show", tmp_path / "other.json"], "not a gradscope trace"),
        "absent-trace": (["show", tmp_path / "absent.json"], "absent.json"),
        "bad-steps": (["run", "--steps", "zero", tmp_path / "healthy.py"], "--steps"),
        "bad-out": (["run", "--out", "diagram.bmp", tmp_path / "healthy.py"], ".bmp"),
        "directory": (["run", tmp_path], "directory"),
    }[case]
    assert main([str(a) for a in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()  # the report (if any) is on stdout
    assert len(err) == 1 and err[0].startswith("gradscope: error:") and needle in err[0], err


@pytest.mark.parametrize("opts", [["--out", "missing/flow.svg"], ["--save", "missing/trace.json"],
                                  ["--watch", "--out", "timeline.png"]])
def test_an_output_that_cannot_be_written_is_an_error_before_the_script_runs(tmp_path, capsys, opts):
    """A missing folder for --out/--save, or a timeline that is not .svg: found before a long training run, not after
    it (the script's own marker file is never written)."""
    from gradscope.cli import main

    marker = tmp_path / "ran.txt"
    (tmp_path / "train.py").write_text(HEALTHY + f"\nopen({str(marker)!r}, 'w').write('ran')\n")
    args = ["run", *[str(tmp_path / o) if "/" in o or o.endswith(".png") else o for o in opts], str(tmp_path / "train.py")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gradscope: error:"), err
    assert ("does not exist; create it first" in err[0]) if "missing" in str(opts) else (".svg" in err[0]), err
    assert not marker.exists()


def test_doctor(tmp_path):
    p = gradscope("doctor", cwd=tmp_path)
    assert "dot" in p.stdout and "torch" in p.stdout
    if shutil.which("dot"):
        assert p.returncode == 0, p.stdout
        assert shutil.which("dot") in p.stdout and "graphviz version" in p.stdout


def test_demo(tmp_path):
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    p = gradscope("demo", cwd=cwd, env={"TMPDIR": str(tmp)})
    assert p.returncode == 0, p.stderr
    out = p.stdout + p.stderr
    assert "detach" in out and "numpy" in out
    assert "benign" in out  # loss.item() for logging
    assert "inplace_saved_tensor" in out
    # each explanation once (in its report's panel), and the round trip's line listed as the NumPy cut it is
    panels = [ln.split("·")[-1].strip(" ─╮╭") for ln in out.splitlines() if ln.startswith("╭─")]
    assert panels == ["detach", "numpy_roundtrip", "no_grad_block", "inplace_saved_tensor", "ok"], panels
    assert sum("x.grad is None: y was detached" in ln for ln in out.splitlines()) == 1
    assert re.search(r"^numpy\(\)\s+demo\.py:\d+\s+h = torch\.from_numpy", out, re.M), out
    assert list(cwd.iterdir()) == []  # nothing written silently into the current directory
    # the last line says where the diagram went: a new folder under the temporary directory
    last = out.strip().splitlines()[-1]
    m = re.search(r"the diagram of example 2 is (\S+)", last)
    assert m, last
    written = Path(m.group(1))
    assert written.exists() and tmp in written.parents
    assert written.suffix == (".svg" if shutil.which("dot") else ".dot")


def test_demo_out_writes_the_named_path(tmp_path):
    p = gradscope("demo", "--out", "flow.dot", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "flow.dot").read_text().startswith("digraph")
    assert "the diagram of example 2 is flow.dot" in p.stdout


def test_doctests():
    import gradscope.cli

    assert doctest.testmod(gradscope.cli).failed == 0


def test_demo_without_dot(tmp_path):
    """Without Graphviz the demo still succeeds: it says so and writes the .dot source."""
    p = gradscope("demo", "--out", "flow.svg", cwd=tmp_path, env={"PATH": str(tmp_path / "empty")})
    assert p.returncode == 0, p.stderr
    out = " ".join((p.stdout + p.stderr).split())  # undo rich's line wrapping
    assert "Graphviz's `dot` program is not installed" in out and "flow.dot" in out
    assert (tmp_path / "flow.dot").read_text().startswith("digraph")
    assert not (tmp_path / "flow.svg").exists()


def test_no_command_and_help(tmp_path, capsys):
    from gradscope.cli import main

    assert main([]) == 2 and "usage: gradscope" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0 and "(script.py | -m module) [script args ...]" in capsys.readouterr().out
    assert main(["run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gradscope: error:") and "script" in err[0]


# --------------------------------------------------------------------------- run -m package.module
PKG_MODEL = BUGGY.split("torch.manual_seed(0)")[0]  # the Net class with its detach
PKG_TRAIN = """\
import sys

import torch

from .model import Net  # a relative import: only works when run as part of the package

torch.manual_seed(0)
model = Net()
model(torch.randn(8, 4)).pow(2).mean().backward()
print("m-argv", sys.argv)
print("m-name", __name__, __package__)
print("m-path0", sys.path[0])
if len(sys.argv) > 1 and sys.argv[1] == "fail":
    raise ValueError("asked to fail")
"""


@pytest.fixture
def package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(PKG_MODEL)
    (pkg / "train.py").write_text(PKG_TRAIN)
    (pkg / "__main__.py").write_text(PKG_TRAIN)
    return pkg


def test_run_module_like_python_m(package, tmp_path):
    """`gradscope run -m pkg.train args` runs the module as `python -m pkg.train args` does."""
    with ThreadPoolExecutor(2) as pool:
        plain, traced = pool.map(lambda cmd: subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True,
                                                            timeout=180,
                                                            env=dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO))),
                                 [[sys.executable, "-m", "pkg.train", "--lr", "3", "-m", "x"],
                                  [sys.executable, "-m", "gradscope", "run", "-m", "pkg.train", "--lr", "3", "-m", "x"]])
    assert plain.returncode == 0 and traced.returncode == 0, (plain.stderr, traced.stderr)
    for key in ("m-argv", "m-name", "m-path0"):  # same argv, __name__, __package__ and sys.path[0]
        want = next(ln for ln in plain.stdout.splitlines() if ln.startswith(key))
        assert want in traced.stdout.splitlines(), (want, traced.stdout)
    assert f"m-argv ['{package / 'train.py'}', '--lr', '3', '-m', 'x']" in plain.stdout
    assert f"m-path0 {tmp_path}" in traced.stdout
    # and the trace saw the step: the cut inside the package's model, by line and name
    assert f"model.py:{BUG_LINE}" in traced.stdout and "detach" in traced.stdout and "fc1.weight" in traced.stdout


def test_run_module_package_main_json_and_failure(package, tmp_path):
    p = gradscope("run", "--json", "-m", "pkg", cwd=tmp_path)  # a package runs its __main__
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert f"m-argv ['{package / '__main__.py'}']" in p.stderr
    [problem] = doc["problems"]
    assert problem["cause"] == "detach" and problem["site"]["lineno"] == BUG_LINE
    assert problem["site"]["filename"] == str(package / "model.py")
    f = gradscope("run", "-m", "pkg.train", "fail", cwd=tmp_path)
    assert f.returncode == 1
    assert f'File "{package / "train.py"}", line {line_of(PKG_TRAIN, "asked to fail")}' in f.stderr
    assert "ValueError: asked to fail" in f.stderr and "runpy" not in f.stderr and "gradscope/cli.py" not in f.stderr


def test_run_module_errors_are_one_line(package, tmp_path):
    (package / "broken").mkdir()
    (package / "broken" / "__init__.py").write_text("")
    cases = [("run", "-m", "no_such_module"), ("run", "-m", "pkg.broken"), ("run", "-m", "pkg.train", "--why")]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda args: gradscope(*args, cwd=tmp_path), cases[:2]))
    for p in results:
        assert_one_error_line(p)
    assert "no_such_module" in results[0].stderr
    assert "pkg.broken" in results[1].stderr and "cannot be directly executed" in results[1].stderr
    from gradscope.cli import _split_run

    assert _split_run(list(cases[2])) == (["run", "-m", "pkg.train"], ["--why"])  # after -m: the module's argv


COMPILED = BUGGY.replace("model = Net()\n", "model = torch.compile(Net(), backend='aot_eager')\n")


@pytest.mark.slow
def test_run_eager_compile_gets_the_line_inside_a_compiled_forward(tmp_path):
    script = tmp_path / "compiled.py"
    script.write_text(COMPILED)
    p = gradscope("run", "--json", "--eager-compile", script, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    [problem] = doc["problems"]
    assert problem["cause"] == "detach" and problem["site"]["lineno"] == BUG_LINE, problem
    plain = gradscope("run", "--json", script, cwd=tmp_path)  # compiled backward: no line, judged by arrival
    [hidden] = json.loads(plain.stdout)["problems"]
    assert hidden["cause"] == "unknown" and "--eager-compile" in hidden["fix"], hidden


FACTORY = """\
import torch, torch.nn as nn
CFG = {"act": nn.GELU, "norm": nn.LayerNorm}


class Block(nn.Module):
    def __init__(self, d, norm_layer=nn.LayerNorm, act=nn.ReLU):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm1, self.norm2 = norm_layer(d), norm_layer(d)
        self.act = act()

    def forward(self, x):
        return self.act(self.norm1(self.fc(x)))


model = nn.Sequential(Block(4, CFG["norm"], CFG["act"]), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
opt.zero_grad()
model(torch.randn(3, 4)).sum().backward()
opt.step()
"""


def test_run_names_the_line_of_a_layer_built_through_a_factory_that_the_forward_never_calls(tmp_path):
    """`norm_layer(d)` from a config, assigned with another layer in one tuple: the unused one's definition line
    is in the report of `gradscope run`, as in-process."""
    (tmp_path / "fac.py").write_text(FACTORY)
    p = gradscope("run", "fac.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    line = line_of(FACTORY, "self.norm1, self.norm2 = norm_layer(d), norm_layer(d)")
    assert re.search(rf"0\.norm2\.weight .*unused parameter @ fac\.py:{line}\b", p.stdout), p.stdout


def test_a_script_that_fails_before_any_tensor_op_shows_its_error_once(tmp_path):
    """An import error at the script's second line: the traceback once, one line from gradscope, no report, no
    problem panel, no re-run to verify (there is no gradient flow to explain); the exit code is the script's."""
    import os

    script = tmp_path / "train.py"
    script.write_text("import torch\nimport a_module_that_does_not_exist_xyz\nprint('never')\n")
    env = {k: v for k, v in os.environ.items() if k != "GRADSCOPE_NO_VERIFY"}
    p = subprocess.run([sys.executable, "-m", "gradscope", "run", str(script)], capture_output=True, text=True,
                       timeout=300, env=env)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert out.count("No module named 'a_module_that_does_not_exist_xyz'") == 1, out
    assert "the script failed at train.py:2 before any tensor operation ran" in p.stderr, out
    assert "problem" not in out and "verif" not in out and "unknown" not in out, out
