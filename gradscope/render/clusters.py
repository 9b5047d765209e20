"""Module clusters, grad-disabled regions and the legend of the final drawing."""
from __future__ import annotations

import re

from .full import _Full
from .labels import _module_parent
from .fold import _BOXABLE
from .view import GCluster


def _clusters(final_nodes: list, full: _Full, depth: int | None, fold_names: dict) -> tuple:
    """Module clusters (and grad-disabled sub-clusters) for the final nodes."""
    home: dict = {}  # node key -> module path (a collapsed module's is its parent's)
    for n in final_nodes:
        home[n.key] = (n.module or None) if n.kind in _BOXABLE or n.kind == "module" else None
    # which module paths get a cluster: those holding op nodes, plus their ancestors
    direct: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        if m and n.kind != "param":
            direct[m] = direct.get(m, 0) + 1
    paths: set = set()
    for m in direct:
        parts = m.split(".")
        for i in range(1, len(parts) + 1):
            paths.add(".".join(parts[:i]))
    # params go into their module's cluster only when that cluster exists
    for n in final_nodes:
        if n.kind == "param":
            m = home.get(n.key)
            while m and m not in paths:
                m = _module_parent(m)
            home[n.key] = m
    # drop clusters that only wrap one child cluster and hold nothing themselves
    holders: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        if m:
            holders[m] = holders.get(m, 0) + 1
    kids: dict = {}
    for p in paths:
        kids.setdefault(_module_parent(p), []).append(p)
    drop = {p for p in paths if not holders.get(p) and len(kids.get(p, ())) <= 1}
    paths -= drop

    def parent_of(p: str) -> str | None:
        q = _module_parent(p)
        while q and q not in paths:
            q = _module_parent(q)
        return q

    first_order: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        while m:
            if m in paths and m not in first_order:
                first_order[m] = n.order
            m = _module_parent(m)
    ordered = sorted(paths, key=lambda p: (first_order.get(p, 10 ** 9), p.count("."), p))
    ids = {p: f"cluster_{i}" for i, p in enumerate(ordered)}
    clusters = []
    for p in ordered:
        typ = full.module_types.get(p)
        par = parent_of(p)
        if p in fold_names:  # "blocks.0-6 (x7)" -> "blocks.0-6 (Block) x7"
            rng, _, times = fold_names[p].partition(" (")
            label = f"{rng}{f' ({typ})' if typ else ''} {times.rstrip(')')}"
        else:
            label = p
            rel = p[len(par) + 1:] if par and p.startswith(par + ".") else ""
            if rel and not rel.split(".")[0].isdigit():
                label = rel  # nested clusters read "attn" inside "blocks.7"
            if typ:
                label += f" ({typ})"
        clusters.append(GCluster(ids[p], label, "repeat" if p in fold_names else "module",
                                 ids[par] if par else None, p))
    cluster_of: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        while m and m not in paths:
            m = _module_parent(m)
        if m:
            cluster_of[n.key] = ids[m]
    # grad-disabled regions: runs of consecutive no-grad ops (same region) get one grey
    # cluster; it wraps whole module clusters when they hold nothing else.
    runs: list = []
    run: list = []
    run_region = None
    for n in final_nodes:
        if n.kind in ("op", "cut", "inplace") and n.nograd and n.event is not None:
            if n.region != run_region and run:
                runs.append((run_region, run))
                run = []
            run_region = n.region
            run.append(n.key)
        elif n.kind in ("op", "cut", "inplace", "module", "external", "hook"):
            if run:
                runs.append((run_region, run))
            run, run_region = [], None
    if run:
        runs.append((run_region, run))
    _nograd_clusters(runs, final_nodes, clusters, cluster_of)
    return clusters, cluster_of


def _nograd_clusters(runs: list, final_nodes: list, clusters: list, cluster_of: dict) -> None:
    parent = {c.id: c.parent for c in clusters}

    def chain(cid):  # the cluster and its ancestors, innermost first
        out = []
        while cid is not None:
            out.append(cid)
            cid = parent.get(cid)
        return out

    members: dict = {}  # cluster id -> node keys anywhere inside it
    for n in final_nodes:
        for cid in chain(cluster_of.get(n.key)):
            members.setdefault(cid, []).append(n)
    n_ng = 0
    for region, keys in runs:
        in_run = set(keys)
        chains = [chain(cluster_of.get(k))[::-1] for k in keys]  # outermost first
        lca = None
        for level in zip(*chains):
            if all(c == level[0] for c in level):
                lca = level[0]
            else:
                break
        tops = {}
        for ch in chains:
            i = ch.index(lca) + 1 if lca is not None else 0
            if i < len(ch):
                tops[ch[i]] = None
        ok = all(n.key in in_run or n.kind in ("param", "input", "tensor")
                 for t in tops for n in members.get(t, ()))
        groups = [(lca, keys, list(tops))] if ok else []
        if not ok:  # cannot wrap whole modules: one grey cluster per module cluster
            by_cluster: dict = {}
            for k in keys:
                by_cluster.setdefault(cluster_of.get(k), []).append(k)
            groups = [(c, ks, []) for c, ks in by_cluster.items()]
        for par, ks, wrapped in groups:
            cid = f"cluster_ng{n_ng}"
            n_ng += 1
            at = min([i for i, c in enumerate(clusters) if c.id in wrapped] or [len(clusters)])
            clusters.insert(at, GCluster(cid, region, "nograd", par, None))
            for c in clusters:
                if c.id in wrapped:
                    c.parent = cid
            parent[cid] = par
            for w in wrapped:
                parent[w] = cid
            for k in ks:
                if cluster_of.get(k) == par:
                    cluster_of[k] = cid


def _legend(nodes: list, edges: list, clusters: list) -> list:
    styles = {n.style for n in nodes}
    kinds = {e.kind for e in edges}
    out = []
    if "cut" in kinds:
        out.append(("cut", "cut: values flow on, gradient stops here"))
    if "benign_cut" in kinds:
        out.append(("benign_cut", "harmless cut (e.g. logging)"))
    if "inferred" in kinds:
        out.append(("inferred", "inferred link (values left torch and came back)"))
    if "autograd" in kinds or "root" in kinds:
        out.append(("autograd", "autograd edge: gradient flows back"))
    if "data" in kinds:
        out.append(("data", "data only (nothing here needs a gradient)"))
    if "nograd" in styles or any(c.kind == "nograd" for c in clusters):
        out.append(("nograd", "grad disabled (no_grad / inference_mode)"))
    if styles & {"inplace", "inplace_bad"}:
        out.append(("inplace", "in-place write"))
    if styles & {"root", "root_failed"}:
        out.append(("root", "backward root"))
    for st, text in (("param_received", "parameter: received a gradient"),
                     ("param_none", "parameter: grad is None"),
                     ("param_zero", "parameter: gradient is zero"),
                     ("param_nonfinite", "parameter: gradient has inf/nan"),
                     ("param_frozen", "parameter: frozen (requires_grad=False)"),
                     ("param_untrained", "parameter: not trained by this step (no optimizer holds it)")):
        if st in styles:
            out.append((st, text))
    if styles & {"module", "module_bad", "module_nograd"}:
        out.append(("module", "collapsed module"))
    if any(c.kind == "repeat" for c in clusters):
        out.append(("repeat", "repeated blocks, drawn once"))
    else:
        for n in nodes:  # a folded run drawn as one box: say what "(x13)" means, with its own name
            m = re.search(r" \(x(\d+)\)$", n.title) if n.kind == "module" else None
            if m:
                out.append(("module", f"{n.title}: {m.group(1)} alike blocks in one box"))
                break
    return out
