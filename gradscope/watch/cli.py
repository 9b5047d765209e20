"""``gradscope run --watch`` and ``gradscope show RUN.watch.jsonl``: a whole script watched, its
alerts printed as they happen, and the per-module timeline at the end."""
from __future__ import annotations

import sys
import time

from ..render.timeline import TimelineTable, timeline_svg
from .watching import watch
from .log import SCHEMA, merge_ranks, read_log


def is_watch_log(path: str) -> bool:
    """Whether ``path`` is a watch log (its first line names the watch schema), not a trace."""
    try:
        with open(path, encoding="utf-8") as f:
            head = f.readline(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return f'"schema": "{SCHEMA}"' in head


class _Progress:
    """One updating line on a terminal (stderr), at most twice a second; nothing in a log file."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = stream.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, step, n_alerts):
        if not self.tty:
            return
        now = time.monotonic()
        if now - self.last < 0.5:
            return
        self.last = now
        self.stream.write(f"\rgradscope watch: step {step}, {n_alerts} alert{'s' if n_alerts != 1 else ''}\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self):
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def run(args, script_args, run_script, console) -> int:
    """Run the script under a watch; alerts go to stderr as they happen (explanations when ready)."""
    progress = _Progress(sys.stderr)
    said = set()

    def on_alert(alert):
        key = (alert.kind, alert.step, tuple(alert.params))
        progress.clear()
        if key not in said:
            said.add(key)
            print(f"gradscope watch: {alert}", file=sys.stderr, flush=True)
        elif alert.explanation is not None:  # the same alert, now explained: only the new lines
            why = alert.why_lines()
            print(f"gradscope watch: step {alert.step} explained:\n" + "\n".join(why), file=sys.stderr, flush=True)

    import os
    import tempfile

    log = args.save
    if not log:
        fd, log = tempfile.mkstemp(prefix="gradscope-", suffix=".watch.jsonl")
        os.close(fd)
    w = watch(log=log, on_alert=on_alert, on_step=progress)
    rank = int(os.environ.get("RANK", "0") or 0)  # under torchrun: one summary (rank 0's)
    try:
        _, code, _ = run_script(args.script, script_args, stdout_to_stderr=args.json, module=args.module, context=w)
        progress.clear()
        tl = read_log(w.log_path)
        if not args.quiet and rank == 0:
            console.print(w.summary().splitlines()[0], highlight=False, markup=False)
            if tl.steps:
                console.print(TimelineTable(tl))
            if args.save:
                console.print(f"gradscope: watch log saved to {w.log_path}", highlight=False, markup=False)
        if args.out and rank == 0:
            write_svg(tl, args.out, console)
    finally:
        if not args.save:
            for p in {log, w.log_path}:
                if p and os.path.exists(p):
                    os.unlink(p)
    return code


def write_svg(tl, out: str, console) -> None:
    from ..errors import GradscopeError

    if not out.endswith(".svg"):
        raise GradscopeError(f"the watch timeline is drawn as SVG: use --out FILE.svg, not {out}")
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(timeline_svg(tl))
    except OSError as e:
        raise GradscopeError(f"cannot write the timeline to {out}: {e.strerror or e}") from None
    console.print(f"gradscope: timeline written to {out}", highlight=False, markup=False)


def watch_logs(path: str) -> list:
    """The watch log(s) ``path`` names: itself, or for a multi-process run saved as ``path``, the
    ranks' own logs beside it (``run.watch.rank0.jsonl``, ...). Empty when it is not a watch log."""
    import glob
    import os

    if os.path.exists(path):
        return [path] if is_watch_log(path) else []
    root, ext = os.path.splitext(path)
    stem = root[:-len(".watch")] if root.endswith(".watch") else root
    found = sorted(glob.glob(glob.escape(stem) + ".watch.rank*" + ext) + glob.glob(glob.escape(root) + ".rank*" + ext))
    return [p for p in dict.fromkeys(found) if is_watch_log(p)]


def show(args, console, paths=None) -> int:
    tl = merge_ranks([read_log(p) for p in (paths or [args.trace])])
    if len(paths or ()) > 1:
        console.print(f"gradscope: {len(paths)} ranks' logs; parameters whose gradients differ between ranks are "
                      "shown per rank", highlight=False, markup=False)
    for note in tl.notes:
        console.print(f"gradscope: note: {note}", highlight=False, markup=False)
    console.print(TimelineTable(tl))
    if args.out:
        write_svg(tl, args.out, console)
    return 0
