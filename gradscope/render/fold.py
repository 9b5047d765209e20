"""Making a big step readable: folding repeated blocks (split where their gradient status
changes), collapsing modules into boxes to a depth, and measuring whether a drawing fits a
screen."""
from __future__ import annotations

import bisect

from .full import _Full, _N
from .labels import _BAD_STYLES, _STATUS_STYLES, _STATUS_TEXT, _fmt_norm, _module_parent


def _fold_repeats(nodes: dict, order: list, mapping: dict, pinned: set, instance: dict) -> tuple:
    """Fold runs of sibling blocks (``blocks.0``, ``blocks.1``, ...) whose drawings are identical.

    Two blocks are identical when they run the same ops in the same modules with the same
    look, and their parameters have the same gradient status: a run stops where the status
    changes (a cut after block 12 of 20 folds ``blocks.0-12 (x13)``, all "grad None", and
    ``blocks.13-19 (x7)``, all "grad ok"), so a folded drawing never claims a status a copy
    does not have. Nodes of a run's later blocks map onto its first block's nodes;
    ``instance`` gets key -> (run, block index) so the edges from one copy to the next can
    be dropped. Returns ({first block's path: label}, labels).
    """
    events = [k for k in order if k[0] == "e"]
    by_block: dict = {}  # block path -> [event keys]
    for k in events:
        for b in _numbered_prefixes(nodes[k].module):
            by_block.setdefault(b, []).append(k)
    params_by_block: dict = {}  # block path -> {(module below the block, leaf): param key}
    status_by_block: dict = {}  # block path -> {(module below, leaf): style}, drawn or not (focus=)
    drawn = set(order)
    for k, n in nodes.items():
        if n.kind == "param" and n.module:
            for b in _numbered_prefixes(n.module):
                status_by_block.setdefault(b, {})[(n.module[len(b):], n.pleaf)] = n.style
                if k in drawn:
                    params_by_block.setdefault(b, {})[(n.module[len(b):], n.pleaf)] = k
    # a run of blocks never spans a harmful cut (or other pinned node) drawn between two of them
    pinned_at = sorted(nodes[k].order for k in pinned if k in drawn and k in nodes)
    groups: dict = {}  # parent -> {index: block}
    for b in by_block:
        parent, _, idx = b.rpartition(".")
        groups.setdefault(parent, {})[int(idx)] = b
    names: dict = {}
    labels: list = []
    hidden_blocks: set = set()
    for parent in sorted(groups, key=lambda p: (p.count(".") if p else -1, p)):
        blocks = groups[parent]
        if any(parent == h or parent.startswith(h + ".") for h in hidden_blocks):
            continue
        idxs = sorted(blocks)
        sigs = {i: _block_sig(nodes, by_block[blocks[i]], blocks[i], pinned, status_by_block.get(blocks[i], {}))
                for i in idxs}
        run: list = []
        for i in idxs + [None]:
            if i is not None and run and i == run[-1] + 1 and sigs[i] == sigs[run[0]] and sigs[i] is not None \
                    and _follows(nodes[by_block[blocks[run[-1]]][-1]].order, nodes[by_block[blocks[i]][0]].order,
                                 pinned_at):
                run.append(i)
                continue
            if len(run) >= 2:
                first = blocks[run[0]]
                base = by_block[first]
                label = f"{parent + '.' if parent else ''}{run[0]}-{run[-1]} (x{len(run)})"
                names[first] = label
                labels.append(label)
                pfirst = params_by_block.get(first, {})
                for j in run:
                    for c in by_block[blocks[j]]:
                        instance[c] = (first, j)
                norms: dict = {rel: [nodes[pk].norm] for rel, pk in pfirst.items()}
                for j in run[1:]:
                    b = blocks[j]
                    hidden_blocks.add(b)
                    for a, c in zip(base, by_block[b]):
                        mapping[c] = a
                        nodes[a].n_ops += nodes[c].n_ops
                    for rel, pk in params_by_block.get(b, {}).items():
                        if rel in pfirst:
                            mapping[pk] = pfirst[rel]
                            norms[rel].append(nodes[pk].norm)
                rng = f"{run[0]}-{run[-1]}"
                for rel, pk in pfirst.items():
                    n = nodes[pk]
                    n.title = f"{n.pprefix}{parent + '.' if parent else ''}{rng}{rel[0]}.{rel[1]}"
                    _fold_status_line(n, norms[rel], len(run))
            run = [i] if i is not None and sigs[i] is not None else []
    return names, labels


def _follows(prev_end: int, start: int, pinned_at: list) -> bool:
    """A block starting at ``start`` continues a run whose last block ended at ``prev_end``:
    it comes after it, with no pinned node (a harmful cut) in between."""
    if start <= prev_end:
        return False
    i = bisect.bisect_right(pinned_at, prev_end)
    return i >= len(pinned_at) or pinned_at[i] >= start


def _numbered_prefixes(module: str | None) -> list:
    """``h.3.attn.c_attn`` -> ``["h.3"]``: the module's ancestors that are numbered blocks."""
    if not module:
        return []
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1) if parts[i - 1].isdigit()]


def _fold_status_line(n: _N, norms: list, times: int) -> None:
    """A folded parameter's gradient line speaks for every copy: ``grad ok |g| 0.1-0.3 (x7)``."""
    if len(n.lines) < 2 or n.style not in _STATUS_STYLES:  # lines: shape, status[, "not used"]
        return
    known = [v for v in norms if v is not None]
    if n.style == "param_received" and known:
        lo, hi = _fmt_norm(min(known)), _fmt_norm(max(known))
        n.lines[1] = f"grad ok |g|={lo if lo == hi else lo + '..' + hi}"
    n.lines[1] += f" (all {times})"


def _block_sig(nodes: dict, keys: list, block: str, pinned: set, statuses: dict):
    """What makes two blocks the same drawing (their ops and their parameters' gradient
    status); None when a block must stay visible."""
    sig = []
    for k in keys:
        n = nodes[k]
        if k in pinned or n.kind == "cut":
            return None
        rel = (n.module or "")[len(block):]
        sig.append((rel, n.kind, n.title, n.style, n.region.split(" @ ")[0]))
    sig.append(tuple(sorted(statuses.items())))
    return tuple(sig)


_BOXABLE = frozenset({"op", "cut", "inplace", "external", "hook", "param"})


def _box(module: str | None, depth: int, open_mods: set) -> str | None:
    """The collapsed module a node in ``module`` is drawn as, or None (drawn itself)."""
    if not module:
        return None
    parts = module.split(".")
    for d in range(depth, len(parts) + 1):
        p = ".".join(parts[:d])
        if p not in open_mods:
            return p
    return None


#: What the default view aims at: at most this many nodes in at most this many rows; about
#: what fits 2400x1600 px at Graphviz's 96 dpi (tests/test_graph_scale.py renders and measures).
SCREEN_NODES = 30


SCREEN_RANKS = 12


def _too_tall(nodes: dict, order: list, mapping: dict, edges: list) -> bool:
    n, ranks = _measure(nodes, order, mapping, edges, {}, {})
    return n > SCREEN_NODES or ranks > SCREEN_RANKS


def _box_of(nodes: dict, cand: list, anchors: set, open_mods: set, depth: int) -> dict:
    """key -> the collapsed module it is drawn in, for the nodes that go into a box."""
    out = {}
    for k in cand:
        n = nodes[k]
        if k not in anchors and n.kind in _BOXABLE:
            b = _box(n.module, depth, open_mods)
            if b is not None:
                out[k] = ("mod", b)
    return out


def _drawn_edges(cand: list, mapping: dict, edges: list, instance: dict, box_of: dict) -> dict:
    """The edges between drawn nodes (folded and boxed): {src: {dst}}."""
    keep = set(cand)
    succ: dict = {}
    for e in edges:
        if e.kind == "order":
            continue
        s, d = mapping.get(e.src), mapping.get(e.dst)
        if s not in keep or d not in keep:
            continue
        si, di = instance.get(e.src), instance.get(e.dst)
        if si is not None and di is not None and si[0] == di[0] and si[1] != di[1]:
            continue
        s, d = box_of.get(s, s), box_of.get(d, d)
        if s != d:
            succ.setdefault(s, set()).add(d)
    return succ


def _cyclic(succ: dict) -> set:
    """The nodes on a cycle of ``succ`` (strongly connected components of two or more)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: set = set()
    counter = 0
    for root in list(succ):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()), key=repr)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ()), key=repr))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.update(comp)
    return out


def _open_cycles(nodes: dict, cand: list, mapping: dict, edges: list, instance: dict, anchors: set,
                 open_mods: set, depth: int) -> set:
    """``open_mods`` plus every module whose box would sit on a cycle (a ReLU module called
    three times in a block; a ModuleList whose blocks feed a cut between two of them and
    take its output back): a box on a cycle says nothing about the order, so it is opened."""
    opened = set(open_mods)
    for _ in range(32):
        box_of = _box_of(nodes, cand, anchors, opened, depth)
        bad = {k[1] for k in _cyclic(_drawn_edges(cand, mapping, edges, instance, box_of)) if k[0] == "mod"}
        if not bad:
            break
        opened |= bad
    return opened


def _measure(nodes: dict, cand: list, mapping: dict, edges: list, instance: dict, box_of: dict) -> tuple:
    """(nodes, rows) of the drawing: distinct drawn nodes, and the longest chain of edges."""
    drawn = {box_of.get(k, k) for k in cand}
    succ = _drawn_edges(cand, mapping, edges, instance, box_of)
    rank: dict = {}
    order_of = {}
    for k in cand:
        d = box_of.get(k, k)
        order_of[d] = min(order_of.get(d, nodes[k].order), nodes[k].order)
    for d in sorted(drawn, key=lambda x: order_of[x]):  # event order is (nearly) topological
        r = rank.get(d, 0)
        rank[d] = r
        for m in succ.get(d, ()):
            if order_of.get(m, -1) > order_of[d]:
                rank[m] = max(rank.get(m, 0), r + 1)
    return len(drawn), (max(rank.values()) + 1 if rank else 0)


def _mixed_status_modules(nodes: dict, order: list) -> set:
    """Modules whose parameters do not share one gradient status (some received, some got
    none, some frozen): never one box, so every box has one true status."""
    classes: dict = {}
    for k in order:
        n = nodes[k]
        if n.kind != "param" or not n.module:
            continue
        c = "bad" if n.style in ("param_none", "param_zero", "param_nonfinite") else n.style
        m = n.module
        while m:
            classes.setdefault(m, set()).add(c)
            m = _module_parent(m)
    return {m for m, cs in classes.items() if len(cs) > 1}


def _collapse_depth(nodes: dict, order: list, mapping: dict, anchors: set, open_mods: set, depth: int,
                    mod_nodes: dict, fold_names: dict, full: _Full) -> None:
    counts: dict = {}
    for k in order:
        rep = mapping[k]
        n = nodes[rep]
        if rep in anchors or n.kind not in _BOXABLE:
            continue
        box = _box(n.module, depth, open_mods)
        if box is None:
            continue
        mk = ("mod", box)
        info = counts.setdefault(mk, {"ops": 0, "params": 0, "bad": 0, "nograd": 0, "order": n.order, "module": box,
                                      "status": {}})
        info["order"] = min(info["order"], nodes[k].order)
        if nodes[k].kind == "param":  # every parameter, folded copies included
            info["params"] += 1
            st = nodes[k].style
            if st in ("param_none", "param_zero", "param_nonfinite"):
                info["bad"] += 1
            if st in _STATUS_STYLES:
                info["status"][st] = info["status"].get(st, 0) + 1
        else:
            info["ops"] += max(nodes[k].n_ops, 1) if rep == k else 0
            if nodes[k].nograd:
                info["nograd"] += 1
        mapping[k] = mk
    for mk, info in counts.items():
        box = info["module"]
        title = fold_names.get(box, box)
        for blk, label in fold_names.items():  # a module inside folded blocks: name the whole range
            if box.startswith(blk + "."):
                title = label.partition(" (")[0] + box[len(blk):]
                break
        typ = full.module_types.get(box)
        lines = [typ] if typ else []
        n_p = info["params"]
        what = f"{info['ops']} op{'s' if info['ops'] != 1 else ''}" if info["ops"] else "not run"
        if n_p:
            what += f", {n_p} param{'s' if n_p != 1 else ''}"
        lines.append(what)
        for blk, label in fold_names.items():  # folded blocks inside the box: "repeats layer.0-11 (x12)"
            if blk.startswith(box + "."):
                lines.append(f"repeats {label[len(box) + 1:]}")
        # the parameters' gradient status, in the words of the parameter nodes ("grad None")
        sts = sorted(info["status"].items(), key=lambda kv: (kv[0] not in _BAD_STYLES, kv[0]))
        if len(sts) == 1:
            lines.append(_STATUS_TEXT[sts[0][0][len("param_"):]] + (f" (all {n_p})" if n_p > 1 else ""))
        elif sts:
            lines.append(", ".join(f"{c} {_STATUS_TEXT[st[len('param_'):]]}" for st, c in sts))
        style = "module_bad" if info["bad"] else ("module_nograd" if info["ops"] and info["nograd"] >= info["ops"]
                                                  else "module")
        mod_nodes[mk] = _N(key=mk, kind="module", title=title, lines=lines, style=style, order=info["order"],
                           module=_module_parent(box), n_ops=info["ops"])
    # keys of modules never map onto themselves in `nodes`; expose them through mapping
    for mk in counts:
        mapping.setdefault(mk, mk)
