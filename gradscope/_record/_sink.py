"""The event sink: the one object every recording component writes to (the trace's plain data, its
notes, and gradscope's own failures caught while recording)."""
from __future__ import annotations

from ..core.model import TraceData
from . import _frames
from ._compat import disable_torch_function as _NO_TF


class Sink:
    """Owns ``data`` (a :class:`~gradscope.core.model.TraceData`) and its ``tensors``, the recorded ``events``
    (``_records.RawEvent``, by index; ``Sync`` turns each into the data's final ``Event`` on the first query),
    the notes on what the trace could not see (``note``) and the internal errors (``internal``)."""

    def __init__(self):
        self.data = TraceData()
        self.events: list = []  # RawEvent, by index (data.events holds the final Events, built by Sync)
        self.changed: list = []  # indices of records a component changed after they may have been converted
        self.tensors = self.data.tensors
        self.errors: list = []  # the first 20 internal errors (also in meta["internal_errors"])
        self._n_errors = 0
        self._error_note = None  # index of the internal-error note in data.unseen
        self._error_text = None
        self._first_where = ""
        self.error_event = None  # the event of the last call that raised
        self.error_key = None  # (type, message) of that error, to tell it from the one the block raised

    def note(self, text):
        if text not in self.data.unseen:
            self.data.unseen.append(text)

    def guard(self, fn, *args):
        try:
            with _NO_TF():  # hooks run outside our handler: our own tensor reads must not re-enter it
                fn(*args)
        except Exception as e:  # recording must never break the user's program
            self.internal(e)

    def internal(self, e):
        """A failure of gradscope's own, caught where it must not reach the user's program: kept (the
        first 20 in meta["internal_errors"]) and said in the trace's notes, so the report shows the gap."""
        self._n_errors += 1
        if len(self.errors) < 20:
            self.errors.append(f"{type(e).__name__}: {e}"[:500])
            self.data.meta["internal_errors"] = list(self.errors)  # (also when the sync itself failed)
        if self._n_errors == 1:
            self._first_where = _where_raised(e)
        note = _internal_note(self.errors[0], self._n_errors, self._first_where)
        un = self.data.unseen
        if self._error_note is not None and self._error_note < len(un) and un[self._error_note] == self._error_text:
            un[self._error_note] = note
        else:
            self._error_note = len(un)
            un.append(note)
        self._error_text = note


def _where_raised(e) -> str:
    """The gradscope function an exception was raised in (the innermost of ours in its traceback)."""
    tb, name = e.__traceback__, ""
    while tb is not None:
        co = tb.tb_frame.f_code
        if co.co_filename.startswith(_frames.GS_DIR):
            name = co.co_name
        tb = tb.tb_next
    return name


def _internal_note(first: str, n: int, where: str) -> str:
    times = f"{n} times, first" if n > 1 else "once"
    at = f" in {where}" if where else ""
    return (f"gradscope failed internally while recording ({times}{at}: {first[:200]}); the calls it was recording "
            "ran normally but some may be missing from the trace (all errors: trace.data.meta['internal_errors']). "
            "Please report it with that message")
