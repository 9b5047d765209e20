"""``build_graph``: a traced step as a :class:`~gradscope.render.view.GraphView`."""
from __future__ import annotations


from ..errors import UnknownTargetError
from ..core.model import TraceData
from .clusters import _clusters, _legend
from .condense import (_Drawn, cut_spans, fold_inputs, merge_op_chains, merge_parallel_branches, rows_after_cuts,
                       summarize_stretch)
from .fold import (SCREEN_NODES, SCREEN_RANKS, _box_of, _collapse_depth, _fold_repeats, _measure,
                   _mixed_status_modules, _open_cycles, _too_tall)
from .full import _E, _EDGE_RANK, _Full, _N, _adjacency, _reach
from .labels import _STATUS_TEXT, _mdepth, _module_parent
from .view import GraphView, GNode, GEdge


def build_graph(
    data: TraceData,
    summary=None,
    *,
    focus: int | None = None,
    depth: int | None = None,
    max_nodes: int = 150,
    collapse: bool | None = None,
    all_steps: bool = False,
) -> GraphView:
    """Build the diagram of a traced step.

    Args:
        data: the recorded step (``tr.data``).
        summary: the diagnosis (``tr.summary()``); with it, harmful cuts are red and
            benign ones grey, parameters are coloured by gradient status, and big traces
            keep the problems' paths visible when collapsed.
        focus: a tensor id: draw only the data paths between that tensor and the
            backward roots (across cuts, so the cut that starves it is on the drawing).
        depth: draw modules nested ``depth`` levels deep or deeper as single boxes
            (``depth=1``: top-level modules are boxes), except the modules that hold a
            harmful cut (or the failure's evidence, or the focus): those stay open, down
            to the cut, with their other submodules as boxes.
        max_nodes: at most this many nodes; the rest become one ``N ops hidden`` node.
        collapse: fold repeated blocks (``blocks.0-11 (x12)``; a run of blocks splits where
            their parameters' gradient status changes) and, when still too big, collapse
            modules. ``None`` (default): when the trace has more than ``max_nodes`` nodes,
            fold and collapse modules to the deepest depth that fits a screen (about
            ``SCREEN_NODES`` nodes in ``SCREEN_RANKS`` rows), keeping every module that
            holds a harmful cut open. ``True``: always fold; collapse modules only past
            ``max_nodes``. ``False``: never (``depth`` still applies). A default drawing still too tall
            because a harmful cut keeps its module open draws alike parallel branches once, the
            healthy modules around the cuts' modules as one summary node each, and the chain from
            each cut through its module left to right (``GraphView.rows``). Collapsed views draw
            the user's data loading outside the model as one node. A module box never
            sits on a cycle (a module called twice around other ops is opened) and never
            mixes gradient statuses (a module holding starved and healthy parameters is
            opened).
        all_steps: draw every training step. By default a trace with several backward calls
            draws only the last step (the others repeat it), and says so in a note.

    Returns:
        A :class:`GraphView` (plain data; ``.source``, ``.render(path)``).

    Raises:
        UnknownTargetError: ``focus`` names a tensor the trace never saw.
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be 1 or more, or None (got {depth!r})")
    if max_nodes < 5:
        raise ValueError(f"max_nodes must be at least 5 (got {max_nodes!r})")
    lo = 0
    bws = [e.index for e in data.events if e.kind == "backward"]
    if not all_steps and len(bws) > 1 and focus is None:
        lo = bws[-2] + 1
        # the optimizer step after the previous backward (and its parameter writes) ends that step
        ev = data.events
        for i in range(bws[-1] - 1, bws[-2], -1):
            if ev[i].kind == "optimizer_step":
                ends = [j for j in range(i + 1, bws[-1]) if ev[j].detail.step == i]
                lo = (ends[0] if ends else i) + 1
                break
    full = _Full(data, summary, lo)
    nodes = full.nodes
    edges = full.edges
    succ, pred = _adjacency(edges)
    notes: list = []
    if lo:
        notes.append(f"showing the last of {len(bws)} training steps (graph(all_steps=True) draws them all)")
    fixed = set(full.roots) | {k for k in (("opt",), ("exc",)) if k in nodes}

    # ---- focus: only the data paths between the tensor and the backward roots
    keep: set | None = None
    focus_keys: list = []
    if focus is not None:
        if focus not in data.tensors:
            raise UnknownTargetError(
                f"focus={focus!r}: the trace saw no tensor with that id (tensor ids run from 0 to "
                f"{max(data.tensors) if data.tensors else -1}); pass a tid from tr.data.tensors")
        t = data.tensors[focus]
        if ("t", focus) in nodes:
            focus_keys.append(("t", focus))
        if ("root", focus) in nodes:
            focus_keys.append(("root", focus))
        if t.producer is not None and ("e", t.producer) in nodes:
            focus_keys.append(("e", t.producer))
        if not focus_keys:  # produced outside the drawing: start from its consumers
            focus_keys = [e.dst for e in edges if e.tid == focus and e.kind != "order"]
        down = set(_reach(focus_keys, succ))
        up = set(_reach(full.roots, pred))
        keep = down & up
        if not keep:
            keep = down
            notes.append(f"{data.name_of(focus)} has no data path to the backward root")
        keep |= set(focus_keys) | fixed
        for k in focus_keys:
            nodes[k].mark = "focus"

    order = [k for k in nodes if keep is None or k in keep]

    # ---- pinned: never folded into a module box, never hidden
    pinned: set = set(fixed)
    harmful_keys = []
    for k in order:
        n = nodes[k]
        if n.kind == "cut" and n.style == "cut":
            pinned.add(k)
            harmful_keys.append(k)
        elif n.event is not None and n.event in full.evidence or n.kind == "param" and n.style in ("param_none", "param_zero", "param_nonfinite"):
            pinned.add(k)
    cut_dsts = sorted({e.dst for e in edges if e.kind == "cut"}, key=lambda k: nodes[k].order)
    for k in cut_dsts:
        if (keep is None or k in keep) and k not in pinned and nodes[k].kind != "exception":
            pinned.add(k)
            harmful_keys.append(k)
    if focus is not None:
        pinned |= set(focus_keys)
    context: set = set()
    for k in harmful_keys:  # the path through each harmful cut: a few ops either side
        for m in _reach([k], pred, limit=8) + _reach([k], succ, limit=8):
            if keep is None or m in keep:
                context.add(m)

    # ---- decide how much to collapse
    n_full = len(order)
    auto = collapse is None
    mapping: dict = {k: k for k in order}
    # the default folds and collapses when the plain drawing would not fit a screen
    too_big = auto and (n_full > max_nodes or _too_tall(nodes, order, mapping, edges))
    do_fold = bool(collapse) or too_big
    folded_labels: list = []
    fold_names: dict = {}  # block path -> "blocks.0-11 (x12)"
    instance: dict = {}
    if do_fold:
        fold_names, folded_labels = _fold_repeats(nodes, order, mapping, pinned, instance)

    def reps() -> list:
        return [k for k in order if mapping[k] == k]

    # Modules holding an anchor (a harmful cut, the failure's evidence, the focus) stay open
    # at every depth, so the cut is drawn inside its own module with its neighbours while
    # the sibling modules around it become boxes.
    anchors = set(fixed) | set(harmful_keys) | set(focus_keys) | \
        {k for k in order if nodes[k].event is not None and nodes[k].event in full.evidence}
    open_mods: set = set()
    for k in anchors:
        m = nodes[k].module
        while m:
            open_mods.add(m)
            m = _module_parent(m)
    open_mods |= _mixed_status_modules(nodes, order)
    use_depth = depth
    cand = reps()
    if use_depth is None and (collapse or too_big):
        # the deepest depth whose drawing fits a screen (SCREEN_NODES boxes, SCREEN_RANKS
        # rows), or the shallowest there is
        # the deepest depth whose drawing fits a screen (SCREEN_NODES nodes in SCREEN_RANKS
        # rows), at each depth first with the folded blocks' ancestors open (so a fold is a
        # box of its own: "encoder.layer.0-11 (x12)"), else the shallowest there is
        budget, max_ranks = (min(max_nodes, SCREEN_NODES), SCREEN_RANKS) if auto else (max_nodes, 10 ** 9)
        max_d = max((_mdepth(nodes[k].module) for k in cand), default=0)
        fold_open = set(open_mods)
        for blk in fold_names:
            m = _module_parent(blk)
            while m:
                fold_open.add(m)
                m = _module_parent(m)
        tries = [(None, open_mods)] + [(d, o) for d in range(max_d, 0, -1)
                                       for o in ((fold_open, open_mods) if fold_open != open_mods else (open_mods,))]
        for d, base in tries:
            if d is None:
                n_boxes, ranks = _measure(nodes, cand, mapping, edges, instance, {})
            else:
                opened = _open_cycles(nodes, cand, mapping, edges, instance, anchors, base, d)
                n_boxes, ranks = _measure(nodes, cand, mapping, edges, instance,
                                          _box_of(nodes, cand, anchors, opened, d))
            use_depth, open_mods = d, base
            if n_boxes <= budget and ranks <= max_ranks:
                break
    if use_depth is not None:
        open_mods = _open_cycles(nodes, cand, mapping, edges, instance, anchors, open_mods, use_depth)
    mod_nodes: dict = {}
    row_keys: list = []
    if use_depth is not None:
        _collapse_depth(nodes, order, mapping, anchors, open_mods, use_depth, mod_nodes, fold_names, full)

    # ---- collapsed views leave out benign dead ends (loss.item() for logging, ...)
    omitted = 0
    if do_fold or use_depth is not None:
        has_out = {e.src for e in edges if e.kind != "order"}
        for k in order:
            n = nodes[k]
            if n.style == "cut_benign" and k not in has_out and k not in anchors and \
                    (mapping[k] == k or (mapping[k] in nodes and nodes[mapping[k]].style == "cut_benign")):
                mapping[k] = None
                omitted += 1
        if omitted:
            notes.append(f"{omitted} benign cut{'s' if omitted != 1 else ''} (e.g. .item() for logging) not "
                         "drawn; collapse=False draws them")

    # ---- the user's data loading (ops outside the model no gradient reaches) as one node
    if do_fold or use_depth is not None:
        g = _Drawn.of(nodes, order, mapping, edges, instance, mod_nodes)
        if fold_inputs(g, nodes, order, mapping, edges, pinned | anchors, mod_nodes, data):
            notes.append("the data loading outside the model is drawn as one node (collapse=False draws every op)")
            g = g.remap(mapping)

        # ---- still too tall (a cut inside a module's own ops keeps it open), one step at a time while it
        # does not fit: parallel branches that run the same ops drawn once, straight runs of plain ops far
        # from the cuts as one node each, the healthy stretches after, between and before the cuts'
        # modules as one node each, the chain from each cut through its module left to right
        keep = set(anchors) | pinned | set(full.roots)
        if too_big and not g.fits() and merge_parallel_branches(g, nodes, order, mapping, edges, keep, mod_nodes):
            notes.append("parallel branches that run the same ops are drawn once (xN)")
            g = g.remap(mapping)
        if too_big and harmful_keys and not g.fits() and \
                merge_op_chains(g, nodes, order, mapping, edges, keep | context, mod_nodes):
            notes.append("straight runs of plain ops far from the cut are drawn as one node (collapse=False "
                         "draws every op)")
            g = g.remap(mapping)
        if too_big and harmful_keys and not g.fits():
            spans = cut_spans(g, nodes, harmful_keys)
            one = len(spans) == 1
            stretches = [(spans[-1][1], float("inf"), "after the cut" if one else "after the last cut")]
            stretches += [(a[1], b[0], "between the cuts") for a, b in zip(spans, spans[1:])]
            stretches.append((float("-inf"), spans[0][0], "before the cut" if one else "before the first cut"))
            summarized = False
            for lo_, hi_, where in stretches:
                if not g.fits() and summarize_stretch(g, nodes, order, mapping, edges, keep | context, mod_nodes,
                                                      list(full.roots), lo_, hi_, where):
                    g = g.remap(mapping)
                    summarized = True
            if summarized:
                notes.append("healthy modules away from the cut are drawn as one node each (collapse=False draws them)")
            if not g.fits():  # the chain from each cut through its own module, left to right
                g.rows = rows_after_cuts(g, nodes, harmful_keys)
                if g.rows:
                    notes.append("the ops after each cut in its module are drawn left to right")
            row_keys = g.rows

    # ---- truncate past max_nodes
    final_keys: list = []
    seen_final: set = set()
    for k in order:
        m = mapping[k]
        if m is None:
            continue
        if m not in seen_final:
            seen_final.add(m)
            final_keys.append(m)
    hidden_ops = 0
    hidden_tensors = 0
    if len(final_keys) > max_nodes:
        budget = max_nodes - 1
        evidence_keys = {k for k in final_keys if k in nodes and nodes[k].event in full.evidence}
        tiers = (set(full.roots) | fixed | set(harmful_keys) | set(focus_keys), evidence_keys, context,
                 pinned, set(final_keys))
        kept: set = set()
        for tier in tiers:  # what matters most first: roots and cuts, evidence, their paths, ...
            for k in final_keys:
                if len(kept) >= budget:
                    break
                if k in tier and k not in kept:
                    kept.add(k)
        hidden_key = ("hidden",)
        for k in order:
            m = mapping[k]
            if m is not None and m not in kept:
                mapping[k] = hidden_key
                n = nodes[k]
                if n.kind in ("param", "input", "tensor"):
                    hidden_tensors += 1
                elif n.event is not None:
                    hidden_ops += 1
        final_keys = [k for k in final_keys if k in kept] + [hidden_key]
        what = f"{hidden_ops} ops" + (f" and {hidden_tensors} tensors" if hidden_tensors else "")
        all_nodes_hidden = _N(key=hidden_key, kind="hidden", title=f"{what} hidden",
                              lines=[f"max_nodes={max_nodes}; pass max_nodes=, depth= or focus="],
                              style="hidden", order=10 ** 9, n_ops=hidden_ops)
        mod_nodes[hidden_key] = all_nodes_hidden

    def get(k):
        return mod_nodes.get(k) or nodes[k]

    # ---- edges between final nodes
    ekeep: dict = {}
    for e in edges:
        if e.src not in mapping or e.dst not in mapping:
            continue
        s, d = mapping[e.src], mapping[e.dst]
        if s == d or s is None or d is None:
            continue
        si, di = instance.get(e.src), instance.get(e.dst)
        if si is not None and di is not None and si[0] == di[0] and si[1] != di[1]:
            continue  # one folded copy feeding the next: drawn once, so no back edge
        pair = (s, d)
        old = ekeep.get(pair)
        if old is None or _EDGE_RANK[e.kind] > _EDGE_RANK[old.kind]:
            ekeep[pair] = _E(s, d, e.kind, e.label, e.tid)

    # ---- ids, clusters
    final_nodes = sorted((get(k) for k in final_keys), key=lambda n: n.order)
    ids = {n.key: f"n{i}" for i, n in enumerate(final_nodes)}
    clusters, cluster_of = _clusters(final_nodes, full, use_depth, fold_names)
    out_nodes = [
        GNode(id=ids[n.key], kind=n.kind, title=n.title, lines=tuple(n.lines), style=n.style,
              cluster=cluster_of.get(n.key), event=n.event, tid=n.tid, n_ops=n.n_ops, mark=n.mark)
        for n in final_nodes
    ]
    out_edges = [GEdge(ids[e.src], ids[e.dst], e.kind, e.label, e.tid) for e in ekeep.values()]
    rows = [[ids[k] for k in row] for row in row_keys  # (a row never leaves its cluster)
            if all(k in ids for k in row) and len({cluster_of.get(k) for k in row}) == 1]

    # ---- title and legend
    title_lines = []
    if summary is not None:
        if summary.verdict:
            title_lines.append(summary.verdict)
        exps = ([summary.failure] if summary.failure is not None else []) + list(summary.problems)
        for x in exps[:4]:
            where = f" @ {x.site.short}" if x.site is not None else ""
            status = _STATUS_TEXT.get(x.status, x.status)
            what = f"{x.target}: " if x.target else ""
            title_lines.append(f"{what}{status + ', ' if status else ''}{x.cause.replace('_', ' ')}{where}")
        if len(exps) > 4:
            title_lines.append(f"... and {len(exps) - 4} more")
    if omitted:
        title_lines.append(f"({omitted} benign cut{'s' if omitted != 1 else ''} not drawn)")
    title = "\n".join(title_lines)
    if focus is not None:
        title = (title + "\n" if title else "") + f"focus: {data.name_of(focus)}"
    legend = _legend(out_nodes, out_edges, clusters)
    return GraphView(nodes=out_nodes, edges=out_edges, clusters=clusters, hidden=hidden_ops, title=title,
                     legend=legend, collapsed=bool(folded_labels) or use_depth is not None, depth=use_depth,
                     folded=folded_labels, focus=focus, notes=notes, rows=rows)
