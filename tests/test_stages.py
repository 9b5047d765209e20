"""The diagnosis in stages (issue 18): a read-only TraceIndex that returns verdicts as data, rules that return
Findings (data), one pure wording function per rule name, passes over findings that never edit text. These
check the structure itself; the explanations are checked by the rule tests and the snapshot. No torch."""
from __future__ import annotations

import ast
import json
import os
import pathlib
import re

import pytest

import gradscope
import gradscope.diagnosis as diagnosis
from gradscope.diagnosis import REGISTRY, WORDING, Diagnosis, Finding, TraceIndex, explain
from gradscope.diagnosis.wording import WordingConflict, word, words
from gradscope.core.model import CUT_KINDS
from gradscope.core.model import Cause
from gradscope.core.model import TraceData

PKG = pathlib.Path(diagnosis.__file__).parent
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def _load(name):
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace("{FIXTURES}/", json.dumps(str(FIXTURES) + os.sep)[1:-1])
    return TraceData.from_json(json.loads(text), source=name)


def test_verdicts_are_data_and_the_diagnosis_writes_none_into_the_trace():
    d = _load("data_write")
    before = [e.verdict for e in d.events]
    diag = Diagnosis(d)
    v = diag.verdicts()
    diag.summarize()
    assert v and set(v.values()) <= {"harmful", "benign"}
    assert [e.verdict for e in d.events] == before  # (the Trace facade sets Event.verdict, not the diagnosis)
    assert [e.index for e in diag.cuts()] == sorted(v)
    assert isinstance(diag, TraceIndex)


def test_saved_verdicts_come_from_the_map(tmp_path):
    d = _load("data_write")
    v = Diagnosis(d).verdicts()
    p = tmp_path / "t.json"
    d.save(p, verdicts=v)
    back = TraceData.load(p)
    assert {e.index: e.verdict for e in back.events if e.verdict} == v


def test_rules_return_findings_and_the_wording_makes_the_explanation():
    d = _load("data_write")
    diag = Diagnosis(d)
    f = diag.why_finding(d.meta["fixture_query"])
    assert isinstance(f, Finding) and f.rule and f.wording in WORDING
    assert f.wording.split(".")[0] in REGISTRY
    exp = explain(f)
    assert (exp.summary, exp.detail, exp.fix) == word(f)
    assert exp.cause == f.cause and exp.rule == f.rule


def test_every_wording_names_a_rule_and_a_key_is_registered_once():
    assert {k.split(".")[0] for k in WORDING} <= set(REGISTRY.names()) | set(diagnosis.PASSES)
    with pytest.raises(WordingConflict):
        words("gradient_flows")(lambda name, norm, root: ("", "", ""))


def test_no_template_is_numbered():
    names = [fn.__name__ for fn in WORDING.values()]
    assert not [n for n in names if re.search(r"_text\d+$", n)]


def test_no_class_with_more_than_two_project_bases():
    trees = [ast.parse(p.read_text()) for p in pathlib.Path(gradscope.__file__).parent.rglob("*.py")
             if "diagnosis" in p.parts or p.name == "verdict.py"]
    classes = {n.name for t in trees for n in ast.walk(t) if isinstance(n, ast.ClassDef)}
    multi = [n.name for t in trees for n in ast.walk(t) if isinstance(n, ast.ClassDef)
             and sum(getattr(b, "id", getattr(b, "attr", None)) in classes for b in n.bases) > 2]
    assert not multi


def test_no_decision_reads_or_edits_explanation_text():
    pat = re.compile(r"\.(?:summary|fix)\s*\+=|\bin\s+[\w.]+\.(?:summary|fix)\b|\.(?:summary|fix)\.replace\(")
    assert not [p.name for p in PKG.glob("*.py") if pat.search(p.read_text())]


def test_rules_reach_no_private_name_of_the_index():
    pat = re.compile(r"\b(?:dx|ix)\._[a-z]")
    assert not [p.name for p in PKG.glob("*.py") if pat.search(p.read_text())]


def test_one_vocabulary():
    assert Cause.NUMPY == "numpy" and Cause.NUMPY.cause is Cause.NUMPY_ROUNDTRIP
    assert Cause.DETACH.cause is Cause.DETACH and Cause.DETACH.is_cut and Cause.DETACH.is_cause
    assert list(CUT_KINDS) == [str(c) for c in Cause.cut_kinds()]
    assert list(gradscope.CAUSES) == [str(c) for c in Cause.causes()]
    assert diagnosis.CUT_CAUSE["data_set"] == "data_attr"
    assert json.dumps({"cause": Cause.NO_GRAD_BLOCK}) == '{"cause": "no_grad_block"}'
    assert f"{Cause.NO_GRAD_BLOCK}" == "no_grad_block"


def _texts(node) -> bool:
    """The expression names a sentence (a summary or fix: a variable, attribute or unpacked value so named)."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return "summary" in name or name in ("fix", "sub_fix", "cut_fix")


def test_no_wording_takes_another_sentence_apart():
    """A sentence quoted by another finding's wording, said of a group, or extended by a pass goes through its parts
    (Said.quote / about / plus), never by splitting, slicing or replacing its text."""
    found = []
    for p in PKG.glob("*.py"):
        for n in ast.walk(ast.parse(p.read_text())):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("split", "rsplit", "partition", "replace", "startswith", "index", "find")
                    and _texts(n.func.value)):
                found.append(f"{p.name}:{n.lineno}")
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) and _texts(n.value):
                found.append(f"{p.name}:{n.lineno}")
    assert not found


def test_a_sentence_keeps_its_parts():
    from gradscope.diagnosis.wording import said
    s = said("w.grad is None", "it was detached at a.py:3.", of="w")
    assert s == "w.grad is None: it was detached at a.py:3." and s.quote() == "it was detached at a.py:3."
    more = s.plus(" It is also cut on another path.")
    assert more.quote() == "it was detached at a.py:3. It is also cut on another path." and more.of == "w"
    assert more.about("w, b") == "w, b: .grad is None: it was detached at a.py:3. It is also cut on another path."
    # a sentence about something other than one name stays as it is for a group; one without a reason quotes whole
    assert said("backward on `loss` failed", "x.").about("w, b") == "backward on `loss` failed: x."
    whole = said("w.grad contains inf/nan.")
    assert whole.quote() == "w.grad contains inf/nan." and whole.plus(" (tied)") == "w.grad contains inf/nan. (tied)"


def test_every_wording_says_its_summary_with_its_parts():
    """Each wording function returns its summary as ``said(subject, reason)`` (directly, or through a variable
    assigned from it), so that another finding can quote its reason and a group can be named in its subject."""
    loose = []
    for p in PKG.glob("*.py"):
        for fn in ast.walk(ast.parse(p.read_text())):
            if not (isinstance(fn, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and getattr(d.func, "id", "") == "words" for d in fn.decorator_list)):
                continue
            made = {n.targets[0].id: n.value for n in ast.walk(fn)
                    if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
            for r in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)):
                first = r.value.elts[0]
                if isinstance(first, ast.Name):
                    first = made.get(first.id, first)
                if not (isinstance(first, ast.Call) and getattr(first.func, "id", "") == "said"):
                    loose.append(f"{p.name}:{r.lineno} {fn.name}")
    assert not loose
