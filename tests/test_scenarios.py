"""Every gradient-bug scenario, scored the way ``shared/scenarios/check.py`` scores it.

Two sets are collected:

* the public scenarios in ``<repo>/../shared/scenarios`` (skipped cleanly when absent), and
* ``tests/scenarios/<cause>/NN_<slug>.py``: the in-repo scenarios (real-world shapes written for
  generalization, in batches), one folder per expected cause (``ok`` for correct code).

Each scenario is run plain and under ``gradscope.trace()``; the test asserts that the bug
still shows the same way under tracing (transparency), that the explanation's cause is the
scenario's CAUSE, and that its site is the ``# <-- CUT`` line (or that line is in ``site.stack``).
The scoring code is the shared ``check.py`` when present, else the local copy in ``_scoring.py``.

Scenarios that expose a gap not fixed yet are listed in ``KNOWN_GAPS`` (and in
``tests/scenarios/OPEN_GAPS.md``) and marked ``xfail(strict=True)``: a fix makes them XPASS, which fails
the run until the entry is removed.
"""
from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path

import pytest

import gradscope

HERE = Path(__file__).resolve().parent
SHARED = Path(__file__).resolve().parents[2] / "shared" / "scenarios"
SCENARIOS = HERE / "scenarios"


def _load_scoring():
    """The shared check.py (the public scorer) if present, else tests/_scoring.py."""
    check = SHARED / "check.py"
    if check.is_file():
        spec = importlib.util.spec_from_file_location("gradscope_shared_check", check)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if hasattr(mod, "check_one"):
            return mod
    local = HERE / "_scoring.py"
    spec = importlib.util.spec_from_file_location("gradscope_tests_scoring", local)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCORING = _load_scoring()

#: scenario (cause/file name) -> why it fails today (gradscope gap, see tests/scenarios/OPEN_GAPS.md).
KNOWN_GAPS: dict[str, str] = {
    "tensor_rewrap/07_tensor_rewrap_tensor_subclass_make_subclass.py": "a tensor subclass made with "
    "Tensor._make_subclass from a temporary: the call is invisible to the mode and the original is gone when the "
    "new tensor is first seen (OPEN_GAPS.md)",
}


def _params(paths, tag_of):
    out = []
    for p in paths:
        tag = tag_of(p)
        reason = KNOWN_GAPS.get(tag)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(p, id=tag[:-3], marks=marks))
    return out


SHARED_CASES = _params(sorted(SHARED.glob("[0-9][0-9]_*.py")) if SHARED.is_dir() else [],
                       lambda p: f"shared/{p.name}")
CAUSE_DIRS = sorted(d for d in SCENARIOS.iterdir() if d.is_dir() and not d.name.startswith(("_", "."))) \
    if SCENARIOS.is_dir() else []
CASES = _params([p for d in CAUSE_DIRS for p in sorted(d.glob("[0-9][0-9]_*.py"))],
                lambda p: f"{p.parent.name}/{p.name}")


def _score(path: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = SCORING.check_one(str(path), gradscope, True)
    return row


def _why(row: dict) -> str:
    keys = ("case", "status", "cause", "got_cause", "line", "got_site", "site", "plain", "traced")
    head = ", ".join(f"{k}={row.get(k)!r}" for k in keys if k in row)
    return head + ("\n" + row["text"] if row.get("text") else "") + ("\n" + row["detail"] if row.get("detail") else "")


#: every in-repo scenario's explanation as str() writes it (the scorer keeps its first 1500 characters): the cause
#: and site above are what the scenario is for; this holds the rest of what the user reads (names, lines, the
#: other sites, the fix) to what it was, so a change in any rule's or template's output shows here. After an
#: intended change, regenerate with ``GRADSCOPE_REGEN_GOLDEN=1 pytest tests/test_scenarios.py`` and review the diff.
EXPLAINED = HERE / "golden" / "scenario_explanations.json"
REGEN = os.environ.get("GRADSCOPE_REGEN_GOLDEN") == "1"


def _assert_words_as_recorded(tag: str, text):
    known = json.loads(EXPLAINED.read_text(encoding="utf-8")) if EXPLAINED.exists() else {}
    if REGEN and known.get(tag) != text:
        known[tag] = text
        EXPLAINED.write_text(json.dumps(dict(sorted(known.items())), indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    assert tag in known, f"no recorded explanation for {tag}: run GRADSCOPE_REGEN_GOLDEN=1 pytest {__file__}"
    assert text == known[tag]


def _assert_scenario(path: Path, words: bool = False):
    row = _score(path)
    assert row["status"] != "invalid-scenario", f"the scenario itself does not show its bug: {_why(row)}"
    assert row["status"] not in ("trace-failed", "why-raised", "checker-error"), _why(row)
    assert row.get("transparent"), f"tracing changed the program's behaviour: {_why(row)}"
    assert row.get("cause_ok"), f"wrong cause: {_why(row)}"
    assert row.get("site_ok"), f"wrong site: {_why(row)}"
    assert row["status"] == "pass", _why(row)
    if words:
        _assert_words_as_recorded(f"{path.parent.name}/{path.name}", row.get("text"))


@pytest.mark.skipif(not SHARED_CASES, reason=f"shared scenarios not found at {SHARED}")
@pytest.mark.parametrize("path", SHARED_CASES or [None])
def test_shared_scenario(path):
    _assert_scenario(path)


@pytest.mark.parametrize("path", CASES)
def test_scenario(path):
    _assert_scenario(path, words=True)


def test_known_gaps_name_existing_scenarios():
    have = {f"{p.parent.name}/{p.name}" for d in CAUSE_DIRS for p in d.glob("[0-9][0-9]_*.py")}
    assert set(KNOWN_GAPS) <= have, set(KNOWN_GAPS) - have


@pytest.mark.parametrize("folder", CAUSE_DIRS, ids=[d.name for d in CAUSE_DIRS])
def test_scenario_folder_is_well_formed(folder):
    """Each scenario sits in the folder of its cause, has the metadata check.py needs and exactly one CUT line;
    a folder is numbered 01..N (check.py --cases <folder> scores only files named NN_*.py)."""
    names = sorted(p.name for p in folder.glob("*.py"))
    assert names, f"{folder} is empty"
    assert all(n[:2].isdigit() and n[2] == "_" for n in names), names
    nums = [int(n[:2]) for n in names]
    assert nums == list(range(1, len(names) + 1)), "scenarios must be numbered 01..N without gaps"
    vocab = set(gradscope.CAUSES)
    assert folder.name in vocab, f"{folder.name} is not one of gradscope.CAUSES"
    for n in names:
        mod = SCORING.load(str(folder / n))
        assert mod.CAUSE == folder.name, f"{n}: CAUSE {mod.CAUSE!r} in folder {folder.name}"
        assert mod.CUT_LINE_MARK == "# <-- CUT", n
        assert mod.EXPECT in ("grad_none", "grad_zero", "backward_error", "grad_ok"), n
        assert (mod.CAUSE == "ok") == (mod.EXPECT == "grad_ok"), n
        assert mod.EXPECT == "backward_error" or isinstance(mod.QUERY, str), n
        SCORING.cut_line(str(folder / n), mod.CUT_LINE_MARK)


def test_the_recorded_explanations_name_only_scenarios_that_exist():
    """A scenario removed or renamed takes its recorded explanation with it (no stale goldens)."""
    known = json.loads(EXPLAINED.read_text(encoding="utf-8"))
    assert not [k for k in known if not (HERE / "scenarios" / k).exists()]
