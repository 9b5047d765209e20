"""Warning filters set without resetting the once-per-location registries.

Every change made through the warnings API (filterwarnings, simplefilter, catch_warnings on enter
and on exit) bumps the filters' version; the next warning anywhere then finds its module's
__warningregistry__ stale and clears it, so a warning already shown at a location is shown again
("default"/"module" actions). Plain Python makes no such change, so tracing may not either. An
"ignore" filter never writes a registry (only a shown warning is remembered), so inserting and
removing one in place, with no bump, is invisible.
"""
from __future__ import annotations

import warnings


class _Quiet:
    """``with _Quiet():`` gradscope's own code runs with every warning ignored, registries untouched."""

    __slots__ = ("_filters", "_item")

    def __enter__(self):
        self._filters, self._item = warnings.filters, ("ignore", None, Warning, None, 0)
        self._filters.insert(0, self._item)
        return self

    def __exit__(self, *exc):
        _drop_filter(self._filters, self._item)
        return False


def _drop_filter(filters, item):
    for i, f in enumerate(filters):
        if f is item:  # (by identity: a user's simplefilter("ignore") is an equal tuple)
            del filters[i]
            return


def _no_bump():
    pass


def _without_bump(fn, *args):
    """``fn(*args)`` with every warning ignored and the filters' version bump set aside (its name
    differs by Python version: 3.13 added the lock), once, for code that wraps itself in
    catch_warnings (torch.overrides.resolve_name building its tables)."""
    saved = {n: getattr(warnings, n) for n in ("_filters_mutated", "_filters_mutated_lock_held")
             if callable(getattr(warnings, n, None))}
    try:
        for n in saved:
            setattr(warnings, n, _no_bump)
        with _Quiet():
            return fn(*args)
    finally:
        for n, f in saved.items():
            setattr(warnings, n, f)
