"""The diagnosis rules on saved traces (tests/fixtures/*.json, recorded from the real runs in
tests/fixtures/cases.py by tests/fixtures/record.py), without torch: this module never imports it, and
one test checks in a fresh interpreter that loading and diagnosing a fixture does not import it either.
"""
from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradscope.diagnosis import Diagnosis
from gradscope.model import TraceData

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = FIXTURES / "cases.py"


def load(name: str):
    """(Diagnosis, the tid the case asks about) of a fixture, its paths pointed at this checkout."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace("{FIXTURES}/", json.dumps(str(FIXTURES) + os.sep)[1:-1])
    d = TraceData.from_json(json.loads(text), source=name)
    return Diagnosis(d), d.meta["fixture_query"]


def line_of(mark: str) -> int:
    hits = [i for i, t in enumerate(linecache.getlines(str(CASES)), 1) if t.rstrip().endswith(f"# {mark}")]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def test_region_opener_is_the_site_and_the_op_stays_in_its_stack():
    diag, tid = load("region_with")
    exp = diag.why(tid)
    assert exp.cause == "no_grad_block"
    assert exp.site.lineno == line_of("with-line")
    assert line_of("op-in-with") in [f.lineno for f in exp.site.stack]


def test_multi_line_statement_at_its_first_line():
    diag, tid = load("multi_line")
    exp = diag.why(tid)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == line_of("statement-start")
    assert exp.site.code == "loss = torch.nn.functional.mse_loss(b, pred.argmax(dim=1).float(),)"


def test_every_cut_is_named():
    diag, tid = load("two_cuts")
    exp = diag.why(tid)
    assert (exp.site.lineno, [s.lineno for s in exp.extra_sites]) == (line_of("cut-compare"), [line_of("cut-detach")])


def test_write_through_data_into_a_saved_tensor():
    diag, tid = load("data_write")
    exp = diag.why(tid)
    assert exp.cause == "inplace_saved_tensor" and exp.site.lineno == line_of("data-write")
    assert any(e.kind == "inplace" and diag.verdicts()[e.index] == "harmful" for e in diag.cuts())


def test_conversion_by_torch_is_not_the_cut_of_a_skipped_layer():
    diag, tid = load("converted_then_skipped")
    exp = diag.why(tid)
    assert exp.cause == "unused_parameter"
    assert exp.site.lineno == line_of("early-exit")
    assert [s.lineno for s in exp.extra_sites] == [line_of("refine-defined")]
    assert not [e for e in diag.cuts() if e.context == "setup"]


def test_guard_that_kept_an_unfreeze_away():
    diag, tid = load("guarded_unfreeze")
    exp = diag.why(tid)
    assert exp.cause == "frozen_param" and exp.site.lineno == line_of("unfreeze-guard")


CAUSES = {"region_with": "no_grad_block", "multi_line": "nondifferentiable_op", "two_cuts": "nondifferentiable_op",
          "data_write": "inplace_saved_tensor", "converted_then_skipped": "unused_parameter",
          "guarded_unfreeze": "frozen_param"}


def test_every_fixture_has_a_case():
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(CAUSES)


@pytest.mark.parametrize("name", sorted(CAUSES))
def test_every_fixture_is_diagnosed_without_torch(name):
    code = (
        "import sys, json, os\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from gradscope.diagnosis import Diagnosis\n"
        "from gradscope.model import TraceData\n"
        f"text = open({str(FIXTURES / (name + '.json'))!r}).read().replace('{{FIXTURES}}/', {str(FIXTURES) + os.sep!r})\n"
        "d = TraceData.from_json(json.loads(text))\n"
        "e = Diagnosis(d).why(d.meta['fixture_query'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print(e.cause)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == CAUSES[name], r.stdout


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


def test_a_parameter_that_left_the_model_is_its_replacement_even_when_frozen():
    exp = _rule_case("param_replaced")
    assert (exp.cause, exp.rule) == ("param_recreated", "param_replaced")
    assert exp.site.code.startswith("m.head = nn.Linear(")
    # the same trace with the parameter still in the model: its freeze explains it, not a replacement
    kept = _rule_case("param_replaced", drop_left_model=True)
    assert kept.cause == "frozen_param" and kept.rule != "param_replaced", kept
