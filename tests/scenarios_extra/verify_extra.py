"""Run the public verify.py checks on this folder (format, behaviour, CUT line executed,
determinism, speed). verify.py only looks next to itself, so this wrapper points it here and
adds gradscope's extra cause ``backward_twice`` to the vocabulary.

Usage (from the repo root): .venv/bin/python tests/scenarios_extra/verify_extra.py [-v]
Expected: every scenario PASS except 32_ and 95_, whose RuntimeError is raised outside
backward() on purpose (see FINDINGS.md), plus coverage notes.
"""
import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERIFY = Path(__file__).resolve().parents[3] / "shared" / "scenarios" / "verify.py"

if __name__ == "__main__":
    if not VERIFY.is_file():
        sys.exit(f"verify.py not found at {VERIFY}")
    spec = importlib.util.spec_from_file_location("gradscope_public_verify", VERIFY)
    v = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(v)
    v.HERE = os.fspath(HERE)
    v.CAUSES = list(v.CAUSES) + ["backward_twice"]
    sys.exit(v.main())
