"""The prefix of each root's names (no torch: roots are any objects with ``var``, ``flat``, ``cls`` and
``leaf``), kept as roots come and go.

A root's prefix is its variable when several roots name tensors (or its own names are bare indices:
``model.0.weight``), its class for a lone layer without a variable (``linear.weight``), else nothing.
Roots whose names would coincide (no variable, or the same one) are told apart in order of arrival:
``m``, ``m_2``, ``m_3``...

:meth:`Prefixes.full` decides every prefix from the whole list of roots; :meth:`Prefixes.add` and
:meth:`Prefixes.remove` update them for one root at the end of that list in O(1) when the result is
the one ``full`` would give (a loop that builds a model per iteration adds thousands of roots: a full
pass per root is quadratic), and return None/False when it would differ for another root, so that the
caller runs ``full``. ``tests/test_prefixes.py`` checks the equality on random sequences.
"""
from __future__ import annotations

__all__ = ["Prefixes"]


class _Group:
    """Roots with the same unnumbered prefix, in order of arrival; ``clash``: two of them name the same
    relative path, so all but the first are numbered."""

    __slots__ = ("members", "union", "clash", "order")

    def __init__(self, order):
        self.members: list = []
        self.union: set = set()
        self.clash = False
        self.order = order


class Prefixes:
    __slots__ = ("pre", "_groups", "_key", "_rels", "_with_rels", "_used", "_nxt", "_base_last", "_cand_order",
                 "_skipped", "_order")

    def __init__(self):
        self.pre: dict = {}  # root -> its prefix ("" or ending in ".")
        self.full([], {})

    @staticmethod
    def _key_of(r, multi):
        if r.var and (multi or r.flat):
            return f"{r.var}."
        # a lone layer without a variable (`nn.Linear(4, 4)(x)` made in a forward) is called by its
        # class: a bare "weight" would say nothing
        return f"{r.cls.lower()}." if r.leaf and not r.var else ""

    def full(self, roots, rels) -> dict:
        """Every root's prefix; ``rels``: root -> the relative paths of its tensors (roots without any
        do not make the names "several")."""
        pre = self.pre
        pre.clear()
        self._groups: dict = {}
        self._key: dict = {}
        self._rels: dict = {}
        self._used: set = set()
        self._nxt: dict = {}  # base -> the last number tried (counting from 1 per root would be quadratic)
        self._base_last: dict = {}  # base -> order of the last group numbered from it
        self._cand_order: dict = {}  # numbered prefix -> order of the group that took it
        self._skipped: set = set()  # prefixes a numbering passed over because they were taken
        self._order = 0
        self._with_rels = sum(1 for r in roots if rels.get(r))
        multi = self._with_rels > 1
        for r in roots:
            k = self._key_of(r, multi)
            self._key[r] = k
            self._rels[r] = s = rels.get(r) or set()
            g = self._groups.get(k)
            if g is None:
                g = self._groups[k] = _Group(self._order)
                self._order += 1
            if not g.clash and not g.union.isdisjoint(s):
                g.clash = True
            g.members.append(r)
            g.union |= s
            pre[r] = k
        self._used = set(pre.values())
        for g in self._groups.values():
            if g.clash:
                for r in g.members[1:]:
                    self._number(r, g)
        return pre

    def _number(self, r, g, check=False) -> bool:
        """Give ``r`` (last of its clashing group ``g`` so far) the next free number of its base name.
        With ``check``: False, changing nothing, where a later group took a number ``full`` would give r."""
        base = r.var or r.cls.lower()
        if check and self._base_last.get(base, -1) > g.order:
            return False
        cand, n = (None if r.var else f"{base}."), self._nxt.get(base, 1)
        skipped = []
        while cand is None or cand in self._used:
            if cand is not None:
                if check and self._cand_order.get(cand, -1) > g.order:
                    return False
                skipped.append(cand)
            n += 1
            cand = f"{base}_{n}."
        self._skipped.update(skipped)
        self._nxt[base] = n
        self._base_last[base] = max(g.order, self._base_last.get(base, -1))
        self._used.add(cand)
        self._cand_order[cand] = g.order
        self.pre[r] = cand
        return True

    def add(self, r, rels) -> str | None:
        """The prefix of a new root ``r`` (at the end of the roots) whose tensors have relative paths
        ``rels``; None, changing nothing, when ``full`` would also change another root's prefix."""
        before = self._with_rels
        after = before + (1 if rels else 0)
        if (before > 1) != (after > 1):
            return None  # (one root -> several: every prefix changes)
        k = self._key_of(r, after > 1)
        g = self._groups.get(k)
        if g is None:
            if k in self._cand_order:  # a numbered prefix taken before: full would number it otherwise
                return None
            g = self._groups[k] = _Group(self._order)
            self._order += 1
            self._used.add(k)
            self.pre[r] = k
        elif not g.clash:
            if not g.union.isdisjoint(rels):
                return None  # (the group's first clash: its members but the first get numbers)
            self.pre[r] = k
        elif not self._number(r, g, check=True):
            return None
        g.members.append(r)
        g.union |= rels
        self._key[r] = k
        self._rels[r] = set(rels)
        self._with_rels = after
        return self.pre[r]

    def remove(self, r) -> bool:
        """Forget root ``r``, one without tensors; False, changing nothing, when ``full`` without it would
        give another root another prefix."""
        k = self._key.get(r)
        if k is None:
            return True
        g = self._groups[k]
        if self._rels[r] or g.clash:
            return False
        if len(g.members) == 1:
            if k in self._skipped:  # a numbering passed over it: without it, full would give that number
                return False
            del self._groups[k]
            self._used.discard(k)
        else:
            g.members.remove(r)
        del self._key[r], self._rels[r], self.pre[r]
        return True
