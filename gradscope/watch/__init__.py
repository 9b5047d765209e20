"""The watch: :func:`gradscope.watch` over a whole training run (many steps, cheap per step).

* :mod:`.watching` -- the public facade (:class:`~.watching.Watch`, ``gradscope.watch()``);
* :mod:`._watcher` -- the engine: per-step snapshots of every watched parameter, the alert triggers, a
  full :func:`gradscope.trace` of the step an alert fires on (its hooks on torch live in
  :mod:`gradscope._record`, the only code that touches torch's modes and hooks);
* :mod:`.rules` -- the alert rules and their texts (pure); :mod:`.log` -- the watch log (JSON lines, plain
  data, validated on load) and its timeline; :mod:`.ranks` -- one log per rank under ``torchrun`` and
  how they merge; :mod:`.cli` -- ``gradscope run --watch`` and ``gradscope show`` of a log.

The timeline is drawn by :mod:`gradscope.render.timeline` (every output format lives in ``render/``).
This package's ``__init__`` imports nothing, so the pure modules can be imported without the engine.
"""
