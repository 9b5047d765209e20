"""``gradscope run`` under a multi-process launcher (``torchrun``): one report, per-rank differences.

Every rank traces its own process. Each rank's summary (the ``--json`` document) goes through the
launcher's key-value store (torchrun's agent store at ``MASTER_ADDR:MASTER_PORT``, which outlives
the script's own process group); rank 0 prints the report and then, for every other rank, how its
gradient flow differed from rank 0's. Without a reachable store each rank prints its own report,
labelled with its rank. ``--save`` / ``--out`` of rank N > 0 get ``.rankN`` before the extension.

>>> rank_info({"RANK": "1", "WORLD_SIZE": "2"})
(1, 2)
>>> rank_info({"RANK": "0", "WORLD_SIZE": "1"}) is None
True
>>> per_rank_path("trace.json", 2)
'trace.rank2.json'
"""
from __future__ import annotations

import json
import os
from datetime import timedelta

#: how long rank 0 waits for the other ranks' summaries (seconds; GRADSCOPE_RANK_TIMEOUT overrides)
WAIT_S = 60.0


def rank_info(env=None) -> tuple[int, int] | None:
    """(rank, world size) when this process is one rank of several, else None."""
    env = os.environ if env is None else env
    try:
        rank, world = int(env["RANK"]), int(env.get("WORLD_SIZE", "1"))
    except (KeyError, ValueError):
        return None
    return (rank, world) if world > 1 and 0 <= rank < world else None


def per_rank_path(path: str | None, rank: int) -> str | None:
    """Rank 0 writes ``path``; rank N writes ``stem.rankN.ext`` (ranks never overwrite each other)."""
    if not path or rank == 0:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}.rank{rank}{ext}"


class Exchange:
    """The launcher's store, under a key prefix of this run and restart."""

    def __init__(self, store, prefix: str):
        self.store, self.prefix = store, prefix

    @classmethod
    def connect(cls, timeout_s: float = 10.0) -> Exchange | None:
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if not host or not port:
            return None
        try:
            from torch.distributed import TCPStore

            store = TCPStore(host, int(port), is_master=False, timeout=timedelta(seconds=timeout_s))
        except (RuntimeError, ValueError, OSError):  # no store to reach (not torchrun, or it is gone; DistError is a
            # RuntimeError, a bad port a ValueError): each rank reports alone
            return None
        run = os.environ.get("TORCHELASTIC_RUN_ID", "none")
        attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        return cls(store, f"gradscope/{run}/{attempt}/")

    def put(self, rank: int, doc: dict) -> None:
        self.store.set(f"{self.prefix}{rank}", json.dumps(doc, allow_nan=False))

    def get(self, rank: int, timeout_s: float) -> dict | None:
        key = f"{self.prefix}{rank}"
        try:
            self.store.wait([key], timedelta(seconds=timeout_s))
            return json.loads(self.store.get(key))
        except (RuntimeError, ValueError, OSError):  # that rank never finished (killed, hung, crashed before its
            # summary: the store's wait times out with a DistError, a RuntimeError), or sent no JSON
            return None


def _problems(doc: dict) -> dict:
    """(cause, file:line) -> parameters, for one rank's summary."""
    out = {}
    for p in doc.get("problems") or ():
        s = p.get("site") or {}
        where = f"{os.path.basename(s['filename'])}:{s['lineno']}" if s.get("filename") else ""
        out[(p.get("cause"), where)] = tuple(p.get("targets") or (p.get("target"),))
    return out


def _failure(doc: dict):
    f = doc.get("failure")
    return None if f is None else (f.get("cause"), (f.get("summary") or "").split("\n", 1)[0][:160])


def differences(base: dict, other: dict) -> list[str]:
    """How rank ``other``'s gradient flow differs from rank 0's (``base``): one line each."""
    lines = []
    if base.get("exit_code") != other.get("exit_code"):
        lines.append(f"exit code {other.get('exit_code')} (rank 0: {base.get('exit_code')})")
    fb, fo = _failure(base), _failure(other)
    if fb != fo:
        lines.append(f"failed: {fo[0]}: {fo[1]}" if fo else "did not fail")
    pb, po = _problems(base), _problems(other)
    for key, names in po.items():
        if pb.get(key) != names:
            lines.append(f"problem {key[0]}{' at ' + key[1] if key[1] else ''}: {', '.join(map(str, names))}")
    for key, names in pb.items():
        if key not in po:
            lines.append(f"no {key[0]} problem{' at ' + key[1] if key[1] else ''} (rank 0 has it)")
    sb = {p["name"]: p.get("status") for p in base.get("params") or ()}
    for p in other.get("params") or ():
        if p["name"] in sb and sb[p["name"]] != p.get("status"):
            lines.append(f"{p['name']}.grad {p.get('status')} (rank 0: {sb[p['name']]})")
    return lines


def describe(doc: dict) -> str:
    n = len(doc.get("problems") or ())
    return "no problems" if n == 0 and not doc.get("failure") else (
        f"{n} problem{'s' if n != 1 else ''}" + (", failed" if doc.get("failure") else ""))


def timeout_s() -> float:
    try:
        return float(os.environ.get("GRADSCOPE_RANK_TIMEOUT", WAIT_S))
    except ValueError:
        return WAIT_S
