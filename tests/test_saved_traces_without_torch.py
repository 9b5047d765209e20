"""The saved traces of tests/fixtures/*.json (recorded from the real runs in tests/fixtures/cases.py by
tests/fixtures/record.py) are diagnosed without torch: this module never imports it, and each fixture is loaded
and diagnosed in a fresh interpreter that must not import it either. (What each fixture's explanation says is
tested with its rule, in tests/test_rules_<status>.py.)
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


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
        "from gradscope.core.model import TraceData\n"
        f"text = open({str(FIXTURES / (name + '.json'))!r}).read().replace('{{FIXTURES}}/', {str(FIXTURES) + os.sep!r})\n"
        "d = TraceData.from_json(json.loads(text))\n"
        "e = Diagnosis(d).why(d.meta['fixture_query'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print(e.cause)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == CAUSES[name], r.stdout
