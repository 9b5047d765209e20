"""Module calls and naming: the module stack (one frame walk per call), the model's roots and
the paths of its modules and tensors, replaced submodules and parameters.
"""
from __future__ import annotations

import sys
import weakref

import torch
import torch.nn as nn

from . import _dtensor, _frames, _names
from ._containers import scan
from ._compat import CALL_IMPL_CODE as _CALL_IMPL, legacy_backward_hooks, module_children, module_parameters
from ._frames import F_COMPILE, F_DIST, F_INIT, F_OPTIM, F_TORCH
from ._ops import _T, _CTX_FLAGS, _tensors, context_of
from ._prefixes import Prefixes
from ._records import Call, RawEvent, Recent, LateAttr, ModelPath, Named, Owner, Source, _ModulePaths, _Root
from ._refs import _pk, _Held

_DTENSOR = "torch.distributed.tensor"


_new = tuple.__new__
_CLASS_DETAIL: dict = {}  # module class name -> its (shared) module-event detail  # shared by events without details: never mutate


_FAST_PATH: dict = {}  # module type -> has an attention fast path that any TorchFunctionMode turns off


def _fast_path_note(labels):
    return (f"attention fast path off: {', '.join(labels)} ran in eval mode without autograd, where PyTorch takes "
            "a fused fast path only when no TorchFunctionMode is active; the recording is one, so they ran their "
            "reference path instead (outputs at padded positions can differ, NestedTensor inputs raise). Trace the "
            "training step, not inference")


class Modules:
    """Module calls (the module stack, one frame walk per call: ``where``), the models' roots and the
    paths of their modules and tensors (names), replaced submodules and parameters (``module_set``)."""

    # a new root is named on its own when that changes no other root's names (see _prefixes); False: every
    # new root re-runs the full pass (tests compare the two)
    _incremental_names = True

    def __init__(self, sink, engine, identity, eager_compile: bool):
        self._sink = sink
        self._data, self._events, self._tensors = sink.data, sink.events, sink.tensors
        self._engine = engine  # the recorder: its optimizer flags, event limit and lineage
        self._ident = identity
        self.entry = None  # the traced block's frame, while recording (see begin)
        # flags the ops inside a module call inherit from the call's own walk (see _module_pre)
        self._inherit = ~(F_TORCH | F_COMPILE) if eager_compile else ~F_TORCH
        self.raws: dict = {}  # interned call stacks
        self.mod_stack: list = []
        self.mod_path = _ModulePaths()
        self.called_ids: set = set()  # id() of every module whose forward ran in the trace
        self.called_ops: set = set()  # the op (path, else class) of every module event (see ModuleFacts._module_facts)
        self.legacy_hooks: dict = {}  # path -> return lines of its register_backward_hook hooks, seen when called
        self.roots: dict = {}  # _Root of each model called, in order (kept when gone: its tensors keep their names)
        self._live: list = []  # the roots alive at the last look (see _ensure_root)
        self._root_of: dict = {}  # id(root module) -> its _Root
        self._root_tids: dict = {}  # _Root -> how many of its tensors the trace saw (those in _tid_src)
        self._root_held: dict = {}  # _Root -> ([(id(module), weakref)], [id(tensor)]) it put in the live maps
        # the live roots' walks their names were taken from (see _walk_sig), and whether a registration hook
        # saw a model change since: at stop an unchanged model keeps its names without the full pass
        self._named_walks: dict = {}
        self._changed = False
        self._book = Prefixes()
        self.param_names: dict = {}  # id(param or buffer) -> Named
        self.param_src: dict = {}  # id(param or buffer) -> Source
        self._tid_src: dict = {}  # tid -> ModelPath: module tensors the trace saw
        self.prefix: dict = self._book.pre  # _Root -> prefix of its names
        self.tied_names: dict = {}  # id(param) -> its other names (tied weights)
        self.param_owner: dict = {}  # id(param) -> Owner
        self._built: dict = {}  # id(param) -> (its path, the class of the module holding that path): models built here
        # module_set events made before the model's root was seen ([LateAttr]): their paths are filled in at stop
        self.late_attrs: list = []
        # modules kept in plain lists/dicts of the models called (see _containers), and the ids looked at
        self.containers: list = []
        self.container_seen: set = set()

    def begin(self, entry):
        self.entry = entry

    def end(self):
        self.entry = None

    def current_module(self):
        """The path of the module whose forward is running, else None."""
        st = self.mod_stack
        return st[-1].path if st else None

    # --- module / optimizer hooks --------------------------------------------------------------
    def _module_pre(self, module, frame):
        eng = self._engine
        eng.calls.zg = None
        if eng.calls.in_opt or eng._suspended:
            # an optimizer closure runs the model (LBFGS): record it. Or optimizer.step() raised,
            # the program caught it and went on: close the step's record now.
            eng._resume()
            eng.set_in_optimizer(False)
            if eng.optim.pending is not None and not _frames.walk(sys._getframe(), self.entry)[1] & F_OPTIM:
                self._sink.note("an optimizer.step() raised inside the trace; torch calls between it and the next "
                                "module call were not recorded")
                eng.optim.step_done(None)
        st = self.mod_stack
        if not st:
            self._ensure_root(module)
        path = self.mod_path.get(module)
        if path is None:
            self._ensure_root(module, force=True)
            path = self.mod_path.get(module, type(module).__name__)
        fp = _FAST_PATH.get(type(module))
        if fp is None:
            fp = _FAST_PATH[type(module)] = isinstance(module, (nn.MultiheadAttention, nn.TransformerEncoderLayer,
                                                                nn.TransformerEncoder))
        if fp and not module.training:
            self._fast_path_off(module, path)
        # where this call is, walked once: the module's own event and every op inside it (and the
        # calls of its children) reuse it, walking only up to this frame
        if self._ident.deferred:  # (zero_grad()'s leaves: the model just entered has named most, see resolve_deferred)
            self._ident.resolve_deferred()
        raw, flags = self.where(frame)
        # (without F_TORCH: the ops inside inherit only region flags; F_TORCH on an op then means that
        # torch code between it and its nearest user frame made the call: see _post, library detach)
        st.append(_new(Call, (path, id(frame), id(frame.f_back), raw, flags & self._inherit)))  # (a Call, built
        # without its Python-level __new__: this runs on every module call)

    def _fast_path_off(self, module, path):
        """nn.MultiheadAttention / nn.TransformerEncoder(Layer) in eval without autograd take a fused fast
        path only when no TorchFunctionMode is active (torch.overrides.has_torch_function): under the
        recording they run their reference path. Said once in the trace, naming the modules."""
        if torch.is_grad_enabled() and not torch.is_inference_mode_enabled() and any(
                p.requires_grad for p in module.parameters()):
            return  # (no fast path with autograd on, traced or not)
        paths = self._data.meta.setdefault("fast_path_off", [])
        label = f"{path} ({type(module).__name__})" if path else type(module).__name__
        if label in paths:
            return
        old = _fast_path_note(paths) if paths else None
        paths.append(label)
        text = _fast_path_note(paths)
        un = self._data.unseen
        if old in un:
            un[un.index(old)] = text
        else:
            un.append(text)

    def where(self, f):
        """(user frames innermost first, context flags) for a call made from frame ``f``: walks up
        to the innermost running module call and reuses that call's walk for the rest."""
        st = self.mod_stack
        top = st[-1] if st else None
        user, flags, hit = _frames.walk_until(f, self.entry, top.frame if top else -1)
        if not hit:
            if top is not None and self._drop_stale(f):
                return self.where(f)
            return self.raws.setdefault(user, user), flags
        if not user:
            return top.raw, flags | top.flags
        raw = (user + top.raw)[:16]
        return self.raws.setdefault(raw, raw), flags | top.flags

    def _drop_stale(self, f):
        """Entries of module calls whose forward raised (their forward hook never ran): those whose frame
        is no longer an ancestor of frame ``f``. True when any was dropped."""
        live = set()
        while f is not None:
            live.add(id(f))
            f = f.f_back
        st = self.mod_stack
        n = len(st)
        while st and st[-1].frame not in live:
            st.pop()
        return len(st) != n

    def _module_post(self, module, args, output, frame):
        st = self.mod_stack
        fid = id(frame)
        if st and st[-1].frame == fid:
            entry = st.pop()
        else:  # forward raised (called from _call_impl), or entries left by calls that raised
            entry = None
            for k in range(len(st) - 1, -1, -1):
                if st[k].frame == fid or st[k].caller == fid:
                    entry = st[k]
                    del st[k:]
                    break
            if entry is None or frame.f_code is _CALL_IMPL:
                return  # (forward raised: no module event)
        if self._engine._max_events is not None and self._engine._full():
            return
        path, raw, flags = entry.path, entry.raw, entry.flags
        ins = _tensors(args, [])
        outs = [output] if isinstance(output, _T) else _tensors(output, [])
        if not ins and not outs:
            return
        in_refs = self._ident.pack(ins)
        out_refs = self._ident.pack(outs)
        cls = type(module).__name__
        detail = _CLASS_DETAIL.get(cls)
        if detail is None:
            detail = _CLASS_DETAIL[cls] = {"class": cls}  # shared, read-only
        if ins and outs:
            returned = False
            for o in outs:
                for i in ins:
                    if o is i:
                        returned = True
            if returned:
                detail = {"class": cls, "returned_input": True}
                fr = _frames.early_return_of_input(module)
                if fr is not None:
                    detail["return_line"] = fr.to_json()
        self.called_ids.add(id(module))  # (the modules called, whatever their path was then: see ModuleFacts)
        legacy = legacy_backward_hooks(module)
        if legacy:  # register_backward_hook (not full): where its hooks return, and the parameters under it
            try:
                tids = [self._ident.tid_of(p) for p in module.parameters()]
                self.legacy_hooks[path or cls] = {
                    "hook": [f.to_json() for f in map(_frames.return_lines, legacy) if f is not None],
                    "params": [t for t in tids if t is not None]}
            except (AttributeError, RuntimeError, TypeError) as e:  # (a module whose parameters() is broken)
                self._sink.internal(e)
        events = self._events
        self.called_ops.add(path or cls)
        events.append(RawEvent(len(events), "module", path or cls, raw, tuple(in_refs), tuple(out_refs),
                            torch.is_grad_enabled(), torch.is_inference_mode_enabled(), st[-1].path if st else None,
                            "user" if not flags & _CTX_FLAGS else context_of(flags, True), None, detail))

    def _ensure_root(self, module, force=False):
        """A module tree entered for the first time: find the user's variable for it (or for the model
        that holds it) and record every module's and tensor's path now, while the frames are alive."""
        if _DTENSOR in sys.modules:  # (tensor parallelism: DTensor's conversions recorded, see _dtensor)
            _dtensor.ensure()
        if not force:
            r = self._root_of.get(id(module))
            if (r is not None and r.ref() is module) or module in self.mod_path:
                return
        if force and _names.compiler_made(module) and _frames.walk(sys._getframe(), self.entry)[1] & F_COMPILE:
            self.mod_path[module] = type(module).__name__  # a graph torch.compile made and runs: not a model
            return
        f = _frames.first_user_frame(sys._getframe(), self.entry)
        try:
            var, root = _names.find_root(f, self.entry, module, self.mod_path.get)
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._sink.internal(e)
            var, root = None, module
        taken = {r.var for r in self._live if (m := r.ref()) is not None and m is not root}
        if var is not None and var in taken and f is not None:
            # the same parameter name (`field`) for two models (coarse and fine, passed to one helper):
            # the caller's own variable for this one
            var = _frames.outer_var(self.callers(f), self.entry, root, skip=taken) or var
        try:
            inner = _names.unwrap(root)
            new = _Root(weakref.ref(root), var, _names.flat(root), type(inner).__name__, not module_children(inner))
        except TypeError:
            return
        # roots inside the new one are dropped (their tensors are renamed under it), as are gone ones that
        # named no tensor (a parameter-free module made in each forward: `nn.Dropout(p)(x)`); gone ones that
        # did keep their names. Only the roots alive at the last look are looked at again.
        live, gone, inside = [], [], False
        for r in self._live:
            m = r.ref()
            if m is None:
                gone.append(r)
            elif m is root or _names.contains(root, m):
                inside = True
                self.roots.pop(r, None)
            else:
                live.append(r)
        live.append(new)
        self._live = live
        self.roots[new] = None
        self._root_of[id(root)] = new
        full = inside
        for r in gone:
            self._forget(r)
            if r not in self._root_tids:
                self.roots.pop(r, None)
                full = full or not self._book.remove(r)
        if full or not self._incremental_names or not self._add_root(new):
            self.rename()

    def name_uncalled(self):
        """Parameters of a model the trace saw built but never called (its methods used them, or an optimizer
        holds them: `net = Net(); opt = Adam(net.parameters()); net = Net2()`): no root names them, so their
        path in that model, after its class (`net.fc1.weight` for a Net, as a lone layer is `linear.weight`)."""
        tens, refs, owners = self._tensors, self._ident.refs, self.param_owner
        paths = {str(tid): mp.path for tid, mp in self._tid_src.items()}  # tid -> its path inside its model
        self._data.meta["module_paths"] = paths
        taken = {i.name for i in tens.values() if i.name}
        for tid, info in tens.items():
            if info.name is not None or info.role != "param":
                continue
            r = refs.get(tid)
            p = r() if r is not None else None
            if p is None:
                continue
            got = self._built.get(id(p))
            own = owners.get(id(p)) if got is None else None
            if got is None and (own is None or own.ref() is not p):
                continue
            base, path = (got[1].lower(), got[0]) if got is not None else (own.cls.lower(), own.attr)
            name, n = f"{base}.{path}", 1
            while name in taken:  # two models of one class (a target and a trained copy): object3d, object3d_2
                n += 1
                name = f"{base}_{n}.{path}"
            taken.add(name)
            info.name = name
            paths[str(tid)] = path

    def unpin_tensors(self, unpinned):
        """The recording stopped: the module tensors' names and sources keep references ``unpinned(t)``
        gives (never strong); owners and late paths are done with."""
        self.param_names = {k: Named(unpinned(r()), name) for k, (r, name) in self.param_names.items()
                             if r() is not None}
        self.param_src = {k: Source(unpinned(r()), root, path) for k, (r, root, path) in self.param_src.items()
                           if r() is not None}
        self.param_owner = {}
        self.late_attrs = []

    def drop_tensors(self):
        """Releasing failed: every reference on module tensors is forgotten."""
        self.param_names, self.param_src, self.param_owner, self.late_attrs = {}, {}, {}, []

    def scan_frame(self, f):
        """The plain containers of the models in the variables of user frame ``f`` (a frame the block's error
        left: a model built there and never called is gone by stop)."""
        for k, v in list(_frames.locals_of(f).items()):
            if isinstance(v, nn.Module) and not k.startswith("_"):
                scan(v, k, self.containers, self.container_seen, self._sink.internal)

    def forget(self):
        """After the recording's conversion: the live maps of the model's modules."""
        self.mod_path._d.clear()
        self._root_held, self._root_of, self._live = {}, {}, []
        self.containers, self.container_seen = [], set()

    def callers(self, f):
        """The user frame that called user frame ``f`` (None at the traced block's own frame)."""
        return _names.callers(f, self.entry)

    def model_tids(self):
        """The tids of module tensors the trace saw (named by their model's path)."""
        return self._tid_src

    def model_tensor(self, tid, r, rel):
        """Tensor ``tid`` is ``rel`` in root ``r``'s model (its name: r's prefix + rel)."""
        old = self._tid_src.get(tid)
        n = self._root_tids
        if old is not None:
            if old.root is r:
                self._tid_src[tid] = ModelPath(r, rel)
                return
            left = n.get(old.root, 1) - 1
            if left > 0:
                n[old.root] = left
            else:
                n.pop(old.root, None)
        self._tid_src[tid] = ModelPath(r, rel)
        n[r] = n.get(r, 0) + 1

    def _forget(self, r):
        """Root ``r`` is gone: its modules and tensors leave the live maps (the strong references on its
        tensors go with them); what the trace saw of it keeps its names."""
        mids, ids = self._root_held.pop(r, ((), ()))
        d = self.mod_path._d
        for k, wr in mids:
            e = d.get(k)
            if e is not None and e[0] is wr:
                del d[k]
        src, names, tied = self.param_src, self.param_names, self.tied_names
        for k in ids:
            e = src.get(k)
            if e is not None and e.root is r:
                del src[k]
                names.pop(k, None)
                tied.pop(k, None)

    def _walk_root(self, r):
        """(modules, tensors) of root ``r``'s model, or None (gone, or its walk failed: noted)."""
        root = r.ref()
        if root is None:
            return None
        try:
            return _names.walk(root)
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._sink.internal(e)
            return None

    def _take(self, r, p, mods, tens):
        """Root ``r`` (prefix ``p``) into the live maps: the paths of its modules and tensors that no
        earlier live root holds (the first root holding a shared module names it). Returns the tensors'
        ids."""
        mp, src, names, tied = self.mod_path, self.param_src, self.param_names, self.tied_names
        root = r.ref()
        if root is not None:  # its plain containers of modules, while it is alive (from the walk just made)
            scan(root, r.var or r.cls, self.containers, self.container_seen, self._sink.internal, mods)
        d = mp._d
        mids, ids = [], []
        for path, m in mods:
            if m not in mp:
                mp[m] = _names.join(p[:-1], path)
                mids.append((id(m), d[id(m)][0]))
        for path, t in tens:
            k = id(t)
            e = src.get(k)
            if e is not None:
                if e.root is r:
                    tied.setdefault(k, []).append(p + path)
                continue
            # strong while recording, through the module after it: never a weak reference on a module's
            # tensor (torch.utils.swap_tensors refuses those; see _Held)
            ref = _Held(t) if self._ident.slots is None else self._ident.unpinned(t)
            src[k] = Source(ref, r, path)
            names[k] = Named(ref, p + path)
            ids.append(k)
        self._root_held[r] = (mids, ids)
        self._named_walks[r] = _walk_sig(mods, tens)
        return ids

    def _seen(self, ids):
        """The tensors (ids in the live maps) the trace has already seen: their model's, by name."""
        src, tens = self.param_src, self._tensors
        for k in ids:
            ref, r, path = src[k]
            t = ref()
            tid = self._ident.tid_of(t) if t is not None else None
            if tid is not None:
                self.model_tensor(tid, r, path)
                info = tens[tid]
                info.name = self.prefix.get(r, "") + path
                if info.role == "tensor":
                    info.role = "param" if isinstance(t, nn.Parameter) else "buffer"
                    if info.role == "param":
                        self._ident.param_tids.add(tid)

    def _add_root(self, r):
        """A new root whose prefix changes no other root's: only its own model is walked and named.
        False when the full pass is needed (see _prefixes.Prefixes.add)."""
        walked = self._walk_root(r)
        if walked is None:
            return False
        mods, tens = walked
        src = self.param_src
        for _, t in tens:  # a tensor the trace saw as another (gone) root's: moved by the full pass
            tid = self._ident.tid_of(t)
            old = self._tid_src.get(tid) if tid is not None else None
            if old is not None and old.root is not r and id(t) not in src:
                return False
        p = self._book.add(r, {path for path, _ in tens})
        if p is None:
            return False
        self._seen(self._take(r, p, mods, tens))
        return True

    def rename_at_stop(self):
        """At stop: the full pass (:meth:`rename`) unless every model is as it was named, which is the
        common case: no registration hook saw a change since, each root named then walks to the same modules and
        tensors at the same paths (or is gone and named no tensor), and no other root is alive. Then the names
        stand as they are (tests/test_naming.py compares the two)."""
        if not self._changed:
            named = self._named_walks
            live = []
            for r in self.roots:
                m = r.ref()
                if m is None:  # (gone: it may have named no tensor, a loss module made in forward; else the full pass)
                    if r in named and named[r][1]:
                        break
                    continue
                w = self._walk_root(r) if r in named else None
                if w is None or _walk_sig(*w) != named[r]:
                    break
                live.append(r)
            else:
                self._live = live
                self.apply_names()
                return
        self.rename()

    def rename(self):
        """Module paths and tensor names from every live root (walked now); names of tensors already
        seen are kept per root, so they survive the model (a local of a function that returned)."""
        walked = []
        rels: dict = {}  # root -> relative tensor paths (for names that would coincide)
        for r in self.roots:
            w = self._walk_root(r)
            if w is not None:
                walked.append((r, *w))
                rels[r] = {p for p, _ in w[1]}
        self._live = [r for r in self.roots if r.ref() is not None]
        for r, rel in self._tid_src.values():
            rels.setdefault(r, set()).add(rel)
        pre = self.prefix = self._book.full(list(self.roots), rels)
        self.mod_path = _ModulePaths()
        self.param_src, self.param_names, self.tied_names, self._root_held = {}, {}, {}, {}
        self._named_walks, self._changed = {}, False
        ids = []
        for r, mods, tens in walked:
            ids += self._take(r, pre.get(r, ""), mods, tens)
        self._seen(ids)
        n = self._root_tids = {}
        for r, _ in self._tid_src.values():
            n[r] = n.get(r, 0) + 1
        self.apply_names()

    def apply_names(self):
        """Every module tensor the trace saw gets its name (root prefix + module path); the other
        spelling (with or without the root's variable) is kept as an alias for ``resolve``."""
        pre = self.prefix
        tens = self._tensors
        aliases: dict = {}
        for tid, (r, rel) in self._tid_src.items():
            info = tens.get(tid)
            if info is None:
                continue
            p = pre.get(r)
            if p is None:  # a root dropped for a bigger one that holds it
                p = f"{r.var}." if r.var and r.flat else ""
            info.name = p + rel
            if r.var:
                a = rel if p else f"{r.var}.{rel}"
                aliases[a] = tid if a not in aliases else None  # (ambiguous: not an alias)
        # a tied weight (lm_head.weight = wte.weight) answers to its other module paths too
        for pid, others in self.tied_names.items():
            ent = self.param_src.get(pid)
            p = ent.ref() if ent is not None else None
            tid = self._ident.tid_of(p) if p is not None else None
            if tid is None:
                continue
            r = ent.root
            pre = self.prefix.get(r, "")
            for o in others:
                bare = o[len(pre):] if pre and o.startswith(pre) else o
                for a in (o, bare, f"{r.var}.{bare}" if r.var else bare):
                    if a not in aliases:
                        aliases[a] = tid
        self._data.meta["name_aliases"] = {a: t for a, t in aliases.items() if t is not None and tens[t].name != a}
        self._data.meta["model_tensors"] = sorted(self._tid_src)  # tensors of a model the trace called

    def _module_registered(self, module, name, sub):
        self._changed = True
        if isinstance(sub, nn.Module) and sub is not module:
            # a model built in the trace: each parameter's path from the outermost module it was put in so far
            # (what names it if that model is never called: see _name_uncalled)
            cls = type(module).__name__
            try:
                for pn, p in sub.named_parameters():
                    self._built[id(p)] = (f"{name}.{pn}", cls)
            except (AttributeError, RuntimeError, TypeError) as e:  # (a module whose named_parameters is broken)
                self._sink.internal(e)
        old = module_children(module).get(name)
        if old is None or old is sub:
            return
        raw, flags = _frames.walk(sys._getframe(), self.entry)
        if flags & F_INIT and not raw:
            return
        if _names.constructing(_frames.first_user_frame(sys._getframe(), self.entry), self.entry, module):
            # built in its own __init__ (`self.resnet = nn.Sequential(*list(self.resnet.children())[:-1])`):
            # not a replacement anything could hold; the tensors it drops keep their old path as name
            kept = {id(p) for p in sub.parameters()} if isinstance(sub, nn.Module) else ()
            for pn, p in old.named_parameters():
                tid = self._ident.tid_of(p)
                if tid is not None and id(p) not in kept and self._tensors[tid].name is None:
                    self._tensors[tid].name = f"{name}.{pn}"
            return
        old_params = []
        # parameters the new submodule keeps (`self.resnet = nn.Sequential(*list(self.resnet.children())[:-1])`)
        # stay in the model: only the others leave it
        kept = {id(p) for p in sub.parameters()} if isinstance(sub, nn.Module) else ()
        for pn, p in old.named_parameters():
            if id(p) in kept:
                continue
            tid = self._ident.tid(p)
            old_params.append(tid)
            info = self._tensors[tid]
            if info.name is None:
                ent = self.param_names.get(id(p))
                info.name = ent.name if ent and ent.ref() is p else f"{name}.{pn}"
        idx = len(self._events)
        path = self.mod_path.get(module)
        attr = f"{path}.{name}" if path else name
        if path is None:
            self._late_attr(module, name, idx, {t: self._tensors[t].name.rsplit(".", 1)[-1] for t in old_params})
        self._events.append(RawEvent(idx, "module_set", attr, raw, (), (), torch.is_grad_enabled(), False,
                                 self.current_module(), context_of(flags, True), None,
                                 {"attr": attr, "old_class": type(old).__name__, "new_class": type(sub).__name__,
                                  "old_params": old_params}))

    def _late_attr(self, module, name, idx, old, new=None):
        try:
            self.late_attrs.append(LateAttr(weakref.ref(module), name, idx, old, _Held(new) if new is not None else None))
        except TypeError:
            pass

    def fill_late_attrs(self):
        """Paths of modules changed before the model was called (now that its root is known), and
        whether a parameter put in place of another belongs to another module (tied weights)."""
        keep = []
        for la in self.late_attrs:
            name, idx, old, newr = la.name, la.event, la.old, la.new
            m = la.module()
            path = self.mod_path.get(m) if m is not None else None
            if path is None:
                keep.append(la)
                continue
            attr = f"{path}.{name}" if path else name
            e = self._events[idx]
            e.op = attr
            e.detail["attr"] = attr
            self._sink.changed.append(idx)  # (converted already if a query ran while recording: again)
            new = newr() if newr is not None else None
            ent = self.param_names.get(id(new)) if new is not None else None
            if ent is not None and ent.ref() is new and ent.name != attr:
                e.detail["tied"] = True
                e.detail["tied_to"] = ent.name
                own = self.param_owner.get(id(new))
                if own is not None and own.raw is e.site:  # (the tying line did not create it)
                    del self.param_owner[id(new)]
            for tid, short in old.items():  # the old parameters still carry the fallback name
                info = self._tensors.get(tid)
                if info is not None and info.name in (name, f"{name}.{short}"):
                    info.name = attr if info.name == name else f"{attr}.{short}"
        self.late_attrs = keep

    def _made_from(self, param, orig_tid):
        """torch.distributed registered ``param``, made from the parameter ``orig_tid`` with its requires_grad: the
        requires_grad_ call that gave ``param`` its flag names the original (RequiresGradDetail.made_from)."""
        tid = self._ident.tid_of(param)
        if tid is None:
            return
        for e in reversed(self._events[-64:]):
            if e.kind == "requires_grad" and e.inputs and (e.inputs[0] >> 2) & 0xFFFFFFFF == tid:
                if e.detail.get("made_from") is None:
                    e.detail = {**e.detail, "made_from": orig_tid}
                    self._sink.changed.append(e.index)  # (converted already if a query ran while recording)
                return

    def _param_registered(self, module, name, param):
        self._changed = True
        if param is None:
            return
        raw, flags = _frames.walk(sys._getframe(), self.entry, limit=6)
        old = module_parameters(module).get(name)
        if (old is not None and old is not param and not (flags & F_INIT and not raw)
                and not _names.constructing(_frames.first_user_frame(sys._getframe(), self.entry), self.entry,
                                            module)):
            # `layer.weight = other_param` (weight tying) or `= nn.Parameter(...)`: the old parameter
            # (perhaps the one an optimizer holds) leaves the model, like a replaced submodule
            tid = self._ident.tid(old)
            info = self._tensors[tid]
            path = self.mod_path.get(module)
            attr = f"{path}.{name}" if path else name
            if info.name is None:
                ent = self.param_names.get(id(old))
                info.name = ent.name if ent and ent.ref() is old else attr
            idx = len(self._events)
            # (its path, if the model was not called yet, and whether the new parameter is another
            # module's, i.e. tied weights, are filled in at stop)
            self._late_attr(module, name, idx, {tid: ""}, param)
            self._events.append(RawEvent(idx, "module_set", attr, raw, (), (), torch.is_grad_enabled(), False,
                                     self.current_module(), context_of(flags, True), None,
                                     {"attr": attr, "old_class": "Parameter", "new_class": "Parameter",
                                      "old_params": [tid], "tied": False}))
            if flags & F_DIST:  # (tensor parallelism's sharded copy made with the original's flag: which original)
                self._made_from(param, tid)
            # nn.Parameter(t) around a tensor with history: a re-wrap that cuts the graph
        if self._ident.tid_of(param) is None and self._events:
            try:
                ptr = param.data_ptr()
            except (RuntimeError, ValueError):  # a parameter without storage (meta; lazy: ValueError)
                ptr = 0
            if ptr:
                n = len(self._events)
                for rec in map(Recent._make, reversed(self._engine.lineage.recent)):
                    htid = rec.tid
                    if rec.ptr == ptr and rec.has_history and rec.event >= n - 3 and rec.numel == param.numel():
                        idx = len(self._events)
                        ptid = self._ident.tid(param, producer=idx)
                        self._events.append(RawEvent(idx, "cut", "torch.nn.Parameter", raw, (_pk(htid, True, False),),
                                                 (_pk(ptid, param.requires_grad, True),), torch.is_grad_enabled(),
                                                 torch.is_inference_mode_enabled(), self.current_module(),
                                                 context_of(flags, True), "rewrap", {"attr": name}))
                        break
        prev = self.param_owner.get(id(param))
        if prev is not None and prev.ref() is param:
            return  # (tied: the module that created it stays its owner)
        try:
            self.param_owner[id(param)] = Owner(_Held(param), type(module).__name__, name, raw)
        except TypeError:
            pass


def _walk_sig(mods, tens) -> tuple:
    """What a walk found, by identity: each module's and tensor's path, id and class (no references kept)."""
    return (tuple((p, id(m), type(m)) for p, m in mods), tuple((p, id(t)) for p, t in tens))
