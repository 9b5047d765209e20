"""The ``gradscope`` command line.

Run a training script under a trace, the way ``python -m cProfile`` does::

    gradscope run [--why NAME] [--out FILE] [--save T.json] [--json] [--steps N] [--eager-compile] [--quiet] train.py [args...]
    gradscope run [options] -m package.module [args...]
    gradscope show T.json [--why NAME] [--out FILE] [--json] [--quiet]
    gradscope demo [--out FILE]
    gradscope doctor

Everything after the script path is the script's own ``sys.argv[1:]``; the script
runs as ``__main__`` in the current directory with its own directory first on
``sys.path``, and ``gradscope run`` exits with the script's exit code (1 when it
raised). ``-m package.module`` runs a module the way ``python -m`` does (a package runs its
``__main__``; the current directory comes first on ``sys.path``). User mistakes print one
``gradscope: error: ...`` line and exit 2.

>>> _split_run(["run", "--json", "train.py", "--lr", "0.1"])
(['run', '--json', 'train.py'], ['--lr', '0.1'])
>>> _split_run(["run", "-m", "pkg.train", "--lr", "0.1"])
(['run', '-m', 'pkg.train'], ['--lr', '0.1'])
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
import traceback

from .watch import ranks as _ranks
from .render.terminal import print_explanation, write_diagram

__all__ = ["main"]

#: ``run`` options that take a value (used to find where the script path starts).
_RUN_VALUE_OPTS = {"--why", "--out", "-o", "--save", "--steps"}


class UsageError(Exception):
    """A user mistake: reported as one ``gradscope: error:`` line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports mistakes as one line instead of usage + traceback."""

    def error(self, message):  # noqa: D102 - argparse API
        raise UsageError(f"{message} (see `gradscope {self.prog.split(' ', 1)[-1]} --help`)"
                         if " " in self.prog else f"{message} (see `gradscope --help`)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gradscope", description="Find the line that cut your gradient flow.")
    from . import __version__

    p.add_argument("--version", action="version", version=f"gradscope {__version__}")
    sub = p.add_subparsers(dest="command", metavar="{run,show,demo,doctor}", parser_class=_Parser)

    def outputs(sp, run: bool):
        sp.add_argument("--why", action="append", default=[], metavar="NAME",
                        help="explain why NAME's gradient is what it is (repeatable)")
        sp.add_argument("--out", "-o", metavar="FILE", help="write the gradient-flow diagram (.svg .png .pdf .dot ...)")
        sp.add_argument("--json", action="store_true",
                        help="print machine-readable explanations as JSON on stdout (the report goes to stderr)")
        sp.add_argument("--quiet", "-q", action="store_true", help="no report; only --why, --json and errors")
        if run:
            sp.add_argument("--save", metavar="TRACE.json", help="save the trace (or with --watch, the watch log) for `gradscope show`")
            sp.add_argument("--steps", type=int, metavar="N", help="stop recording after N backward calls")
            sp.add_argument("--eager-compile", action="store_true",
                            help="run torch.compile'd code eagerly while tracing, so its ops show their own lines")
            sp.add_argument("--no-verify", action="store_true",
                            help="do not verify the explanations by re-running the script with each candidate cut "
                                 "undone (verifying is the default when a problem is found)")
            sp.add_argument("--verify-budget", type=float, default=120.0, metavar="S",
                            help="seconds the verification's re-runs may take in all (default 120)")
            sp.add_argument("--watch", action="store_true",
                            help="watch the whole run cheaply instead of tracing it: alerts when a parameter stops "
                                 "getting gradients (explained from a trace of the next step); --save writes the "
                                 "watch log, --out FILE.svg its timeline")

    r = sub.add_parser("run", help="run a Python script (or -m module) under a gradient trace",
                       usage="gradscope run [options] (script.py | -m module) [script args ...]")
    outputs(r, run=True)
    r.add_argument("-m", dest="module", metavar="MODULE",
                   help="run a library module as a script, like `python -m MODULE`; everything after it is its argv")
    r.add_argument("script", nargs="?", help="the script to run; everything after it is passed to the script")
    s = sub.add_parser("show", help="re-render a trace saved with --save / tr.save()")
    s.add_argument("trace", help="a trace file written by `gradscope run --save` or tr.save()")
    outputs(s, run=False)
    d = sub.add_parser("demo", help="run the built-in examples of broken gradient flow")
    d.add_argument("--out", "-o", metavar="FILE", default=None,
                   help="where to write the numpy example's diagram (default: a new temporary folder; "
                        "the path is printed)")
    sub.add_parser("doctor", help="check the installation (torch, rich, graphviz `dot`, Jupyter)")
    return p


def _split_run(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split ``run [options] script args...`` into gradscope's part and the script's args.

    >>> _split_run(["run", "--why", "x", "t.py", "--why", "--", "y"])
    (['run', '--why', 'x', 't.py'], ['--why', '--', 'y'])
    """
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[:i] + argv[i + 1:i + 2], argv[i + 2:]
        if a == "-m":  # like python -m: the module name ends gradscope's options
            return argv[:i + 2], argv[i + 2:]
        if a.startswith("-m") and not a.startswith("--"):  # -mpkg.train
            return argv[:i] + ["-m", a[2:]], argv[i + 1:]
        if not a.startswith("-") or a == "-":
            return argv[:i + 1], argv[i + 1:]
        i += 2 if (a in _RUN_VALUE_OPTS) else 1
    return argv, []


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gradscope`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if argv and argv[0] == "run":
        argv, script_args = _split_run(argv)
    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as e:  # --help / --version
            return int(e.code or 0)
        if args.command is None:
            _parser().print_help()
            return 2
        return {"run": _cmd_run, "show": _cmd_show, "demo": _cmd_demo, "doctor": _cmd_doctor}[args.command](
            args, *([script_args] if args.command == "run" else [])
        )
    except UsageError as e:
        return _error(str(e))
    except Exception as e:  # (re-raised below unless it is one of ours, imported only when one happens)
        from .errors import GradscopeError
        from .core.model import TraceFileError

        if isinstance(e, (GradscopeError, TraceFileError)):
            return _error(str(e))
        raise


def _error(msg: str) -> int:
    sys.stdout.flush()
    msg = " ".join(str(msg).split())  # one line
    print(f"gradscope: error: {msg}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- run / show
def _console(args):
    """Where the report and notes go: stdout, or stderr when stdout is reserved for --json."""
    from rich.console import Console

    return Console(stderr=bool(args.json))


def _cmd_run(args, script_args: list[str]) -> int:
    path = args.script
    if args.module is not None:
        if path is not None:
            raise UsageError(f"give either a script or -m MODULE, not both (got -m {args.module} and {path})")
    elif path is None:
        raise UsageError("the following arguments are required: script (or -m MODULE) (see `gradscope run --help`)")
    elif not os.path.exists(path):
        raise UsageError(f"can't open file {path!r}: no such file")
    elif os.path.isdir(path):
        raise UsageError(f"{path!r} is a directory, not a Python script")
    if args.steps is not None and args.steps < 1:
        raise UsageError(f"--steps must be a positive number of backward calls, not {args.steps}")
    for opt, out in (("--out", args.out), ("--save", args.save)):  # (checked before the run, not after it)
        _check_folder(opt, out)
    if args.watch:
        from .watch import cli as _watch_cli

        if args.why:
            raise UsageError("--why explains one traced step; with --watch, alerts are explained as they happen")
        if args.out and not args.out.endswith(".svg"):
            raise UsageError(f"--out {args.out}: the watch timeline is drawn as SVG: use --out FILE.svg")
        return _watch_cli.run(args, script_args, run_script, _console(args))
    _check_out(args.out)
    con = _console(args)
    from . import _verify_cli
    from ._forkserver import ForkServer

    verifying = not (args.no_verify or os.environ.get("GRADSCOPE_NO_VERIFY")) and _verify_cli.child_undos() is None \
        and _ranks.rank_info() is None
    # (the re-runs' fork server imports torch while the script runs: a re-run then costs the script's own time)
    server = ForkServer().start() if verifying else None
    try:
        try:
            tr, code, namespace = run_script(path, script_args, steps=args.steps, stdout_to_stderr=args.json,
                                             module=args.module, eager_compile=args.eager_compile or None)
        except OSError as e:  # reading the script (its own errors are handled inside)
            raise UsageError(f"can't open file {path!r}: {e.strerror or e}") from None
        if tr is None:  # the script did not compile
            return code
        ranks = _ranks.rank_info()
        if ranks is not None:  # one rank of a torchrun / multi-process launch
            return _run_outputs_ranked(tr, args, con, code, namespace, *ranks)
        if verifying and not (tr.failure is not None and _before_any_op(tr)):
            # (`-m pkg.train`: re-run as `-m pkg.train` too; its cuts are in the module's file)
            cmd = [path, *script_args] if args.module is None else ["-m", args.module, *script_args]
            source = path if args.module is None else (namespace or {}).get("__file__")
            if source:
                tr._verification = _verify_cli.verify_script(tr, cmd, budget_s=args.verify_budget, steps=args.steps,
                                                             err=sys.stderr, source=source, server=server)
    finally:
        if server is not None:
            server.close()
    if tr.failure is not None and not args.json and _before_any_op(tr):
        # (an import error, a typo in the argument parsing: the traceback above says it all, once)
        f = tr.failure
        where = f" at {f.site.short}" if f.site is not None else ""
        print(f"\ngradscope: the script failed{where} before any tensor operation ran: there is no gradient flow to "
              "explain (the traceback above says why)", file=sys.stderr)
        args = argparse.Namespace(**{**vars(args), "quiet": True})
    elif tr.failure is not None and not args.json:  # right after the script's traceback
        print("\ngradscope: why the script failed:\n  " + str(tr.failure).replace("\n", "\n  "), file=sys.stderr)
    return _outputs(tr, args, con, exit_code=code, namespace=namespace)


def _before_any_op(tr) -> bool:
    """The script raised before the trace recorded anything: no op, no module call, no backward."""
    return not tr.data.events


def _run_outputs_ranked(tr, args, con, code: int, namespace, rank: int, world: int) -> int:
    """Under torchrun: rank 0 prints the report (and --why, --json) plus each other rank's differences
    from it; the other ranks send their summary to rank 0 and print one labelled line. Without the
    launcher's store to meet at, every rank prints its own report, labelled."""
    args.save, args.out = _ranks.per_rank_path(args.save, rank), _ranks.per_rank_path(args.out, rank)
    doc = trace_json(tr, exit_code=code)
    ex = _ranks.Exchange.connect()
    label = f"gradscope [rank {rank}/{world}]"
    if ex is None:
        con.print(f"{label}: this rank's own report (no launcher store to gather the ranks at "
                  f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')})", highlight=False, markup=False)
        if tr.failure is not None and not args.json:
            print(f"\n{label}: why the script failed:\n  " + str(tr.failure).replace("\n", "\n  "), file=sys.stderr)
        return _outputs(tr, args, con, exit_code=code, namespace=namespace, extra={"rank": rank, "world_size": world})
    if rank != 0:
        try:
            ex.put(rank, doc)
        except Exception as e:  # rank 0 then says this rank sent nothing
            con.print(f"{label}: could not send the summary to rank 0 ({e})", highlight=False, markup=False)
        quiet = argparse.Namespace(**{**vars(args), "quiet": True, "why": [], "json": False})
        _outputs(tr, quiet, con, exit_code=code, namespace=namespace)  # only its own --save / --out
        con.print(f"{label}: traced, {_ranks.describe(doc)}; rank 0 prints the report and how this rank differs",
                  highlight=False, markup=False)
        return code
    if not args.json:
        con.print(f"{label}: report of rank 0; the other ranks' differences follow it", highlight=False, markup=False)
        if tr.failure is not None:
            print(f"\n{label}: why the script failed:\n  " + str(tr.failure).replace("\n", "\n  "), file=sys.stderr)
        _outputs(tr, args, con, exit_code=code, namespace=namespace)
    others = {}
    wait = _ranks.timeout_s()
    deadline = time.monotonic() + wait  # one wait for all the ranks together
    for r in range(1, world):
        other = ex.get(r, max(0.5, deadline - time.monotonic()))
        if other is None:
            others[r] = None
            line = f"rank {r}: sent no summary within {wait:g} s (it was killed, hung, or is not traced by gradscope)"
        else:
            diff = _ranks.differences(doc, other)
            others[r] = {"summary": _ranks.describe(other), "differences": diff}
            line = (f"rank {r}: same gradient flow as rank 0 ({_ranks.describe(other)})" if not diff else
                    f"rank {r} differs from rank 0:\n" + "\n".join(f"  - {d}" for d in diff))
        if not args.json:
            con.print(line, highlight=False, markup=False)
    if args.json:
        return _outputs(tr, args, con, exit_code=code, namespace=namespace,
                        extra={"rank": 0, "world_size": world, "other_ranks": {str(r): v for r, v in others.items()}})
    return code


@contextlib.contextmanager
def _both(a, b):
    with a, b:
        yield


def run_script(path: str | None, argv: list[str], *, stdout_to_stderr: bool = False, module: str | None = None,
               context=None, **trace_kwargs):
    """Run ``path`` (or the module named ``module``, like ``python -m``) as ``__main__`` under
    :func:`gradscope.trace` (or under ``context``: a gradscope.watch).

    Returns ``(trace, exit_code, namespace)``: ``namespace`` is the script's globals
    (``trace`` is None when the script does not compile).

    Mirrors ``python path argv...``: ``sys.argv`` (``argv[0]`` is ``path`` as given), an
    absolute ``__file__``, ``sys.path[0]`` = the script's directory, a fresh ``__main__``
    module, SystemExit codes, and an uncaught exception's traceback (stderr, exit code 1).
    """
    import builtins
    import io
    import types

    import gradscope

    trace_kwargs = {k: v for k, v in trace_kwargs.items() if v is not None}
    saved = sys.argv, list(sys.path), sys.modules.get("__main__")
    main_mod = types.ModuleType("__main__")
    if module is not None:
        sys.path[:1] = [os.getcwd()]  # python -m: the current directory first
        try:
            spec, code = _module_code(module)
        except BaseException as e:
            sys.argv, sys.path[:] = saved[0], saved[1]
            if isinstance(e, (SyntaxError, ValueError)) and not isinstance(e, UsageError):
                traceback.print_exception(type(e), e, None, file=sys.stderr)
                return None, 1, {}
            raise
        full = spec.origin
        main_mod.__dict__.update(__file__=full, __builtins__=builtins, __cached__=spec.cached,
                                 __loader__=spec.loader, __package__=spec.parent, __spec__=spec)
        sys.argv = [full, *argv]
    else:
        full = os.path.abspath(path)
        with io.open_code(full) as f:
            source = f.read()
        try:
            code = compile(source, full, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:  # reported like Python does: no trace to show
            traceback.print_exception(type(e), e, None, file=sys.stderr)
            return None, 1, {}
        main_mod.__dict__.update(__file__=full, __builtins__=builtins, __cached__=None)
        sys.argv = [path, *argv]
        sys.path[:1] = [os.path.dirname(full)]
    sys.modules["__main__"] = main_mod
    tr = context if context is not None else gradscope.trace(**trace_kwargs)
    redirect = contextlib.redirect_stdout(sys.stderr) if stdout_to_stderr else contextlib.nullcontext()
    from ._verify_cli import child_ends, child_undos
    from ._record._intervene import RunEnded

    undos = child_undos() if context is None else None
    if undos is not None:  # a verifying parent's re-run: its undos, at the script's own lines
        from ._record._intervene import Interventions

        # (it ends the script once its recording has reached the step that showed the problem)
        iv = Interventions(undos, (full, "<module>"), end=(lambda: tr.ended) if child_ends() else None)
        tr._undo_hits = iv.hits
        tr._undo_iv = iv
        redirect = _both(redirect, iv)
    exit_code = 0
    try:
        with redirect:
            try:
                with tr:
                    try:
                        exec(code, main_mod.__dict__)
                    except RunEnded:  # a verifying re-run recorded what it was asked for
                        pass
                    except SystemExit as e:  # a normal way to end a script, not a failed step
                        exit_code = _exit_code(e.code)
                    except KeyboardInterrupt as e:  # ditto: the report shows what ran so far
                        _print_user_traceback(e, full)
                        exit_code = 130
            except Exception as e:  # the script's own error (the trace saw it): report it like Python does
                _print_user_traceback(e, full)
                exit_code = 1
            finally:
                sys.stdout.flush()
    finally:
        sys.argv, sys.path[:] = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
    return tr, exit_code, main_mod.__dict__


def _module_code(name: str):
    """``(spec, code)`` of the module ``python -m name`` would run (a package runs its ``__main__``);
    a name that cannot be run is a UsageError saying why, as Python words it."""
    import importlib.util

    if not name or name.startswith("."):
        raise UsageError(f"-m {name!r}: relative module names are not supported; give the full dotted name")
    try:
        spec = importlib.util.find_spec(name)  # (imports the parent packages, as python -m does)
    except Exception as e:
        raise UsageError(f"error while finding module specification for {name!r} ({type(e).__name__}: {e})") from None
    if spec is None:
        raise UsageError(f"no module named {name!r} (searched from {os.getcwd()} and the installed packages)")
    if spec.submodule_search_locations is not None:  # a package: run its __main__
        if name == "__main__" or name.endswith(".__main__"):
            raise UsageError(f"cannot use package {name!r} as the __main__ module")
        try:
            return _module_code(name + ".__main__")
        except UsageError:
            raise UsageError(f"no module named '{name}.__main__'; {name!r} is a package and cannot be "
                             "directly executed") from None
    if spec.loader is None or not hasattr(spec.loader, "get_code"):
        raise UsageError(f"no code object available for {name!r} (namespace package or unusual loader)")
    code = spec.loader.get_code(spec.name)  # a SyntaxError is reported like Python does
    if code is None:
        raise UsageError(f"no code object available for {name!r}")
    return spec, code


def _exit_code(code) -> int:
    """What the interpreter does with ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


_GS_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _print_user_traceback(exc: BaseException, script: str) -> None:
    """Print ``exc`` like the interpreter would, from the script's first frame on, without
    gradscope's own frames and without the note the trace attached (shown separately)."""
    tb = exc.__traceback__
    t = tb
    while t is not None and t.tb_frame.f_code.co_filename != script:
        t = t.tb_next
    notes = getattr(exc, "__notes__", None)
    if notes:
        exc.__notes__ = [n for n in notes if not str(n).startswith("gradscope: ")]
    te = traceback.TracebackException(type(exc), exc, t or tb)
    seen = set()
    todo = [te]
    while todo:  # drop gradscope's frames, here and in chained exceptions
        x = todo.pop()
        if x is None or id(x) in seen:
            continue
        seen.add(id(x))
        x.stack = traceback.StackSummary.from_list([f for f in x.stack if not f.filename.startswith(_GS_DIR)])
        todo += [x.__cause__, x.__context__]
    sys.stdout.flush()
    sys.stderr.write("".join(te.format()))
    sys.stderr.flush()


def _cmd_show(args) -> int:
    import gradscope

    from .watch import cli as _watch_cli

    logs = _watch_cli.watch_logs(args.trace)
    if logs:
        return _watch_cli.show(args, _console(args), logs)
    if not os.path.exists(args.trace):
        raise UsageError(f"{args.trace}: no such trace file; save one with `gradscope run --save FILE` or tr.save(FILE)")
    _check_out(args.out)
    tr = gradscope.load(args.trace)
    return _outputs(tr, args, _console(args), exit_code=0)


def _outputs(tr, args, con, *, exit_code: int, namespace=None, extra=None) -> int:
    """--save, report, --out, --why and --json for a finished trace (in that order, so an
    unknown --why name cannot lose the saved trace or the report)."""
    if getattr(args, "save", None):
        try:
            tr.save(args.save)
        except OSError as e:
            raise UsageError(f"cannot write the trace to {args.save}: {e.strerror or e}") from None
        con.print(f"gradscope: trace saved to {args.save}", highlight=False, markup=False)
    if not args.quiet:
        tr.report(console=con)
    if args.out:
        write_diagram(tr, args.out, con)
    whys = [(name, why_by_name(tr, name, namespace)) for name in args.why]  # unknown -> one-line error
    if not args.json:
        for name, e in whys:
            con.print(f"\n[bold]why {name}?[/]")
            print_explanation(con, e)
    else:
        doc = {**trace_json(tr, whys, exit_code=exit_code), **(extra or {})}
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        sys.stdout.flush()
    return exit_code


def why_by_name(tr, name: str, namespace=None):
    """``tr.why(name)``; a name the trace does not know (plain tensors have no recorded
    name) is looked up as a variable in ``namespace`` (the script's or notebook's globals).

    >>> import torch, gradscope
    >>> x = torch.ones(2, requires_grad=True)
    >>> with gradscope.trace() as tr:
    ...     (x.detach() * 2).sum()
    tensor(4.)
    >>> why_by_name(tr, "x", {"x": x}).target
    'x'
    """
    from .errors import UnknownTargetError

    try:
        return tr.why(name)
    except UnknownTargetError:
        obj = (namespace or {}).get(name)
        torch = sys.modules.get("torch")  # a saved trace is read without torch: no tensors then
        if torch is None or not isinstance(obj, torch.Tensor):
            raise
    if name.isidentifier() and not name.startswith("_"):
        return tr._why(obj, name)  # (explanations say "x", not "t12")
    return tr.why(obj)


def _check_folder(opt: str, path: str | None) -> None:
    """An output path whose folder does not exist is an error before the script runs (not after a long run)."""
    if not path or path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{opt} {path}: the folder {folder} does not exist; create it first (mkdir -p {folder})")


def _check_out(path: str | None) -> None:
    """Reject an unknown diagram extension before running anything."""
    from .graph import RENDER_FORMATS, SOURCE_FORMATS

    if path is None:
        return
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in RENDER_FORMATS + SOURCE_FORMATS:
        known = ", ".join("." + f for f in RENDER_FORMATS + SOURCE_FORMATS)
        raise UsageError(f"--out {path}: unknown diagram format {('.' + ext) if ext else '(no extension)'}; use one of {known}")


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def trace_json(tr, whys=(), *, exit_code: int | None = None) -> dict:
    """The ``--json`` document: verdict, parameter table, cuts, problems, failure, --why answers."""
    s = tr.summary()
    doc = {
        "verdict": s.verdict,
        "ok": bool(s.ok),
        "exit_code": exit_code,
        "n_backward": s.n_backward,
        "n_optimizer_steps": s.n_optimizer_steps,
        "truncated": bool(tr.data.truncated),
        "params": [
            {"name": p.name, "shape": list(p.shape), "status": p.status, "norm": p.norm,
             "trainable": p.trainable, "cause": p.cause, "site": p.site.to_json() if p.site else None}
            for p in s.params
        ],
        "cuts": [
            {"index": e.index, "op": e.op, "cut": e.cut, "verdict": s.cut_verdicts.get(e.index),
             "site": e.site.to_json() if e.site else None}
            for e in tr.cuts()
        ],
        "problems": [_problem_json(e, s.params) for e in s.problems],
        "failure": tr.failure.to_json() if tr.failure is not None else None,
        "why": {name: e.to_json() for name, e in whys},
        "verification": tr.verification.to_json() if tr.verification is not None else None,
        **({"undo_hits": list(tr._undo_hits)} if getattr(tr, "_undo_hits", None) is not None else {}),
        **({"undo_joins": tr._undo_iv.joins, "undo_errors": list(tr._undo_iv.errors[:3]),
            "reached": _reached(tr, s.params)} if getattr(tr, "_undo_iv", None) is not None else {}),
    }
    return _clean(doc)


def _reached(tr, params) -> list:
    """The parameters a gradient reached in the last recorded backward call (a verifying re-run's: a `.grad` left
    from an earlier step, its clear undone, is no gradient of this step)."""
    bws = tr.data.backwards
    if not bws:
        return []
    tids = {n.leaf for n in bws[-1].nodes.values() if n.leaf is not None and n.ran}
    return [p.name for p in params if p.tid in tids]


def _problem_json(e, params) -> dict:
    """A problem's JSON plus ``targets``: every parameter it covers (the report merges them)."""
    d = e.to_json()
    key = (e.cause, e.site.short if e.site else None)
    d["targets"] = [p.name for p in params if (p.cause, p.site.short if p.site else None) == key] or [e.target]
    return d


# --------------------------------------------------------------------------- demo
def _cmd_demo(args) -> int:
    from rich.console import Console

    from . import demo

    return demo.run_all(out=args.out, console=Console())


# --------------------------------------------------------------------------- doctor
def _cmd_doctor(args) -> int:
    """Print what is installed and what is missing; exit 1 when something required is missing."""
    import importlib
    import platform
    import shutil
    import subprocess

    ok = True
    rows: list[tuple[str, str, str]] = []  # (mark, what, detail)

    def version(mod: str) -> str | None:
        try:
            m = importlib.import_module(mod)
        except Exception:  # a broken install raises anything on import: the row says "not importable"
            return None
        v = getattr(m, "__version__", None)
        if v is None:
            try:
                from importlib.metadata import version as dist_version

                v = dist_version(mod)
            except ImportError:  # (importlib.metadata.PackageNotFoundError)
                v = "installed"
        return str(v)

    from . import __version__

    rows.append(("ok", "gradscope", __version__))
    rows.append(("ok", "python", f"{platform.python_version()} ({sys.executable})"))
    for mod, pip, required in (("torch", "torch", True), ("rich", "rich", True), ("graphviz", "graphviz", True),
                               ("numpy", "numpy", False)):
        v = version(mod)
        if v:
            rows.append(("ok", mod, v))
        else:
            ok = ok and not required
            rows.append(("MISSING" if required else "optional", mod, f"not importable; install it with `pip install {pip}`"))
    dot = shutil.which("dot")
    if dot:
        try:
            p = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=20)
            dv = (p.stderr or p.stdout).strip().splitlines()[0] if (p.stderr or p.stdout).strip() else "unknown version"
        except (OSError, subprocess.SubprocessError, IndexError) as e:  # dot present but broken
            dv = f"found but `dot -V` failed: {e}"
            ok = False
        rows.append(("ok", "dot (graphviz)", f"{dot}: {dv}"))
    else:
        ok = False
        rows.append(("MISSING", "dot (graphviz)",
                     "not on PATH; diagrams other than .dot need it: `apt-get install graphviz` (Debian/Ubuntu), "
                     "`brew install graphviz` (macOS) or `conda install -c conda-forge graphviz`"))
    ipy, ipk = version("IPython"), version("ipykernel")
    if ipy and ipk:
        rows.append(("ok", "jupyter", f"IPython {ipy}, ipykernel {ipk}: `%load_ext gradscope` then `%%gradscope`"))
    else:
        missing = " ".join(m for m, v in (("ipython", ipy), ("ipykernel", ipk)) if not v)
        rows.append(("optional", "jupyter", f"notebook support needs `pip install {missing}`"))
    width = max(len(w) for _, w, _ in rows)
    for mark, what, detail in rows:
        print(f"[{mark:^8}] {what:<{width}}  {detail}")
    print("everything gradscope needs is installed" if ok else "gradscope: some required pieces are missing (see above)")
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
