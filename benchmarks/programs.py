"""gradscope on the real programs of tests/programs/: precision, naming and mutation recall.

    python benchmarks/programs.py                 # every program x every operator (minutes)
    python benchmarks/programs.py --programs mnist,gcn --operators detach,freeze --seed 1
    python benchmarks/programs.py --no-mutants    # precision and naming only

* precision: clean programs (as written) traced in-process with zero problems and no failure;
* naming: trainable parameters named by their module path (definition in tests/_programs.py),
  and programs where all of them are;
* recall: mutants (tests/mutate.py: one seeded injected bug per program x operator that really
  changes gradient flow when run plain) for which gradscope names the expected cause AND the
  injected line. Every miss is listed: program, operator, line, expected, got.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, os.path.dirname(HERE))

import _programs as P  # noqa: E402
import mutate as M  # noqa: E402


def _table(rows, headers):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def clean_figures(programs):
    """Per program: problems (lines), names (right, total, wrong examples)."""
    res = {}
    for name in programs:
        t = time.perf_counter()
        run = P.run_program(P.program_path(name), traced=True)
        probs = [] if run.error is None else [f"raised {type(run.error).__name__}: {str(run.error)[:60]}"]
        if run.trace is not None:
            probs += P.problem_lines(run.trace.problems())
        verdicts = P.name_verdicts(run) if run.trace is not None else []
        wrong = [(p, w) for p, w in verdicts if w]
        res[name] = {"problems": probs, "n_params": len(verdicts), "n_named": len(verdicts) - len(wrong),
                     "wrong": wrong[:3], "seconds": round(time.perf_counter() - t, 2)}
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="precision / naming / recall of gradscope on tests/programs")
    ap.add_argument("--programs", help="comma-separated subset (default: all)")
    ap.add_argument("--operators", help=f"comma-separated subset of {','.join(M.OPERATORS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-mutants", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write every figure and outcome as JSON")
    ap.add_argument("--verify", action="store_true",
                    help="also judge each mutant under `gradscope run --json` (which verifies by re-running it)")
    a = ap.parse_args(argv)
    programs = a.programs.split(",") if a.programs else P.program_names()
    operators = a.operators.split(",") if a.operators else list(M.OPERATORS)
    t0 = time.perf_counter()

    clean = clean_figures(programs)
    print("== clean programs")
    print(_table([(n, "ok" if not c["problems"] else f"{len(c['problems'])} problem(s)",
                   f"{c['n_named']}/{c['n_params']}", c["seconds"],
                   "; ".join(c["problems"])[:90] or "; ".join(f"{p}: {w}" for p, w in c["wrong"])[:90])
                  for n, c in clean.items()],
                 ["program", "problems", "named", "s", "first problem / misnamed"]))
    n_prec = sum(1 for c in clean.values() if not c["problems"])
    n_named = sum(c["n_named"] for c in clean.values())
    n_params = sum(c["n_params"] for c in clean.values())
    n_named_progs = sum(1 for c in clean.values() if c["n_named"] == c["n_params"])

    outcomes = []
    if not a.no_mutants:
        for name in programs:
            for op in operators:
                outcomes.append(M.mutate_and_judge(name, op, seed=a.seed, verify=a.verify))
        scored = [o for o in outcomes if o.status == "scored"]
        misses = [o for o in scored if not o.right]
        print("\n== mutants")
        print(_table([(o.program, o.operator, o.line, o.code[:48], o.expected,
                       f"{o.got_cause} @ {o.got_site}", "RIGHT" if o.right else
                       ("line" if o.cause_ok else "cause" if o.line_ok else "both"))
                      for o in scored],
                     ["program", "operator", "line", "injected", "expected", "got", "verdict"]))
        skipped = [o for o in outcomes if o.status != "scored"]
        if skipped:
            print(f"\nnot scored ({len(skipped)}): " + ", ".join(f"{o.program}/{o.operator}:{o.status}" for o in skipped))
        print("\n== misses")
        print(_table([(o.program, o.operator, o.line, o.expected, f"{o.got_cause} @ {o.got_site}",
                       o.effect[:40], o.note[:50]) for o in misses],
                     ["program", "operator", "line", "expected", "got", "effect (plain)", "note"]) if misses else "none")

    print("\n== figures")
    print(f"precision: {n_prec}/{len(clean)} clean programs with zero problems ({100 * n_prec / max(1, len(clean)):.0f}%)")
    print(f"naming:    {n_named}/{n_params} trainable parameters named by module path "
          f"({100 * n_named / max(1, n_params):.1f}%); {n_named_progs}/{len(clean)} programs fully")
    if outcomes:
        n_right = sum(o.right for o in scored)
        n_cause = sum(o.cause_ok for o in scored)
        print(f"recall:    {n_right}/{len(scored)} mutants with cause and line right "
              f"({100 * n_right / max(1, len(scored)):.0f}%); cause alone {n_cause}/{len(scored)}")
        if a.verify:
            n_v = sum(bool(o.v_right) for o in scored)
            print(f"with verification (`gradscope run`): {n_v}/{len(scored)} right "
                  f"({100 * n_v / max(1, len(scored)):.0f}%); verified {sum(o.v_verified == 'verified' for o in scored)}")
            for o in scored:
                if o.right != bool(o.v_right):
                    print(f"  changed: {o.program}/{o.operator} line {o.line}: {o.got_cause} @ {o.got_site} -> "
                          f"{o.v_cause} @ {o.v_site} [{o.v_verified}] (want {o.expected})")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"clean": clean, "mutants": [o.__dict__ for o in outcomes]}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
