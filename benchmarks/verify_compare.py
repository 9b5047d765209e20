"""Score folders of scenarios with and without ``tr.verify(run)`` (the shared check.py's own rules), side by side,
and list the cases whose outcome the verification changed.

    PYTHONPATH=. python benchmarks/verify_compare.py benchmarks/blind/batch_o [more folders] [--json OUT]

(the scorer: ../shared/scenarios/check.py beside the checkout, or $GRADSCOPE_CHECK)
"""
import argparse
import glob
import importlib.util
import json
import os
import sys
import warnings

import gradscope

CHECK = os.environ.get("GRADSCOPE_CHECK") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                          "shared", "scenarios", "check.py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--json")
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("gs_check", CHECK)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    rows = []
    for folder in a.folders:
        plain = ver = n = 0
        for path in sorted(glob.glob(os.path.join(folder, "[0-9]*.py"))):
            warnings.simplefilter("ignore")
            r0 = check.check_one(path, gradscope, False)
            r1 = check.check_one(path, gradscope, False, verify=True)
            n += 1
            plain += r0.get("status") == "pass"
            ver += r1.get("status") == "pass"
            if r0.get("status") != r1.get("status"):
                print(f"  {os.path.basename(folder)}/{os.path.basename(path)}: {r0.get('status')} -> {r1.get('status')} "
                      f"({r0.get('got_cause')} {r0.get('got_site')} -> {r1.get('got_cause')} {r1.get('got_site')}; "
                      f"want {r1.get('cause')} line {r1.get('line')}) {r1.get('detail', '')[-300:]}")
            rows.append({"folder": folder, "case": os.path.basename(path), "plain": r0, "verified": r1})
        print(f"{folder}: without verify {plain}/{n}, with verify {ver}/{n}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
