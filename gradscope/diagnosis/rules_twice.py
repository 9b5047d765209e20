"""backward_twice (status `failure`): a second backward through a graph the first one freed, and which line to
change: the state carried across steps (where it is used again, or where it is kept: `self.hidden = hidden`, a
queue of keys), a value computed once (the call that ran once), two losses on one trunk (the first backward), or a
loss that takes a shared tensor in only to reach parameters its optimizer does not hold (its use: a GAN's D loss
on the undetached fake). The wording is in :mod:`.templates_failure`."""
from __future__ import annotations

import bisect
import re

from ..core.model import Cause, Frame
from . import templates_failure as say  # noqa: F401  (registers the wording the findings here name)
from .common import _call_args, _opname, _receiver, stored_in_attribute, unnamed
from .finding import found
from .registry import rule


@rule("failure", 50)
def backward_twice(dx, q):
    """A second backward through a graph whose buffers the first one freed."""
    bw = dx.failing_backward()
    earlier = [e for e in dx.backward_events() if bw is not None and e.index < bw.index]
    prev = earlier[-1] if earlier else None
    carried = None
    if bw is not None and prev is not None:
        prev_anc = dx.ancestors(prev.detail.roots or prev.input_ids(), before=prev.index)
        cur_anc = dx.ancestors(bw.detail.roots or bw.input_ids(), before=bw.index)
        for i in sorted(cur_anc):
            e = dx.ev[i]
            if i <= prev.index or e.context != "user":
                continue
            for r in e.inputs:
                p = dx.d.producer(r.tid)
                if r.requires_grad and not r.is_leaf and p is not None and p.index in prev_anc:
                    carried = (e, r.tid)
                    break
            if carried:
                break
        if carried is None:
            carried = _kept_in_state(dx, prev, prev_anc, cur_anc)
    # two losses: two backward calls, or one call given two losses built before the first ran (a loop's one
    # backward run again on the next step's loss is a carry across steps)
    common = _last_shared(dx, prev, bw) if bw is not None and prev is not None and not prev.detail.retain_graph \
        and (not _same_call(prev, bw) or _built_before(dx, prev, bw)) else None
    use = _unwanted_use(dx, common, prev, bw) if common is not None else None
    if use is not None:
        # one loss reaches the shared part only to go on into parameters its optimizer does not hold (D's loss into
        # the generator): the use there wants a detach()
        name = dx.label(common.output_ids()[0]) if common.outputs else _SHARED
        use, first = use
        return found(
            Cause.BACKWARD_TWICE, _frame_naming(dx, use.site, name), name, "backward_twice.unwanted", name, bw,
            common, prev, use, first, evidence=[prev, common, use, bw])
    if carried is not None and len(carried) == 3:
        # the step's graph kept in state after its loss was made (a queue of keys, a memory bank): where it was kept
        e, p, src = carried
        name = dx.label(p.output_ids()[0]) if p.outputs else _SHARED
        if unnamed(name) and p.site is not None:
            name = (p.site.code or "").split(_ASSIGN, 1)[0].strip() if _ASSIGN in (p.site.code or "") else name
        kept = dx.label(src.output_ids()[0]) if src.outputs else _SHARED
        res = found(Cause.BACKWARD_TWICE, p.site, name, "backward_twice.kept", name, kept, bw, p, prev, e,
                    evidence=[p, e, prev, bw])
        if e.site is not None and p.site is not None and e.site.short != p.site.short:
            res.extra_sites.append(e.site)
        return res
    if carried is not None:
        e, t = carried
        name = dx.label(t)
        p = dx.d.producer(t)
        stepped = p is not None and any(x.kind == "optimizer_step" and p.index < x.index < bw.index for x in dx.ev)
        # state computed in every step and carried into the next (an RNN's hidden state): the line that carries it
        # (where the detach() goes), with the one that computed it; a value computed once (in __init__) and reused
        # by every step: the line that computed it
        each_step = p.site is not None and len(_steps_running(dx, p.site)) > 1
        if not stepped and not each_step:
            # no optimizer step in between: several losses on one shared computation in the same step
            return found(
                Cause.BACKWARD_TWICE, p.site if p.site else e.site, name, "backward_twice.shared", name, bw, p, prev,
                [dx.root_label(prev), dx.root_label(bw)],
                evidence=[e, prev, bw])
        site = (e.site or p.site) if each_step else (_ran_once(dx, p.site) or e.site)
        if each_step and unnamed(name) and e.site is not None and e.kind == "op":
            name = _receiver(e.site.code or "", "." + _opname(e) + "(") or name  # `h.clone()`: h
        if each_step and unnamed(name) and e.site is not None and e.kind in ("op", "module"):
            name = _argument_named(e, t) or name  # `self.rnn(x, self.hidden)`: self.hidden
        kept = stored_in_attribute(p.site) if each_step else None
        if kept is not None:  # kept for the next step in an attribute (`self.hidden = hidden`): where detach() goes
            f, line, code = kept
            i = p.site.stack.index(f)
            store = dx.frame_site(Frame(f.filename, line, f.function, code), p.site.stack[:i])
            held = code.split("=", 1)[1].split("#", 1)[0].strip()
            res = found(Cause.BACKWARD_TWICE, store, name, "backward_twice.stored", held, code.split("=", 1)[0].strip(),
                        bw, p, prev, e, store, evidence=[e, prev, bw])
            res.extra_sites.extend(x for x in (e.site,) if x is not None and x.short != store.short)
            return res
        if each_step:
            res = found(Cause.BACKWARD_TWICE, site, name, "backward_twice.carried", name, bw, p, prev, e,
                        evidence=[e, prev, bw])
        else:
            res = found(Cause.BACKWARD_TWICE, site, name, "backward_twice.precomputed", name, bw, site, prev, e,
                        evidence=[e, prev, bw])
        other = p.site if site is e.site else e.site
        if other is not None and site is not None and other.short != site.short:
            res.extra_sites.append(other)
        return res
    shared = _shared_before(dx, prev, bw) if prev is not None else None
    if shared is not None and prev.site is not None:
        # both losses were built before the first backward, on a shared part: the first backward freed it, so the
        # line to change is that backward (retain_graph=True) or the two calls (one backward of the sum)
        p = shared
        name = dx.label(p.output_ids()[0]) if p.outputs else _SHARED
        res = found(
            Cause.BACKWARD_TWICE, prev.site, name, "backward_twice.first", name, bw, p, prev,
            [dx.root_label(prev), dx.root_label(bw)], evidence=[prev, p, bw])
        if bw.site is not None and bw.site.short != prev.site.short:
            res.extra_sites.append(bw.site)
        return res
    return found(
        Cause.BACKWARD_TWICE, bw.site if bw else None, "backward", "backward_twice", bw, prev,
        evidence=[x for x in (bw, prev) if x])


_SHARED = "the shared part"
_ASSIGN = " = "  # (the source text of an assignment)


def _argument_named(e, tid):
    """The argument expression a module call was given ``tid`` in (`self.rnn(x, self.hidden)`: the state tuple,
    the last argument), or None."""
    args = _call_args(e.site.code or "")
    ids = e.input_ids()
    if tid not in ids or not args:
        return None
    i = ids.index(tid)
    if len(args) == len(ids):
        return args[i]
    return args[-1] if i >= len(args) - 1 else None  # (a tuple argument, flattened into the inputs)


def _ran_once(dx, site):
    """``site`` seen from the innermost frame of its stack whose line ran in one step only (the call before the
    loop, `target = feats(content)`, of a layer whose own lines run every step), else ``site``."""
    if site is None:
        return None
    bws = [b.index for b in dx.backward_events()]
    steps: dict = {}
    for x in dx.ev:
        if x.context == "user" and x.site is not None:
            for f in x.site.stack:
                steps.setdefault((f.filename, f.lineno), set()).add(bisect.bisect(bws, x.index))
    for i in range(len(site.stack) - 1, -1, -1):
        f = site.stack[i]
        if len(steps.get((f.filename, f.lineno), ())) <= 1:
            return site if i == len(site.stack) - 1 else dx.frame_site(f, site.stack[:i])
    return site


def _built_before(dx, prev, bw) -> bool:
    """The failing backward's loss was complete before the earlier backward ran."""
    made = [dx.d.producer(t) for t in (bw.detail.roots or bw.input_ids())]
    return bool(made) and all(p is not None and p.index < prev.index for p in made)


def _same_call(a, b) -> bool:
    """Two events made by the same line in the same calling frames (a loop's backward, run again)."""
    return a.site is not None and b.site is not None and a.site.stack == b.site.stack


def _kept_in_state(dx, prev, prev_anc, cur_anc):
    """(the use in the failing step, the call that kept it, what it kept) when the failing backward runs into a
    tensor made before the earlier backward, outside that backward's graph, from a result inside it (the step's
    keys put in a queue after the loss was made: `self.queue = torch.cat([k, self.queue])`); else None."""
    for i in sorted(cur_anc):
        e = dx.ev[i]
        if i <= prev.index or e.context != "user":
            continue
        for r in e.inputs:
            p = dx.d.producer(r.tid)
            if not r.requires_grad or r.is_leaf or p is None or p.index > prev.index or p.index in prev_anc:
                continue
            hit = dx.ancestors([r.tid], before=prev.index) & prev_anc
            if hit:  # (through the slicing and the like after the call that kept it: `cat([k, q])[:K]`)
                src = dx.ev[max(hit)]
                keep = min((dx.ev[j] for j in dx.ancestors([r.tid], before=prev.index) - prev_anc
                            if any(u.tid in src.output_ids() for u in dx.ev[j].inputs)), key=lambda x: x.index,
                           default=p)
                return e, keep, src
    return None


def _frame_naming(dx, site, name):
    """``site`` seen from the innermost frame of its stack whose line names ``name`` (`d_fake = self.D(fake)` for
    an op inside D's forward), else ``site``."""
    if unnamed(name):
        return site
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    for i in range(len(site.stack) - 1, -1, -1):
        f = site.stack[i]
        if word.search(f.code or ""):
            return dx.frame_site(f, site.stack[:i]) if i < len(site.stack) - 1 else site
    return site


def _leaves(dx, events) -> set:
    """The leaves that require grad among the inputs of ``events`` (parameters and the like)."""
    return {r.tid for i in events for r in dx.ev[i].inputs if r.is_leaf and r.requires_grad}


def _unwanted_use(dx, shared, prev, bw):
    """Where one of the two losses takes the shared part in without needing a gradient through it: the
    parameters behind that part are held by none of the optimizers that loss feeds (for the failing loss, those
    cleared by ``zero_grad()`` between the two backward calls; for the earlier one, those stepped after it) while
    its other parameters are (a GAN's discriminator loss on the generator's output). None otherwise."""
    tid = shared.output_ids()[0] if shared.outputs else None
    behind = _leaves(dx, dx.ancestors([tid], before=prev.index))
    between = dx.ev[prev.index + 1:bw.index]
    cleared = {t for e in between if e.kind == "grad_set" and e.detail.zero_grad for t in e.input_ids()}
    stepped = {t for e in between if e.kind == "optimizer_step" for t in (e.detail.params or ())}
    start = max([b.index for b in dx.backward_events() if b.index < prev.index] or [0])
    stepped |= {t for e in dx.ev[start:prev.index] if e.kind == "grad_set" and e.detail.zero_grad
                for t in e.input_ids()}
    prev_anc = dx.ancestors(prev.detail.roots or prev.input_ids(), before=prev.index)
    cur_anc = dx.ancestors(bw.detail.roots or bw.input_ids(), before=bw.index)
    for earlier, anc, other, held in ((False, cur_anc, prev_anc, cleared), (True, prev_anc, cur_anc, stepped)):
        if not held or not behind or behind & held or not (_leaves(dx, anc) - behind) & held:
            continue
        users = [dx.ev[i] for i in sorted(anc - other) if dx.ev[i].context == "user" and dx.ev[i].site is not None
                 and tid in dx.ev[i].input_ids()]
        if users:
            return users[0], earlier
    return None


def _shared_before(dx, prev, bw):
    """The last user computation both backward calls run through when the failing one's loss was complete before
    the earlier backward (two losses on one trunk, one backward each), or None."""
    if bw is None or prev.detail.retain_graph:
        return None
    roots = bw.detail.roots or bw.input_ids()
    if set(roots) == set(prev.detail.roots or prev.input_ids()):  # the same loss twice: not two losses
        return None
    if not _built_before(dx, prev, bw):
        return None
    return _last_shared(dx, prev, bw)


def _last_shared(dx, prev, bw):
    """The last user computation (requiring grad) that both backward calls run through, or None."""
    prev_anc = dx.ancestors(prev.detail.roots or prev.input_ids(), before=prev.index)
    cur_anc = dx.ancestors(bw.detail.roots or bw.input_ids(), before=bw.index)
    both = [dx.ev[i] for i in sorted(prev_anc & cur_anc)]
    both = [e for e in both if e.kind == "op" and e.context == "user" and any(r.requires_grad for r in e.outputs)]
    return both[-1] if both else None


def _steps_running(dx, site) -> set:
    """The steps (stretches between backward calls) in which the line of ``site`` ran, called from the same
    lines (a layer's forward runs every step; the call `target = feats(content)` before the loop ran once)."""
    bws = [b.index for b in dx.backward_events()]
    return {bisect.bisect(bws, x.index) for x in dx.ev
            if x.context == "user" and x.site is not None and x.site.short == site.short
            and x.site.stack == site.stack}
