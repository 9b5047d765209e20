"""The diagnosis as a rule registry (gradscope/diagnosis/registry.py): rules per gradient status with an
explicit priority, conflicts refused at import, one visible order, and every rule reachable.

The reachability test runs on saved traces (tests/fixtures/rules/<rule>.json, recorded from real torch runs
of the scenario named in tests/fixtures/rule_cases.py by tests/fixtures/record_rules.py), without torch.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradscope import diagnosis
from gradscope.diagnosis import ORDER, REGISTRY, Diagnosis
from gradscope.diagnosis.registry import STATUSES, Query, Registry, RuleConflict
from gradscope.core.explanation import Explanation
from gradscope.core.model import TraceData

ROOT = Path(__file__).resolve().parents[1]
RULE_FIXTURES = ROOT / "tests" / "fixtures" / "rules"
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
from rule_cases import RULE_CASES  # noqa: E402


def _exp(cause):
    return Explanation(cause)


def test_two_rules_with_one_name_are_refused():
    reg = Registry()
    reg.rule("none", 10, name="same")(lambda dx, q: None)
    with pytest.raises(RuleConflict, match="named 'same'"):
        reg.rule("zero", 20, name="same")(lambda dx, q: None)


def test_two_rules_with_one_status_and_priority_are_refused():
    reg = Registry()
    reg.rule("none", 10)(lambda dx, q: None)
    with pytest.raises(RuleConflict, match="priority 10"):
        @reg.rule(("zero", "none"), 10)
        def other(dx, q):
            return None
    assert "other" not in reg  # (refused as a whole: not half-registered for `zero`)
    reg.rule("zero", 10, name="other")(lambda dx, q: None)  # the same priority under another status is fine


def test_an_unknown_status_is_refused():
    with pytest.raises(RuleConflict, match="unknown status"):
        Registry().rule("maybe", 1)(lambda dx, q: None)


def test_rules_run_by_priority_not_by_registration_and_the_first_finding_decides():
    reg = Registry()
    ran = []

    @reg.rule("zero", 30)
    def late(dx, q):
        ran.append("late")
        return _exp("late")

    @reg.rule("zero", 10)
    def early_none(dx, q):
        ran.append("early_none")
        return None

    @reg.rule("zero", 20)
    def middle(dx, q):
        ran.append("middle")
        return _exp("middle")

    got = reg.first("zero", None, Query())
    assert (got.cause, got.rule, ran) == ("middle", "middle", ["early_none", "middle"])
    assert [r.name for r in reg.ordered("zero")] == ["early_none", "middle", "late"]
    assert reg.first("none", None, Query()) is None


def test_the_package_order_is_the_registered_order():
    """ORDER in gradscope/diagnosis/__init__.py is the one visible table: it lists every rule once per status
    it is registered for, in the order the priorities run them."""
    assert {s: tuple(r.name for r in REGISTRY.ordered(s)) for s in STATUSES} == {s: ORDER.get(s, ()) for s in STATUSES}
    listed = {n for names in ORDER.values() for n in names}
    assert listed == set(REGISTRY.names())
    table = REGISTRY.table()
    print("\n" + REGISTRY.format())
    assert [n for s, _, n, _ in table if s == "none"][:3] == list(ORDER["none"][:3])
    assert all(p1 < p2 for (s1, p1, _, _), (s2, p2, _, _) in zip(table, table[1:]) if s1 == s2)


def test_an_order_that_disagrees_with_the_priorities_raises(monkeypatch):
    swapped = dict(ORDER, none=(ORDER["none"][1], ORDER["none"][0], *ORDER["none"][2:]))
    monkeypatch.setattr(diagnosis, "ORDER", swapped)
    with pytest.raises(RuleConflict, match="do not match"):
        diagnosis._check_order()


def test_the_error_table_names_failure_rules_in_priority_order():
    names = [n for _, n in diagnosis.ERRORS]
    failure = [r.name for r in REGISTRY.ordered("failure")]
    assert names == [n for n in failure if n != "unknown_error"] and failure[-1] == "unknown_error"


def test_the_table_prints_from_the_command_line():
    r = subprocess.run([sys.executable, "-m", "gradscope.diagnosis"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    rows = [line.split()[:3] for line in r.stdout.splitlines() if line.strip()]
    assert [(s, n) for s, _, n in rows] == [(s, n) for s in STATUSES for n in ORDER.get(s, ())]


def _load(rule):
    text = (RULE_FIXTURES / f"{rule}.json").read_text(encoding="utf-8")
    text = text.replace("{REPO}/", json.dumps(str(ROOT) + os.sep)[1:-1])
    d = TraceData.from_json(json.loads(text))
    return d, d.meta["fixture_query"]


def _decide(d, q):
    diag = Diagnosis(d)
    if q["failure"]:
        return diag.failure()
    diag.aliases.update({int(k): v for k, v in q["aliases"].items()})
    if q["live"]:  # (the other tensors' live .grad facts the trace had when it asked)
        diag.set_now({int(k): v for k, v in q["live"].items()})
    return diag.why(q["tid"], q["now"])


def test_every_rule_has_a_recorded_case():
    """A rule that only runs the rules of another status (per backward, say) is reached through them."""
    deciding = [n for n in REGISTRY.names() if not REGISTRY[n].delegates]
    assert sorted(RULE_CASES) == sorted(deciding)
    assert sorted(p.stem for p in RULE_FIXTURES.glob("*.json")) == sorted(RULE_CASES)
    for n in REGISTRY.names():
        if REGISTRY[n].delegates:
            assert [r.name for r in REGISTRY.ordered(REGISTRY[n].delegates)], n


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_every_rule_is_reached(rule):
    """The rule decides the explanation of its case (a real scenario's saved trace), so no rule is shadowed
    by one before it or dead."""
    d, q = _load(rule)
    exp = _decide(d, q)
    assert exp is not None and exp.rule == rule, (exp.rule if exp else None, exp)
    assert exp.cause == q["cause"], exp  # (the cause recorded with the fixture: the case is still the same)


def test_the_rule_fixtures_are_diagnosed_without_torch():
    code = (
        "import sys, json, os\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from gradscope.diagnosis import Diagnosis\n"
        "from gradscope.core.model import TraceData\n"
        f"root, folder = {str(ROOT) + os.sep!r}, {str(RULE_FIXTURES)!r}\n"
        "got = {}\n"
        "for f in sorted(os.listdir(folder)):\n"
        "    d = TraceData.from_json(json.loads(open(os.path.join(folder, f)).read().replace('{REPO}/', root)))\n"
        "    q = d.meta['fixture_query']\n"
        "    diag = Diagnosis(d)\n"
        "    got[f[:-5]] = (diag.failure() if q['failure'] else diag.why(q['tid'], q['now'])).cause\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print(json.dumps(got))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == len(RULE_CASES)


def test_every_cause_has_a_focused_test():
    """Adding a cause to gradscope.CAUSES needs a test of the rule that names it (its name quoted in one of the
    rule test files, tests/test_rules_<status>.py)."""
    from gradscope.core.explanation import CAUSES

    files = sorted((ROOT / "tests").glob("test_rules_*.py"))
    src = "\n".join(p.read_text(encoding="utf-8") for p in files)
    missing = [c for c in CAUSES if f'"{c}"' not in src]
    assert not missing, f"causes without a focused test in {[p.name for p in files]}: {missing}"


# ----------------------------------------------------------------------------- each rule's words, as recorded
#: every rule's explanation of its recorded case (str() and to_json(), paths under the repo as {REPO}): the
#: wording is a pure function of the finding, so any change to a rule's cause, site, evidence, names or text shows
#: here first. After an intended change (or re-recording the fixtures with record_rules.py), regenerate with
#: ``GRADSCOPE_REGEN_GOLDEN=1 pytest tests/test_diagnosis_registry.py`` and review the diff.
EXPLAINED = ROOT / "tests" / "golden" / "rule_explanations.json"
REGEN = os.environ.get("GRADSCOPE_REGEN_GOLDEN") == "1"


def _as_recorded(exp) -> dict:
    root = str(ROOT) + os.sep
    return json.loads(json.dumps({"str": str(exp), "json": exp.to_json()}).replace(json.dumps(root)[1:-1], "{REPO}/"))


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_every_rule_words_its_case_as_recorded(rule):
    d, q = _load(rule)
    got = _as_recorded(_decide(d, q))
    known = json.loads(EXPLAINED.read_text(encoding="utf-8")) if EXPLAINED.exists() else {}
    if REGEN and known.get(rule) != got:
        known[rule] = got
        EXPLAINED.write_text(json.dumps(dict(sorted(known.items())), indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    assert rule in known, f"no recorded explanation for {rule}: run GRADSCOPE_REGEN_GOLDEN=1 pytest {__file__}"
    assert got["str"] == known[rule]["str"]
    assert got["json"] == known[rule]["json"]
