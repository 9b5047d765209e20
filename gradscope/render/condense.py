"""Last steps that make a big drawing readable once folding and collapsing are done: parallel
branches that run the same ops drawn once ("view -> transpose (x3)"), the healthy modules after
a cut's own module drawn as one summary node, and the user's data loading (ops outside the
model that no gradient reaches) drawn as one "inputs" node.

Every step works on the drawn graph (``mapping``: node key -> the key it is drawn as) and only
merges a set of drawn nodes when no path leaves the set and comes back to it, so a merged node
never sits on a cycle.
"""
from __future__ import annotations

import re
from collections import deque

from .fold import SCREEN_NODES, SCREEN_RANKS, _drawn_edges
from .full import _N
from .labels import _BAD_STYLES, _STATUS_STYLES, _STATUS_TEXT

_SITE = re.compile(r"^(.+):(\d+)$")
_TIMES = re.compile(r" \(x(\d+)\)$")


class _Drawn:
    """The drawn graph right now: its keys, their nodes, and the edges between them."""

    def __init__(self, nodes: dict, mod_nodes: dict, keys: list, succ: dict, rows: list = ()):
        self.nodes, self.mod_nodes, self.keys, self.succ = nodes, mod_nodes, keys, succ
        self.rows = [r for r in rows if len(r) >= 2]  # chains drawn left to right: one rank each
        self.pred: dict = {}
        for s, ds in succ.items():
            for d in ds:
                self.pred.setdefault(d, set()).add(s)

    @classmethod
    def of(cls, nodes: dict, order: list, mapping: dict, edges: list, instance: dict, mod_nodes: dict) -> _Drawn:
        in_order = set(order)
        keys = [k for k in order if mapping.get(k) == k] + \
            [k for k in mod_nodes if k not in in_order and mapping.get(k) == k]
        succ = {k: set(v) for k, v in _drawn_edges(keys, mapping, edges, instance, {}).items()}
        return cls(nodes, mod_nodes, keys, succ)

    def remap(self, mapping: dict) -> _Drawn:
        """The drawing after some of its nodes were merged (``mapping``: drawn key -> merged key)."""
        keys = list(dict.fromkeys(m for m in (mapping.get(k, k) for k in self.keys) if m is not None))
        succ: dict = {}
        for s, ds in self.succ.items():
            ms = mapping.get(s, s)
            for d in ds:
                md = mapping.get(d, d)
                if ms is not None and md is not None and ms != md:
                    succ.setdefault(ms, set()).add(md)
        rows = [list(dict.fromkeys(mapping.get(k, k) for k in r)) for r in self.rows]
        return _Drawn(self.nodes, self.mod_nodes, keys, succ, rows)

    def get(self, k) -> _N:
        return self.mod_nodes.get(k) or self.nodes[k]

    def fits(self) -> bool:
        """About a screen: at most SCREEN_NODES nodes in at most SCREEN_RANKS rows."""
        return len(self.keys) <= SCREEN_NODES and self.ranks() <= SCREEN_RANKS

    def ranks(self) -> int:
        order = sorted(self.keys, key=lambda k: self.get(k).order)
        pos = {k: i for i, k in enumerate(order)}
        row_of = {k: i for i, r in enumerate(self.rows) for k in r}
        rank: dict = {}
        for k in order:  # event order is (nearly) topological; later-to-earlier edges are not counted
            r = rank.setdefault(k, 0)
            for m in self.succ.get(k, ()):
                if pos.get(m, -1) > pos[k]:
                    same = k in row_of and row_of.get(m) == row_of[k]
                    rank[m] = max(rank.get(m, 0), r if same else r + 1)
        return max(rank.values()) + 1 if rank else 0


def _convex(members: set, succ: dict) -> set:
    """``members`` less every node a path reaches after leaving the set (such a node, merged
    with the rest, would put the merged node on a cycle)."""
    members = set(members)
    while True:
        outside = deque(d for s in members for d in succ.get(s, ()) if d not in members)
        seen = set(outside)
        back: set = set()
        while outside:
            n = outside.popleft()
            for d in succ.get(n, ()):
                if d in members:
                    back.add(d)
                elif d not in seen:
                    seen.add(d)
                    outside.append(d)
        if not back:
            return members
        members -= back


def _merge_into(key: tuple, node: _N, members: set, order: list, mapping: dict, mod_nodes: dict) -> None:
    for k in list(order) + list(mod_nodes):
        if mapping.get(k) in members:
            mapping[k] = key
    mod_nodes[key] = node
    mapping[key] = key


def _sites(ns: list) -> str:
    """``t.py:109-111`` for nodes whose first line is their site (one file), else the first one's."""
    found = [m for m in (_SITE.match(n.lines[0]) for n in ns if n.event is not None and n.lines) if m]
    if not found:
        return ""
    files = {m.group(1) for m in found}
    if len(files) > 1:
        return found[0].group(0)
    lines = sorted({int(m.group(2)) for m in found})
    return f"{found[0].group(1)}:{lines[0]}" + (f"-{lines[-1]}" if len(lines) > 1 else "")


def _ops_text(ns: list) -> str:
    """``5 ops: randint … to`` (the first and the last op by order)."""
    ops = sorted((n for n in ns if n.event is not None), key=lambda n: n.order)
    count = sum(max(n.n_ops, 1) for n in ops)
    if not ops:
        return ""
    if len(ops) == 1:
        return f"{count} op{'s' if count != 1 else ''}: {ops[0].title}"
    return f"{count} ops: {ops[0].title} … {ops[-1].title}"


# ----------------------------------------------------------------------------- straight runs
def merge_op_chains(g: _Drawn, nodes: dict, order: list, mapping: dict, edges: list, keep_open: set,
                    mod_nodes: dict) -> int:
    """Runs of plain ops inside one module (a straight line: each op feeds only the next, the next is fed
    only by it), away from the cuts and their neighbours, drawn as one node ("7 ops: linear … view").
    For drawings that are still too tall once every module that can be a box is one: a cut inside a
    module's own ops keeps that module open. Returns how many nodes were merged away."""
    succ, pred = g.succ, g.pred

    def plain(k):
        return k not in mod_nodes and k not in keep_open and g.get(k).kind == "op"

    def module(k):
        return g.get(k).module

    merged = 0
    done: set = set()
    for k in g.keys:
        if k in done or not plain(k):
            continue
        p = pred.get(k, set())
        if len(p) == 1 and plain(next(iter(p))) and len(succ.get(next(iter(p)), ())) == 1 and \
                module(next(iter(p))) == module(k):
            continue  # not the start of a run
        run = [k]
        while True:
            s = succ.get(run[-1], set())
            if len(s) != 1:
                break
            nx = next(iter(s))
            if nx in done or nx in run or not plain(nx) or len(pred.get(nx, ())) != 1 or module(nx) != module(k):
                break
            run.append(nx)
        if len(run) < 3:
            continue
        done.update(run)
        members = set(run)
        ops = sorted((nodes[m] for m in order if mapping.get(m) in members and nodes[m].event is not None),
                     key=lambda n: n.order)
        first = g.get(run[0])
        node = _N(key=run[0], kind="op", title=f"{len(ops)} ops", lines=[f"{ops[0].title} … {ops[-1].title}"],
                  style=first.style, order=first.order, module=first.module, event=first.event, n_ops=len(ops))
        _merge_into(run[0], node, members, order, mapping, mod_nodes)
        merged += len(run) - 1
    return merged


# ----------------------------------------------------------------------------- parallel branches
def merge_parallel_branches(g: _Drawn, nodes: dict, order: list, mapping: dict, edges: list, keep: set,
                            mod_nodes: dict) -> int:
    """Branches that leave one node and meet at one node, each a straight run of the same plain
    ops (the query/key/value reshapes of an attention: ``view -> transpose`` three times), drawn
    once as ``view → transpose (x3)`` with their lines. Returns how many nodes were merged away."""

    def plain(k) -> bool:
        return k not in keep and g.get(k).kind == "op"

    merged = 0
    used: set = set()
    for fork in sorted(g.keys, key=lambda k: g.get(k).order):
        outs = g.succ.get(fork, set())
        if len(outs) < 2:
            continue
        groups: dict = {}
        for s in sorted(outs, key=lambda k: g.get(k).order):
            if s in used or not plain(s) or g.pred.get(s) != {fork}:
                continue
            chain = [s]
            while len(g.succ.get(chain[-1], ())) == 1 and len(chain) < 8:
                (nx,) = g.succ[chain[-1]]
                if nx in used or not plain(nx) or g.pred.get(nx) != {chain[-1]} or nx in chain:
                    break
                chain.append(nx)
            if len(g.succ.get(chain[-1], ())) != 1:
                continue
            (join,) = g.succ[chain[-1]]
            sig = tuple((g.get(k).title, g.get(k).style, g.get(k).module, g.get(k).n_ops,
                         g.get(k).lines[0] if k in mod_nodes and g.get(k).lines else "") for k in chain)
            groups.setdefault((join, sig), []).append(chain)
        for (_join, _sig), chains in groups.items():
            if len(chains) < 2:
                continue
            members = {k for c in chains for k in c}
            used |= members
            first = [g.get(k) for k in chains[0]]
            titles = [n.title for n in first]
            what = " → ".join(titles) if len(titles) <= 3 else f"{_ops_text(first).partition(': ')[2]}"
            lines = [x for x in (_sites([g.get(k) for k in members]),) if x]
            lines.append(f"{len(chains)} alike branches, drawn once")
            node = _N(key=chains[0][0], kind="op", title=f"{what} (x{len(chains)})", lines=lines,
                      style=first[0].style, order=min(g.get(k).order for k in members), module=first[0].module,
                      event=first[0].event, n_ops=sum(max(g.get(k).n_ops, 1) for k in members))
            _merge_into(chains[0][0], node, members, order, mapping, mod_nodes)
            merged += len(members) - 1
    return merged


# ----------------------------------------------------------------------------- healthy far sides
def cut_spans(g: _Drawn, nodes: dict, cut_keys: list) -> list:
    """[(first, last)] by event order of the modules holding the harmful cuts (the innermost module
    of each cut and everything drawn inside it; a cut outside every module is its own span),
    overlapping spans joined, in order."""
    spans = []
    for k in cut_keys:
        n = nodes.get(k)
        if n is None:
            continue
        span = [n.order]
        cm = n.module
        if cm:
            for d in g.keys:
                path = d[1] if d[0] == "mod" else g.get(d).module
                if path and (path == cm or path.startswith(cm + ".")):
                    span.append(g.get(d).order)
        spans.append((min(span), max(span)))
    out: list = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def summarize_stretch(g: _Drawn, nodes: dict, order: list, mapping: dict, edges: list, keep: set,
                      mod_nodes: dict, roots: list, lo: float, hi: float, where: str) -> int:
    """The modules and ops that run strictly between event orders ``lo`` and ``hi`` (after the
    module holding the last harmful cut, between two cuts' modules, before the first's), all with
    a healthy gradient, drawn as one summary node ("10 modules, 129 ops, 81 params / grad ok (all
    81) / after the cut, drawn as one"; ``where`` says which). What ``keep`` holds (the cuts, the
    starved parameters, the roots), the ops that feed a backward root (the loss op) and data-only
    ops stay drawn. Returns how many nodes were merged away (0 when fewer than two qualify)."""
    grad_in = {mapping.get(e.dst) for e in edges if e.kind == "autograd"}
    root_set = set(roots)
    feeds_root = {s for s in g.keys if g.succ.get(s, set()) & root_set}

    def healthy(d) -> bool:
        n = g.get(d)
        if d in keep or d in feeds_root or not lo < n.order < hi:
            return False
        if n.kind == "param":
            return n.style == "param_received"
        return n.kind in ("op", "module") and n.style in ("op", "module") and d in grad_in

    members = _convex({d for d in g.keys if healthy(d)}, g.succ)
    members = {d for d in members if g.get(d).kind != "param" or g.succ.get(d, set()) <= members}
    if len(members) < 2:
        return 0
    ms = sorted((g.get(d) for d in members), key=lambda n: n.order)
    boxes = [n for n in ms if n.kind == "module"]
    n_mods = sum(int(m.group(1)) if (m := _TIMES.search(n.title)) else 1 for n in boxes)
    ops = sum(n.n_ops for n in ms if n.kind != "param")
    statuses: dict = {}
    n_params = 0
    for k in order:
        if nodes[k].kind == "param" and mapping.get(k) in members:
            n_params += 1
            st = nodes[k].style
            if st in _STATUS_STYLES:
                statuses[st] = statuses.get(st, 0) + 1
    ends = boxes or ms
    title = _end_name(ends[0]) if len(ends) == 1 else f"{_end_name(ends[0])} … {_end_name(ends[-1])}"
    what = [f"{n_mods} module{'s' if n_mods != 1 else ''}"] if n_mods else []
    what.append(f"{ops} op{'s' if ops != 1 else ''}")
    if n_params:
        what.append(f"{n_params} param{'s' if n_params != 1 else ''}")
    lines = [", ".join(what)]
    sts = sorted(statuses.items(), key=lambda kv: (kv[0] not in _BAD_STYLES, kv[0]))
    if len(sts) == 1:
        lines.append(_STATUS_TEXT[sts[0][0][len("param_"):]] + (f" (all {n_params})" if n_params > 1 else ""))
    elif sts:
        lines.append(", ".join(f"{c} {_STATUS_TEXT[st[len('param_'):]]}" for st, c in sts))
    lines.append(f"{where}, drawn as one")
    key = ("summary", ms[0].order)
    node = _N(key=key, kind="module", title=title, lines=lines, style="module", order=ms[0].order,
              module=_common_module([n.module for n in ms]), n_ops=ops)
    _merge_into(key, node, members, order, mapping, mod_nodes)
    return len(members) - 1


def _end_name(n: _N) -> str:
    """A summary's first or last member by name; a folded run keeps its range (``h.6-11``)."""
    return _TIMES.sub("", n.title)


def _common_module(paths: list) -> str | None:
    if not paths or any(not p for p in paths):
        return None
    parts = paths[0].split(".")
    for p in paths[1:]:
        q = p.split(".")
        i = 0
        while i < min(len(parts), len(q)) and parts[i] == q[i]:
            i += 1
        parts = parts[:i]
    return ".".join(parts) or None


# ----------------------------------------------------------------------------- data loading
def fold_inputs(g: _Drawn, nodes: dict, order: list, mapping: dict, edges: list, keep: set,
                mod_nodes: dict, data) -> int:
    """The user's data loading: ops outside every module that no gradient reaches (``randint``,
    ``stack``, ``to``) and the fresh tensors they read, drawn as one node named after the tensors
    it hands on (``xb, yb``; when it feeds nothing drawn, as nanoGPT's prefetch of the next batch,
    after what it made; else "inputs"). A connected group with a cut among it, or one that feeds
    only other code outside the model (arithmetic on state_dict() tensors), stays drawn.
    ``data``: the trace (for the tensors' names). Returns how many nodes were merged away."""
    seeds = [d for d in g.keys if g.get(d).kind in ("param", "root") or g.get(d).style == "param"]
    for e in edges:  # both ends of an edge a gradient runs along (or would, but for a cut)
        if e.kind in ("autograd", "cut", "benign_cut", "root"):
            seeds += [mapping.get(e.src), mapping.get(e.dst)]
    graded = set()
    todo = deque(s for s in set(seeds) if s is not None)
    graded.update(todo)
    while todo:
        for d in g.succ.get(todo.popleft(), ()):
            if d not in graded:
                graded.add(d)
                todo.append(d)

    def data_only(d) -> bool:
        n = g.get(d)
        if d in graded or n.kind not in ("op", "inplace", "input", "tensor", "cut"):
            return False
        return n.event is None or n.outside  # a tensor from outside, or an op outside every module call

    # weakly connected groups of data-only nodes outside the model
    comp: dict = {}
    groups: list = []
    for d in sorted(g.keys, key=lambda k: g.get(k).order):
        if d in comp or not data_only(d):
            continue
        grp, todo = [], deque([d])
        comp[d] = len(groups)
        while todo:
            k = todo.popleft()
            grp.append(k)
            for m in g.succ.get(k, set()) | g.pred.get(k, set()):
                if m not in comp and data_only(m):
                    comp[m] = len(groups)
                    todo.append(m)
        groups.append(grp)
    members: set = set()
    for grp in groups:
        ns = [g.get(k) for k in grp]
        if any(n.kind == "cut" for n in ns) or any(k in keep for k in grp) or len(grp) < 2 or \
                not any(n.event is not None for n in ns):
            continue
        outs = {d for k in grp for d in g.succ.get(k, ())} - set(grp)
        if outs and not any(g.get(d).module or g.get(d).kind == "module" for d in outs):
            continue  # feeds only other code outside the model (a target network's soft update)
        members |= set(grp)
    members = _convex(members, g.succ)
    if len(members) < 2 or not any(g.get(k).event is not None for k in members):
        return 0
    ns = sorted((g.get(k) for k in members), key=lambda n: n.order)
    evs = sorted({nodes[k].event for k in order if mapping.get(k) in members and nodes[k].event is not None})
    handed = [e.tid for e in edges if e.kind != "order" and e.tid is not None and mapping.get(e.src) in members
              and mapping.get(e.dst) not in members and mapping.get(e.dst) is not None]
    unused = not handed
    if unused:  # feeds nothing drawn: what its last ops made (x.to(device) on its device is x itself)
        ev_objs = [data.events[i] for i in evs]
        handed = [r.tid for ev in ev_objs for r in ev.outputs
                  if not any(o.index > ev.index and any(i.tid == r.tid for i in o.inputs) for o in ev_objs)]
    title = ", ".join(_user_names(data, handed, set(evs) if not unused else set())) or "inputs"
    lines = [x for x in (_ops_text(ns), _sites(ns)) if x]  # (no "unused": the recorder cannot see every
    key = ("inputs", ns[0].order)  # use of a value: a tensor slice bound, a NumPy index)
    node = _N(key=key, kind="input", title=title, lines=lines, style="input", order=ns[0].order,
              n_ops=sum(max(n.n_ops, 1) for n in ns if n.event is not None))
    _merge_into(key, node, members, order, mapping, mod_nodes)
    return len(members) - 1


def _user_names(data, tids: list, events: set, most: int = 3) -> list:
    """The user's names for ``tids``: a tensor's own name, else the nearest named tensor it was
    computed from by ``events`` (``yb.view(-1)`` hands on ``yb``). At most ``most``, then "…"."""
    names: list = []
    for tid in tids:
        todo, seen = [tid], set()
        while todo:
            t = data.tensors.get(todo.pop())
            if t is None or t.tid in seen:
                continue
            seen.add(t.tid)
            if t.name:
                if t.name not in names:
                    names.append(t.name)
            elif t.producer in events:
                todo.extend(r.tid for r in data.events[t.producer].inputs)
    return names[:most] + (["…"] if len(names) > most else [])


# ----------------------------------------------------------------------------- rows
#: At most this many nodes side by side (about what fits a screen's width beside the rest).
_ROW_MAX = 6


def rows_after_cuts(g: _Drawn, nodes: dict, cut_keys: list) -> list:
    """The last resort for a drawing still too tall: in each harmful cut's own module, the straight
    chain that starts at the cut (each node feeds only the next, the next is fed only by it, all in
    that module) as one row, drawn left to right: its first ``_ROW_MAX`` nodes. [[drawn key, ...]]
    with two or more keys each."""
    out = []
    for k in cut_keys:
        n = nodes.get(k)
        if n is None or k not in g.succ or any(k in r for r in out):
            continue
        cm = n.module

        def inside(d, cm=cm):
            path = d[1] if d[0] == "mod" else g.get(d).module
            return cm is None and path is None or bool(cm and path and (path == cm or path.startswith(cm + ".")))

        row = [k]
        while len(g.succ.get(row[-1], ())) == 1 and len(row) < _ROW_MAX:
            (nx,) = g.succ[row[-1]]
            if nx in row or len(g.pred.get(nx, ())) != 1 or not inside(nx) or g.get(nx).kind == "root":
                break
            row.append(nx)
        if len(row) >= 2:
            out.append(row)
    return out
