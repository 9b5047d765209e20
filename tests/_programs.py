"""Running the real programs of ``tests/programs/`` plain and under gradscope, in-process or as
subprocesses, and judging what gradscope says about them (used by test_programs.py,
test_mutations.py, mutate.py and benchmarks/programs.py).

What "every trainable parameter named by its module path" means here (:func:`name_problems`):

* the models are the *root* modules the program called: every ``nn.Module`` whose ``__call__`` ran
  (a global forward pre-hook sees them) that is not a submodule of another called module;
* a parameter's module paths are the names ``root.named_parameters(remove_duplicate=False)`` gives it
  (a tied weight has several: any of them will do);
* the trace's name for it (the name in ``tr.summary().params``, what the report and ``--json`` show)
  is right when it equals a module path ``P`` or is ``<prefix>.P`` where the prefix is the root's
  variable, a dotted/indexed path of identifiers (``model``, ``self.net``, ``layers.0``);
* names are unique: two different parameters never get the same name;
* the name resolves back: ``tr.resolve(name)`` is that parameter, and so is the bare module path
  ``P`` when no other root has a parameter at the same path.

Trainable = ``requires_grad`` at the end of the run.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys
import warnings
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS_DIR = os.path.join(ROOT, "tests", "programs")
PYTHON = sys.executable

#: a root-variable prefix: identifiers and indices joined by dots (``self.net``, ``layers.0``, ``h[1]``)
_PREFIX = re.compile(r"^[A-Za-z_]\w*(?:(?:\.[A-Za-z_]\w*)|(?:\.\d+)|(?:\[\d+\]))*$")
#: wall-clock figures a program prints; they legitimately differ between two runs
_SECONDS = re.compile(r"\b\d+\.\d+s\b")


def program_names() -> list[str]:
    """Every program in tests/programs/ (helpers start with ``_``)."""
    return sorted(f[:-3] for f in os.listdir(PROGRAMS_DIR)
                  if f.endswith(".py") and not f.startswith("_") and f != "conftest.py")


def program_path(name: str) -> str:
    return os.path.join(PROGRAMS_DIR, name + ".py")


def normalize_output(text: str) -> str:
    """Program output with printed durations masked (``time: 0.03s`` -> ``time: <secs>``)."""
    return _SECONDS.sub("<secs>", text)


# --------------------------------------------------------------------------- in-process runs
@dataclass
class Run:
    """One in-process run of a program file as ``__main__``."""

    path: str
    stdout: str = ""
    error: BaseException | None = None  # what the program raised (SystemExit(0) is not an error)
    roots: list = field(default_factory=list)  # root modules it called, in order of first call
    grads: set = field(default_factory=set)  # param keys that received a gradient at least once (a
    #: post-accumulate-grad hook on every parameter of a called module, and any .grad an optimizer step finds)
    trace: object = None  # the gradscope Trace, for traced runs

    def params(self):
        """``(key, module_paths, param)`` for every parameter of every root (each param once)."""
        seen = set()
        for i, root in enumerate(self.roots):
            paths: dict[int, list] = {}
            objs = {}
            for n, p in root.named_parameters(remove_duplicate=False):
                paths.setdefault(id(p), []).append(n)
                objs[id(p)] = p
            for pid, ns in paths.items():
                if pid in seen:
                    continue
                seen.add(pid)
                yield (i, ns[0]), ns, objs[pid]


def _is_root(m, modules) -> bool:
    return not any(o is not m and any(c is m for c in o.modules()) for o in modules)


def run_program(path: str, *, traced: bool = False, track_grads: bool = False, argv=()) -> Run:
    """Run ``path`` as ``__main__`` in this process (its directory first on sys.path, its stdout
    captured), optionally inside ``gradscope.trace()``; collect the root modules it called and,
    with ``track_grads``, which of their parameters ever received a gradient."""
    import torch

    run = Run(path)
    called: list = []
    hooked: set = set()
    handles = []

    def pre_hook(module, args):
        if any(m is module for m in called):
            return
        called.append(module)
        if track_grads:  # hook every parameter once, keyed by (root index, path) at the end
            for p in module.parameters():
                if id(p) not in hooked and p.requires_grad:
                    hooked.add(id(p))
                    handles.append(p.register_post_accumulate_grad_hook(_GradFlag(run, p)))
        return

    def step_pre_hook(opt, args, kwargs):  # a parameter an optimizer finds a .grad on received one
        for group in opt.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    run.grads.add(id(p))

    h = torch.nn.modules.module.register_module_forward_pre_hook(pre_hook)
    if track_grads:  # also modules whose forward is called directly (layer.forward(x)), not via __call__
        from torch.optim.optimizer import register_optimizer_step_pre_hook

        handles.append(register_optimizer_step_pre_hook(step_pre_hook))
    saved_argv, saved_path, saved_cwd = sys.argv, list(sys.path), os.getcwd()
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(path))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if traced:
                import gradscope

                run.trace = gradscope.trace()
                try:
                    with run.trace:
                        _exec(path, run)
                except Exception as e:  # the traced block's own error (recorded by the trace)
                    run.error = e
            else:
                try:
                    _exec(path, run)
                except Exception as e:
                    run.error = e
    finally:
        h.remove()
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)
        for hd in handles:
            hd.remove()
    run.stdout = out.getvalue()
    run.roots = [m for m in called if _is_root(m, called)]
    if track_grads:
        keys = {id(p): key for key, _, p in run.params()}
        run.grads = {keys[pid] for pid in run.grads if pid in keys}
    return run


class _GradFlag:
    """A post-accumulate-grad hook that notes (by id) that its parameter got a gradient."""

    def __init__(self, run, p):
        self.run, self.pid = run, id(p)

    def __call__(self, p):
        if p.grad is not None:
            self.run.grads.add(self.pid)


def _exec(path, run):
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise


# --------------------------------------------------------------------------- judging a trace
def trace_names(tr) -> dict:
    """tid -> the name the trace shows for each parameter row (report / --json)."""
    return {p.tid: p.name for p in tr.summary().params}


def named_by_path(name: str | None, paths) -> bool:
    """``name`` is one of ``paths`` or ``<prefix>.<path>`` with a variable-like prefix."""
    if not name:
        return False
    for p in paths:
        if name == p:
            return True
        if name.endswith("." + p) and _PREFIX.match(name[: -len(p) - 1]):
            return True
    return False


def name_verdicts(run: Run) -> list[tuple[str, str | None]]:
    """``(module path, None if named right else what is wrong)`` for every trainable parameter."""
    from gradscope.errors import UnknownTargetError

    tr = run.trace
    names = trace_names(tr)
    out, by_name = [], {}
    rows = [(key, paths, p) for key, paths, p in run.params() if p.requires_grad]
    bare_count: dict[str, int] = {}
    for _, paths, _ in rows:
        for q in set(paths):
            bare_count[q] = bare_count.get(q, 0) + 1
    for key, paths, p in rows:
        out.append((paths[0], _misnamed(tr, names, by_name, bare_count, paths, p, UnknownTargetError)))
    return out


def _misnamed(tr, names, by_name, bare_count, paths, p, UnknownTargetError) -> str | None:
    try:
        tid = tr.resolve(p)
    except UnknownTargetError:
        return "never seen by the trace"
    name = names.get(tid) or tr.data.tensors[tid].name
    if not named_by_path(name, paths):
        return f"named {name!r}"
    if name in by_name and by_name[name] != tid:
        return f"name {name!r} also used for another parameter"
    by_name[name] = tid
    for query in [name] + [q for q in paths if bare_count[q] == 1 and q != name]:
        try:
            got = tr.resolve(query)
        except UnknownTargetError as e:
            return f"tr.resolve({query!r}) failed: {str(e)[:80]}"
        if got != tid:
            return f"tr.resolve({query!r}) is another tensor ({tr.data.tensors[got].name!r})"
    return None


def name_problems(run: Run) -> list[str]:
    """Every way the trace of ``run`` misnames a trainable parameter (empty when all are right)."""
    return [f"{path}: {why}" for path, why in name_verdicts(run) if why]


def problem_lines(explanations) -> list[str]:
    """One line per problem: cause, target, site."""
    return [f"{e.cause} {e.target} @ {e.site.short if e.site else '?'}" for e in explanations]


# --------------------------------------------------------------------------- subprocesses
def subprocess_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave in write order in both runs
    return env


def run_plain_subprocess(name: str, cwd: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """``python tests/programs/NAME.py`` in ``cwd``, stderr merged into stdout."""
    return subprocess.run(args=[PYTHON, program_path(name)], check=False, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=subprocess_env(), timeout=timeout)


def run_cli_subprocess(name: str, cwd: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m gradscope run --json --quiet tests/programs/NAME.py`` in ``cwd``: stdout is the
    JSON document (the live trace's verdict, parameter table, problems); the program's own stdout
    and stderr go to stderr, interleaved as in the plain run."""
    return subprocess.run(args=[PYTHON, "-m", "gradscope", "run", "--json", "--quiet", program_path(name)],
                          check=False, cwd=cwd, capture_output=True, text=True, env=subprocess_env(),
                          timeout=timeout)


def program_part(cli_stderr: str) -> str:
    """The program's output in ``gradscope run --json --quiet``'s stderr (gradscope's own lines,
    which all start with ``gradscope:``, removed)."""
    return "".join(line for line in cli_stderr.splitlines(keepends=True) if not line.startswith("gradscope:"))
