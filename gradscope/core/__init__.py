"""The data model of a trace: plain data, no torch (layer: core, the lowest).

* :mod:`.model` -- what was recorded: :class:`~.model.Event` (one recorded call, its :class:`~.model.Site`
  and :class:`~.model.TensorRef` inputs/outputs), :class:`~.model.TensorInfo`, backward records,
  :class:`~.model.TraceData` and its JSON form (``save``/``load``, schema-versioned, never pickle);
* :mod:`.explanation` -- what the diagnosis concludes, as users see it: :class:`~.explanation.Explanation`,
  :class:`~.explanation.StepSummary`, the cause vocabulary ``CAUSES``;
* :mod:`.naming` -- the user's names for recorded tensors; :mod:`._source` -- reading source lines.

Where a new recorded event kind goes: its fields are an :class:`~.model.Event` (``kind``, ``op``,
``detail``) built by the recorder (:mod:`gradscope._record`); when it needs a field of its own, add it here
and to the JSON schema (bump ``SCHEMA_VERSION``; old files must still load).
Everything here imports only the standard library; every other layer may import it.
"""
