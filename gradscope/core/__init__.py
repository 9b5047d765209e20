"""The data model of a trace: plain data, no torch (layer: core, the lowest).

* :mod:`.model` -- what was recorded: :class:`~.model.Event` (one recorded call, its :class:`~.model.Site`
  and :class:`~.model.TensorRef` inputs/outputs), :class:`~.model.TensorInfo`, backward records,
  :class:`~.model.TraceData` and its JSON form (``save``/``load``, schema-versioned, never pickle);
* :mod:`.events` -- what an event is: :class:`~.events.EventKind`, :class:`~.events.Context` and the typed
  ``detail`` of each kind (:class:`~.events.Detail` and its subclasses, ``DETAIL_TYPES``);
* :mod:`.causes` -- :class:`~.causes.Cause`, the one vocabulary of kinds of cut and causes;
* :mod:`.explanation` -- what the diagnosis concludes, as users see it: :class:`~.explanation.Explanation`,
  :class:`~.explanation.StepSummary`, the cause vocabulary ``CAUSES``;
* :mod:`.naming` -- the user's names for recorded tensors; :mod:`._source` -- reading source lines.

Where a new recorded event kind goes: its :class:`~.events.EventKind` member and its detail type (a
slotted dataclass of its facts, in ``DETAIL_TYPES``; its fields are the JSON keys, ``to_json`` writes those
that are not None plus its ``ALWAYS``) in :mod:`.events`; the recorder (:mod:`gradscope._record`) builds the
Event (a new cut kind: a :class:`~.causes.Cause` member and its gloss). When it needs a field of ``Event`` of
its own, add it to :class:`~.model.Event` and to the JSON schema (bump ``SCHEMA_VERSION``; old files must still
load).
Everything here imports only the standard library; every other layer may import it.
"""
