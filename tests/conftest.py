"""Shared test setup: deterministic seeds, a trace-file path, and a `dot` skip helper."""
from __future__ import annotations

import os
import random
import shutil

import pytest
import torch

#: tests/programs/ holds real training scripts, not tests: pytest's --doctest-modules must not import
#: them (several train at import time, as their originals do).
collect_ignore = ["programs"]

#: `gradscope run` verifies a broken script by re-running it once per candidate cut (subprocesses); the CLI tests
#: of other features run without it (minutes of CI time). tests/test_verify.py runs the default, unset.
os.environ.setdefault("GRADSCOPE_NO_VERIFY", "1")

#: Skip a test (or module: ``pytestmark = requires_dot``) when graphviz's ``dot`` is missing.
requires_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` binary not installed")


@pytest.fixture(autouse=True)
def _deterministic():
    """Every test starts from the same random state."""
    torch.manual_seed(0)
    random.seed(0)
    yield


@pytest.fixture
def tmp_trace_path(tmp_path):
    """A path for ``tr.save()`` / ``gradscope.load()`` inside the test's temp dir."""
    return tmp_path / "trace.json"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``@pytest.mark.dot`` are skipped the same way when ``dot`` is missing."""
    if shutil.which("dot") is not None:
        return
    for item in items:
        if item.get_closest_marker("dot") is not None:
            item.add_marker(requires_dot)
