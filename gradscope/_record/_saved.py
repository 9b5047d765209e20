"""Saved-tensor probes: is a tensor about to be written in place saved for backward by a live node?

``Saved`` owns the links those probes follow, which the call recorder fills as it records: which
event made each graph node (``node_ev``, by sequence number) and which results used each tensor
(``consumers``)."""
from __future__ import annotations



from ._compat import SAVED_PREFIX, base as _base, node_sequence_nr
from ._ops import _T, _is_leaf
from ._records import Open


_PROBES = 2000  # in-place writes per graph checked against saved tensors (see Saved.info)


_FREED = "gradscope_freed"  # node.metadata key: a backward ran through this node and freed its graph


class Saved:
    """The in-place checks: ``info(t)`` says which recorded op saved ``t`` for backward, if any."""

    _SAVED_ATTRS: dict = {}  # node type -> its saved-value attributes (shared by every recorder)

    def __init__(self, sink, refs: dict, tid_of):
        self._note = sink.note
        self._refs = refs  # the identity's tid -> reference map (read only)
        self._tid_of = tid_of
        self.node_ev: dict = {}  # graph node sequence number -> index of the event that made it
        self.consumers: dict = {}  # tid -> list of output tids (grad-recording ops that used it)
        self._probes = _PROBES  # in-place checks left in the current graph
        self.open: list = []  # Open tuples: grad-requiring results not yet freed by a backward
        self.open_overflow = False

    def new_graph(self):
        """A backward freed the graph: the next graph gets its own budget of probes."""
        self._probes = _PROBES

    def forget(self):
        """After the recording's conversion: the links go (in place: the call recorder holds them)."""
        self.node_ev.clear()
        self.consumers.clear()
        self.open.clear()

    def graph_open(self) -> bool:
        """Can a graph built by recorded ops still hold saved tensors? False once every recorded op
        that produced a grad-requiring result since then was part of a backward that freed its graph
        (or its results are gone)."""
        if self.open_overflow:
            return True
        op = self.open
        if op:
            refs = self._refs
            op[:] = [o for o in op if (r := refs.get(Open._make(o).tid)) is not None and r() is not None]
        return bool(op)

    def info(self, t):
        """Is ``t`` (or a tensor sharing its storage) saved for backward by a live graph node?
        Returns the event index of the op that saved it (or -1 when unknown), else None."""
        try:
            ptr = t.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError, ValueError):  # no storage to be saved (meta, a subclass, a
            # LazyModule's UninitializedParameter)
            return None
        if not ptr:
            return None
        if not _is_leaf(t) or _base(t) is not None:
            # probing reads graph nodes, which gives them Python objects, and a graph of such nodes is
            # freed recursively: bounded per graph, so a deep chain of in-place writes still frees
            self._probes -= 1
            if self._probes < 0:
                if self._probes == -1:
                    self._note(f"in-place writes were not checked against saved tensors after {_PROBES} of them in "
                               "one graph (checking reads graph nodes, and a deep graph of read nodes is freed "
                               "recursively)")
                return None
        cands = []
        try:
            gf = t.grad_fn
        except RuntimeError:  # a view made under no_grad whose base was then written in place: torch refuses
            return None  # the write itself, and the view has no history of its own to save anything
        if gf is not None:
            cands.append((gf, None))
        base = _base(t)
        if base is not None and base.grad_fn is not None:
            cands.append((base.grad_fn, None))  # e.g. y = x.exp(); y[:2].mul_(2)
        tid = self._tid_of(t)
        fam = [tid] if tid is not None else []
        if base is not None:
            b = self._tid_of(base)
            if b is not None:
                fam.append(b)
        i = 0
        while i < len(fam):  # the family grows by views (same storage) seen as outputs
            for otid in self.consumers.get(fam[i], ())[-16:]:
                r = self._refs.get(otid)
                o = r() if r is not None else None
                if o is None:
                    continue
                if o.grad_fn is not None:
                    cands.append((o.grad_fn, otid))
                if len(fam) < 16 and otid not in fam and _base(o) is not None:
                    try:
                        if o.untyped_storage().data_ptr() == ptr:
                            fam.append(otid)  # a view of the target: its consumers may save it
                    except (RuntimeError, NotImplementedError, ValueError):  # (no storage)
                        pass
            i += 1
        seen = set()
        for node, otid in cands:
            if node in seen:
                continue
            seen.add(node)
            if self._node_saves(node, ptr):
                try:
                    return self.node_ev.get(node_sequence_nr(node), -1)
                except AttributeError:  # (a node type without a sequence number)
                    return -1
        return None

    def _node_saves(self, node, ptr):
        try:
            if node.metadata.get(_FREED):
                return False
        except (AttributeError, RuntimeError):  # (a node without metadata)
            pass
        tp = type(node)
        names = self._SAVED_ATTRS.get(tp)
        if names is None:
            names = self._SAVED_ATTRS[tp] = tuple(a for a in dir(node) if a.startswith(SAVED_PREFIX))
        for a in names:
            try:
                v = getattr(node, a)
            except RuntimeError as e:
                if "inplace" in str(e):
                    return True
                return False  # freed graph
            except (AttributeError, TypeError, NotImplementedError):  # a saved value that cannot be read
                continue
            vs = v if isinstance(v, (tuple, list)) else (v,)
            for x in vs:
                if isinstance(x, _T):
                    try:
                        if x.untyped_storage().data_ptr() == ptr:
                            return True
                    except (RuntimeError, NotImplementedError, ValueError):  # (no storage)
                        pass
        return False
