"""The sync into plain data: sites, tensor refs, names and module facts, built on the first query."""
from __future__ import annotations


import torch.nn as nn

from .. import _source
from ..model import ExceptionInfo, Frame, TensorRef
from ..naming import infer_names
from . import _frames
from ._compat import module_hooks, module_parameters
from ._records import error_key
from ._refs import _GradRef, _Ref, _tid_of, _ver


class _Sync:
    # --- materialize ---------------------------------------------------------------------------
    def sync(self):
        """Turn raw records into plain data (sites, tensor refs, names). True when anything changed.

        While recording, everything is brought up to date. After :meth:`stop` (which already took
        what needs live objects: names, owners, module facts), the per-event conversion happens
        here, on the first query: a trace nobody looks at never pays for it."""
        ev = self.events
        if self._synced == len(ev) and self._synced_tensors == self._next_tid and not self._on and not self.backward.pending:
            self._refresh_alive()
            return False
        self._synced_tensors = self._next_tid
        tens = self.tensors
        make_site = _frames.make_site
        refs_seen: dict = {}  # the same tensor in the same state is one TensorRef object

        def tref(r, tens):
            if isinstance(r, TensorRef):
                return r
            x = refs_seen.get(r)
            if x is None:
                x = refs_seen[r] = self._tref(r, tens)
            return x

        for i in range(self._synced, len(ev)):
            e = ev[i]
            if type(e.site) is tuple or e.site is None:
                e.site = make_site(e.site) if e.site else None
            e.inputs = tuple([tref(r, tens) for r in e.inputs])
            e.outputs = tuple([tref(r, tens) for r in e.outputs])
        self._synced = len(ev)
        if self.backward.pending:
            self.backward.build()
        if self._on:
            self._sync_live()
        self._refresh_alive()
        infer_names(self.data)
        if self._stopped and not self.backward.pending:
            self._drop_recording_state()
        return True

    def _drop_recording_state(self):
        """After the recording and its conversion into plain data: what only recording needed (consumers of
        each tensor for the in-place checks, recent results, graph-node -> event links, escaped values,
        interned call stacks) is let go, so that a kept trace holds only its data."""
        self.saved.forget()
        self.lineage.forget()
        self._raws.clear()
        self.backward.forget()
        self._prehooked, self._hooked, self._cleared = set(), set(), {}
        # the live maps of the model's modules (names, owners and module facts were taken at stop; a parameter
        # no call used is still named from _param_src when it is asked about)
        self._mod_path._d.clear()
        self._root_held, self._root_of, self._live = {}, {}, []
        # references to tensors that are gone (a step's activations, once backward freed them) find nothing
        # any more: their entries go (their TensorInfo stays, marked not alive)
        refs, ids = self._refs, self._ids
        for tid in [t for t, r in refs.items() if type(r) is _Ref and r() is None]:
            del refs[tid]
        for k in [k for k, r in ids.items() if type(r) is _Ref and r() is None]:
            del ids[k]

    def _sync_live(self):
        """What needs the live objects: parameter and module names, parameter owners, module facts."""
        if self._roots:
            self._rename()
        else:
            self._apply_names()
        if self._late_attrs:
            self._fill_late_attrs()
        self._name_uncalled()
        tens = self.tensors
        for tid, r in self._refs.items():  # a leaf's .grad read in the step (`p.data.add_(-lr * p.grad)`): `p.grad`
            if type(r) is _GradRef:
                info, leaf = tens.get(tid), tens.get(r.leaf)
                if info is not None and info.name is None and leaf is not None and leaf.name:
                    info.name = f"{leaf.name}.grad"
        tied = {}  # a Parameter registered under several names (tied weights): its other names
        for pid, others in self._tied_names.items():
            ent = self._param_src.get(pid)
            p = ent.ref() if ent is not None else None
            tid = self.tid_of(p) if isinstance(p, nn.Parameter) else None
            if tid is not None:
                tied[str(tid)] = others
        self.data.meta["tied_params"] = tied
        self.data.meta["left_model"] = self._left_models()
        self.data.meta["trainable"] = sorted(self.optim.trainable)
        self.data.meta["internal_errors"] = list(self.sink.errors)
        owners = {}
        for pid, (r, cls, attr, raw) in self._param_owner.items():  # Owner
            p = r()
            if p is None:
                continue
            tid = self.tid_of(p)
            if tid is not None:
                site = _frames.make_site(raw)
                owners[str(tid)] = {"class": cls, "attr": attr, "site": site.to_json() if site else None}
        self.data.meta["param_owner"] = owners
        self._module_facts()

    def _left_models(self):
        """Tids of parameters the trace saw that no called model holds now (a submodule replaced in
        __init__ took its old parameters out, or they are gone); None when no model was called."""
        ids = set()
        for r in self._roots:
            root = r.ref()
            if root is None:
                continue
            try:
                ids.update(id(p) for p in root.parameters())
            except Exception as e:  # a user's module whose parameters() raises: which left the model is unknown
                self._internal(e)
                return None
        if not ids:
            return None
        out = []
        refs = self._refs
        for tid, info in self.tensors.items():
            if info.role == "param":
                r = refs.get(tid)
                p = r() if r is not None else None
                if p is None or id(p) not in ids:  # (gone: nothing, so no model, holds it)
                    out.append(tid)
        return out

    def _module_facts(self):
        """Static facts about called modules: children skipped by an early return, backward hooks."""
        called = {e.op for e in self.events if e.kind == "module"}
        skipped = {}
        defined = {}  # child path -> Frame of the line that defines it, for children that were never called
        hooks = {}
        fwd_hooks = {}
        hook_params = {}  # tid -> the module whose forward hook uses it (an adapter attached by a hook)
        guarded = {}  # path -> the line reading it and the skip before that line (if ...: continue; if ...:)
        ran = {cid for raw in self._raws for cid, _ in raw}  # code objects of the user's lines that ran
        by_path = {}
        for m, path in self._mod_path.items():
            by_path.setdefault(path, m)
        for m, path in self._mod_path.items():
            try:
                hk = module_hooks(m, "backward") + module_hooks(m, "backward_pre")
                if hk:
                    frs = [_frames.return_lines(h) for h in hk]
                    hooks[path] = [f.to_json() for f in frs if f is not None]
                fh = module_hooks(m, "forward")
                if fh:  # a forward hook that returns a value replaces the module's output (after our hook saw it)
                    frs = [_frames.value_return(h) for h in fh]
                    frs = [f.to_json() for f in frs if f is not None]
                    if frs:
                        fwd_hooks[path] = frs
                    for h in fh + module_hooks(m, "forward_pre"):
                        self._hook_modules(h, path, hook_params)
                if path not in called and (path or "") != "":
                    if isinstance(m, (nn.ModuleList, nn.ModuleDict)) and path:
                        self._partly_iterated(m, path, called, skipped)
                    continue
                for cname, child in m.named_children():
                    cpath = f"{path}.{cname}" if path else cname
                    if cpath in called or child is None:
                        continue
                    fr = _frames.return_before_attr(m, cname, ran)
                    up = path
                    while fr is None and up:  # an early return in an ancestor's method that reaches it as
                        up = up.rpartition(".")[0]  # self.student.unsup_proj
                        anc = by_path.get(up)
                        if anc is not None:
                            fr = _frames.return_before_attr(anc, cname, ran)
                    if fr is not None:
                        skipped[cpath] = {"parent": path, "return_line": fr.to_json()}
                    else:
                        self._guarded_read(m, cname, cpath, ran, guarded)
                    df = _frames.attr_definition(m, cname)
                    if df is not None:  # where the never-called child is defined (self.extra = ...)
                        defined[cpath] = df.to_json()
                for pn, p in module_parameters(m).items():  # a parameter of its own no call used
                    tid = self.tid_of(p) if p is not None else None
                    if p is not None and (tid is None or not self._consumers.get(tid)):
                        self._guarded_read(m, pn, f"{path}.{pn}" if path else pn, ran, guarded)
            except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                self._internal(e)
        self.data.meta["skipped_children"] = skipped
        self.data.meta["guarded_reads"] = guarded
        self.data.meta["uncalled_defined"] = defined
        self.data.meta["module_hooks"] = hooks
        self.data.meta["module_forward_hooks"] = fwd_hooks
        self.data.meta["hook_params"] = hook_params

    def _guarded_read(self, module, attr, path, ran, out):
        """``module``'s first line reading ``self.<attr>``, when a skip can keep it from running (an
        ``if ...: continue`` before it, or the ``if`` around it): both lines, under ``path``."""
        read = _frames.first_read_of_attr(module, attr, ran)
        if read is None:
            return
        hit = _source.skip_before(read.filename, read.lineno)
        if hit is not None:
            guard = Frame(read.filename, hit[0], read.function, hit[1])
            out[path] = {"read": read.to_json(), "guard": guard.to_json()}

    def _hook_modules(self, fn, path, out):
        """Parameters of the modules a forward hook closes over (`lambda m, i, o: o + self.up(...)`)."""
        fn = getattr(fn, "__func__", fn)
        mods = []
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, nn.Module):
            mods.append(owner)
        for c in getattr(fn, "__closure__", None) or ():
            try:
                v = c.cell_contents
            except ValueError:
                continue
            if isinstance(v, nn.Module):
                mods.append(v)
        for mod in mods:
            base = self._mod_path.get(mod)
            prefix = base if base else type(mod).__name__.lower()
            for pn, p in mod.named_parameters():
                tid = self._tid(p, link=False)
                info = self.tensors[tid]
                if info.name is None:
                    info.name = f"{prefix}.{pn}"
                out[str(tid)] = {"owner": path, "hook": _frames.callable_label(fn)}

    def _partly_iterated(self, box, path, called, skipped):
        """A ModuleList/ModuleDict (iterated, never called) of which only some children ran: the loop in its
        owner's forward that goes over part of it (`for blk in self.blocks[:-1]`, a zip with a shorter list)."""
        kids = [(f"{path}.{c}", ch) for c, ch in box.named_children()]
        ran = [k for k, _ in kids if k in called]
        if not ran or len(ran) == len(kids):
            return
        owner_path, _, attr = path.rpartition(".")
        owner = next((m for m, p in self._mod_path.items() if p == owner_path), None)
        fr = _frames.loop_over_attr(owner, attr) if owner is not None else None
        if fr is None:
            return
        for k, _ in kids:
            if k not in called:
                skipped[k] = {"parent": owner_path, "return_line": fr.to_json(), "loop": path,
                              "ran": len(ran), "of": len(kids)}

    def _refresh_alive(self):
        tens = self.tensors
        for tid, r in self._refs.items():
            info = tens.get(tid)
            if info is not None:
                info.alive = r() is not None
        for tid in self._lazy:  # a LazyModule's parameters, first seen without a shape: theirs once materialized
            t = self.live(tid)
            if t is not None and tid in tens:
                try:
                    tens[tid].shape = tuple(t.shape)
                except RuntimeError:  # (still uninitialized)
                    pass

    def _tref(self, r, tens):
        if isinstance(r, TensorRef):
            return r
        tid, rg, leaf, ver = _tid_of(r), bool(r & 2), bool(r & 1), _ver(r)
        info = tens.get(tid)
        key = (info.shape, info.dtype, info.device) if info is not None else ((), "?", "?")
        meta = self._metas.setdefault(key, key)  # identical (shape, dtype, device) share one tuple
        return TensorRef(tid, requires_grad=rg, is_leaf=leaf, version=ver, meta=meta)

    def live(self, tid):
        r = self._refs.get(tid)
        return r() if r is not None else None

    def record_exception(self, exc):
        self.exception = exc
        site = None
        tb = exc.__traceback__
        raw = []
        while tb is not None:
            co = tb.tb_frame.f_code
            if _frames.category(co) == _frames.USER:
                raw.append((id(co), tb.tb_lineno))
            tb = tb.tb_next
        if raw:
            site = _frames.make_site(tuple(reversed(raw)))
        # the event that raised it: the last call that raised, if this is that error (or wraps it), not one
        # the program caught before
        event, c = None, exc
        for _ in range(8):
            if c is None:
                break
            if self.sink.error_key is not None and error_key(c) == self.sink.error_key:
                event = self.sink.error_event
                break
            c = c.__cause__ or c.__context__
        self.data.exception = ExceptionInfo(type(exc).__name__, str(exc)[:4000], event, site)
