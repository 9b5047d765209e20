"""The recording layer: the only code that touches torch modes and hooks (how it stays cheap and
transparent: see ``_recorder``).

``Recorder`` (``_recorder``) is the composition root: it builds the components, pushes their thin
TorchFunctionMode (``Mode``, which hands every call to ``Calls``) and starts and stops the
recording. Each component owns its state and is handed what it needs of the others when it is built:

- ``Sink`` (``_sink``): the trace's data (``events``, ``tensors``, backwards, notes, internal errors);
  every component writes to it, and only to it.
- ``Calls`` (``_calls``): the mode's handler, one event per torch call; grad mode, ``.grad`` writes/reads.
- ``Identity`` (``_refs``): trace-local tensor ids, the references behind them, packed refs.
- ``Modules`` (``_modules``): module calls and the frame walk, models' roots, names, ``module_set``.
- ``Backward`` (``_backward``), ``Optim`` (``_optim``), ``Saved`` (``_saved``: in-place probes),
  ``Lineage`` (``_lineage``: values that left autograd and came back).
- ``ModuleFacts`` (``_module_facts``) and ``Sync`` (``_sync``): what needs the live modules, taken at
  stop, and the conversion into plain data, on the first query.
- ``WatchHooks`` (``_watch_hooks``): the hooks behind ``gradscope.watch`` (its logic is ``_watcher``).

Where a new recorded event kind goes: the component that sees it records it (a torch call: classify
it in ``_ops``' tables and build its event in ``Calls._post``; a module or registration hook:
``Modules``; a backward: ``Backward``; an optimizer step: ``Optim``), appending one
``gradscope.core.model.Event`` to the sink with a raw site (the frame walk's tuple) and packed tensor refs
(``_refs._pk``); ``Sync.sync`` turns those into ``Site`` and ``TensorRef`` when the trace is first
queried. The data model needs the kind added to ``gradscope.core.model.EVENT_KINDS`` (and, for a cut, its
name to ``CUT_KINDS``); its ``detail`` holds plain values (saving makes them JSON-safe: a tuple comes back a
list), read by the diagnosis (``gradscope.diagnosis``) like every other kind's.
"""
from __future__ import annotations

from ._graph import PRESENT
from ._norms import _grad_status as grad_status
from ._recorder import Recorder

__all__ = ["PRESENT", "Recorder", "grad_status"]
