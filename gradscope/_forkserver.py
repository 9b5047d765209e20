"""A fork server for ``gradscope run``'s verifying re-runs: one process that has imported torch and gradscope
(about 1.5 s of every fresh interpreter's start) and forks a copy of itself per re-run, so that each re-run
costs the script's own time, not another interpreter's start.

Linux only (``os.fork``; elsewhere, or with ``GRADSCOPE_NO_FORK=1``, each re-run is a fresh ``python -m gradscope
run`` subprocess, as before). The server never runs a tensor operation itself, so no thread pool, CUDA context or
user state is inherited by a fork: each child starts as a fresh interpreter would after ``import torch``, with the
parent's environment and working directory, stdin from /dev/null, stdout to a file the parent reads, stderr
discarded (what the subprocess re-runs did too). A re-run that runs past its time is killed by the server.

Protocol: one JSON request per line on the server's stdin (``argv``, ``env``, ``cwd``, ``out``, ``timeout``), one
JSON answer per line on its stdout (``rc``, ``timeout``); the server exits when its stdin closes.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

__all__ = ["ForkServer", "available"]

_SERVE = "from gradscope._forkserver import serve; serve()"
_READY = "ready"


def available() -> bool:
    """Whether re-runs can be forked here (Linux, not switched off with ``GRADSCOPE_NO_FORK``)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and not os.environ.get("GRADSCOPE_NO_FORK")


class ForkServer:
    """The parent's handle on the server: :meth:`start` (returns at once; the server imports in the background),
    :meth:`run` one ``gradscope`` command line in a fork of it, :meth:`close`."""

    def __init__(self):
        self._p = None
        self._ready = False

    def start(self) -> "ForkServer":
        if self._p is None and available():
            try:
                self._p = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                           cwd=os.getcwd(), env=dict(os.environ))
            except OSError:  # (no server: each re-run is a subprocess)
                self._p = None
        return self

    def _readline(self, timeout: float) -> str | None:
        p = self._p
        ready, _, _ = select.select([p.stdout], [], [], max(timeout, 0.1))
        return p.stdout.readline() if ready else None

    def run(self, argv: list, env: dict, timeout: float):
        """``(exit code, stdout)`` of ``gradscope *argv`` in a fork of the server with environment ``env``; ``None``
        when the server cannot run it (the caller runs a subprocess instead). Raises ``TimeoutError`` when the
        re-run ran past ``timeout`` seconds (the server killed it)."""
        p = self._p
        if p is None or p.poll() is not None:
            return None
        fd, out = tempfile.mkstemp(prefix="gradscope-rerun-", suffix=".json")
        os.close(fd)
        try:
            if not self._ready:  # (its imports: a fresh interpreter's start, once)
                line = self._readline(120)
                if line is None or line.strip() != _READY:
                    self.close()
                    return None
                self._ready = True
            p.stdin.write(json.dumps({"argv": argv, "env": env, "cwd": os.getcwd(), "out": out,
                                      "timeout": timeout}) + "\n")
            p.stdin.flush()
            line = self._readline(timeout + 30)  # (the server ends a re-run at its timeout: this is a hang)
            if not line:
                self.close()
                return None
            answer = json.loads(line)
            if answer.get("timeout"):
                raise TimeoutError(f"the re-run ran past {timeout:.0f} s")
            with open(out, encoding="utf-8", errors="replace") as f:
                return int(answer["rc"]), f.read()
        except TimeoutError:  # (an OSError: not a broken server)
            raise
        except (OSError, ValueError, KeyError):  # (a broken server: the subprocess way)
            self.close()
            return None
        finally:
            try:
                os.unlink(out)
            except OSError:
                pass

    def close(self) -> None:
        p, self._p = self._p, None
        if p is None:
            return
        try:
            p.stdin.close()
            p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            p.kill()
            p.wait()


# --------------------------------------------------------------------------- the server process
def serve() -> None:
    """The server's loop (run as ``python -c``): import what a re-run needs, then fork one child per request."""
    import torch  # noqa: F401  (what each re-run imports first: once, here)

    from . import cli, _verify_cli  # noqa: F401
    from . import diagnosis, render  # noqa: F401

    out = sys.stdout
    out.write(_READY + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        rc, timed_out = _fork_one(req)
        out.write(json.dumps({"rc": rc, "timeout": timed_out}) + "\n")
        out.flush()


def _fork_one(req) -> tuple:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: a re-run; it ends as the interpreter does (atexit handlers, flushed output)
        sys.exit(_child(req))
    deadline = time.monotonic() + float(req["timeout"])
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -9, True
        time.sleep(0.002)


def _child(req) -> int:
    """In a fork of the server: ``gradscope <argv>`` as ``python -m gradscope <argv>`` would run it; its exit code."""
    try:
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(os.open(req["out"], os.O_WRONLY | os.O_TRUNC), 1)
        os.dup2(null, 2)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from .cli import main

        rc = main(list(req["argv"]))
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:
        rc = 1
    return rc & 0xFF if isinstance(rc, int) else 1
