"""The watch's logic: cheap per-step signals from autograd and the optimizer, its steps, snapshots and
alerts. The hooks it needs are installed and removed by ``gradscope._record._watch_hooks.WatchHooks``
(the recording layer is the one place that touches torch modes and hooks).

Per watched parameter, one post-accumulate-grad hook marks that a gradient arrived; at each
optimizer step one ``_foreach_norm`` over the gradients that arrived gives their norms (and
non-finite values), and version counters read before and after ``step()`` tell whether the
parameter changed. Nothing else runs per op: no TorchFunctionMode (a global forward pre hook
exists only to find the models when none was given, until the first step).

A parameter frozen between two steps (outside any trace) is named at the user's line that froze it:
while the watch runs, ``gradscope._record._flags`` sees requires_grad writes on nn.Parameters (two class
attributes; nothing per op or per step), the watch keeps the last freeze's line per parameter, the
alert carries it (``Alert.frozen_at``) and the next step's trace records it as its first event.

After an alert the next step is traced in full: the trace starts at the end of the alerting step
(inside the optimizer's post hook) and ends at the end of the traced step. PyTorch iterates its
global optimizer-hook dicts while it calls them, so a recorder must not register or remove hooks
there: the watch installs the recorder's global hooks once, at its start, and a trace started
inside a hook then only pushes its mode (the recorder's hooks are cheap while no trace runs).
"""
from __future__ import annotations

import sys
import weakref
from collections import deque

import torch

from ..core import _source
from .._record import _compat, _flags, _frames
from .._record._watch_hooks import WatchHooks, quiet
from ..core.model import Site
from .log import Alert, WatchLog
from .rules import ALERT_TEXT, TRIGGERS, WatchConfig

_WRAPPERS = ("DistributedDataParallel", "DataParallel", "OptimizedModule", "FullyShardedDataParallel")


def param_names(model) -> dict:
    """id(param) -> its module path, with DDP's ``module.``, torch.compile's ``_orig_mod.`` and
    parametrizations' ``parametrizations.<name>.original`` read as the user wrote them."""
    out = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        parts = name.split(".")
        if type(model).__name__ in _WRAPPERS and parts[0] in ("module", "_orig_mod"):
            parts = parts[1:]
        parts = [x for x in parts if x != "_orig_mod"]
        clean = ".".join(parts).replace(".parametrizations.", ".").replace(".original", "")
        if clean.startswith("parametrizations."):
            clean = clean[len("parametrizations."):]
        out.setdefault(id(p), clean)
    return out


def _unwrap_optimizer(opt):
    """The torch optimizer inside a framework's wrapper (accelerate's AcceleratedOptimizer,
    Lightning's LightningOptimizer): its step() is the one PyTorch's global hooks see."""
    for _ in range(4):
        inner = getattr(opt, "optimizer", None)
        if inner is None:
            inner = _compat.wrapped_optimizer(opt)
        if not isinstance(inner, torch.optim.Optimizer):
            return opt
        opt = inner
    return opt


def _sample(p):
    """Up to 16 values spread over ``p`` (this rank's shard of a DTensor), copied (to compare before and after an
    update)."""
    with quiet():
        flat = _compat.local_shard(p.detach()).reshape(-1)
        return flat[:: max(1, flat.numel() // 16)][:16].clone()


def _quiet_norms(grads) -> list:
    """Norms of ``grads`` as floats, invisible to the user's modes and to autograd."""
    with quiet():
        grads = [_compat.local_shard(g) for g in grads]  # (a DTensor's: this rank's shard, no collective)
        dense = [g for g in grads if g.layout == torch.strided]
        if len(dense) == len(grads) and dense:
            return torch.stack(_compat.foreach_norm(dense)).tolist()
        return [float(torch.linalg.vector_norm(g.coalesce().values() if g.is_sparse else g)) for g in grads]


def _rank():
    """(rank, world size) of this process: from torch.distributed once it is initialized, else from
    the environment torchrun sets (the watch may start before init_process_group)."""
    import os

    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    try:
        return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    except ValueError:
        return 0, 1


def rank_path(path, rank: int) -> str:
    """Each rank's own log: ``run.watch.jsonl`` -> ``run.watch.rank1.jsonl`` (or ``{rank}`` filled in)."""
    import os

    path = os.fspath(path)
    if "{rank}" in path:
        return path.replace("{rank}", str(rank))
    root, ext = os.path.splitext(path)
    if ext == ".jsonl" and root.endswith(".watch"):
        return f"{root[:-len('.watch')]}.watch.rank{rank}{ext}"
    return f"{root}.rank{rank}{ext}"


def _outermost_user_frame():
    f, best = sys._getframe(1), None
    while f is not None:
        if _frames.category(f.f_code) == _frames.USER:
            best = f
        f = f.f_back
    return best


class Watcher:
    """Private machinery behind :func:`gradscope.watch`."""

    def __init__(self, models, optimizers, *, config: WatchConfig, make_trace, prefixes=None, log_path=None,
                 window: int = 64, trace_on_alert: bool = True, on_alert=None, on_step=None):
        self.config = config
        self._make_trace = make_trace  # () -> a gradscope.Trace that records one step
        self._on_step = on_step
        self._prefixes = list(prefixes or [""] * len(models))
        self._models = [weakref.ref(m) for m in models]
        self._opts = [weakref.ref(_unwrap_optimizer(o)) for o in optimizers]
        self._primary = None  # id() of the optimizer whose step() ends a watch step: the first to step
        self._discover = not models and not optimizers
        self._log_path = log_path
        self._window = window
        self._trace_on_alert = trace_on_alert
        self._on_alert = on_alert
        self.log: WatchLog | None = None
        self._params: list = []  # index -> weakref(param)
        self._index: dict = {}  # id(param) -> index
        self._unnamed: set = set()  # indices still under a placeholder name (param3)
        self._names: dict = {}  # id(param) -> module path
        self._got = bytearray()
        self._hooks = WatchHooks()  # every hook the watch installs (gradscope._record._watch_hooks)
        self.step = 0
        self._pending_norms: dict = {}  # index -> norm (None: arrived, norm not measured)
        self._versions: dict = {}  # index -> _version before the optimizer step
        self._changed: dict = {}  # index -> bool, from optimizer steps since the last watch step
        self._opt_of: dict = {}  # id(optimizer) -> (n params, [indices])
        self._fired: set = set()  # (kind, index) that fired and has not cleared
        self._context = None
        self._changes = deque(maxlen=256)  # (step, text)
        self._flag_sites: dict = {}  # index -> (requires_grad, raw user frames, flags, step) of its last write
        self._tracing = None  # [Trace, [(alert, param refs, tries)], the traced step]
        self._trace_wanted: list = []
        self.alerts: list = []
        self._on = False

    # --- lifecycle -------------------------------------------------------------------------
    def start(self):
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_frames.GS_DIR):
            f = f.f_back
        # the frame that started the watch, by id (a walk from a write stops there; not kept alive)
        self._start_frame = (id(f), id(f.f_code)) if f is not None else (0, 0)
        self.rank, self.world = _rank()
        if self._log_path is not None and self.world > 1:
            self._log_path = rank_path(self._log_path, self.rank)
        for r, prefix in zip(self._models, self._prefixes):
            m = r()
            if m is not None:
                self._names.update({k: prefix + "." + v if prefix else v for k, v in param_names(m).items()
                                    if k not in self._names})
        meta = {"torch": torch.__version__, "python": sys.version.split()[0]}
        if self.world > 1:
            meta.update(rank=self.rank, world_size=self.world)
        self.log = WatchLog([], window=self._window, path=self._log_path, meta=meta)
        for r in self._models:
            m = r()
            if m is not None:
                self._add(p for p in m.parameters() if p.requires_grad)
        for r in self._opts:
            o = r()
            if o is not None:
                self._add_optimizer(o)
        self._hooks.start(opt_pre=self._opt_pre, opt_post=self._opt_post, recorder_globals=self._trace_on_alert)
        if self._discover:
            self._hooks.discover(True, self._forward_pre)
        self._hooks.listen(self._watches, self._flag_written)
        self._on = True

    def stop(self):
        if not self._on:
            return
        self._on = False
        try:
            if self._got and any(self._got):  # a last backward with no optimizer step after it
                # (after steps of the first optimizer: the tail of a step, in which a gradient that has not
                # arrived yet is no evidence; a GAN's generator phase after the discriminator's step)
                self.finish_step(changed=False, partial=self._primary is not None)
            self._end_trace()
        finally:
            self._hooks.stop()
            if self.log is not None:
                self.log.close()

    # --- what is watched ---------------------------------------------------------------------
    def _add(self, params) -> None:
        new = []
        for p in params:
            if id(p) in self._index or not isinstance(p, torch.Tensor):
                continue
            i = len(self._params)
            self._index[id(p)] = i
            self._params.append(weakref.ref(p))
            self._got.append(0)
            got = self._got

            def arrived(_p, i=i, got=got):
                got[i] = 1

            self._hooks.watch_param(p, arrived)
            name = self._names.get(id(p))
            if name is None:  # found through an optimizer before its model: named when the model runs
                name = f"param{i}"
                self._unnamed.add(i)
            if name in self.log.history or name in new:  # names are unique within a watch
                name = f"{name}#{i}"
            new.append(name)
        if new:
            self.log.add_params(new)

    def _add_optimizer(self, opt) -> list:
        params = [p for g in opt.param_groups for p in g["params"]]
        ent = self._opt_of.get(id(opt))
        if ent is None and not self._discover and not self._given(opt) and not any(id(p) in self._index
                                                                                 for p in params):
            self._opt_of[id(opt)] = ent = (len(params), [])  # an optimizer of something not watched
        if ent is None or ent[0] != len(params) and (ent[1] or self._discover or self._given(opt)):
            before = len(self._params)
            self._add(p for p in params if p.requires_grad)
            for i in range(before, len(self._params)):  # found at this step: its backward ran unseen
                p = self._params[i]()
                if p is not None and p.grad is not None:
                    self._got[i] = 1
            ent = (len(params), [self._index[id(p)] for p in params if id(p) in self._index])
            self._opt_of[id(opt)] = ent
            if ent[1] and not any(r() is opt for r in self._opts):
                self._opts.append(weakref.ref(opt))
        return ent[1]

    def _given(self, opt) -> bool:
        return any(r() is opt for r in self._opts)

    def _forward_pre(self, module, args):
        """(Only while the models are being found: until the first step.)"""
        if torch.compiler.is_compiling():
            return None
        if self._discover and id(module) not in self._names:
            self._names.update({k: v for k, v in param_names(module).items() if k not in self._names})
            for i, r in enumerate(self._params):  # params found through an optimizer before their model
                p = r()
                if p is not None and id(p) in self._names and i in self._unnamed:
                    self.log.names[i] = self._names[id(p)]
                    self._unnamed.discard(i)
        return None

    # --- per step -------------------------------------------------------------------------------
    def _opt_pre(self, opt, args, kwargs):
        """Before the update: version counters (a closure, as Lightning passes, may still run the
        forward and backward inside step(): gradients are measured after it)."""
        if not self._on or torch.compiler.is_compiling():
            return None
        idx = self._add_optimizer(opt)
        if not idx:
            return None
        fused = {id(p) for g in opt.param_groups if g.get("fused") for p in g["params"]}
        for i in idx:
            p = self._params[i]()
            if p is not None:
                # fused kernels update in place without bumping the version counter: a few sampled
                # values tell whether they moved
                self._versions[i] = (_compat.version(p), _sample(p) if id(p) in fused else None)
        return None

    @property
    def errors(self) -> list:
        """The watch's own failures in its optimizer hooks (kept, never raised into the user's step)."""
        return list(self._hooks.errors)

    def _opt_post(self, opt, args, kwargs):
        """After the update: norms of the gradients that arrived, whether each parameter changed,
        and (for the first optimizer that steps) the end of the watch's step."""
        if not self._on or torch.compiler.is_compiling():
            return None
        ent = self._opt_of.get(id(opt))
        if not ent or not ent[1]:
            return None
        grads, keep = [], []
        for i in ent[1]:
            p = self._params[i]()
            if p is None:
                continue
            if self._got[i]:
                g = p.grad
                if g is not None:
                    grads.append(g)
                    keep.append(i)
                else:
                    self._pending_norms[i] = None
            if i in self._versions:
                ver, sample = self._versions[i]
                moved = _compat.version(p) != ver or (sample is not None and not torch.equal(_sample(p), sample))
                self._changed[i] = self._changed.get(i, False) or moved
        if grads:
            for i, n in zip(keep, _quiet_norms(grads)):
                self._pending_norms[i] = n
        self._versions.clear()
        if self._primary is None:
            self._primary = id(opt)
        if id(opt) == self._primary:
            self.finish_step()
        return None

    def finish_step(self, changed=None, partial=False) -> None:
        """Close the current step: record it, run the triggers, raise alerts. ``changed=False``:
        no optimizer step ran (the parameters cannot have changed through one); ``partial``: the run
        ended inside a step (a missing gradient there does not fire)."""
        step = self.step
        self.step += 1
        names = self.log.names
        arrived, chg = {}, {}
        stepped = bool(self._changed)
        for i, r in enumerate(self._params):
            if self._got[i]:
                if i in self._pending_norms:
                    n = self._pending_norms[i]
                else:  # not held by a stepped optimizer: measure it now if it is still there
                    p = r()
                    g = None if p is None else p.grad
                    n = _quiet_norms([g])[0] if g is not None else None
                arrived[names[i]] = n
            if stepped:
                chg[names[i]] = self._changed.get(i, False)
        self.log.add_step(step, arrived, chg if stepped else None)
        self._note_changes(step)
        healthy = len(arrived) == len(names) and all(n is None or n - n == 0 for n in arrived.values()) and (
            not stepped or all(chg.values()))
        if not healthy or self._fired:  # (every trigger needs a missing, non-finite or unmoved gradient)
            self._check(step, partial)
        for i in range(len(self._got)):
            self._got[i] = 0
        self._pending_norms.clear()
        self._changed.clear()
        if self._tracing is not None and self._tracing[2] <= step:
            self._end_trace()  # the traced step is over; its gradients are still there
        if self._trace_wanted and self._tracing is None and self._on:
            self._begin_trace()  # the next step is traced
        if self._on_step is not None:
            self._on_step(step, len(self.alerts))
        if self._discover:  # the models are known after one step
            self._discover = False
            self._hooks.discover(False)

    # --- what changed ------------------------------------------------------------------------
    def _snapshot(self) -> dict:
        """What can explain a parameter that stops learning: its requires_grad, whether an optimizer
        holds it and its group's lr; each model's train/eval mode (cheap: read every step)."""
        snap = {}
        names = self.log.names
        held: dict = {}  # index -> lr of its group
        for r in self._opts:
            o = r()
            if o is None:
                continue
            idx = self._add_optimizer(o)
            groups = o.param_groups
            if len(groups) == 1:
                lr = groups[0].get("lr")
                for i in idx:
                    held[i] = lr
            else:
                pos = 0
                flat = idx if len(idx) == sum(len(g["params"]) for g in groups) else None
                for g in groups:
                    lr = g.get("lr")
                    for p in g["params"]:
                        i = flat[pos] if flat is not None else self._index.get(id(p))
                        pos += 1
                        if i is not None:
                            held[i] = lr
        for i, r in enumerate(self._params):
            p = r()
            if p is not None:
                snap[names[i]] = (p.requires_grad, i in held, held.get(i))
        for r in self._models:
            m = r()
            if m is not None:
                snap[f"<training:{type(m).__name__}>"] = m.training
        return snap

    def _note_changes(self, step) -> None:
        snap = self._snapshot()
        prev, self._context = self._context, snap
        if prev is None:
            return
        for k, v in snap.items():
            old = prev.get(k)
            if old is None or old == v:
                continue
            if k.startswith("<training:"):
                cls = k[len("<training:"):-1]
                self._changes.append((step, f"{cls}.training {old} -> {v} ({'model.train()' if v else 'model.eval()'} was called)"))
                continue
            (rg0, held0, lr0), (rg1, held1, lr1) = old, v
            if rg0 != rg1:
                self._changes.append((step, f"{k}.requires_grad {rg0} -> {rg1}"))
            if held0 != held1:
                self._changes.append((step, f"{k} {'added to' if held1 else 'removed from'} the optimizer"))
            if lr0 != lr1 and lr1 == 0:
                self._changes.append((step, f"{k}: its optimizer group's lr {lr0} -> 0"))

    def _watches(self, p) -> bool:
        i = self._index.get(id(p))
        return i is not None and self._params[i]() is p

    def _flag_written(self, p, value, f) -> None:
        """(gradscope._record._flags) A write from frame ``f`` changed the requires_grad of ``p``, a watched parameter:
        keep the user's line that froze it (an unfreeze only forgets it: nothing to walk)."""
        i = self._index[id(p)]
        if value:
            self._flag_sites.pop(i, None)
        else:
            raw, flags = _frames.walk_out(f, self._start_frame)  # (offsets: turned into lines when needed)
            self._flag_sites[i] = (False, raw, flags, self.step)

    def _frozen_at(self, idx, since, step) -> list:
        """For an alert's parameters that are frozen now: the user's line that froze them (one entry per
        line, with the calls that led there), or, when the watch did not see the write, when it happened."""
        by_site: dict = {}
        unseen: dict = {}
        names = self.log.names
        for i in idx:
            p = self._params[i]()
            if p is None or _flags.requires_grad(p):
                continue
            rec = self._flag_sites.get(i)
            if rec is not None and rec[0] is False:
                by_site.setdefault(rec[1], (rec[3], []))[1].append(names[i])
                continue
            flip = f"{names[i]}.requires_grad True -> False"
            at = next((s for s, t in self._changes if t == flip and (since is None or since < s <= step)), None)
            if at is not None:
                failed = _flags.failure_for(p)
                why = (f"gradscope failed to record it: {failed}" if failed else
                       "it is not an nn.Parameter" if not _flags.seen_on(p) else
                       "not written through nn.Parameter's requires_grad_ or .requires_grad =")
                unseen.setdefault((at, why), []).append(names[i])
        out = []
        for raw, (at, params) in by_site.items():
            site = _site(raw)
            out.append({"params": params, "step": at, "site": site.to_json() if site is not None else None})
        for (at, why), params in unseen.items():
            out.append({"params": params, "step": at, "site": None, "unseen": why})
        return out

    # --- triggers -----------------------------------------------------------------------------
    def _check(self, step, partial=False) -> None:
        names = self.log.names
        held = {i for o in self._opts if o() is not None for i in self._opt_of.get(id(o()), (0, []))[1]}
        fired: dict = {}
        for i, n in enumerate(names):
            h = self.log.history[n]
            for kind, check in TRIGGERS.items():
                on = check(h, step, self.config)
                key = (kind, i)
                if kind in ("stopped", "never") and (partial or held and i not in held):
                    on = False  # a parameter no optimizer holds (a target network) need not get gradients
                if on and key not in self._fired:
                    self._fired.add(key)
                    fired.setdefault(kind, []).append(i)
                elif not on and kind == "stopped" and h.missing_run == 0:
                    self._fired.discard(key)
        for kind, idx in fired.items():
            self._alert(kind, step, idx, held)

    def _alert(self, kind, step, idx, held) -> None:
        names = [self.log.names[i] for i in idx]
        hist = [self.log.history[n] for n in names]
        since = max((h.last_received for h in hist if h.last_received is not None and h.last_received < step),
                    default=None)
        extra = ""
        if kind == "stopped" and since is not None:
            extra = f" at step {step} (last received at step {since})"
        elif kind == "nonfinite":
            extra = f" at step {step}"
        elif kind == "unchanged":
            if all(i not in held for i in idx):
                extra = ": no optimizer holds them (add them with optimizer.add_param_group, or build the optimizer after the model is complete)"
            else:
                lrs = self._snapshot()
                if all((lrs.get(n) or (None, None, None))[2] == 0 for n in names):
                    extra = ": their optimizer group's lr is 0"
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        n = self.config.never_after if kind == "never" else self.config.unchanged_after
        msg = ALERT_TEXT[kind].format(params=shown, n=n, extra=extra)
        changes = [t for s, t in self._changes if since is not None and since < s <= step]
        frozen = self._frozen_at(idx, since, step) if any(".requires_grad True -> False" in c for c in changes) \
            or kind in ("stopped", "never") else []
        a = Alert(kind, step, names, msg, since=since, changes=changes, frozen_at=frozen,
                  rank=self.rank if self.world > 1 else None)
        self.alerts.append(a)
        self.log.add_alert(a)
        if self._trace_on_alert and kind != "unchanged":
            self._trace_wanted.append((a, [self._params[i] for i in idx], 1))
        if self._on_alert is not None:
            self._on_alert(a)

    # --- the full trace of the step after an alert ----------------------------------------------
    def _begin_trace(self) -> None:
        wanted, self._trace_wanted = self._trace_wanted, []
        tr = self._make_trace()
        tr._start_at(_outermost_user_frame())
        self._tracing = [tr, wanted, self.step]
        # freezes the watch saw before this trace: recorded first, as if the trace had seen them (the
        # explanation then names the line that froze the parameter, not the line that next used it); a
        # freeze it only saw happen (a plain tensor's) is recorded without a line
        done = set()
        for i, (value, raw, flags, at) in list(self._flag_sites.items()):
            p = self._params[i]()
            if value is False and p is not None and not _flags.requires_grad(p):
                tr._note_freeze(p, _frames.lines_of(raw), flags, at)
                done.add(i)
        where = {n: i for i, n in enumerate(self.log.names)}
        for alert, _, _ in wanted:
            for f in alert.frozen_at:
                for i in (where.get(n) for n in f["params"] if f.get("site") is None):
                    p = None if i is None or i in done else self._params[i]()
                    if p is not None and not _flags.requires_grad(p):
                        tr._note_freeze(p, (), 0, f.get("step"))
                        done.add(i)

    def _explain(self) -> None:
        """Explain each alert from the live trace of the step after it (or hand it on to the next step
        when this one was healthy: a cut on some steps only)."""
        tr, wanted, at = self._tracing
        for i, r in enumerate(self._params):  # the watch knows every parameter's module path
            p = r()
            if p is not None:
                tr._name_unnamed(p, self.log.names[i])
        for alert, refs, tries in wanted:
            _param = next((r() for r in refs if r() is not None), None)  # (a private name: why() would
            if _param is None:                                            # name a nameless tensor after it)
                continue
            try:
                exp = tr.why(_param)
                name = self.log.names[self._index[id(_param)]]
                recent = self.log.history[name].recent()
                if exp.cause == "ok" and alert.kind in ("stopped", "never") and recent and not recent[-1].received:
                    # no gradient reached it through this process's backward, yet it has one now: written
                    # from elsewhere (DDP's all-reduce from the other ranks): explain this rank's backward
                    exp = tr._why_recorded(_param) or exp
            except Exception as e:  # the watch reports what it could not explain, never raises
                alert.explanation = {"cause": "unknown", "summary": f"the traced step could not explain it ({e})"}
            else:
                if exp.cause == "ok" and alert.kind != "nonfinite" and tries < _TRACE_TRIES:
                    self._trace_wanted.append((alert, refs, tries + 1))
                    continue
                alert.explanation = exp.to_json()
            alert.traced_step = at
            self.log.update_alert(alert)
            if self._on_alert is not None:
                self._on_alert(alert)

    def _end_trace(self) -> None:
        if self._tracing is None:
            return
        try:
            self._explain()
        finally:
            tr = self._tracing[0]
            self._tracing = None
            tr._stop()
            self.last_trace = tr


def _site(raw) -> Site | None:
    """The Site of a walk_out() result, with its whole statement when it spans several lines."""
    site = _frames.make_site(_frames.lines_of(raw))
    if site is None:
        return None
    got = _source.statement(site.filename, site.lineno)
    if got is not None:
        return Site(site.filename, got[0], site.function, got[1], site.stack, site.label)
    return site


#: how many steps after an alert are traced, looking for one that shows the problem again
_TRACE_TRIES = 4
