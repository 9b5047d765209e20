"""Shared helpers of the rule tests (tests/test_rules_<status>.py) and the module tests that run real programs.

* :class:`Markers` -- a line of a test file is found from a marker comment at its end, never hard-coded. Two
  spellings are in use: ``# L:<tag>`` (:meth:`Markers.line`) and ``# <mark>`` (:meth:`Markers.line_of`). Each test
  module makes one for itself (``M = Markers(__file__)``) and binds the functions it uses to module names.
* :meth:`Markers.assert_explains` -- the common contract of an Explanation for a problem: its cause, its site
  (the marked line, or the marked line in ``site.stack``), the target and the line named in the summary, and a
  non-empty fix on topic.
* small models and batches several rule files train (``_TwoLayer``, ``mlp``, ``batch``), the PEP 678 note on a
  raised exception (``_note``), and the saved-trace fixtures of tests/fixtures/ (``load``, ``case_line``,
  ``_rule_case``).
"""
from __future__ import annotations

import json
import linecache
import os
from pathlib import Path

import torch
import torch.nn as nn

from gradscope.diagnosis import Diagnosis
from gradscope.core.model import TraceData

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = FIXTURES / "cases.py"


def _same(a, b) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (TypeError, ValueError):
        return False


class Markers:
    """The marked lines of one test file (``Markers(__file__)``)."""

    def __init__(self, file: str):
        self.this = file
        self.real = os.path.realpath(file)
        self.basename = os.path.basename(self.real)

    def _hits(self, suffix: str) -> list[int]:
        return [i for i, text in enumerate(linecache.getlines(self.this), 1) if text.rstrip().endswith(suffix)]

    def line_of(self, mark: str) -> int:
        """The line of this file that ends with ``# <mark>``."""
        hits = self._hits(f"# {mark}")
        assert len(hits) == 1, (mark, hits)
        return hits[0]

    def line(self, tag: str) -> int:
        """The line number of the (single) line of this file that ends with ``# L:<tag>``."""
        hits = self._hits(f"# L:{tag}")
        assert len(hits) == 1, f"marker L:{tag} found on lines {hits}"
        return hits[0]

    def at(self, tag: str) -> str:
        """``<file>:<line>`` of a ``# L:<tag>`` line, as the explanations write it."""
        return f"{self.basename}:{self.line(tag)}"

    def stack_lines(self, site) -> list:
        """The lines of this file in a site's stack."""
        return [f.lineno for f in site.stack if f.filename == self.this]

    def on_line(self, site, tag: str) -> bool:
        """True when ``site`` is the ``# L:<tag>`` line, or that line is one of its stack frames."""
        if site is None:
            return False
        want = self.line(tag)
        return (os.path.realpath(site.filename) == self.real and site.lineno == want) or any(
            os.path.realpath(f.filename) == self.real and f.lineno == want for f in (site.stack or ()))

    def site_hits(self, site, tag: str) -> bool:
        """True when ``site`` is the marked line, or the marked line is one of its stack frames."""
        if site is None:
            return False
        want = self.line(tag)
        if _same(site.filename, self.real) and site.lineno == want:
            return True
        return any(_same(f.filename, self.real) and f.lineno == want for f in (site.stack or ()))

    def assert_explains(self, exp, cause: str, target: str, tag: str | None, fix_words, *, line_in_summary=True):
        """The common contract of an Explanation for a problem."""
        assert exp is not None, "no explanation"
        assert exp.cause == cause, f"cause {exp.cause!r} != {cause!r}\n{exp}"
        if tag is not None:
            assert self.site_hits(exp.site, tag), f"site {exp.site!r} is not line {self.line(tag)} (L:{tag})\n{exp}"
        assert target in exp.summary, f"summary does not name {target!r}: {exp.summary!r}"
        if tag is not None and line_in_summary:
            lines = {exp.site.lineno} | {f.lineno for f in exp.site.stack if _same(f.filename, self.real)}
            assert any(f"{self.basename}:{n}" in exp.summary for n in lines), \
                f"summary does not name the line {self.basename}:{self.line(tag)}: {exp.summary!r}"
        assert exp.fix and exp.fix.strip(), "empty fix"
        words = [fix_words] if isinstance(fix_words, str) else list(fix_words)
        low = exp.fix.lower()
        assert any(w.lower() in low for w in words), f"fix {exp.fix!r} mentions none of {words}"
        text = str(exp)
        assert cause in text


def _note(exc) -> str:
    """The gradscope note (PEP 678) on a raised exception."""
    notes = getattr(exc, "__notes__", None) or []
    hits = [n for n in notes if n.startswith("gradscope:")]
    assert hits, f"no gradscope note on the exception (notes: {notes})"
    return hits[0]


# --- small models ---------------------------------------------------------------------------------------------
class _TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(self.body(x))


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def batch():
    return torch.randn(6, 4), torch.randn(6, 1)


# --- saved traces (tests/fixtures): no torch -------------------------------------------------------------------
def load(name: str):
    """(Diagnosis, the tid the case asks about) of a fixture, its paths pointed at this checkout."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace("{FIXTURES}/", json.dumps(str(FIXTURES) + os.sep)[1:-1])
    d = TraceData.from_json(json.loads(text), source=name)
    return Diagnosis(d), d.meta["fixture_query"]


def case_line(mark: str) -> int:
    """The line of tests/fixtures/cases.py that ends with ``# <mark>``."""
    hits = [i for i, t in enumerate(linecache.getlines(str(CASES)), 1) if t.rstrip().endswith(f"# {mark}")]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def _rule_case(rule: str, drop_left_model: bool = False):
    """The explanation a fresh Diagnosis gives on a rule's recorded case (tests/fixtures/rules/<rule>.json)."""
    root = FIXTURES.parent.parent
    text = (FIXTURES / "rules" / f"{rule}.json").read_text(encoding="utf-8")
    d = TraceData.from_json(json.loads(text.replace("{REPO}/", json.dumps(str(root) + os.sep)[1:-1])))
    q = d.meta["fixture_query"]
    if drop_left_model:
        d.meta["left_model"] = [t for t in d.meta.get("left_model") or () if t != q["tid"]]
    diag = Diagnosis(d)
    diag.aliases.update({int(k): v for k, v in q["aliases"].items()})
    if q["live"]:
        diag.set_now({int(k): v for k, v in q["live"].items()})
    return diag.why(q["tid"], q["now"])
