"""``gradscope run --watch`` and ``gradscope show RUN.watch.jsonl``: a whole script watched, its
alerts printed as they happen, and the per-module timeline at the end."""
from __future__ import annotations

import sys
import time

from .watch_render import TimelineTable, timeline_svg
from .watching import watch
from .watchlog import SCHEMA, read_log


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
            why = str(alert).splitlines()[1 + len(alert.changes):]
            print(f"gradscope watch: step {alert.step} explained:\n" + "\n".join(why), file=sys.stderr, flush=True)

    import os
    import tempfile

    log = args.save
    if not log:
        fd, log = tempfile.mkstemp(prefix="gradscope-", suffix=".watch.jsonl")
        os.close(fd)
    try:
        w = watch(log=log, on_alert=on_alert, on_step=progress)
        _, code, _ = run_script(args.script, script_args, stdout_to_stderr=args.json, context=w)
        progress.clear()
        tl = read_log(log)
        if not args.quiet:
            console.print(w.summary().splitlines()[0], highlight=False, markup=False)
            if tl.steps:
                console.print(TimelineTable(tl))
            if args.save:
                console.print(f"gradscope: watch log saved to {args.save}", highlight=False, markup=False)
        if args.out:
            write_svg(tl, args.out, console)
    finally:
        if not args.save:
            os.unlink(log)
    return code


def write_svg(tl, out: str, console) -> None:
    from .errors import GradscopeError

    if not out.endswith(".svg"):
        raise GradscopeError(f"the watch timeline is drawn as SVG: use --out FILE.svg, not {out}")
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(timeline_svg(tl))
    except OSError as e:
        raise GradscopeError(f"cannot write the timeline to {out}: {e.strerror or e}") from None
    console.print(f"gradscope: timeline written to {out}", highlight=False, markup=False)


def show(args, console) -> int:
    tl = read_log(args.trace)
    console.print(TimelineTable(tl))
    if args.out:
        write_svg(tl, args.out, console)
    return 0
