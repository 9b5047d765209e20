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
- ``_values``: after a backward that ended with an inf/nan gradient (never while recording), the step's values
  still readable (alive, or saved by the graph) checked for inf/nan, into ``BackwardRecord.values``.

Where a new recorded event kind goes: add its ``EventKind`` member and its detail type (a slotted dataclass of
its facts, listed in ``DETAIL_TYPES``) in ``gradscope.core.events``; the component that sees it records it (a
torch call: classify it in ``_ops``' tables and build its record in ``Calls._post``; a module or registration
hook: ``Modules``; a backward: ``Backward``; an optimizer step: ``Optim``), appending one
``_records.RawEvent`` to the sink with a raw site (the frame walk's tuple), packed tensor refs (``_refs._pk``)
and its facts as a dict under the detail type's field names (the JSON keys). ``Sync.convert`` builds the final
``gradscope.core.model.Event`` from it once, when the trace is first queried (``Site``, ``TensorRef``s, the
enum members, the typed detail); a component that adds to a record afterwards (a module path found later, a
backward's outputs) lists its index in ``Sink.changed`` and the Event is built again, never edited. Its JSON
is the detail type's ``to_json`` (the fields that are not None, plus ``ALWAYS``), read back by ``from_json``;
the diagnosis (``gradscope.diagnosis``) reads its facts as attributes.
"""
from __future__ import annotations

from ._graph import PRESENT
from ._norms import _grad_status as grad_status
from ._recorder import Recorder

__all__ = ["PRESENT", "Recorder", "grad_status"]
