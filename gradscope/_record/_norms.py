"""Gradient norms computed invisibly: our own arithmetic runs with every torch-function and
dispatch mode set aside (``_Own``).
"""
from __future__ import annotations

import math

import torch

from ._compat import (
    disable_torch_function as _NO_TF, dispatch_stack_len as _dispatch_len, disable_dispatch_modes, foreach_norm,
    fsdp2_loaded, local_shard, set_grad_enabled,
)


_INF = float("inf")


class _Own:
    """``with _Own():`` our own tensor arithmetic (gradient norms, reading values) is invisible to
    every mode: torch-function modes (an enclosing trace, a user's) and dispatch modes (a user's
    logger, FlopCounterMode, DebugMode), which are taken off their stack for its duration."""

    __slots__ = ("_dm", "_tf")

    def __enter__(self):
        self._tf = _NO_TF()
        self._tf.__enter__()
        self._dm = None
        if _dispatch_len():
            self._dm = disable_dispatch_modes()
            try:
                self._dm.__enter__()
            except BaseException:
                self._dm = None
                self._tf.__exit__(None, None, None)
                raise
        return self

    def __exit__(self, *exc):
        try:
            if self._dm is not None:
                self._dm.__exit__(*exc)
        finally:
            self._tf.__exit__(*exc)
        return False


def _shard_status(status, n):
    """A DTensor gradient's status from this rank's shard (what this rank can read without a collective): a NaN or
    inf in it is in the gradient; a zero or empty shard is not a zero gradient (the other ranks hold the rest)."""
    return ("received", n) if status == "zero" else (status, n)


def _grad_status(g):
    if g is None:
        return "none", None
    if fsdp2_loaded():
        local = local_shard(g)
        if local is not g:
            return _shard_status(*_grad_status(local)) if local.numel() else ("received", None)
    try:
        with _Own():  # our own arithmetic: invisible to an enclosing trace or user mode
            if g.is_sparse:
                g = g.coalesce().values()
            n = float(torch.linalg.vector_norm(g.detach().float()))
    except (RuntimeError, NotImplementedError, TypeError):  # a norm torch cannot take (dtype, layout, subclass):
        return "received", None  # a gradient arrived, of unknown size
    if not math.isfinite(n):
        return "nonfinite", n
    if n == 0.0:
        return "zero", 0.0
    return "received", n


def _grad_statuses(grads):
    """_grad_status for many gradients with one foreach norm (dense float ones)."""
    if fsdp2_loaded() and any(g is not None and local_shard(g) is not g for g in grads):
        return [_grad_status(g) for g in grads]  # (DTensor gradients: this rank's shards, one at a time)
    out = [None] * len(grads)
    dense, gs = [], []
    dt, mixed = None, False
    for i, g in enumerate(grads):
        if g is not None and not g.is_sparse and g.is_floating_point():
            dense.append(i)
            gs.append(g)
            if dt is None:
                dt = g.dtype
            elif g.dtype != dt:
                mixed = True
    if len(gs) > 1:
        try:
            with _Own():  # our own arithmetic: invisible to an enclosing trace or user mode
                prev = torch.is_grad_enabled()
                set_grad_enabled(False)  # (cheaper than detaching each gradient)
                try:
                    norms = foreach_norm(gs)
                finally:
                    set_grad_enabled(prev)
                if mixed:
                    norms = [v.float() for v in norms]
                vals = torch.stack(norms).tolist()
            for i, n in zip(dense, vals):
                # (a NaN norm fails both comparisons)
                out[i] = ("received", n) if 0.0 < n < _INF else ("zero", 0.0) if n == 0.0 else ("nonfinite", n)
            if len(dense) == len(out):
                return out
        except (RuntimeError, NotImplementedError, TypeError):  # (one foreach call for mixed devices/subclasses: one at a time below)
            pass
    return [o if o is not None else _grad_status(g) for o, g in zip(out, grads)]


def _flush_norms(pending):
    """Fill in gradient norms for (list, index, grad) entries with one foreach call, then forget the grads."""
    if not pending:
        return
    items = list(pending)
    pending.clear()
    try:
        with _Own():
            gs = [g.detach() for _, _, g in items]
            if any(g.is_sparse or not (g.is_floating_point() or g.is_complex()) for g in gs):
                raise TypeError("mixed")
            vals = torch.stack([v.float() for v in foreach_norm(gs)]).tolist()
    except (RuntimeError, NotImplementedError, TypeError):  # (mixed, or not foreach-able: one at a time)
        vals = [_norm(g) for _, _, g in items]
    for (outs, j, _), v in zip(items, vals):
        outs[j] = v


def _norm(g):
    if g is None:
        return None
    try:
        with _Own():
            return float(torch.linalg.vector_norm(g.detach().float()))
    except (RuntimeError, NotImplementedError, TypeError):  # (as in _grad_status: unknown size)
        return None
