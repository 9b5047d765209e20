"""The last rules for `.grad is None` (status `none`, after the data-path cut): no path to a loss carried the
tensor: it was never used, skipped, replaced, or its result was thrown away."""
from __future__ import annotations

import re

from ..core.model import Cause, Frame, Site
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from .common import _is_copy, _receiver
from .finding import found
from .registry import rule


def _cone(dx, q):
    """The calls the tensor's values flowed through; none when they are only a state_dict()/load_state_dict()
    copy (a teacher made from the student is no use in the forward)."""
    def compute():
        cone = dx.cone(q.tid, through_copies=False)
        if cone and all(e.context == "library" or _is_copy(e) for e in cone):
            cone = []
        return cone
    return q.get("cone", compute)


def _used(dx, q):
    """Tensors used in the computation (not a copy between models, nor a requires_grad_ or hook call on it)."""
    return q.get("used", lambda: {r.tid for e in dx.ev if e.context == "user" and e.kind in ("op", "cut", "module",
                                                                                                "inplace")
                                  and not _is_copy(e) for r in e.inputs})


def _used_with_grad(dx, q):
    """Tensors used in the computation with grad on while they required grad (a target network run under no_grad,
    a frozen base layer, are not among them)."""
    return q.get("used_grad", lambda: {r.tid for e in dx.ev if e.context == "user" and e.grad_enabled and e.kind in (
        "op", "cut", "module", "inplace") and not _is_copy(e) for r in e.inputs if r.requires_grad})


def _dead(dx, q):
    """The call (outermost module first) whose result was never used afterwards, or None."""
    return q.get("dead", lambda: _find_dead(dx, _cone(dx, q)))


def _find_dead(dx, cone):
    dead = None
    mods = [e for e in cone if e.kind == "module" and e.context == "user"]
    for e in reversed(mods):  # (the outermost module whose output is dropped: it completes last)
        outs = e.output_ids()
        if outs and all(not [i for i in dx.consumers.get(o, ()) if i > e.index and dx.ev[i].kind != "module"]
                        for o in outs):
            dead = e
            break
    if dead is None:
        for e in cone:
            if e.kind in ("op", "cut") and e.context == "user":
                outs = e.output_ids()
                if outs and all(not dx.consumers.get(o) for o in outs):
                    dead = e
                    break
    if dead is not None and dead.kind != "module" and dead.output_ids():  # the module that returned it
        outs = dead.output_ids()
        for e in dx.ev[dead.index + 1: dead.index + 64]:
            if e.kind == "module" and e.output_ids() == outs:
                dead = e
                break
    if dead is not None and dead.kind == "module":  # a container that returned this output as its own
        outs = dead.output_ids()
        for e in dx.ev[dead.index + 1: dead.index + 64]:
            if e.kind == "module" and e.output_ids() == outs and dead.op.startswith(e.op + ".") and e.op:
                dead = e
    return dead


@rule('none', 300)
def hooked_module_not_called(dx, q):
    """Used only by a forward hook of a module run as module.forward(x)."""
    tid, name, d = q.tid, q.name, dx.d
    cone = _cone(dx, q)
    hp = (d.meta.get("hook_params") or {}).get(str(tid))
    if hp is not None and not cone:
        owner = hp["owner"]
        if not [e for e in dx.ev if e.kind == "module" and e.op == owner]:
            # the hooked module ran without __call__ (module.forward(x)): its hooks never ran
            ran = [e for e in dx.ev if e.kind == "op" and any(
                (dx.d.tensors.get(r.tid) and (dx.d.tensors[r.tid].name or "").startswith(owner + "."))
                for r in e.inputs)]
            site = ran[0].site if ran else None
            return found(
                Cause.UNUSED_PARAMETER, site, name, "hooked_module_not_called", name, owner, site,
                evidence=ran[:1])
    return None


@rule('none', 310)
def other_instance_in_forward(dx, q):
    """The forward uses another instance of the module class (or the optimizer holds a newer one)."""
    tid, name, d = q.tid, q.name, dx.d
    cone = _cone(dx, q)
    used = _used(dx, q)
    owners = d.meta.get("param_owner") or {}
    mine = owners.get(str(tid))
    if mine and tid in dx.trainable:
        order = {k: i for i, k in enumerate(owners)}  # (registration order)
        trained = [t for t in d.tensors.values() if t.role == "param" and t.requires_grad and t.tid in used]
        if trained and not any(t.tid in dx.trainable for t in trained) and all(
                order.get(str(t.tid), -1) > order[str(tid)] for t in trained):
            # the optimizer holds none of what the forward trains, and all of that was built after this one: the
            # whole model was built again; stale_optimizer says so for all its parameters at once, not a
            # look-alike layer per parameter
            return None
    if not cone and mine:
        info = d.tensors[tid]
        used = _used_with_grad(dx, q)  # (the instance the forward trains: a target network under no_grad is not it)
        for t in d.tensors.values():
            o = owners.get(str(t.tid))
            if (t.tid != tid and t.tid in used and o and o["class"] == mine["class"]
                    and o["attr"] == mine["attr"]
                    and t.shape == info.shape and t.tid not in dx.trainable and tid in dx.trainable):
                order = list(owners)  # (registration order)
                if order.index(str(tid)) > order.index(str(t.tid)) and mine.get("site"):
                    # the optimizer's instance is the newer one: `Adam(Net().parameters())`
                    site = Site.from_json(mine["site"])
                    other = Site.from_json(o["site"]) if o.get("site") else None
                    if other is not None:  # the user line where the two creations part ways
                        for i, (a, b) in enumerate(zip(site.stack, other.stack)):
                            if a != b:
                                site = dx.frame_site(a, site.stack[:i])
                                break
                    return found(
                        Cause.PARAM_RECREATED, site, name, "other_instance_in_forward.newer", name, mine, site,
                        evidence=[])
                site = Site.from_json(o["site"]) if o.get("site") else None
                return found(
                    Cause.PARAM_RECREATED, site, name, "other_instance_in_forward", name, mine, site,
                    evidence=[])
    return None


@rule('none', 320)
def returned_input(dx, q):
    """A module returned its input unchanged, so its layers never ran."""
    name = q.name
    cone = _cone(dx, q)
    if cone:
        return None
    for e in dx.ev:
        if e.kind == "module" and e.detail.returned_input and name.startswith(e.op + ".") and e.op:
            fr = e.detail.return_line
            site = e.site
            if fr:
                f = Frame.from_json(fr)
                site = dx.frame_site(f, e.site.stack if e.site else ())
            return found(Cause.UNUSED_PARAMETER, site, name, "returned_input", name, e, site, evidence=[e])
    return None


@rule('none', 330)
def skipped_child(dx, q):
    """A child module the forward never called: the early return or partial loop."""
    name, d = q.name, dx.d
    cone = _cone(dx, q)
    if cone:
        return None
    for cpath, info in (d.meta.get("skipped_children") or {}).items():
        if name.startswith(cpath + "."):
            res = _skipped_child(dx, name, cpath, info)
            dsite = dx.defined_site(name)
            if dsite is not None:
                res.extra_sites.append(dsite)
            return res
    return None


@rule('none', 340)
def stale_optimizer(dx, q):
    """The optimizer was built before layers were replaced or added."""
    tid, name = q.tid, q.name
    cone = _cone(dx, q)
    if cone:
        return None
    return _stale_optimizer(dx, tid, name, _used_with_grad(dx, q))


@rule('none', 350)
def never_used(dx, q):
    """Never used by any torch call in the step (where it is defined, when known)."""
    name = q.name
    cone = _cone(dx, q)
    if cone:
        return None
    mod = name.rsplit(".", 1)[0] if "." in name else None
    called = [e for e in dx.ev if e.kind == "module" and e.op == mod]
    guarded = dx.guarded_read(name)
    if guarded is not None:  # the line that reads it sits behind a skip (`if ...: continue`, an `if` around it)
        read, guard = guarded
        return found(Cause.UNUSED_PARAMETER, guard, name, "never_used.guarded", name, read, guard,
                     evidence=[])
    dsite = dx.defined_site(name)
    return found(Cause.UNUSED_PARAMETER, dsite, name, "never_used", name, dsite, called, mod, evidence=[])


@rule('none', 360)
def forward_hook_replaced_output(dx, q):
    """A forward hook replaced the output of the module that used it."""
    name = q.name
    dead = _dead(dx, q)
    if dead is not None and dead.kind == "module":
        fh = (dx.d.meta.get("module_forward_hooks") or {}).get(dead.op)
        if fh:  # its output was replaced by a forward hook's return value, not dropped by the forward
            f = Frame.from_json(fh[0])
            site = dx.frame_site(f, dead.site.stack if dead.site else ())
            return found(
                Cause.HOOK_MODIFIED, site, name, "forward_hook_replaced_output", name, dead, site,
                evidence=[dead])
    return None


@rule('none', 370)
def result_discarded(dx, q):
    """It was used, but the result was never used afterwards."""
    name = q.name
    dead = _dead(dx, q)
    site = dead.site if dead else None
    return found(
        Cause.UNUSED_PARAMETER, site, name, "result_discarded", name, site, dead,
        evidence=[dead] if dead else [])


def replaced_finding(ix, tid, name):
    """param_recreated when ``tid`` is a parameter (or belongs to a module) that was replaced."""
    for e in ix.ev:
        if e.kind == "module_set" and tid in (e.detail.old_params or ()):
            rewrapped = e.detail.new_class == "Parameter" and any(
                x.kind == "cut" and x.op == "torch.nn.Parameter" and x.site is not None and e.site is not None
                and x.site.stack == e.site.stack for x in ix.ev[max(0, e.index - 8): e.index + 3])
            attr = e.detail.attr
            lhs = None
            if rewrapped and not e.detail.tied:  # `m.w = nn.Parameter(m.w.clamp(...))` every step
                m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=[^=]", e.site.code or "") if e.site else None
                lhs = m.group(1) if m else attr
            return found(
                Cause.PARAM_RECREATED, e.site, name, "param_replaced", name, attr, e, rewrapped, lhs,
                evidence=[e])
    return None


def _stale_optimizer(ix, tid, name, used):
    """An optimizer holds ``tid``, which no module of the model names any more, while the forward trains
    parameters no optimizer holds: the optimizer was built before layers were replaced or added."""
    info = ix.d.tensors[tid]
    if not ix.trainable or tid not in ix.trainable:
        return None
    newer = [t for t in ix.d.tensors.values() if t.role == "param" and t.name and t.requires_grad
             and t.tid not in ix.trainable and t.tid in used]
    paths = ix.d.meta.get("module_paths") or {}
    here = paths.get(str(tid))

    def at_its_path(t):  # the same module path (the same name, or the same path inside a rebuilt model)
        return bool(info.name and t.name == info.name) or (here is not None and paths.get(str(t.tid)) == here)

    def resized(t):  # (a head rebuilt for another number of classes: [3, 8] -> [2, 8], its bias [3] -> [2])
        a, b = tuple(t.shape), tuple(info.shape)
        return len(a) == len(b) and len(a) > 0 and sum(x != y for x, y in zip(a, b)) == 1

    if not any(t.shape == info.shape or at_its_path(t) or resized(t) for t in newer):
        return None  # (a replacement: a new parameter at its module path, of its shape, or of it resized)
    # the one at its path first (a layer rebuilt with another width), then those of its shape, then resized ones
    newer.sort(key=lambda t: (not at_its_path(t), t.shape != info.shape, not resized(t)))
    owners = ix.d.meta.get("param_owner") or {}
    made = next((Site.from_json(owners[str(t.tid)]["site"]) for t in newer
                 if (owners.get(str(t.tid)) or {}).get("site")), None)
    trained = [t for t in ix.d.tensors.values() if t.role == "param" and t.requires_grad and t.tid in used]
    if made is not None and made.stack and not any(t.tid in ix.trainable for t in trained):
        # the optimizer holds none of what the forward trains: the whole model was built again after it
        # (`net = Net2()`): the line that built it, outside the model's own constructors
        for i in range(len(made.stack) - 1, -1, -1):
            fr = made.stack[i]
            if not (fr.function or "").endswith("__init__"):
                if i < len(made.stack) - 1:
                    made = ix.frame_site(fr, made.stack[:i])
                break
    step = next((e for e in ix.ev if e.kind == "optimizer_step" and tid in (e.detail.params or ())), None)
    site = made or (step.site if step else None)
    # (by the user's variable where the names leave it out: `model.classifier`, what the fix's code must say)
    full = {tid: a for a, tid in (ix.d.meta.get("name_aliases") or {}).items()
            if tid in ix.d.tensors and ix.d.tensors[tid].name and a.endswith("." + ix.d.tensors[tid].name)}
    spelled = [full.get(t.tid, t.name) for t in newer]
    mods = sorted({n.rsplit(".", 1)[0] for n in spelled if "." in n}) or spelled
    opt = (_receiver(step.site.code, ".step(") if step is not None and step.site is not None else None) \
        or "optimizer"
    return found(
        Cause.PARAM_RECREATED, site, name, "stale_optimizer", name, made, info, opt, mods,
        evidence=[step] if step else [])


def _skipped_child(ix, name, cpath, info):
    """A child module the forward never called: the early return (or partial loop) that skipped it."""
    f = Frame.from_json(info["return_line"])
    parent = [e for e in ix.ev if e.kind == "module" and (e.op == info["parent"] or not info["parent"])]
    outer = parent[-1].site.stack if parent and parent[-1].site else ()
    site = ix.frame_site(f, outer)
    return found(Cause.UNUSED_PARAMETER, site, name, "skipped_child", name, cpath, info, f, site,
                 evidence=parent[-1:])
