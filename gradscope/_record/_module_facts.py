"""Facts that need the live modules, taken while recording and at stop: parameter and module names
(``_modules``), parameter owners, tied weights, which parameters left their model, and static facts
about the called modules (children an early return skipped, reads a skip guards, module hooks)."""
from __future__ import annotations

from itertools import chain as _chain

import torch.nn as nn

from ..core import _source
from ..core.model import Frame
from . import _frames
from ._compat import legacy_backward_hooks, module_hooks, module_parameters
from ._containers import resolved, scan
from ._records import FIRST
from ._refs import _GradRef


#: the answers of the class-reading functions of _module_facts (what returns early before a child, where a child
#: is defined, the first read of an attribute), kept across traces: a training loop traced step after step asks the
#: same questions of the same classes. Keyed by the classes' code (see _class_signature), never by a class or a
#: module: nothing of the user's is kept alive; bounded.
_ANSWERS: dict = {}
_ANSWERS_MAX = 4096
_SIGNATURES: dict = {}  # a class signature -> its number (cleared with _ANSWERS)


def _own_code(cls) -> tuple:
    """``(forward's code, [(module, qualname), (method name, code), ...])``: what the class-reading functions read
    of ``cls``, in its MRO order, down to torch's own classes."""
    fwd = getattr(getattr(cls, "forward", None), "__code__", None)
    out = []
    for klass in _own_classes(cls):
        out.append((getattr(klass, "__module__", "") or "", klass.__qualname__))
        for key, v in vars(klass).items():
            co = getattr(getattr(v, "__func__", v), "__code__", None)
            if co is not None:
                out.append((key, co))
    return fwd, out


def _class_signature(fwd, own) -> tuple:
    """The signature of a class from its :func:`_own_code`: forward's code and the code of every method of its own
    (non-torch) classes, with their modules and names (code objects compare by content, not by file). A class
    redefined or a method replaced gets another signature."""
    out = [fwd, fwd.co_filename if fwd is not None else None]
    for a, b in own:  # (a class: (module, qualname); a method: (name, code) and the code's file)
        out.append((a, b) if type(b) is str else (a, b, b.co_filename))
    return tuple(out)


_RAN_KEYS: dict = {}  # the sets of code that ran, as used in _ANSWERS' keys: each distinct set once
_BY_IDENTITY: dict = {}  # a class's methods by identity (see _class_number) -> (its number, the code objects)
_BY_CLASS: dict = {}  # class -> (its fingerprint, its number, its functions): bounded, cleared with _ANSWERS


def _class_number(cls) -> int:
    """The number of ``cls``'s signature (see _class_signature). A signature hashes every method's code by
    content (slow for a model's seven classes at every stop): the same code objects under the same names
    (compared by identity, kept alive with the answer so that no id is reused) give the number at once.
    Before that, the class as it was last asked: the same objects in the same attributes of the same classes of
    its MRO (their ids, read in C; the functions kept alive with it, so that no id is reused) give it at once
    (the walk over every method of a transformers model's mixins was a BERT stop's largest cost)."""
    fp = _fingerprint(cls)
    last = _BY_CLASS.get(cls)
    if last is not None and last[0] == fp:
        return last[1]
    fwd, own = _own_code(cls)
    key = (id(fwd), tuple(a if type(b) is str else (a, id(b)) for a, b in own))
    hit = _BY_IDENTITY.get(key)
    if hit is None:
        hit = _BY_IDENTITY[key] = (_SIGNATURES.setdefault(_class_signature(fwd, own), len(_SIGNATURES)), (fwd, own))
    held = [v for klass in _own_classes(cls) for v in vars(klass).values() if hasattr(v, "__code__")
            or hasattr(getattr(v, "__func__", None), "__code__")]
    _BY_CLASS[cls] = (fp, hit[0], held)
    return hit[0]


def _own_classes(cls) -> list:
    """The classes of ``cls``'s MRO that :func:`_own_code` reads (down to torch's own)."""
    out = []
    for klass in getattr(cls, "__mro__", ()):
        mod = getattr(klass, "__module__", "") or ""
        if mod.startswith("torch.") or klass is object:
            break
        out.append(klass)
    return out


def _fingerprint(cls) -> tuple:
    """The identity of what :func:`_own_code` reads of ``cls``: its forward and, per class of its MRO, the ids of
    its attributes' values (in C)."""
    return (id(getattr(cls, "forward", None)), *((id(k), tuple(map(id, vars(k).values()))) for k in _own_classes(cls)))


class ModuleFacts:
    """``sync_live()``: what the trace's data needs from the live model, into ``data.meta``."""

    def __init__(self, sink, engine):
        self._data, self._events, self._tensors = sink.data, sink.events, sink.tensors
        self._sink = sink
        self._internal = sink.internal
        self._engine = engine  # the recorder: its identity maps, its modules' live maps, its optimizer's params

    def sync_live(self):
        eng = self._engine
        """What needs the live objects: parameter and module names, parameter owners, module facts."""
        if eng.modules.roots:
            eng.modules.rename_at_stop()
        else:
            eng.modules.apply_names()
        if eng.modules.late_attrs:
            eng.modules.fill_late_attrs()
        eng.modules.name_uncalled()
        tens = self._tensors
        eng.name_by_place()  # (held by an optimizer, by no model: its place there)
        refs = eng.identity.refs
        for tid in eng.identity.grad_tids:  # a leaf's .grad read in the step (`p.data.add_(-lr * p.grad)`): `p.grad`
            r = refs.get(tid)
            if type(r) is _GradRef:
                info, leaf = tens.get(tid), tens.get(r.leaf)
                if info is not None and info.name is None and leaf is not None and leaf.name:
                    info.name = f"{leaf.name}.grad"
        tied = {}  # a Parameter registered under several names (tied weights): its other names
        for pid, others in eng.modules.tied_names.items():
            ent = eng.modules.param_src.get(pid)
            p = ent.ref() if ent is not None else None
            tid = eng.tid_of(p) if isinstance(p, nn.Parameter) else None
            if tid is not None:
                tied[str(tid)] = others
        self._data.meta["tied_params"] = tied
        self._data.meta["left_model"] = self._left_models()
        self._data.meta["trainable"] = sorted(eng.optim.trained())
        self._data.meta["internal_errors"] = list(self._sink.errors)
        owners = {}
        for pid, (r, cls, attr, raw) in eng.modules.param_owner.items():  # Owner
            p = r()
            if p is None:
                continue
            tid = eng.tid_of(p)
            if tid is not None:
                site = _frames.make_site(raw)
                owners[str(tid)] = {"class": cls, "attr": attr, "site": site.to_json() if site else None}
        self._data.meta["param_owner"] = owners
        self._module_facts()
        self._data.meta["plain_containers"] = self._plain_containers()

    def _plain_containers(self):
        """Modules kept in plain lists, tuples and dicts of the models the trace saw (looked at when each was
        first called, and in the entry frame's variables at stop): see :mod:`._containers`."""
        eng = self._engine
        mods = eng.modules
        var, eng.var_modules = eng.var_modules, {}  # (no reference to the user's modules stays)
        for m, name in var.values():
            scan(m, name, mods.containers, mods.container_seen, self._internal)
        return resolved(mods.containers, eng.tid_of)

    def _left_models(self):
        """Tids of parameters the trace saw that no called model holds now (a submodule replaced in
        __init__ took its old parameters out, or they are gone); None when no model was called."""
        eng = self._engine
        ids = set()
        for r in eng.modules.roots:
            root = r.ref()
            if root is None:
                continue
            try:
                ids.update(map(id, root.parameters()))
            except Exception as e:  # a user's module whose parameters() raises: which left the model is unknown
                self._internal(e)
                return None
        if not ids:
            return None
        out = []
        refs = eng.identity.refs
        tens = self._tensors
        for tid in sorted(eng.identity.param_tids):  # (in the order of the tensors: by tid)
            info = tens.get(tid)
            if info is not None and info.role == "param":
                r = refs.get(tid)
                p = r() if r is not None else None
                if p is None or id(p) not in ids:  # (gone: nothing, so no model, holds it)
                    out.append(tid)
        return out

    def _module_facts(self):
        """Static facts about called modules: children skipped by an early return, backward hooks."""
        eng = self._engine
        called = set(eng.modules.called_ops)  # (the op of every "module" event)
        # (the events keep the path a module was called by, its class when no model held it yet, `Adapter`; the
        # modules' final paths, `layer.down`, are named by what was called)
        ids = eng.modules.called_ids
        called |= {path for m, path in eng.modules.mod_path.items() if id(m) in ids}
        # (a module whose children ran although it was not called itself: its own method, `dec.step(...)`, ran them)
        prefixes = set()  # every "a." and "a.b." of "a.b.c" (found by find: char by char was a BERT stop's slowest line)
        for c in called:
            i = c.find(".")
            while i >= 0:
                prefixes.add(c[:i + 1])
                i = c.find(".", i + 1)
        skipped = {}
        defined = {}  # child path -> Frame of the line that defines it, for children that were never called
        hooks = {}
        fwd_hooks = {}
        legacy = {}  # path -> the return lines of its register_backward_hook hooks (the non-full kind)
        hook_params = {}  # tid -> the module whose forward hook uses it (an adapter attached by a hook)
        guarded = {}  # path -> the line reading it and the skip before that line (if ...: continue; if ...:)
        ran = set(map(FIRST, _chain.from_iterable(eng.modules.raws)))  # code objects of the user's lines that ran (in C)
        by_path = {}
        for m, path in eng.modules.mod_path.items():
            by_path.setdefault(path, m)
        sigs: dict = {}  # class -> its signature (see _class_signature), once per stop
        ran_key = frozenset(ran)
        # (one object per distinct set: a key of _ANSWERS that holds an equal but other set is compared item by item)
        ran_key = _RAN_KEYS.setdefault(ran_key, ran_key)
        if len(_ANSWERS) > _ANSWERS_MAX or len(_SIGNATURES) > _ANSWERS_MAX or len(_BY_IDENTITY) > _ANSWERS_MAX \
                or len(_RAN_KEYS) > _ANSWERS_MAX or len(_BY_CLASS) > _ANSWERS_MAX:
            _ANSWERS.clear()
            _SIGNATURES.clear()
            _BY_IDENTITY.clear()
            _RAN_KEYS.clear()
            _BY_CLASS.clear()  # (its numbers are _SIGNATURES')

        def once(fn, m, name, *args):
            # these read only the module's class (its methods' bytecode, its source), the same for every
            # layer of a model and for every step of a training loop: each (function, class as its code,
            # name, code that ran) is asked once per process
            cls = type(m)
            sig = sigs.get(cls)
            if sig is None:  # (a small number for it: the key is hashed at every question)
                sig = sigs[cls] = _class_number(cls)
            key = (fn, sig, name, ran_key if args else None)
            hit = _ANSWERS.get(key, _ANSWERS)
            if hit is _ANSWERS:
                hit = _ANSWERS[key] = fn(m, name, *args)
            return hit

        for m, path in eng.modules.mod_path.items():
            try:
                hk = module_hooks(m, "backward") + module_hooks(m, "backward_pre")
                if hk:
                    frs = [_frames.return_lines(h) for h in hk]
                    hooks[path] = [f.to_json() for f in frs if f is not None]
                    old = [_frames.return_lines(h) for h in legacy_backward_hooks(m)]
                    if old:  # register_backward_hook: its grad_output is not the module's (torch warns)
                        tids = [eng.tid_of(p) for p in m.parameters()]
                        legacy[path] = {"hook": [f.to_json() for f in old if f is not None],
                                        "params": [t for t in tids if t is not None]}
                fh = module_hooks(m, "forward")
                if fh:  # a forward hook that returns a value replaces the module's output (after our hook saw it)
                    # (not torch's own: tensor parallelism's output_fn turning a DTensor back into a local tensor)
                    frs = [_frames.value_return(h) for h in fh if not _frames.torch_hook(h)]
                    frs = [f.to_json() for f in frs if f is not None]
                    if frs:
                        fwd_hooks[path] = frs
                    for h in fh + module_hooks(m, "forward_pre"):
                        self._hook_modules(h, path, hook_params)
                if path not in called and (path or "") != "":
                    if isinstance(m, (nn.ModuleList, nn.ModuleDict)) and path:
                        self._partly_iterated(m, path, called, skipped)
                        continue
                    if path + "." not in prefixes:
                        continue
                for cname, child in m.named_children():
                    cpath = f"{path}.{cname}" if path else cname
                    if cpath in called or child is None:
                        continue
                    fr = once(_frames.return_before_attr, m, cname, ran)
                    up = path
                    while fr is None and up:  # an early return in an ancestor's method that reaches it as
                        up = up.rpartition(".")[0]  # self.student.unsup_proj
                        anc = by_path.get(up)
                        if anc is not None:
                            fr = once(_frames.return_before_attr, anc, cname, ran)
                    if fr is not None:
                        skipped[cpath] = {"parent": path, "return_line": fr.to_json()}
                    else:
                        self._guarded_read(m, cname, cpath, ran, guarded, once)
                    df = once(_frames.attr_definition, m, cname)
                    if df is not None:  # where the never-called child is defined (self.extra = ...)
                        defined[cpath] = df.to_json()
                for pn, p in module_parameters(m).items():  # a parameter of its own no call used
                    tid = eng.tid_of(p) if p is not None else None
                    if p is not None and (tid is None or not eng.saved.consumers.get(tid)):
                        self._guarded_read(m, pn, f"{path}.{pn}" if path else pn, ran, guarded, once)
            except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                self._internal(e)
        self._data.meta["skipped_children"] = skipped
        self._data.meta["guarded_reads"] = guarded
        self._data.meta["uncalled_defined"] = defined
        self._data.meta["module_hooks"] = hooks
        for path, frs in eng.modules.legacy_hooks.items():  # (those called in the step, also when gone since)
            legacy.setdefault(path, frs)
        if legacy:
            self._data.meta["legacy_backward_hooks"] = legacy
        self._data.meta["module_forward_hooks"] = fwd_hooks
        self._data.meta["hook_params"] = hook_params

    def _guarded_read(self, module, attr, path, ran, out, once=None):
        """``module``'s first line reading ``self.<attr>``, when a skip can keep it from running (an
        ``if ...: continue`` before it, or the ``if`` around it): both lines, under ``path``."""
        read = (once(_frames.first_read_of_attr, module, attr, ran) if once is not None
                else _frames.first_read_of_attr(module, attr, ran))
        if read is None:
            return
        hit = _source.skip_before(read.filename, read.lineno)
        if hit is not None:
            guard = Frame(read.filename, hit[0], read.function, hit[1])
            out[path] = {"read": read.to_json(), "guard": guard.to_json()}

    def _hook_modules(self, fn, path, out):
        """Parameters of the modules a forward hook closes over (`lambda m, i, o: o + self.up(...)`)."""
        eng = self._engine
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
            base = eng.modules.mod_path.get(mod)
            prefix = base if base else type(mod).__name__.lower()
            for pn, p in mod.named_parameters():
                tid = eng.identity.tid(p, link=False)
                info = self._tensors[tid]
                if info.name is None:
                    info.name = f"{prefix}.{pn}"
                out[str(tid)] = {"owner": path, "hook": _frames.callable_label(fn)}

    def _partly_iterated(self, box, path, called, skipped):
        """A ModuleList/ModuleDict (iterated, never called) of which only some children ran: the loop in its
        owner's forward that goes over part of it (`for blk in self.blocks[:-1]`, a zip with a shorter list)."""
        eng = self._engine
        kids = [(f"{path}.{c}", ch) for c, ch in box.named_children()]
        ran = [k for k, _ in kids if k in called]
        if not ran or len(ran) == len(kids):
            return
        owner_path, _, attr = path.rpartition(".")
        owner = next((m for m, p in eng.modules.mod_path.items() if p == owner_path), None)
        fr = _frames.loop_over_attr(owner, attr) if owner is not None else None
        if fr is None:
            return
        for k, _ in kids:
            if k not in called:
                skipped[k] = {"parent": owner_path, "return_line": fr.to_json(), "loop": path,
                              "ran": len(ran), "of": len(kids)}
