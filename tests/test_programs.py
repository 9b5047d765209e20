"""gradscope on real training programs (tests/programs/, adapted from public repositories).

For every program, correct as written:

* as real subprocesses: ``python prog.py`` and ``python -m gradscope run --json --quiet prog.py``
  print the same output (stdout and stderr, interleaved; under ``--json`` the program's output goes to
  stderr; gradscope's own ``gradscope:`` lines aside; printed durations masked) and exit with the same
  code (0); the JSON document (the live trace's verdict) has zero problems, no failure, and names
  every parameter by its module path, each name once;
* in-process, inside ``gradscope.trace()`` (the file run as ``__main__``): the same stdout, zero
  problems, ``tr.check()`` passes, and every trainable parameter of every model it called is named by
  its module path (defined in tests/_programs.py: the module path, possibly behind the root's
  variable; unique; resolvable by that name and by the bare path).

Checks that fail today because of open gradscope bugs are ``xfail(strict=True)`` with the
symptom, per program and check, so they can be flipped as the fixes land.
"""
from __future__ import annotations

import concurrent.futures
import functools
import importlib.util
import json
import re

import _programs as P
import pytest

PROGRAMS = P.program_names()

# --------------------------------------------------------------------------- known failures
#: (program, check) -> reason. Checks: cli_output, cli_trace, output, problems, names.
XFAIL: dict[tuple[str, str], str] = {}


def _missing_dependency(name: str) -> str | None:
    """A program that needs an optional package (transformers) is skipped where it is not installed."""
    with open(P.program_path(name)) as f:
        text = f.read()
    for pkg in ("transformers",):
        if re.search(rf"^(from|import) {pkg}\b", text, re.MULTILINE) and importlib.util.find_spec(pkg) is None:
            return f"{name} needs {pkg} (pip install {pkg}; it is in the `test` extra)"
    return None


def _params(check: str):
    out = []
    for name in PROGRAMS:
        reason = XFAIL.get((name, check))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        missing = _missing_dependency(name)
        if missing:
            marks.append(pytest.mark.skip(reason=missing))
        out.append(pytest.param(name, marks=marks, id=name))
    return out


# --------------------------------------------------------------------------- runs (shared, cached)
@pytest.fixture(scope="module")
def subprocesses(request, tmp_path_factory):
    """Start every selected program plain and under ``gradscope run`` (two at a time) as soon as
    the first subprocess test asks; each test waits for its own two."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {}
    selected = {item.callspec.params["name"] for item in request.session.items
                if "subprocesses" in getattr(item, "fixturenames", ()) and hasattr(item, "callspec")}
    for name in [n for n in PROGRAMS if n in selected]:
        d_plain = tmp_path_factory.mktemp(f"{name}-plain")
        d_cli = tmp_path_factory.mktemp(f"{name}-cli")
        futures[name] = (pool.submit(P.run_plain_subprocess, name, str(d_plain)),
                         pool.submit(P.run_cli_subprocess, name, str(d_cli)), d_cli)
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)


@functools.cache
def traced(name: str) -> P.Run:
    return P.run_program(P.program_path(name), traced=True)


def _trainable_paths(run: P.Run) -> set:
    return {q for _, paths, p in run.params() if p.requires_grad for q in paths}


# --------------------------------------------------------------------------- the programs themselves
def test_at_least_15_programs():
    assert len(PROGRAMS) >= 15, PROGRAMS


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_names_its_source(name):
    with open(P.program_path(name)) as f:
        head = f.read(600)
    assert head.startswith("# Source: github.com/"), head[:80]
    assert re.search(r"@ [0-9a-f]{40}", head), "the source comment names no commit"


# --------------------------------------------------------------------------- gradscope run (subprocesses)
@pytest.mark.parametrize("name", _params("cli_output"))
def test_cli_same_output_and_exit_code(name, subprocesses):
    plain_f, cli_f, _ = subprocesses[name]
    plain, cli = plain_f.result(), cli_f.result()
    assert plain.returncode == 0, f"{name} fails plain:\n{plain.stdout[-2000:]}"
    assert cli.returncode == plain.returncode, cli.stderr[-2000:]
    assert P.normalize_output(P.program_part(cli.stderr)) == P.normalize_output(plain.stdout)


@pytest.mark.parametrize("name", _params("cli_trace"))
def test_cli_json_has_no_problems_and_module_path_names(name, subprocesses):
    _, cli_f, _ = subprocesses[name]
    cli = cli_f.result()
    assert cli.returncode == 0, cli.stderr[-2000:]
    doc = json.loads(cli.stdout)
    assert doc["failure"] is None, doc["failure"]
    assert not doc["problems"], [f"{p['cause']} {p['target']}" for p in doc["problems"]]
    assert doc["ok"], doc["verdict"]
    paths = _trainable_paths(traced(name))
    names = [p["name"] for p in doc["params"]]
    bad = [n for n in names if not P.named_by_path(n, paths)]
    assert not bad, f"not named by module path: {bad[:8]}"
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"one name for several parameters: {dup[:8]}"


# --------------------------------------------------------------------------- in-process under trace()
@pytest.mark.parametrize("name", _params("output"))
def test_traced_same_output(name):
    run = traced(name)
    assert run.error is None, f"raised under trace: {run.error!r}"
    plain = P.run_program(P.program_path(name))  # same process, same thread settings
    assert plain.error is None, f"{name} fails plain in-process: {plain.error!r}"
    assert P.normalize_output(run.stdout) == P.normalize_output(plain.stdout)


@pytest.mark.parametrize("name", _params("problems"))
def test_traced_no_problems(name):
    run = traced(name)
    assert run.error is None, f"raised under trace: {run.error!r}"
    assert not run.trace.problems(), P.problem_lines(run.trace.problems())
    run.trace.check()


@pytest.mark.parametrize("name", _params("names"))
def test_traced_params_named_by_module_path(name):
    run = traced(name)
    assert run.roots, "the program called no nn.Module"
    bad = P.name_problems(run)
    assert not bad, "\n".join(bad[:10])


# --------------------------------------------------------------------------- the definitions used above
def test_named_by_path_definition():
    paths = ["fc1.weight"]
    assert P.named_by_path("fc1.weight", paths)
    assert P.named_by_path("model.fc1.weight", paths)
    assert P.named_by_path("self.net.fc1.weight", paths)
    assert P.named_by_path("layers.0.fc1.weight", paths)
    assert not P.named_by_path("t2", paths)
    assert not P.named_by_path("xfc1.weight", paths)
    assert not P.named_by_path("model.0.weight", paths)
    assert not P.named_by_path(None, paths)
    assert not P.named_by_path("tensor", ["c_attn.bias"])


def test_output_normalizer_masks_only_durations():
    assert P.normalize_output("| time:  0.03s | loss 1.25") == "| time:  <secs> | loss 1.25"
    assert P.normalize_output("Epoch: 0001 (0.0359s) loss_train: 1.0956") == "Epoch: 0001 (<secs>) loss_train: 1.0956"
    assert P.normalize_output("Loss: 2.206259") == "Loss: 2.206259"


def test_subprocess_runner_reports_exit_code(tmp_path):
    """The plain/CLI comparison sees a failing program (exit code 1 under both)."""
    bad = tmp_path / "boom.py"
    bad.write_text("print('before')\nraise SystemExit(3)\n")
    env = P.subprocess_env()
    import subprocess

    plain = subprocess.run(args=[P.PYTHON, str(bad)], check=False, capture_output=True, text=True, env=env,
                           cwd=tmp_path)
    cli = subprocess.run(args=[P.PYTHON, "-m", "gradscope", "run", "--json", "--quiet", str(bad)], check=False,
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert plain.returncode == cli.returncode == 3
    assert P.program_part(cli.stderr) == plain.stdout == "before\n"
    assert json.loads(cli.stdout)["exit_code"] == 3
