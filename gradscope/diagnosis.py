"""Diagnosis rules: turn a recorded trace into explanations. Pure: no torch imports.

The central question is *where did gradient flow stop?* Three kinds of evidence answer it:

* the data path: which recorded calls carried the target's values towards a backward
  root, and which of them did not let gradient through (a cut);
* the backward record: which autograd nodes ran and what gradient each sent along each
  edge (so a custom backward returning None, a dead ReLU, or a hook that zeroed the
  gradient can be pinned to a node and its forward line);
* the state changes: requires_grad switches, zero_grad after backward, modules replaced.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict, deque

from . import _source
from .explanation import Explanation, ParamStatus, PathStep, StepSummary
from .model import Event, Frame, Site, TraceData, strip_torch_prefix
from .verdict import VerdictRules

__all__ = ["Diagnosis", "CUT_CAUSE"]

#: Event.cut -> Explanation.cause
CUT_CAUSE = {
    "detach": "detach",
    "data": "data_attr",
    "data_set": "data_attr",
    "numpy": "numpy_roundtrip",
    "item": "item_roundtrip",
    "tolist": "tolist_roundtrip",
    "rewrap": "tensor_rewrap",
    "no_grad": "no_grad_block",
    "inference_mode": "inference_mode",
    "nondiff": "nondifferentiable_op",
    "zero_grad_op": "nondifferentiable_op",
    "int_cast": "integer_cast",
    "checkpoint": "reentrant_checkpoint",
}
_ESCAPES = ("numpy", "item", "tolist")
# causes that mean "the flow from the tensor to the loss was cut somewhere" (where further cuts are worth naming)
_FLOW_CAUSES = set(CUT_CAUSE.values()) | {"zero_gradient"}
_TO_OPS = {"to", "double", "float", "half", "bfloat16", "type", "cuda", "cpu", "type_as"}
_ZERO_OPS = {"round", "sign", "floor", "ceil", "trunc", "fix", "sgn", "floor_divide", "__floordiv__", "round_",
             "bernoulli", "bernoulli_", "poisson", "heaviside", "normal", "binomial", "multinomial"}
_NOT_FORWARD = ("optimizer", "init", "clip", "backward", "setup")  # (setup: torch converting modules for the user)
_COPY_OPS = {"data", "detach", "clone", "copy_", "__deepcopy__", "__reduce_ex__", "requires_grad_", "_version"}
_NOT_FLOW = ("backward", "grad_set", "requires_grad", "hook", "optimizer_step")
_REWRAP_CODE = re.compile(r"(torch\.\w*Tensor|torch\.tensor|as_tensor|new_tensor|torch\.asarray)\s*\(")
_EXPLICIT_ITEM = re.compile(r"\.item\(\)|\bfloat\(|\bint\(|\.tolist\(\)")
_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w\.]*)\s*(?::[^=]+)?=(?!=)")


def _receiver(code: str, call: str) -> str | None:
    """The expression a method is called on: ``(a + b).backward()`` -> ``(a + b)``; None when it is
    not a short, balanced expression."""
    i = code.find(call)
    if i <= 0:
        return None
    depth = 0
    j = i - 1
    while j >= 0:
        ch = code[j]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (ch.isalnum() or ch in "_."):
            break
        j -= 1
    expr = code[j + 1:i].strip()
    if not expr or depth != 0 or len(expr) > 60 or expr[0].isdigit():
        return None
    return expr


_MODULE_NAMES = {"torch", "np", "numpy", "F", "nn", "math", "jnp", "functional", "torch.nn.functional"}
# cuts the user writes as a call of their own (not ops inside a module under no_grad)
_EXPLICIT_CUTS = {"detach", "data", "numpy", "item", "tolist", "rewrap"}
# ops that pass a detached value on unchanged on its way out of torch (`x.detach().cpu().numpy()`)
_VALUE_KEEPING = {"cpu", "to", "clone", "contiguous", "float", "double", "half", "view", "reshape", "flatten",
                  "squeeze", "unsqueeze", "permute", "transpose", "t", "T", "numpy", "data", "detach", "cuda",
                  "type", "view_as", "expand", "__getitem__"}
# library calls that replace a module's weight by new Parameters (the old weight leaves the model)
_PARAMETRIZERS = {"weight_norm", "spectral_norm", "register_parametrization", "orthogonal", "_weight_norm"}
# ops whose backward needs none of their inputs' values (writing into those afterwards cannot corrupt it)
_NO_SAVE = {"add", "__add__", "__radd__", "add_", "sub", "__sub__", "__rsub__", "neg", "__neg__", "sum", "mean",
            "view", "reshape", "expand", "clone", "contiguous", "flatten", "squeeze", "unsqueeze", "permute",
            "transpose", "t", "__getitem__", "cat", "stack", "to", "float", "double", "half", "detach", "data"}
# ops whose backward uses their own result (sigmoid' = s(1-s)): writing into the result corrupts it
_SAVES_RESULT = {"sigmoid", "tanh", "exp", "softmax", "log_softmax", "relu", "sqrt", "rsqrt", "elu", "selu",
                 "hardsigmoid", "expm1", "reciprocal", "sigmoid_", "tanh_", "exp_", "relu_"}
_DUNDER_CALLS = {"__float__": "float(", "__int__": "int(", "__bool__": "bool(", "__index__": "int(",
                 "__complex__": "complex("}


def _first_arg(code: str, call: str) -> str | None:
    """The first argument of a call, as written: ``torch.tensor(boxes, dtype=...)`` -> ``boxes``."""
    i = code.find(call)
    if i < 0:
        return None
    j = i + len(call)
    depth = 0
    k = j
    while k < len(code):
        ch = code[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        k += 1
    arg = code[j:k].strip()
    if not arg or "=" in arg.split("(")[0] or len(arg) > 60:
        return None
    return arg


_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _as_written(e: Event) -> str:
    """How the user wrote the op: a comparison as its operator (`dist <= w` calls w.__ge__ on a Parameter),
    else ``name()``."""
    op = _opname(e).strip("_")
    if op in _CMP and e.site is not None and e.site.code:
        found = set(re.findall(r"<=|>=|==|!=|(?<![<>=!])[<>](?!=)", e.site.code.split("#")[0]))
        if len(found) == 1:
            return f"the comparison `{found.pop()}`"
        return f"a comparison ({_CMP[op]})"
    return f"{_opname(e)}()"


def _find_in_function(filename: str, lineno: int, needle: str):
    """(line, code) of the first line containing ``needle`` in the function around ``filename:lineno``."""
    import linecache

    lines = linecache.getlines(filename)
    if not lines or not 0 < lineno <= len(lines):
        return None
    start = lineno - 1
    while start > 0 and not lines[start].lstrip().startswith(("def ", "async def ")):
        start -= 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    for i in range(start + 1, len(lines)):
        text = lines[i]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        if needle in text:
            return i + 1, text.strip()
    return None


def _sgd_rebind(site) -> str | None:
    """`w = w - lr * w.grad` (a manual SGD step that rebinds the name to a new tensor): ``w``."""
    code = (site.code or "") if site is not None else ""
    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=\s*\1\s*[-+]", code)
    return m.group(1) if m and ".grad" in code else None


def _out_of_place(code: str) -> str | None:
    """The line rewritten without the in-place write: `z -= m` -> `z = z - m`, `x.add_(y)` -> `x = x.add(y)`,
    `x[mask] = 0` -> masked_fill / torch.where."""
    code = (code or "").split("  #")[0].strip()
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\s*([-+*/])=\s*(.+)", code)
    if m:
        return (f"write it out-of-place: `{m.group(1)} = {m.group(1)} {m.group(2)} {m.group(3)}` (a new tensor; the "
                f"saved one stays intact).")
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\.([a-z]\w*)_\((.*)\)", code)
    if m:
        return (f"write it out-of-place: `{m.group(1)} = {m.group(1)}.{m.group(2)}({m.group(3)})` (a new tensor; the "
                f"saved one stays intact).")
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\[(.+)\]\s*=\s*(.+)", code)
    if m:
        x, idx, v = m.groups()
        if re.search(r"\b%s\s*\[" % re.escape(x), v):  # a shift: trans[:, 1:] = trans[:, :-1]
            return (f"build the shifted tensor out of place instead of writing `{x}` from itself: e.g. "
                    f"`{x} = torch.cat([first, {v}], dim=...)` or torch.roll.")
        mask = idx if re.search(r"[<>]=?|==|!=", idx) else "mask"
        return (f"build a new tensor instead of assigning into `{x}`: e.g. `{x} = {x}.masked_fill({mask}, {v})` or "
                f"`{x} = torch.where({mask}, {v}, {x})` (or clone it first: `{x} = {x}.clone()`).")
    return None


def _is_copy(e: Event) -> bool:
    """A value copy between tensors (load_state_dict's copy_, a detach for state_dict()): not a use of the
    tensor in the computation."""
    return e.kind in ("inplace", "cut") and _opname(e) in ("copy_", "detach")


def py_expr(name: str) -> str:
    """A parameter name as Python: "model.0.weight" -> "model[0].weight"."""
    parts = name.split(".")
    out = parts[0]
    for p in parts[1:]:
        out += f"[{p}]" if p.isdigit() else f".{p}"
    return out


_short = strip_torch_prefix


def _opname(e: Event) -> str:
    s = _short(e.op)
    s = s.rsplit(".", 1)[-1] if "." in s and not s.startswith("nn.") else s
    if e.kind == "cut" and e.detail.get("outputs_of") is not None:
        s += "'s indices"  # the integer outputs of max(dim)/topk/sort (their values carry gradient)
    return s


_STMT: dict = {}  # (filename, lineno, code) -> (first line, whole statement) or None


def statement_site(site: Site | None) -> Site | None:
    """The site of the whole statement holding ``site``'s line: a call spread over several lines is shown at
    its first line with all of its code. The stack is kept (its last frame is the line that ran), so the
    exact line stays visible. Unchanged when the source is gone or no longer matches what was recorded."""
    if site is None or not site.filename:
        return site
    key = (site.filename, site.lineno, site.code)
    hit = _STMT.get(key, False)
    if hit is False:
        hit = None
        got = _source.statement(site.filename, site.lineno)
        if got is not None and (not site.code or site.code.split("  #")[0].strip() in got[1]):
            hit = got
        if len(_STMT) > 4096:
            _STMT.clear()
        _STMT[key] = hit
    if hit is None or (hit[0] == site.lineno and hit[1] == site.code):
        return site
    return Site(site.filename, hit[0], site.function, hit[1], site.stack, site.label)


def _code(site: Site | None) -> str:
    """`` (`code`)`` for a summary sentence, without the line's trailing comment."""
    site = statement_site(site)
    if not site or not site.code:
        return ""
    code = site.code
    cut = code.find("  #")
    if cut > 0:
        code = code[:cut].rstrip()
    return f" (`{code}`)"


def _plain(site: Site | None) -> str:
    """The site's statement as written, without its trailing comment ("" when unknown)."""
    site = statement_site(site)
    return (site.code or "").split("  #")[0].strip() if site is not None else ""


def _at(site: Site | None) -> str:
    return f" at {statement_site(site).short}" if site else ""


#: PyTorch's error messages -> the handler that explains them (first match that returns an explanation wins;
#: an error that matches none is "unknown", reported where it was raised).
_ERRORS = tuple((re.compile(p, re.S), h) for p, h in (
    (r"modified by an inplace operation", "_fail_inplace"),
    (r"does not require grad and does not have a grad_fn", "_fail_no_grad_fn"),
    (r"Can't call numpy\(\) on Tensor that requires grad", "_fail_numpy"),
    (r"Inference tensors cannot be saved for backward", "_fail_inference"),
    (r"backward through the graph a second time", "_fail_twice"),
    (r"marked with @once_differentiable", "_fail_once_differentiable"),
    (r"returned an incorrect number of gradients|returned an invalid gradient|function \S+ returned", "_fail_custom"),
    (r"derivative for .* is not implemented|is not implemented.*derivative for", "_fail_no_derivative"),
    (r"appears to not have been used in the graph", "_fail_unused_input"),
    (r"did not receive grad|finished reduction.*not used in producing loss", "_fail_reduction_unused"),
))


def _code_of(e: Event) -> str:
    return (e.site.code or "") if e.site else ""


def _clear_call(e: Event) -> str:
    """How the user's line cleared .grad: `zero_grad()` or `.grad = None`."""
    code = e.site.code if e.site else ""
    if e.context == "optimizer" or "zero_grad" in (code or "") or e.kind == "inplace":
        return "zero_grad()"
    return "`.grad = None`"


class Diagnosis(VerdictRules):
    """Explanations over one TraceData. Build once per trace state; queries are cached."""

    def __init__(self, data: TraceData):
        self.d = data
        self.ev = data.events
        self.query_tids: set = set()
        self.aliases: dict = {}  # tid -> the user's variable name (from why() callers)
        self._labels = {}  # file name -> how sites show it (notebook cells: "In[3]")
        for e in self.ev:
            if e.site is not None and e.site.label:
                self._labels.setdefault(e.site.filename, e.site.label)
        self.consumers = defaultdict(list)  # tid -> [event index]
        self.value_users = defaultdict(list)  # escape event index -> [event index using its value]
        for e in self.ev:
            for r in e.inputs:
                self.consumers[r.tid].append(e.index)
            for l in e.detail.get("links", ()) if e.detail else ():
                if isinstance(l, int) and 0 <= l < len(self.ev):
                    self.value_users[l].append(e.index)
        self.trainable = set(data.meta.get("trainable") or ())
        self._verdicts_done = False
        self._reach_cache: dict = {}
        self.now: dict = {}  # live facts per tid (set_now)
        self._status_cache: dict = {}

    # --- helpers -----------------------------------------------------------------------------
    def _label(self, filename: str) -> str:
        return self._labels.get(filename, "")

    def _late_binding(self, h: Event) -> str | None:
        """The free variable a hook shares with other hooks registered at the same line (lambdas made in a
        loop all read the loop variable's last value), or None."""
        cells = h.detail.get("cells")
        if not cells or h.site is None:
            return None
        vals = h.detail.get("cell_values") or []
        for o in self.ev:
            if o is not h and o.kind == "hook" and o.site is not None and o.site.stack == h.site.stack:
                ovals = o.detail.get("cell_values") or []
                ocells = o.detail.get("cells") or []
                for i, c in enumerate(cells):
                    if c not in ocells:
                        continue
                    # the same cell, holding different values when each hook was made: a loop variable
                    a = vals[i] if i < len(vals) else None
                    j = ocells.index(c)
                    b = ovals[j] if j < len(ovals) else None
                    if a is not None and b is not None and a != b:
                        names = h.detail.get("freevars") or []
                        return names[i] if i < len(names) else "a variable"
        return None

    def _hook_fix(self, h: Event, default: str) -> str:
        var = self._late_binding(h)
        if var is None:
            return default
        return (f"the hooks registered on this line all read `{var}` when they run, i.e. its last value (Python closures "
                f"bind late); bind the value when you create each hook: `lambda g, {var}={var}: ...` or "
                f"functools.partial.")

    def _hook_site(self, h: Event) -> Site | None:
        """Where a registered hook returns its value (else where it was registered)."""
        fr = h.detail.get("hook_return")
        if not fr:
            return h.site
        return self._frame_site(Frame.from_json(fr), h.site.stack if h.site else ())

    def _frame_site(self, f: Frame, outer=()) -> Site:
        """A Site for a line the recorder found by reading code (a hook's or backward's return),
        under the user frames ``outer`` that led there."""
        return Site(f.filename, f.lineno, f.function, f.code, tuple(outer) + (f,), self._label(f.filename))

    def label(self, tid) -> str:
        t = self.d.tensors.get(tid)
        if t is None:
            return f"t{tid}"
        if t.name:
            return t.name
        if tid in self.aliases:
            return self.aliases[tid]
        p = self.d.producer(tid)
        if p is not None and p.site is not None and p.site.code:
            last = self._last_on_line(p)
            if last is p and tid in p.output_ids():
                m = _ASSIGN.match(p.site.code)
                if m:
                    return m.group(1)
        return f"t{tid}"

    def _last_on_line(self, e: Event) -> Event:
        """The last event recorded on the same source line (the one whose result is assigned)."""
        last = e
        n = len(e.site.stack) if e.site else 0
        for j in range(e.index + 1, min(len(self.ev), e.index + 64)):
            x = self.ev[j]
            if x.site is e.site or (x.site and e.site and x.site.stack == e.site.stack):
                if x.kind not in ("grad_mode", "module", "backward"):
                    last = x
            elif x.site and e.site and len(x.site.stack) > n and x.site.stack[:n] == e.site.stack \
                    and x.kind not in ("grad_mode", "module", "backward"):
                # a function called later from the same line (`loss = f(model(x))`): its result, not this
                # event's, is what the line assigns
                return x
            else:
                break
        return last

    def _backward_events(self):
        return [e for e in self.ev if e.kind == "backward"]

    def _events_on(self, tid):
        return [self.ev[i] for i in self.consumers.get(tid, ())]

    # --- reachability --------------------------------------------------------------------------
    def ancestors(self, root_tids, before: int | None = None) -> set:
        """Event indices whose results flowed (as tensors or as linked values) into the roots."""
        key = (tuple(sorted(root_tids)), before)
        hit = self._reach_cache.get(key)
        if hit is not None:
            return hit
        seen_t = set()
        seen_e = set()
        q = deque(root_tids)
        while q:
            tid = q.popleft()
            if tid in seen_t:
                continue
            seen_t.add(tid)
            producers = []
            p = self.d.producer(tid)
            if p is not None:
                producers.append(p)
            # in-place writes into tid also feed it
            for i in self.consumers.get(tid, ()):
                x = self.ev[i]
                if x.kind in ("inplace", "cut") and x.detail.get("target") == tid and (before is None or x.index < before):
                    producers.append(x)
            for e in producers:
                if e.index in seen_e or (before is not None and e.index >= before):
                    continue
                seen_e.add(e.index)
                for r in e.inputs:
                    q.append(r.tid)
                for l in e.detail.get("links", ()):
                    if isinstance(l, int) and 0 <= l < len(self.ev) and l not in seen_e:
                        seen_e.add(l)
                        for r in self.ev[l].inputs:
                            q.append(r.tid)
        self._reach_cache[key] = seen_e
        return seen_e

    def path_to(self, tid, root_tids, before: int | None = None, no_writes: bool = False):
        """Shortest data path (list of events) from tensor ``tid`` to one of the roots. ``no_writes``: not
        through in-place writes (an EMA update `t.mul_(a).add_(b * p)` carries values, not the forward)."""
        anc = self.ancestors(root_tids, before)
        roots = set(root_tids)
        prev = {}
        q = deque([("t", tid)])
        seen = {("t", tid)}
        while q:
            kind, x = q.popleft()
            if kind == "t":
                if x in roots and x != tid:
                    return self._rebuild(prev, ("t", x))
                for i in self.consumers.get(x, ()):
                    if no_writes and self.ev[i].kind == "inplace":
                        continue
                    if i in anc and ("e", i) not in seen:
                        seen.add(("e", i))
                        prev[("e", i)] = (kind, x)
                        q.append(("e", i))
            else:
                e = self.ev[x]
                nxt = [("t", o) for o in e.output_ids()]
                tgt = e.detail.get("target") if e.kind in ("inplace", "cut") else None
                if tgt is not None and not e.output_ids():  # a write: the value flows into its target
                    nxt.append(("t", tgt))
                nxt += [("e", j) for j in self.value_users.get(x, ()) if j in anc]
                for n in nxt:
                    if n not in seen:
                        seen.add(n)
                        prev[n] = (kind, x)
                        if n[0] == "t" and n[1] in roots:
                            return self._rebuild(prev, n)
                        q.append(n)
        if tid in roots:
            return []
        return None

    def _rebuild(self, prev, node):
        out = []
        while node in prev:
            if node[0] == "e":
                out.append(self.ev[node[1]])
            node = prev[node]
        out.reverse()
        return out

    def cone(self, tid, limit=100_000):
        """Events downstream of ``tid`` (tensors and linked values), in order."""
        seen_e = set()
        dead = set()
        seen_t = {tid}
        q = deque([tid])
        n = 0
        while q and n < limit:
            x = q.popleft()
            for i in self.consumers.get(x, ()):
                if i in seen_e:
                    continue
                seen_e.add(i)
                if self.ev[i].context in _NOT_FORWARD or self.ev[i].kind in _NOT_FLOW:
                    continue
                e = self.ev[i]
                if e.context == "library" and not any(self.consumers.get(o) for o in e.output_ids()):
                    dead.add(i)  # torch's own temporary (DDP broadcasting the parameters): not a use by the user
                    continue
                n += 1
                for o in e.output_ids():
                    if o not in seen_t:
                        seen_t.add(o)
                        q.append(o)
                for j in self.value_users.get(i, ()):
                    if j not in seen_e:
                        seen_e.add(j)
                        for o in self.ev[j].output_ids():
                            if o not in seen_t:
                                seen_t.add(o)
                                q.append(o)
        return [self.ev[i] for i in sorted(seen_e)
                if self.ev[i].context not in _NOT_FORWARD and self.ev[i].kind not in _NOT_FLOW and i not in dead]

    # --- cut classification ---------------------------------------------------------------------
    def _cut_on_path(self, path, tid):
        """The first event on a path where gradient stopped, or None."""
        flowing = {tid}
        for k, e in enumerate(path):
            if e.context == "setup":  # torch's own conversion of the parameters (model.to / .double): not a cut
                flowing.update(e.output_ids())
                continue
            if e.kind == "cut" and e.cut != "zero_grad_op":
                if any(r.requires_grad for r in e.inputs) or e.cut in _ESCAPES or e.cut in ("data_set",):
                    return k, e
            if e.detail.get("links") and k > 0 and path[k - 1].kind == "cut":
                return k - 1, path[k - 1]
            if e.kind in ("op", "module") and e.context == "user":
                ins = [r for r in e.inputs if r.tid in flowing] or list(e.inputs)
                if ins and any(r.requires_grad for r in ins) and e.outputs and not any(r.requires_grad for r in e.outputs):
                    return k, e
            flowing.update(e.output_ids())
        return None

    def _copied_into_new_param(self, steps, tid, name):
        """After the cut, the values were copied into a different trainable parameter (a rebuilt model loaded with
        load_state_dict): the forward uses that new parameter, the optimizer this one. param_recreated at the
        new parameter's creation (the user's `model = build(cfg)` is in its stack)."""
        owners = self.d.meta.get("param_owner") or {}
        for x in steps:
            # a whole-value copy (load_state_dict, copy_), not an EMA update (mul_/add_/lerp_)
            tgt = x.detail.get("target") if x.kind == "inplace" and _opname(x) in ("copy_", "set_") else None
            info = self.d.tensors.get(tgt) if tgt is not None else None
            if info is None or tgt == tid or info.role != "param" or not info.requires_grad:
                continue
            if self.trainable and tgt in self.trainable:
                continue  # (both held by an optimizer: not a stale copy)
            if self.trainable and tid not in self.trainable:
                continue
            o = owners.get(str(tgt))
            site = Site.from_json(o["site"]) if o and o.get("site") else x.site
            new = self.label(tgt)
            return Explanation(
                "param_recreated", site, name,
                f"{name}.grad is None: its values were copied{_at(x.site)}{_code(x.site)} into a new parameter "
                f"({new}) created{_at(site)}{_code(site)}; the forward uses the new one, while the optimizer holds "
                f"this one.",
                detail="Rebuilding a model and loading a state_dict into it creates new Parameter objects; an "
                       "optimizer built earlier keeps the old ones, which no longer take part in the forward.",
                fix="build the optimizer after the model is rebuilt and loaded, or load the state into the existing "
                    "model (model.load_state_dict(...)) instead of a new instance.",
                evidence=[x])
        return None

    def _custom_output_cut(self, path, name):
        """A custom autograd.Function whose output (used outside it) does not require grad although what went
        in did: ctx.mark_non_differentiable() on it, or forward() called directly instead of .apply()."""
        for k in range(len(path) - 1):
            e, nx = path[k], path[k + 1]
            if e.context != "custom_function" or nx.context == "custom_function":
                continue
            passed = set(e.output_ids()) & set(nx.input_ids())
            refs = [r for r in nx.inputs if r.tid in passed]
            if not refs or any(r.requires_grad for r in refs):
                continue
            j = k
            while j > 0 and path[j - 1].context == "custom_function":
                j -= 1
            if not any(r.requires_grad for r in path[j].inputs):
                continue
            fn = e.site.function if e.site else ""
            cls = fn.rsplit(".", 1)[0] if "." in fn else "the custom Function"
            hit = _find_in_function(e.site.filename, e.site.lineno, "mark_non_differentiable(") if e.site else None
            if hit is not None:
                site = Site(e.site.filename, hit[0], fn, hit[1], e.site.stack[:-1] + (Frame(e.site.filename, hit[0], fn,
                                                                                               hit[1]),),
                            self._label(e.site.filename))
                return Explanation(
                    "nondifferentiable_op", site, name,
                    f"{name}.grad is None: the custom autograd.Function {cls} marks its output non-differentiable"
                    f"{_at(site)}{_code(site)}, so autograd treats that output as a constant and never calls its "
                    f"backward.",
                    detail="ctx.mark_non_differentiable() is for outputs that cannot have a gradient (integer indices, "
                           "masks); a marked output gets no grad_fn.",
                    fix="remove ctx.mark_non_differentiable(...) for outputs that should carry gradient; the "
                        "Function's backward() is then used (a straight-through estimator needs no mark).",
                    evidence=[e, nx])
            return Explanation(
                "nondifferentiable_op", nx.site, name,
                f"{name}.grad is None: the result of {cls}{_at(nx.site)}{_code(nx.site)} does not require grad "
                f"although its input did: its forward ran without autograd recording it.",
                detail="A custom Function's output gets a grad_fn only through Function.apply, and only if it is not "
                       "marked non-differentiable.",
                fix="call the Function through .apply(...) (not .forward(...)), and do not mark outputs that should "
                    "carry gradient with ctx.mark_non_differentiable().", evidence=[e, nx])
        return None

    def _cause_of_cut(self, e: Event, path=None, k=None):
        """(cause, site event) for a cut event, looking ahead for numpy/item/tolist after a detach."""
        cause = CUT_CAUSE.get(e.cut or "", None)
        site_e = e
        if e.cut in ("detach", "data"):
            # follow the detached value a few steps (cpu(), contiguous(), ...): does it leave torch?
            frontier = set(e.output_ids())
            for x in self.ev[e.index + 1: e.index + 12]:
                if not frontier.intersection(x.input_ids()):
                    continue
                if x.kind == "cut" and x.cut in _ESCAPES:
                    # it left torch there if the escape is written with the detach (`y.detach().numpy()`) or is
                    # on the way (its value used again): a detached loss logged with .item() later was cut by the detach
                    same = x.site is not None and e.site is not None and x.site.stack == e.site.stack
                    if same or (path is not None and x in path) or self.value_users.get(x.index):
                        return CUT_CAUSE[x.cut], x
                    break
                if x.kind == "cut" and x.cut == "rewrap" and x.site and e.site and x.site.lineno == e.site.lineno \
                        and x.site.filename == e.site.filename:
                    return "tensor_rewrap", x
                if _opname(x) in _VALUE_KEEPING:  # (not through computations: `loss.item()` logged later is not it)
                    frontier.update(x.output_ids())
        if cause == "no_grad_block":
            g = self._governing_grad_mode(e)
            if g is not None and g.detail.get("lib_fn"):
                lib = g.detail["lib_fn"].rsplit(".", 1)[-1]
                if lib in _PARAMETRIZERS:  # it moved the weight into new Parameters: the old one is left behind
                    return "param_recreated", site_e
                return "nondifferentiable_op", site_e
        if cause is None:
            if not e.grad_enabled:
                cause = "no_grad_block"
            elif e.inference_mode:
                cause = "inference_mode"
            else:
                cause = "nondifferentiable_op"
        return cause, site_e

    def _governing_grad_mode(self, e: Event):
        for j in range(e.index - 1, max(-1, e.index - 5000), -1):
            g = self.ev[j]
            if g.kind == "grad_mode" and g.detail.get("enabled") is False:
                return g
            if g.kind == "grad_mode" and g.detail.get("enabled") is True:
                return None
        return None

    def _region_site(self, e: Event) -> Site | None:
        """For a result computed with grad off: the line that switched it off, which is what the user changes.

        The innermost `with torch.no_grad():` / inference_mode / set_grad_enabled(False) block or
        ``@torch.no_grad()`` decorator around the op in the user's frames (read from the source), else the
        recorded switch (a set_grad_enabled(False) call, the user's call into a library function that switches
        grad off). The op's own stack is kept as the site's stack: the line that ran inside stays visible."""
        s = e.site
        if s is None or e.cut not in ("no_grad", "inference_mode", None):
            return s
        want = ("inference_mode",) if e.inference_mode else ("no_grad", "set_grad_enabled", "inference_mode")
        frames = s.stack or (s.frame(),)
        for fr in reversed(frames):
            for line, code, _kind in _source.region_openers(fr.filename, fr.lineno):
                if any(w in code for w in want):
                    return Site(fr.filename, line, fr.function, code, s.stack, self._label(fr.filename))
        if e.inference_mode:
            return s
        for j in range(e.index - 1, -1, -1):
            g = self.ev[j]
            if g.kind == "grad_mode" and g.context == "user" and g.site is not None:
                if g.detail.get("enabled") is False:
                    return Site(g.site.filename, g.site.lineno, g.site.function, g.site.code, s.stack, g.site.label)
                break
        return s

    def _computed_once_reused(self, e: Event) -> str:
        """For a value made (under no_grad / inference_mode) whose line never ran again although the function
        holding it (or one around it) was called again later: a cache filled once (e.g. by a validation call)
        and reused. Returns that function's name; else ""."""
        if e.site is None or not e.site.stack:
            return ""
        key = (e.site.filename, e.site.lineno)
        later = [x for x in self.ev[e.index + 1:] if x.site is not None and x.kind not in ("module", "backward", "grad_mode")]
        for fr in reversed(e.site.stack):  # the cut's own function first, then its callers
            if fr.function in ("<module>", "", None):
                break
            fn = (fr.filename, fr.function)
            left = False
            again = None
            for j, x in enumerate(later):
                if any((f.filename, f.function) == fn for f in x.site.stack):
                    if left:
                        again = j
                        break
                else:
                    left = True
            if again is not None:
                if any((x.site.filename, x.site.lineno) == key for x in later[again:]):
                    return ""  # called again, and computed it again
                name = fr.function
                return name.rsplit(".", 1)[0] if name.endswith(".forward") else name
        return ""

    def _froze_everything(self, e: Event):
        """(sentence, fix) when the line that froze this parameter froze every parameter in the trace (a freeze loop
        over named_modules() meets the whole model first, as ""), else None."""
        if e.site is None:
            return None
        frozen = {t for x in self.ev if x.kind == "requires_grad" and x.detail.get("value") is False
                  and x.site is not None and x.site.stack == e.site.stack for t in x.input_ids()}
        params = {t.tid for t in self.d.tensors.values() if t.role == "param"}
        if len(frozen) < 2 or not params or not params <= frozen:
            return None
        loop = _find_in_function(e.site.filename, e.site.lineno, "named_modules(") if e.site.function else None
        why = f"That line froze every parameter in the step ({len(frozen)})" + (
            ": a loop over named_modules() meets the whole model first (its name is \"\"), and requires_grad_ "
            "on it freezes everything." if loop else ".")
        if not loop:
            return why, None
        owner = _receiver(loop[1], ".named_modules(") or "the model"
        return why, (f"freeze by parameter name instead (`for n, p in {owner}.named_parameters(): "
                     f"p.requires_grad_(<condition on n>)`), or skip the root module (name == \"\").")

    def _grad_off_elsewhere(self, e: Event) -> str:
        """For a cut made with grad off: when grad was switched off by a call that is not a `with` line or
        decorator in the cut's own call chain (a context manager's __enter__, a helper, a global switch),
        the sentence naming it; else ""."""
        if e.site is None or e.cut != "no_grad":
            return ""
        for j in range(e.index - 1, -1, -1):
            g = self.ev[j]
            if g.kind != "grad_mode" or g.context != "user" or g.site is None:
                continue
            if g.detail.get("enabled") is not False:
                return ""
            if any(fr.filename == g.site.filename and fr.function == g.site.function for fr in e.site.stack):
                return ""  # a `with torch.no_grad():` / decorator the user can see around the line
            fn = g.site.function
            code = g.site.code.split('#')[0].strip()
            gen = code.startswith("with ")  # a `with` in a function not on the stack: a suspended generator
            return (f"grad was switched off by `{code or _short(g.op)}`"
                    f"{_at(g.site)}" + (f" (in {fn})" if fn and fn != "<module>" else "")
                    + (f", and {fn or 'that generator'} yields inside that block, so grad stays off in the caller "
                       f"until it resumes" if gen else ""))
        return ""

    # --- public: why ----------------------------------------------------------------------------
    def why(self, tid, now=None) -> Explanation:
        self.query_tids.add(tid)
        d = self.d
        info = d.tensors[tid]
        name = self.label(tid)
        g = info.grad
        if now is not None:
            status = now["status"]
            requires_grad = now["requires_grad"]
            is_leaf = now["is_leaf"]
            retains = now["retains_grad"]
        else:
            status = self.recorded_status(tid)
            requires_grad = info.requires_grad
            is_leaf = info.is_leaf
            retains = info.retains_grad
            for e in self.ev:
                if e.kind == "requires_grad" and e.detail.get("value") is not None and tid in e.input_ids():
                    requires_grad = e.detail["value"]
        norm = (now or {}).get("norm") if now else (g.norm if g else None)
        if now is not None:
            self.set_now({**self.now, tid: now})
        exp = None
        used = self.cleared_after_use(tid) if status in ("none", "zero") else None
        if used is not None:  # backward filled it, its consumers read it, then it was cleared: as it should be
            exp = self._ok_cleared(tid, name, used, status)
            status = "received"
        elif status in ("received", "zero", "nonfinite"):
            exp = self._corrupted(tid, name, status)
        if exp is not None:
            pass
        elif status == "received":
            exp = self._ok(tid, name, norm)
        elif status == "nonfinite":
            exp = self._nonfinite(tid, name)
        elif status == "zero":
            exp = self._zero(tid, name)
        else:
            exp = self._none(tid, name, requires_grad, is_leaf, retains)
        if status != "received" and requires_grad and info.role == "param" and not self.trains(tid):
            exp = self._not_trained(tid, name, exp, status)
        exp.target = exp.target or name
        exp.status = "received" if status == "received" else status
        if status in ("none", "zero") and exp.cause in _FLOW_CAUSES:
            self._name_other_cuts(tid, exp)
        exp.site = statement_site(exp.site)
        also = (d.meta.get("tied_params") or {}).get(str(tid))
        if also and status != "received":  # the same Parameter under another name (tied weights)
            exp.summary += f" ({', '.join(f'`{a}`' for a in also[:3])} is the same Parameter: the weights are tied.)"
        return exp

    def _name_other_cuts(self, tid, exp):
        """Every other cut on the way from ``tid`` to a backward root (a comparison on one path, a detach on
        another): named after the main one, in the order they ran, as extra sites."""
        roots = set()
        for e in self._backward_events():
            if e.op != "torch.autograd.grad":
                roots.update(e.detail.get("roots") or e.input_ids())
        if not roots:
            return
        anc = self.ancestors(list(roots))
        have = {e.index for e in exp.evidence if isinstance(e, Event)}
        seen = {(exp.site.filename, exp.site.lineno)} if exp.site else set()
        extra = []
        for e in self.cone(tid):
            if e.kind != "cut" or e.cut == "zero_grad_op" or e.context != "user" or e.index in have or e.site is None:
                continue
            if not any(r.requires_grad for r in e.inputs):
                continue
            down = e.index in anc or any(j in anc for j in self.value_users.get(e.index, ()))
            site = statement_site(self._region_site(e) if e.cut in ("no_grad", "inference_mode") else e.site)
            if not down or (site.filename, site.lineno) in seen:
                continue
            seen.add((site.filename, site.lineno))
            extra.append((e, site))
        if not extra:
            return
        exp.extra_sites.extend(site for _, site in extra)
        exp.evidence.extend(e for e, _ in extra)
        named = "; ".join(f"{_as_written(e)}{_at(site)}{_code(site)} ({CUT_CAUSE.get(e.cut, e.cut)})"
                          for e, site in extra[:4])
        exp.summary += (f" It is also cut on {'another path' if len(extra) == 1 else f'{len(extra)} other paths'}: "
                        f"{named}" + ("; …" if len(extra) > 4 else "") + ".")
        exp.fix += " Fix each of the other cuts as well, or the gradient stays cut on those paths."

    def _ok(self, tid, name, norm):
        bw = [b for b in self.d.backwards if tid in b.leaf_grads and b.leaf_grads[tid].status == "received"]
        site = None
        root = None
        if bw:
            b = bw[-1]
            if b.roots:
                root = self._root_label(self.ev[b.event])
                p = self.d.producer(b.roots[0])
                site = p.site if p else self.ev[b.event].site
        n = f" (norm {norm:.3g})" if isinstance(norm, (int, float)) and norm is not None else ""
        via = f" from backward on `{root}`" if root else ""
        info = self.d.tensors.get(tid)
        if self.trainable and tid not in self.trainable and info is not None and info.is_leaf and any(
                e.kind == "optimizer_step" for e in self.ev):
            # it learns nothing: no optimizer holds it (a module in a plain list/dict is not registered)
            unfrozen = [e for e in self.ev if e.kind == "requires_grad" and tid in e.input_ids()
                        and e.detail.get("value") is True]
            if unfrozen and any(e.kind == "requires_grad" and tid in e.input_ids() and e.detail.get("value") is False
                                and e.index < unfrozen[-1].index for e in self.ev):
                u = unfrozen[-1]
                return Explanation(
                    "ok", site, name,
                    f"{name}.grad is set and non-zero{n}: gradient flows{via}; but no optimizer in the trace holds "
                    f"{name}: it was frozen when the optimizer's parameters were chosen and unfrozen only later"
                    f"{_at(u.site)}{_code(u.site)}, so optimizer.step() never updates it.",
                    detail="An optimizer keeps the parameter list it was given; unfreezing a parameter afterwards "
                           "does not add it (e.g. `[p for p in model.parameters() if p.requires_grad]`).",
                    fix="add the unfrozen parameters with optimizer.add_param_group({'params': ...}), or build the "
                        "optimizer over all parameters and freeze with requires_grad only.")
            return Explanation(
                "ok", site, name,
                f"{name}.grad is set and non-zero{n}: gradient flows{via}; but no optimizer in the trace holds "
                f"{name}, so optimizer.step() never updates it.",
                detail="model.parameters() only lists registered parameters: modules kept in a plain Python list or "
                       "dict, or tensors stored as plain attributes, are not registered.",
                fix="register it (nn.ModuleList / nn.ModuleDict / nn.ParameterList, or nn.Parameter as a module "
                    "attribute) before building the optimizer, or add it with optimizer.add_param_group.")
        return Explanation("ok", site, name, f"{name}.grad is set and non-zero{n}: gradient flows{via}.",
                           fix="nothing to fix.")

    def _ok_cleared(self, tid, name, used, status):
        fill, clear, readers = used
        b = next((x for x in self.d.backwards if x.event == fill.index), None)
        gi = b.leaf_grads.get(tid) if b is not None else None
        n = f" (norm {gi.norm:.3g})" if gi is not None and isinstance(gi.norm, (int, float)) else ""
        root = self._root_label(fill)
        seen = []
        for r in readers:
            what = (f"{_receiver(_code_of(r), '.step(') or r.op.split('.')[0]}.step(){_at(r.site)}"
                    if r.kind == "optimizer_step" else f"clipping{_at(r.site)}")
            if what not in seen:
                seen.append(what)
        by = f", {' and '.join(seen[:2])} read it" if seen else ""
        how = "set it back to None" if clear.kind == "grad_set" else "zeroed it"
        now = "None" if status == "none" else "all zeros"
        return Explanation(
            "ok", fill.site, name,
            f"{name}.grad is {now} now, as it should be: backward from `{root}`{_at(fill.site)} filled it{n}{by}, "
            f"then {_clear_call(clear)}{_at(clear.site)} {how} for the next step. Gradient flows.",
            detail="Clearing gradients after their consumers (optimizer.step(), clipping, logging) have read them is "
                   "correct; only a read that finds them cleared is a bug.",
            fix="nothing to fix.", evidence=[fill, clear])

    def _not_trained(self, tid, name, inner, status):
        """A parameter the step does not train (no optimizer holds it; only used under no_grad or not used):
        a target network, an EMA teacher, a model being evaluated. Not a problem: say so, with the reason."""
        uses = [e for e in self._events_on(tid) if e.kind in ("op", "cut", "module") and e.context == "user"]
        grad_uses = [e for e in uses if e.grad_enabled]
        held = "no optimizer in the trace holds it" if self.trainable else "the trace saw no optimizer step"
        if uses and not grad_uses:
            u = inner.site or uses[0].site  # (the user's call line, when the explanation has it)
            how = f"it was only used with gradients disabled (first{_at(u)}{_code(u)})"
        elif not uses:
            how = "the step never used it"
        else:
            how = inner.summary.split(": ", 1)[-1].rstrip(".")
        now = "None" if status == "none" else ("all zeros" if status == "zero" else "not finite")
        return Explanation(
            "not_trained", inner.site, name,
            f"{name}.grad is {now}, but this step does not train {name}: {held} and {how}. That is how a target "
            f"network, an EMA teacher or a model being evaluated is used.",
            detail=inner.summary,
            fix=f"nothing to fix unless {name} should train; then "
                + ("hand it to an optimizer (its param_groups), and " if self.trainable else "") + inner.fix,
            path=inner.path, evidence=inner.evidence)

    def _nonfinite(self, tid, name):
        for b in reversed(self.d.backwards):
            if b.first_nonfinite is not None:
                node = b.nodes.get(b.first_nonfinite)
                e = self.ev[node.event] if node and node.event is not None else None
                site = e.site if e else None
                op = _opname(e) if e else (node.name if node else "?")
                return Explanation(
                    "nonfinite_gradient", site, name,
                    f"{name}.grad contains inf/nan: the first non-finite gradient came from {node.name} "
                    f"({op}{_at(site)}{_code(site)}).",
                    detail="Backward through this operation produced inf or nan from finite inputs "
                           "(e.g. sqrt or log at 0, division by zero, overflow).",
                    fix="guard the operation (add an epsilon, clamp its input) or use a numerically stable form.",
                    evidence=[e] if e else [])
        return Explanation("nonfinite_gradient", None, name, f"{name}.grad contains inf/nan.",
                           detail="The trace did not see which node produced it.", fix="check the loss and inputs for inf/nan.")

    # zero --------------------------------------------------------------------------------------
    def _grad_tensor_tids(self, tid):
        out = {}
        for e in self.ev:
            if e.kind == "backward":
                for g, leaf in (e.detail.get("grad_tensors") or {}).items():
                    if int(leaf) == tid:
                        out[int(g)] = e.index
        return out

    def _zeroed_after_backward(self, tid, name):
        """The gradient arrived non-zero, then something wrote zeros into .grad."""
        got = [b for b in self.d.backwards if b.api != "torch.autograd.grad" and tid in b.leaf_grads
               and b.leaf_grads[tid].status == "received"]
        if not got:
            return None
        last = got[-1].event
        gts = self._grad_tensor_tids(tid)
        for e in self.ev[last + 1:]:
            if e.kind != "inplace":
                continue
            targets = e.detail.get("targets") or [e.detail.get("target")]
            grads_of = e.detail.get("grads_of") or [e.detail.get("grad_of")]
            if tid not in grads_of and not any(t in gts for t in targets if t is not None):
                continue
            op = _opname(e)
            if op in ("zero_", "fill_", "_foreach_zero_") or "zero_grad" in (e.site.code if e.site else ""):
                t = self.timing_problem(tid)  # only a read that found the zeros is the bug (evidence)
                return self._timing_explanation(tid, name, *t) if t is not None else None
            return Explanation(
                "zero_gradient", e.site, name,
                f"{name}.grad is all zeros: backward filled it, then {op}{_at(e.site)}{_code(e.site)} scaled it to "
                f"zero.",
                detail="The gradient was multiplied by zero after backward.",
                fix=(f"check the factor in `{_plain(e.site)}`: it scales the gradient to zero"
                     + (" (max_norm must be > 0)" if "clip" in op else "") + "."), evidence=[e])
        return None

    def _timing_explanation(self, tid, name, e, read):
        """`.grad` cleared after backward (``e``) and read cleared afterwards (``read``)."""
        via = _clear_call(e)
        zeroed = e.kind == "inplace"
        found = "zeros" if zeroed else "None"
        if read.kind == "optimizer_step":
            reader = (f"{_receiver(_code_of(read), '.step(') or read.op.split('.')[0]}.step(){_at(read.site)} read it "
                      f"and found {found}"
                      + ("" if zeroed else ", so it skipped the parameter"))
        elif read.context == "clip":
            reader = f"clipping{_at(read.site)}{_code(read.site)} read it and found {found}"
        else:
            reader = f"{_code(read.site).strip() or 'a read'}{_at(read.site)} read it and found {found}"
        what = "wrote zeros into it" if zeroed else "set it back to None"
        owners = {s.site.stack if s.site else s.index for s in self.ev
                  if s.kind == "optimizer_step" and tid in (s.detail.get("params") or ())}
        if via == "zero_grad()" and len(owners) > 1 and not zeroed:  # two optimizers hold it: one's zero_grad
            # clears the other's
            return Explanation(
                "set_to_none_timing", e.site, name,
                f"{name}.grad is None: backward filled it, then {via}{_at(e.site)}{_code(e.site)} set it back "
                f"to None, and {reader}: {name} is in the param_groups of {len(owners)} optimizers, so "
                f"this zero_grad() clears it too.",
                detail="Each optimizer's zero_grad() clears every parameter it holds; an optimizer built from "
                       "model.parameters() holds the other model's parameters as well.",
                fix="give each optimizer only the parameters of the model it trains (build it from that "
                    "model's .parameters(), not from a container that holds both).",
                evidence=[e, read])
        return Explanation(
            "set_to_none_timing", e.site, name,
            f"{name}.grad is {'all zeros' if zeroed else 'None'}: backward filled it, then {via}{_at(e.site)}"
            f"{_code(e.site)} {what} before its consumer: {reader}.",
            detail=("zero_grad() (set_to_none=False) writes zeros into the existing .grad tensors" if zeroed else
                    "zero_grad() sets gradients to None by default (set_to_none=True)")
                   + "; anything that reads them after it and before the next backward (clipping, logging, "
                     "optimizer.step()) sees no gradient.",
            fix=f"move {via} after the last read of the gradients (after optimizer.step()) or to the start of the "
                f"step, before backward.",
            evidence=[e, read])

    def _zero(self, tid, name):
        z = self._zeroed_after_backward(tid, name)
        if z is not None:
            return z
        hooks = [e for e in self.ev if e.kind == "hook" and tid in e.input_ids()]
        info = self.d.tensors.get(tid)
        if info is not None and not info.is_leaf:  # a retained activation (retain_grad): its own grad_fn node
            r = self._zero_retained(tid, name, hooks)
            if r is not None:
                return r
        for b in reversed(self.d.backwards):
            if tid not in b.leaf_grads:
                continue
            arrived = b.arrived.get(tid)
            if hooks and arrived and (arrived > 0 or arrived == -1.0):  # (-1: sent, not measured)
                return self._hook_replaced(hooks[-1], name, arrived)
            # find the node that turned a non-zero incoming gradient into zero on the way to the leaf
            node, e = self._zeroing_node(b, tid)
            if node is not None and node.custom_backward is not None and e is None:
                f = node.custom_backward
                site = self._frame_site(f)
                fn = node.name.replace("Backward", "")
                return Explanation(
                    "custom_function", site, name,
                    f"{name}.grad is all zeros: the custom autograd.Function {fn} returns a zero gradient"
                    f"{_at(site)}{_code(site)}, so nothing flows back to {name}.",
                    detail="Everything before a custom Function gets only what its backward() returns.",
                    fix=f"implement the real derivative in {fn}.backward (check it with torch.autograd.gradcheck).",
                    evidence=[])
            if node is not None and "BackwardHook" in node.name:
                mh = self.d.meta.get("module_hooks") or {}
                frames = [(p, Frame.from_json(f)) for p, fs in mh.items() for f in fs]
                if frames:
                    path, f = frames[0]
                    site = self._frame_site(f)
                    return Explanation(
                        "hook_modified", site, name,
                        f"{name}.grad is all zeros: the backward hook on module `{path or 'the model'}` returns a zero "
                        f"gradient{_at(site)}{_code(site)}, so nothing flows back to {name}.",
                        detail="What a module backward hook (register_full_backward_hook) returns replaces the "
                               "gradient with respect to the module's inputs.",
                        fix="return None from the hook to keep the gradient, or fix the scaling it applies.",
                        evidence=[])
            if e is not None:
                hk = [h for h in self.ev if h.kind == "hook" and set(h.input_ids()) & set(e.output_ids())]
                if hk:
                    h = hk[-1]
                    site = self._hook_site(h)
                    tn = self.label(h.input_ids()[0])
                    return Explanation(
                        "hook_modified", site, name,
                        f"{name}.grad is all zeros: the hook on `{tn}` registered{_at(h.site)} returns a zero gradient"
                        f"{_at(site)}{_code(site)}, so nothing flows back to {name}.",
                        detail="A tensor hook's return value replaces the gradient flowing through that tensor.",
                        fix=self._hook_fix(h, f"check what the hook returns (`{_plain(site)}` is zero here); "
                                              f"return None from the hook to leave the gradient unchanged."),
                        evidence=[h, e])
                op = _opname(e)
                is_nd = e.cut == "zero_grad_op" or op in _ZERO_OPS
                cause = "nondifferentiable_op" if is_nd else "zero_gradient"
                if is_nd and op.startswith("normal"):
                    why = "torch.normal(mean, std) draws a sample; PyTorch defines its gradient as zero"
                    fix = ("reparameterise: `mean + std * torch.randn_like(std)` (or "
                           "torch.distributions.Normal(mean, std).rsample()), so gradients reach mean and std.")
                elif is_nd and op.startswith(("bernoulli", "poisson", "binomial", "multinomial")):
                    why = f"{op}() draws a random sample; PyTorch defines its gradient as zero"
                    fix = ("use a relaxed sample (torch.distributions.RelaxedBernoulli(...).rsample(), gumbel-sigmoid) "
                           "or a straight-through estimator `p + (torch.bernoulli(p) - p).detach()`.")
                elif is_nd:
                    why = f"{op}() has a zero derivative almost everywhere"
                    f = op if op in ("round", "sign", "floor", "ceil", "trunc", "heaviside") else "round"
                    what_kept = {"sign": "sign", "heaviside": "step"}.get(f, f"{f}ed value").replace("trunced", "truncated")
                    fix = (f"use a straight-through estimator: `x + (torch.{f}(x) - x).detach()` keeps the {what_kept} "
                           f"in the forward and passes the gradient through unchanged.")
                else:
                    why = self._zero_reason(op)
                    fix = self._zero_fix(op, e.site)
                    if self._single_class(e):
                        why = (f"{op}() over a class dimension of size 1: the softmax of a single logit is always 1, so "
                               f"the loss is constant and its gradient is exactly zero.")
                        fix = ("for one output unit use BCEWithLogitsLoss (binary), or give the model one output per "
                               "class for cross_entropy (with integer class labels).")
                    elif ("relu" in op or "clamp" in op) and self._feeds_loss_directly(e, b):
                        # a hinge (triplet / margin / hinge loss): every term is already satisfied
                        why = (f"{op}() here is a hinge inside the loss (max(0, ...)): every term was <= 0, so the "
                               f"loss is exactly 0 and sends no gradient back (all examples already satisfy it).")
                        fix = (f"check the margin in `{_plain(e.site)}` (it must be positive for the hinge to "
                               f"give gradient) or use harder examples (hard-negative mining).")
                site = e.site
                return Explanation(
                    cause, site, name,
                    f"{name}.grad is all zeros: gradient reaches {op}{_at(site)}{_code(site)} but comes out as zero "
                    f"({node.name}), so nothing flows back to {name}.",
                    detail=why, fix=fix, evidence=[e])
        return Explanation("zero_gradient", None, name, f"{name}.grad is all zeros.",
                           detail="The trace did not record which operation zeroed it.",
                           fix="check activations for dead units and saturated clamps.")

    def _feeds_loss_directly(self, e, b) -> bool:
        """True when ``e``'s result reaches the backward root through reductions and arithmetic only (a few
        steps): a relu/clamp used as the hinge of a loss rather than as an activation."""
        roots = set(b.roots) if getattr(b, "roots", None) else set()
        if not roots:
            bev = self.ev[b.event] if 0 <= b.event < len(self.ev) else None
            roots = set((bev.detail.get("roots") or bev.input_ids()) if bev is not None else ())
        frontier = set(e.output_ids())
        for _ in range(4):
            if frontier & roots:
                return True
            nxt = set()
            for t in frontier:
                for i in self.consumers.get(t, ()):
                    c = self.ev[i]
                    if c.kind == "module":
                        continue
                    if _opname(c) not in ("mean", "sum", "add", "__add__", "__radd__", "mul", "__mul__", "__rmul__",
                                          "div", "__truediv__", "sub", "__sub__", "__rsub__", "pow", "__pow__"):
                        return False
                    nxt |= set(c.output_ids())
            if not nxt:
                return False
            frontier = nxt
        return bool(frontier & roots)

    def _single_class(self, e) -> bool:
        """A softmax / cross entropy over a class dimension of size 1: constant, zero gradient."""
        op = _opname(e)
        if not ("cross_entropy" in op or "softmax" in op or "nll" in op) or not e.inputs:
            return False
        t = self.d.tensors.get(e.inputs[0].tid)
        return t is not None and len(t.shape) >= 2 and t.shape[1] == 1

    @staticmethod
    def _zero_reason(op):
        if "relu" in op:
            return ("Every input to this ReLU was negative, so it passes back no gradient (a dead ReLU): "
                    "often from a large negative bias or a too-high learning rate.")
        if "clamp" in op or "clip" in op or "hardtanh" in op:
            return "Every value was outside the clamp range, so the clamp passes back no gradient (saturated)."
        if "mask" in op or "mul" in op or "where" in op:
            return "The gradient was multiplied by zero (a mask or gate that is all zero)."
        if "embedding" in op:
            return ("The rows looked up got no gradient: the embedding's padding_idx row never gets one, so when "
                    "every index is the padding index, the whole gradient is zero.")
        return "This operation's gradient was exactly zero for this input."

    @staticmethod
    def _zero_fix(op, site=None):
        code = f" `{_plain(site)}`" if _plain(site) else ""
        if "relu" in op:
            return f"check the initialisation of the layer before{code} (its bias), or use LeakyReLU/GELU."
        if "clamp" in op or "clip" in op or "hardtanh" in op:
            return f"check the scale of the values entering{code}: every one was outside the clamp range."
        if "embedding" in op:
            return f"check the indices passed to{code}: every one is the padding index."
        return f"check the values entering{code or ' this operation'}."

    def _hook_replaced(self, h, name, arrived):
        """A non-zero gradient arrived (norm ``arrived``; -1: sent, not measured) and the hook ``h`` zeroed it."""
        site = self._hook_site(h)
        post = bool(h.detail.get("post_accumulate"))
        return Explanation(
            "hook_modified", site, name,
            f"{name}.grad is all zeros: backward delivered a non-zero gradient"
            f"{f' (norm {arrived:.3g})' if arrived > 0 else ''}, but the "
            f"{'post-accumulate-grad ' if post else ''}hook {h.detail.get('hook', '')} registered"
            f"{' before the trace' if h.detail.get('before_trace') else _at(h.site)} "
            f"{'zeroed .grad' if post else 'replaced it'}{_at(site)}{_code(site)}.",
            detail=("A post-accumulate-grad hook runs after the gradient is stored in .grad and can change it in "
                    "place (pruning masks, optimizer-in-backward)." if post else
                    "Tensor hooks run before the gradient is accumulated into .grad; what the hook returns "
                    "replaces the gradient."),
            fix=self._hook_fix(h, f"check what the hook multiplies or overwrites .grad with in `{_plain(site)}` "
                                  f"(it is all zero here)." if post else
                               f"check the hook's arithmetic in `{_plain(site)}` (it returns zero here); return None "
                               f"from the hook to leave the gradient unchanged."),
            evidence=[h])

    def _zero_retained(self, tid, name, hooks):
        """.grad of a retained non-leaf is all zeros: what reached its grad_fn node, and who zeroed it."""
        p = self.d.producer(tid)
        if p is None:
            return None
        for b in reversed(self.d.backwards):
            node = next((n for n in b.nodes.values() if n.event == p.index), None)
            if node is None:
                continue
            sent = [q.out_norms[j] for q in b.nodes.values() for j, nx in enumerate(q.next)
                    if nx == node.nid and j < len(q.out_norms) and q.out_norms[j] is not None and q.ran]
            arrived = math.sqrt(sum(v * v for v in sent if v > 0)) if sent else None
            if hooks and arrived:
                return self._hook_replaced(hooks[-1], name, arrived)
            zn, e = self._zeroing_node(b, tid, start=[node])
            if e is not None:
                op = _opname(e)
                return Explanation(
                    "zero_gradient", e.site, name,
                    f"{name}.grad is all zeros: gradient reaches {op}{_at(e.site)}{_code(e.site)} but comes out as "
                    f"zero ({zn.name}), so nothing flows back to {name}.",
                    detail=self._zero_reason(op), fix=self._zero_fix(op, e.site), evidence=[e])
        return None

    def _zeroing_node(self, b, tid, start=None):
        leaf_nodes = start if start is not None else [n for n in b.nodes.values() if n.leaf == tid]
        if not leaf_nodes:
            return None, None
        parents = defaultdict(list)
        for n in b.nodes.values():
            for j, nx in enumerate(n.next):
                if nx is not None:
                    parents[nx].append((n, j))
        incoming = {}

        def inc(nid):
            if nid in incoming:
                return incoming[nid]
            if nid in b.root_nodes:
                incoming[nid] = 1.0
                return 1.0
            vals = [p.out_norms[j] for p, j in parents.get(nid, ()) if j < len(p.out_norms) and p.out_norms[j] is not None]
            incoming[nid] = math.sqrt(sum(v * v for v in vals)) if vals else 0.0
            return incoming[nid]

        q = deque(n.nid for n in leaf_nodes)
        seen = set(q)
        while q:
            nid = q.popleft()
            for p, j in parents.get(nid, ()):
                if not p.ran:
                    continue
                out = p.out_norms[j] if j < len(p.out_norms) else None
                if (out is None or out == 0.0) and inc(p.nid) > 0.0:
                    if p.event is not None or "BackwardHook" in p.name or p.custom_backward is not None:
                        return p, (self.ev[p.event] if p.event is not None else None)
                    # a node inside a recorded call (LogSoftmaxBackward0 inside cross_entropy): that call
                    up, hops = p, 0
                    while up.event is None and hops < 16:
                        ps = [q for q, _ in parents.get(up.nid, ()) if q.ran]
                        if len(ps) != 1:
                            break
                        up, hops = ps[0], hops + 1
                    if up.event is not None:
                        return p, self.ev[up.event]
                if p.nid not in seen:
                    seen.add(p.nid)
                    q.append(p.nid)
        return None, None

    # none --------------------------------------------------------------------------------------
    def _none(self, tid, name, requires_grad, is_leaf, retains):
        d = self.d
        info = d.tensors[tid]
        prod = d.producer(tid)
        if not is_leaf and retains:
            rg = [e for e in self.ev if _opname(e) == "retain_grad" and tid in e.input_ids()]
            bws = [e for e in self._backward_events() if e.op != "torch.autograd.grad"]
            if rg and bws and rg[0].index > bws[-1].index:
                site = prod.site if prod else rg[0].site
                return Explanation(
                    "non_leaf_no_retain_grad", site, name,
                    f"{name}.grad is None: `{name}` is not a leaf (computed{_at(site)}{_code(site)}) and "
                    f"retain_grad() was called only after backward{_at(rg[0].site)}, which is too late.",
                    detail="retain_grad() asks autograd to keep the gradient in later backward passes; it cannot "
                           "recover one that already ran.",
                    fix=f"call `{name}.retain_grad()` right after `{name}` is computed, before loss.backward().",
                    evidence=[x for x in (prod, rg[0]) if x])
        if not is_leaf and not retains:
            src = prod.inputs[0] if prod is not None and prod.inputs else None
            if (prod is not None and _opname(prod) in _TO_OPS and src is not None and src.is_leaf
                    and src.requires_grad):
                site = prod.site
                return Explanation(
                    "leaf_replaced_by_to", site, name,
                    f"{name}.grad is None: `{name}` was rebound{_at(site)}{_code(site)} to a .{_opname(prod)}() copy, "
                    f"which is not a leaf; the gradient went to the original tensor.",
                    detail="Only leaf tensors get .grad. A .to()/.double()/.float() result is a new, non-leaf tensor "
                           "that autograd passes the gradient through.",
                    fix=f"create the tensor with the dtype/device you need directly (pass dtype=/device= and "
                        f"requires_grad=True where it is made) instead of `{_plain(site)}`, or keep a name for the "
                        f"original leaf and read its .grad.",
                    evidence=[prod])
            site = prod.site if prod else None
            fix = (f"call `{name}.retain_grad()` right after it is created (before backward), or use "
                   f"torch.autograd.grad(loss, {name}).")
            if prod is not None and site is not None and "Parameter(" in (site.code or "") and any(
                    self.d.tensors.get(r.tid) is not None and self.d.tensors[r.tid].role == "param"
                    for r in prod.inputs):
                # `self.U = nn.Parameter(torch.randn(d, r)) * 0.02`: the Parameter is a temporary, the module
                # holds a computed tensor (not registered, not in the optimizer)
                m = re.search(r"((?:nn\.|torch\.nn\.)?Parameter)\((.*)\)\s*([-+*/@])\s*(.+)$", _plain(site))
                inside = f"`{m.group(1)}({m.group(2)} {m.group(3)} {m.group(4)})`" if m else "the Parameter(...) call"
                fix = (f"apply the arithmetic inside the Parameter: {inside}; as written, `{name}` is a computed "
                       f"tensor that the module does not register and the optimizer never sees (retain_grad() would "
                       f"show a .grad, but it would still never train).")
            return Explanation(
                "non_leaf_no_retain_grad", site, name,
                f"{name}.grad is None: `{name}` is not a leaf (it was computed{_at(site)}{_code(site)}), and PyTorch "
                f"only fills .grad of leaves unless retain_grad() is called.",
                detail="Gradient flows through non-leaf tensors but is not stored on them by default.",
                fix=fix, evidence=[prod] if prod else [])
        if requires_grad and is_leaf:
            uses = [e for e in self.ev if e.context == "user" and e.kind in ("op", "cut", "module")
                    and tid in e.input_ids()]
            late = [e for e in self.ev if e.kind == "requires_grad" and e.detail.get("value") and tid in e.input_ids()]
            if uses and late and all(not r.requires_grad for e in uses for r in e.inputs if r.tid == tid) \
                    and late[0].index > uses[0].index:
                site = prod.site if prod else uses[0].site
                return Explanation(
                    "requires_grad_false", site, name,
                    f"{name}.grad is None: `{name}` was created{_at(site)}{_code(site)} without requires_grad and "
                    f"used{_at(uses[0].site)} before requires_grad was turned on{_at(late[0].site)}, so the recorded "
                    f"graph does not contain it.",
                    detail="Autograd records an operation only if an input requires grad at the moment it runs.",
                    fix=f"create `{name}` with requires_grad=True (or call requires_grad_() before the forward pass).",
                    evidence=[x for x in (prod, uses[0], late[0]) if x])
        if not requires_grad:
            if info.role == "buffer":
                site = prod.site if prod else None
                return Explanation(
                    "requires_grad_false", site, name,
                    f"{name}.grad is None: `{name}` is a buffer of the model (created{_at(site)}{_code(site)}), not a "
                    f"parameter: buffers are state that autograd treats as constants.",
                    detail="Buffers (running statistics, position ids, masks) are saved with the model but never "
                           "trained; only nn.Parameter attributes get gradients.",
                    fix=f"nothing to fix if `{name}` is state; if it should train, make it an nn.Parameter "
                        f"instead of a buffer.", evidence=[prod] if prod else [])
            missed, note = self._unfreeze_missed(tid, name)
            if missed is not None:
                return missed
            req = [e for e in self.ev if e.kind == "requires_grad" and tid in e.input_ids() and e.detail.get("value") is False]
            if req:
                e = req[-1]
                whole = self._froze_everything(e)
                return Explanation(
                    "frozen_param", e.site, name,
                    f"{name}.grad is None: {name} was frozen{_at(e.site)}{_code(e.site)} (requires_grad=False), so "
                    f"autograd does not compute its gradient." + (f" {whole[0]}" if whole else "") + note,
                    detail="A tensor with requires_grad=False is treated as a constant.",
                    fix=whole[1] if whole and whole[1] else
                        f"set {py_expr(name)}.requires_grad_(True) again before the step that should train it, or fix the "
                        f"condition that froze it.",
                    evidence=[e])
            if info.role == "param":
                use = self._first_use(tid)
                own = (d.meta.get("param_owner") or {}).get(str(tid))
                if own and own.get("site"):
                    site = Site.from_json(own["site"])
                    return Explanation(
                        "frozen_param", site, name,
                        f"{name}.grad is None: {name} was created with requires_grad=False{_at(site)}{_code(site)}, "
                        f"so autograd treats it as a constant.{note}",
                        detail="nn.Parameter(..., requires_grad=False) and from_pretrained(..., freeze=True) create "
                               "frozen parameters.",
                        fix=("pass freeze=False in `" + _plain(site) + "`" if "freeze=True" in _plain(site) else
                             "create it with requires_grad=True") + f", or call "
                            f"{py_expr(name)}.requires_grad_(True) before building the optimizer.",
                        evidence=[use] if use else [])
                return Explanation(
                    "frozen_param", use.site if use else None, name,
                    f"{name}.grad is None: {name} has requires_grad=False (it was frozen before the trace started).{note}",
                    detail="A parameter with requires_grad=False is treated as a constant.",
                    fix=f"call {py_expr(name)}.requires_grad_(True) where the model is set up, if it should train.",
                    evidence=[use] if use else [])
            w = _sgd_rebind(prod.site) if prod is not None and not prod.grad_enabled else None
            if w:  # `w = w - lr * w.grad` under no_grad: the name now holds a new tensor, not the leaf that trained
                site = prod.site
                return Explanation(
                    "no_grad_block", site, name,
                    f"{name}.grad is None: `{w}` was rebound{_at(site)}{_code(site)} to the result of a manual update "
                    f"made under no_grad, a new tensor that does not require grad; the leaf that trained is no longer "
                    f"the one `{w}` names.",
                    detail="Under no_grad an out-of-place update creates a new tensor without history and rebinds the "
                           "name; the original leaf keeps its gradient but is not updated.",
                    fix=f"update it in place under no_grad so it stays the leaf that requires grad: `{w} -= lr * "
                        f"{w}.grad`, then `{w}.grad = None` (or use a torch.optim optimizer).",
                    evidence=[prod])
            site = prod.site if prod else (self._first_use(tid).site if self._first_use(tid) else None)
            return Explanation(
                "requires_grad_false", site, name,
                f"{name}.grad is None: `{name}` was created{_at(site)}{_code(site)} without requires_grad=True, so "
                f"autograd treats it as a constant.",
                detail="Only tensors created with requires_grad=True (or made to require it) get a gradient.",
                fix=f"create it with requires_grad=True, or call `{name}.requires_grad_()` right after creating it "
                    f"(as a leaf: not after an arithmetic operation).",
                evidence=[prod] if prod else [])
        bws = self._backward_events()
        real = [e for e in bws if e.op != "torch.autograd.grad"]
        failed = [b for b in d.backwards if b.error and any(n.leaf == tid for n in b.nodes.values())]
        if failed and d.exception is not None and failed[-1] is d.backwards[-1]:
            f = self.failure()
            if f is not None:
                return Explanation(
                    f.cause, f.site, name,
                    f"{name}.grad is None: the backward that should have reached it failed. {f.summary}",
                    detail=f.detail, fix=f.fix, path=f.path, evidence=f.evidence)
        if not bws:
            return Explanation(
                "no_backward", None, name,
                f"{name}.grad is None: no backward ran inside the trace.",
                detail="Gradients are only computed by loss.backward() (or torch.autograd.backward).",
                fix="call loss.backward() inside the traced block.")
        if not real:
            e = bws[-1]
            # torch.func.grad / grad_and_value / vjp run torch.autograd.grad inside functorch
            func_api = e.context == "functorch" or bool(e.site and re.search(r"(?<![\w.])(grad|grad_and_value|vjp)\(",
                                                                           _code(e.site)))
            api = "torch.func.grad" if func_api else "torch.autograd.grad"
            return Explanation(
                "autograd_grad_not_backward", e.site, name,
                f"{name}.grad is None: the step computed gradients with {api}{_at(e.site)}{_code(e.site)}, "
                f"which returns them instead of storing them in .grad.",
                detail=f"{api} never writes .grad; optimizer.step() then sees no gradients.",
                fix=("assign the returned gradients before optimizer.step(): torch.func.grad returns them in the "
                     "structure of its input, e.g. `for n, p in <module>.named_parameters(): p.grad = grads[n]`."
                     if func_api else
                     "use loss.backward() (then clip with torch.nn.utils.clip_grad_norm_), or assign the returned "
                     "gradients: `for p, g in zip(params, grads): p.grad = g`."),
                evidence=[e])
        cleared = self._hook_cleared(tid, name)
        if cleared is not None:
            return cleared
        # got a gradient, then lost it
        got = [b for b in d.backwards if b.api != "torch.autograd.grad" and tid in b.leaf_grads
               and b.leaf_grads[tid].status != "none"]
        if got:
            last = got[-1].event
            clears = [e for e in self.ev if e.kind == "grad_set" and e.index > last and tid in e.input_ids()
                      and e.detail.get("value") is None]
            # a later backward refills it only if it reaches it: the same backward line again (the next step
            # of the loop). Another loss's backward (a GAN's D step) that never reaches it does not.
            fill = self.ev[last]
            later_bw = [e for e in real if e.index > last and e.site is not None and fill.site is not None
                        and e.site.stack == fill.site.stack]
            if clears and not [b for b in later_bw if b.index > clears[-1].index]:
                # cleared on purpose (SAM, two-pass schemes), then the next gradients were computed with
                # torch.autograd.grad, which returns them instead of storing them: that call is the cause
                ag = [b for b in bws if b.op == "torch.autograd.grad" and b.index > clears[-1].index
                      and tid in (b.detail.get("inputs") or ())]
                if ag:
                    e = ag[-1]
                    return Explanation(
                        "autograd_grad_not_backward", e.site, name,
                        f"{name}.grad is None: it was cleared{_at(clears[-1].site)}, then its next gradient was computed "
                        f"with torch.autograd.grad{_at(e.site)}{_code(e.site)}, which returns it instead of storing it "
                        f"in .grad.",
                        detail="torch.autograd.grad(outputs, inputs) never writes .grad; optimizer.step() then sees no "
                               "gradients.",
                        fix="use loss.backward() for that pass, or assign the returned gradients: "
                            "`for p, g in zip(params, grads): p.grad = g`.",
                        evidence=[e, clears[-1]])
                t = self.timing_problem(tid)  # only a read that found it cleared is the bug (evidence)
                if t is not None:
                    return self._timing_explanation(tid, name, *t)
        # the backward graph reached the leaf: which node sent nothing?
        for b in reversed(d.backwards):
            if b.api == "torch.autograd.grad":
                continue
            leaf_nodes = [n for n in b.nodes.values() if n.leaf == tid]
            if not leaf_nodes:
                continue
            parents = defaultdict(list)
            for n in b.nodes.values():
                for j, nx in enumerate(n.next):
                    if nx is not None:
                        parents[nx].append((n, j))
            q = deque(l.nid for l in leaf_nodes)
            seen = set(q)
            while q:
                cur = q.popleft()
                for n, j in parents.get(cur, ()):
                    if not n.ran:
                        if n.nid not in seen:
                            seen.add(n.nid)
                            q.append(n.nid)
                        continue
                    out = n.out_norms[j] if j < len(n.out_norms) else None
                    if out is None and "CompiledFunction" in n.name:
                        mods = [e for e in self.ev if e.kind == "module" and e.op and name.startswith(e.op + ".")]
                        site = mods[0].site if mods else None
                        return Explanation(
                            "unknown", site, name,
                            f"{name}.grad is None: it is an input of the torch.compile'd region{_at(site)}, and that "
                            f"region sent it no gradient (judged from the gradients that arrived); whether it is "
                            f"unused or cut off happens inside compiled code, whose lines this backend hides.",
                            detail="A backend that compiles the backward too (aot_eager, inductor) runs the forward as "
                                   "one graph, so gradscope sees neither its source lines nor the operation that "
                                   "stopped the gradient.",
                            fix="trace the step with gradscope.trace(eager_compile=True) (`gradscope run "
                                "--eager-compile`), which runs the compiled code eagerly while recording, to get the "
                                "line; or use backend='eager'.", evidence=mods[:1])
                    if out is None and n.custom_backward is None and n.nid not in seen:
                        seen.add(n.nid)  # it passed on nothing because it got nothing: look further up
                        q.append(n.nid)
                    if out is None and n.custom_backward is not None:
                            direct = b.nodes.get(n.next[j]) is not None and b.nodes[n.next[j]].leaf == tid
                            which = f"({name})" if direct else f"(the path to {name})"
                            f = n.custom_backward
                            site = self._frame_site(f)
                            fe = self.ev[n.event] if n.event is not None else None
                            return Explanation(
                                "custom_function", site, name,
                                f"{name}.grad is None: the custom autograd.Function {n.name.replace('Backward', '')} "
                                f"returns None as the gradient for input {j} {which} at {site.short}{_code(site)}.",
                                detail="A custom Function's backward must return one gradient per forward input; "
                                       "None means 'no gradient' for that input.",
                                fix=f"compute and return the gradient with respect to {name} in backward() "
                                    f"(same shape as {name}).",
                                evidence=[fe] if fe else [])
        # data path: which root should it have reached, and where did it stop?
        res = self._replaced(tid, name)  # (before the value's path: a new Parameter made from it is no cut)
        if res is not None:
            return res
        res = self._data_cut(tid, name, real)
        if res is not None:
            return res
        return self._unused(tid, name)

    def _unfreeze_missed(self, tid, name):
        """An unfreeze (requires_grad = True) ran for other parameters but never reached this frozen one.
        (explanation, note): the explanation when a condition around the unfreeze (`if p.requires_grad:
        p.requires_grad = flag`) kept it away, else a note for the freeze's explanation ("" when none ran)."""
        info = self.d.tensors[tid]
        if info.role != "param":
            return None, ""
        last_off = max((e.index for e in self.ev if e.kind == "requires_grad" and tid in e.input_ids()
                        and e.detail.get("value") is False), default=-1)
        ons = [e for e in self.ev if e.kind == "requires_grad" and e.detail.get("value") is True and e.context == "user"
               and e.index > last_off and e.site is not None and tid not in e.input_ids()
               and any(self.d.tensors.get(t) is not None and self.d.tensors[t].role == "param" for t in e.input_ids())]
        if not ons or any(e.kind == "requires_grad" and tid in e.input_ids() and e.detail.get("value") is True
                          for e in self.ev):
            return None, ""
        on = ons[-1]
        reached = {t for e in ons if e.site.stack == on.site.stack for t in e.input_ids()}
        guard = _source.enclosing_condition(on.site.filename, on.site.lineno)
        if guard is not None:
            site = Site(on.site.filename, guard[0], on.site.function, guard[1], on.site.stack, on.site.label)
            head = (f"the unfreeze{_at(on.site)}{_code(on.site)} ran for {len(reached)} other parameter(s), but the "
                    f"condition{_at(site)}{_code(site)} kept it from reaching {name}, which stays frozen")
            fix = (f"unfreeze without that condition for the parameters that should train (the condition `"
                   f"{guard[1].rstrip(':')}` is false for {name}), e.g. set requires_grad on every parameter you mean "
                   f"to train.")
        else:  # no guard in sight: the freeze is the cause; say that the unfreeze ran and did not reach it
            return None, (f" (An unfreeze ran{_at(on.site)}{_code(on.site)} for {len(reached)} other "
                          f"parameter(s), but it did not reach {name}.)")
        return Explanation(
            "frozen_param", site, name, f"{name}.grad is None: {head}, so autograd treats it as a constant.",
            detail="A parameter with requires_grad=False gets no gradient; an unfreeze only changes the parameters it "
                   "is applied to.", fix=fix, evidence=[on]), ""

    def _hook_cleared(self, tid, name):
        """A gradient reached the leaf's AccumulateGrad, yet .grad is None right after that backward, and a
        post-accumulate-grad hook is registered on it (optimizer-in-backward in a training framework: the hook
        steps and clears .grad)."""
        hooks = [h for h in self.ev if h.kind == "hook" and tid in h.input_ids() and h.detail.get("post_accumulate")]
        if not hooks:
            return None
        for b in reversed(self.d.backwards):
            g = b.leaf_grads.get(tid)
            arrived = b.arrived.get(tid)
            if g is None or g.status != "none" or not arrived or not (arrived > 0 or arrived == -1.0):
                continue
            h = hooks[-1]
            site = self._hook_site(h)
            where = " before the trace" if h.detail.get("before_trace") else _at(h.site)
            steps = [e for e in self.ev if e.kind == "optimizer_step" and e.index > b.event
                     and tid in (e.detail.get("params") or ())]
            return Explanation(
                "hook_modified", site, name,
                f"{name}.grad is None: backward delivered a gradient"
                f"{f' (norm {arrived:.3g})' if arrived > 0 else ''}, but the post-accumulate-grad hook"
                f"{' `' + h.detail['hook'].rsplit('.', 1)[-1] + '`' if h.detail.get('hook') else ''} registered{where} cleared .grad{_at(site)}{_code(site)}"
                + (" after stepping the optimizer inside backward" if steps else "") + ".",
                detail="A post-accumulate-grad hook runs right after the gradient is stored in .grad; a hook that "
                       "steps the optimizer and sets .grad to None (optimizer-in-backward) leaves no .grad to read "
                       "after backward.",
                fix=f"read or clip {name}'s gradient inside that hook (before it clears .grad), or remove the hook "
                    f"when you step the optimizer after backward yourself.",
                evidence=[h])
        return None

    def _first_use(self, tid):
        for i in self.consumers.get(tid, ()):
            e = self.ev[i]
            if e.context == "user" and e.kind not in ("requires_grad", "grad_set", "hook"):
                return e
        return None

    def _root_label(self, b: Event) -> str:
        r = b.detail.get("roots") or [x.tid for x in b.inputs]
        if not r:
            return "the loss"
        lab = self.label(r[0])
        if lab.startswith("t") and lab[1:].isdigit() and b.site and b.site.code:
            recv = _receiver(b.site.code, ".backward(")
            if recv:
                return recv
            p = self.d.producer(r[0])
            if p is not None:
                return f"{_opname(p)}(...)"
        return lab

    def _data_cut(self, tid, name, real):
        for b in reversed(real):
            roots = b.detail.get("roots") or b.input_ids()
            path = None
            for no_writes in (True, False):  # a path through the forward first, through in-place writes after
                path = self.path_to(tid, roots, before=b.index, no_writes=no_writes)
                if path and (self._cut_on_path(path, tid) is not None or self._custom_output_cut(path, name)):
                    break
            if not path:
                continue
            hit = self._cut_on_path(path, tid)
            if hit is None:
                res = self._custom_output_cut(path, name)
                if res is not None:
                    return res
                continue
            k, e = hit
            moved = self._copied_into_new_param(path[k:], tid, name)
            if moved is not None:
                return moved
            cause, se = self._cause_of_cut(e, path, k)
            if cause == "item_roundtrip" and se.site is not None and _REWRAP_CODE.search(se.site.code or "") \
                    and not _EXPLICIT_ITEM.search(se.site.code or ""):
                cause = "tensor_rewrap"  # torch.FloatTensor([a, b]) converts each tensor with float()
            return self._cut_explanation(tid, name, cause, se, e, path, k, self._root_label(b))
        # no complete path: a cut whose data never came back visibly
        cone = self.cone(tid)
        # a cut after the last backward (an evaluation under no_grad after training) cannot have kept a
        # gradient from that backward
        last = real[-1].index if real else len(self.ev)
        cuts = [e for e in cone if e.kind == "cut" and e.cut != "zero_grad_op" and e.context == "user"
                and e.index < last]
        if cuts and all(not e.grad_enabled for e in cuts) and any(
                e.grad_enabled and e.context == "user" and e.kind in ("op", "module") and tid in e.input_ids()
                for e in self.ev[:last]):
            # it was also used with grad on before the backward and that result went nowhere: the uses under
            # no_grad (an evaluation between training epochs) are not what kept the gradient away
            return None
        if cuts:
            roots = set()
            for b in real:
                roots.update(b.detail.get("roots") or b.input_ids())
            # prefer cuts whose input required grad, then the earliest
            harmful = [e for e in cuts if any(r.requires_grad for r in e.inputs)] or cuts
            e = harmful[0]
            path = [x for x in cone if x.index <= e.index]
            k = len(path) - 1 if path and path[-1] is e else None
            cause, se = self._cause_of_cut(e, cone, cone.index(e))
            return self._cut_explanation(tid, name, cause, se, e, path, k, self._root_label(real[-1]) if real else "the loss",
                                         returned=False)
        return None

    def _cut_explanation(self, tid, name, cause, se, e, path, k, root, returned=True):
        rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
        # a region cause is reported at the line that opened the region (a manual update at the update itself)
        site = self._region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
        if cause == "reentrant_checkpoint" and site is not None:  # the checkpoint(...) call, not a line inside
            for i in range(len(site.stack) - 1, -1, -1):
                fr = site.stack[i]
                if "checkpoint" in (fr.code or "") and i < len(site.stack) - 1:
                    site = self._frame_site(fr, site.stack[:i])
                    break
        off_by = self._grad_off_elsewhere(se) if cause == "no_grad_block" else ""
        what = self._cut_input_label(e, tid)
        plain = bool(re.fullmatch(r"[A-Za-z_][\w\.\[\]]*", what)) and not (what.startswith("t") and what[1:].isdigit())
        came_back = ""
        if cause in ("numpy_roundtrip", "item_roundtrip", "tolist_roundtrip"):
            back = [x for x in (path or []) if x.detail.get("links")]
            if back and back[0].site:
                how = _short(back[0].op) if back[0].kind == "external" else _opname(back[0]) + "()"
                inferred = back[0].detail.get("inferred")
                by = {"memory": "shared memory", "shape": "matching shape", "value": "matching values"}.get(inferred, "")
                if back[0].kind == "external":
                    came_back = f" and came back through {how} (first used{_at(back[0].site)}" + (
                        f"; linked by {by})" if by else ")")
                else:
                    came_back = f" and came back through {how}{_at(back[0].site)}" + (f" (linked by {by})" if by else "")
        users = {i for o in e.output_ids() for i in self.consumers.get(o, ()) if self.ev[i].kind != "module"}
        cached = cause in ("inference_mode", "no_grad_block") and self._computed_once_reused(se)
        copied = None  # torch.tensor(z, ...) of one tensor (not a list): use z itself
        listed = None  # torch.tensor([a, b]): the list as written
        if cause == "tensor_rewrap" and site is not None:
            arg = (_first_arg(site.code or "", "tensor(") or _first_arg(site.code or "", "as_tensor(")
                   or _first_arg(site.code or "", "Variable(") or _first_arg(site.code or "", "Tensor("))
            if arg and re.fullmatch(r"[A-Za-z_][\w.]*", arg):
                copied = arg
            elif arg and arg.startswith("[") and arg.endswith("]"):
                listed = arg  # torch.tensor([a, b]) of tensors: each one is converted with float()
        decorated = None  # the region is a @torch.no_grad() decorator on a helper the forward calls
        if cause == "no_grad_block" and se.site is not None:
            g = self._governing_grad_mode(se)
            code = (g.site.code or "").lstrip() if g is not None and g.site is not None else "with"
            if not code.startswith(("with", "torch.set_grad_enabled", "torch._C")):  # a call into a decorated function
                for k, fr in enumerate(se.site.stack):
                    if fr.filename == g.site.filename and fr.lineno == g.site.lineno and k + 1 < len(se.site.stack):
                        decorated = se.site.stack[k + 1].function
                        break
        texts = {
            "detach": (f"{what} was detached{_at(site)}{_code(site)}",
                       "detach() returns a tensor that shares the values but has no history, so backward stops there.",
                       (f"keep that detach() for the terms that must not train through it (it feeds {len(users)} "
                        f"computations), but compute the term that should train {name} from the undetached value"
                        + (f" `{what}`" if plain else "") + "." if len(users) > 1 else
                        (f"use `{what}` instead of `{what}.detach()`" if plain else "remove that .detach()") +
                        f" where the result should train {name}; keep detach() only for logging or for targets that "
                        f"must not get gradients.")),
            "data_attr": (f"{what} was read through .data{_at(site)}{_code(site)}",
                          ".data gives the values without autograd history, so the result is a constant to backward.",
                          (f"use `{what}` directly instead of `{what}.data`" if plain else "use the tensor itself "
                           "instead of its .data") + "; to change values without tracking, use "
                          "`with torch.no_grad():` in the update code only."),
            "numpy_roundtrip": (f"{what} left autograd through NumPy{_at(site)}{_code(site)}{came_back}",
                                "NumPy arrays carry no autograd history; a tensor made from one (torch.from_numpy, "
                                "torch.tensor) is a constant to backward.",
                                "keep the computation in torch (most NumPy functions have a torch twin); if you need "
                                "NumPy for logging, convert a copy and keep using the tensor."),
            "item_roundtrip": (f"{what} became a Python number{_at(site)}{_code(site)}{came_back}",
                               ".item()/float() return a plain Python number; arithmetic with it is a constant to backward.",
                               f"keep `{what}` as a tensor in the computation (drop .item()/float()); use .item() only "
                               f"for logging."),
            "tolist_roundtrip": (f"{what} became Python lists{_at(site)}{_code(site)}{came_back}",
                                 ".tolist() returns plain Python numbers; a tensor rebuilt from them has no history.",
                                 "keep the values as a tensor and use tensor operations (e.g. torch.clamp instead of "
                                 "min/max in a Python loop over .tolist())."),
            "tensor_rewrap": (f"{what} was copied into a new tensor{_at(site)}{_code(site)}",
                              "torch.tensor()/new_tensor()/as_tensor(copy) copy the values into a fresh tensor without "
                              "history.",
                              (f"use `{copied}` itself (torch.tensor() copies it without history); for another dtype "
                               f"or device use `{copied}.float()` / `{copied}.to(...)`." if copied else
                               f"combine the tensors with `torch.stack({listed})` (torch.cat to join along an existing "
                               f"dimension) instead of copying their values into a new tensor." if listed else
                               "combine tensors with torch.stack / torch.cat (or use the tensor directly) instead of "
                               "copying their values into a new tensor.")),
            "no_grad_block": ((f"`{rebind}` was rebound{_at(site)}{_code(site)} to the result of an update made under "
                               f"no_grad, a new tensor that does not require grad" if rebind else
                               f"{what} was used while grad was switched off{_at(site)}{_code(site)}; "
                               f"{off_by}" if off_by else
                               f"{what} was used{_at(se.site)}{_code(se.site)} inside the no_grad region opened"
                              f"{_at(site)}{_code(site)}" if site is not se.site and se.site is not None else
                              f"{what} was used inside a no_grad region{_at(site)}{_code(site)}"),
                              "Inside torch.no_grad() (or @torch.no_grad(), set_grad_enabled(False)) results are "
                              "recorded without history.",
                              (f"update it in place under no_grad so it stays the leaf that requires grad: "
                               f"`{rebind} -= lr * {rebind}.grad`, then `{rebind}.grad = None` (or use torch.optim.SGD)."
                               if rebind else
                               f"remove @torch.no_grad() from `{decorated}` (it runs inside the training forward), or "
                               f"call it only for evaluation." if decorated else
                               ("close the no_grad block before the yield (compute what needs no gradient inside it, "
                                "yield after it)." if "yields inside" in off_by else
                                "keep grad on for the training forward: do not switch it off there (or switch it off "
                                "only around evaluation and target computations).") if off_by else
                               "move this computation out of the no_grad block (or enable grad for it) in the training "
                               "step; keep no_grad for evaluation and target computations.")),
            "param_recreated": (f"{what} went through {self._lib_name(e)}(){_at(site)}{_code(site)}, which moves the "
                                f"weight into new Parameters that the forward uses from then on",
                                "A parametrization (weight_norm, spectral_norm, ...) replaces the module's weight with "
                                "new Parameters; an optimizer built before holds the old weight, which no longer takes "
                                "part in the forward.",
                                "apply it before creating the optimizer (or add the new parameters with "
                                "optimizer.add_param_group)."),
            "inference_mode": ((f"{what} was used{_at(se.site)}{_code(se.site)} under torch.inference_mode(), opened"
                                f"{_at(site)}{_code(site)}" if site is not se.site and se.site is not None else
                                f"{what} was used under torch.inference_mode(){_at(site)}{_code(site)}")
                               + ("; that result was cached: later calls of "
                                  f"`{cached}` reused it instead of computing it again" if cached else ""),
                               "Tensors created under inference_mode have no history; .clone() afterwards makes a "
                               "normal tensor but cannot restore it.",
                               ("do not keep tensors computed from parameters across calls (recompute them in training, "
                                "or invalidate the cache when grad is on / in train mode)." if cached else
                                "run this part of the forward outside torch.inference_mode() during training.")),
            "nondifferentiable_op": self._lib_nograd_text(e, what, site) or (
                                     f"{what} went through {_as_written(e)}{_at(site)}{_code(site)}",
                                     f"{_opname(e)}() has no gradient (its result is integer/boolean or piecewise "
                                     f"constant), so nothing flows back through it.",
                                     "use a differentiable relaxation: softmax/gumbel-softmax instead of argmax, a "
                                     "sigmoid instead of a hard threshold, or a straight-through estimator "
                                     "`soft + (hard - soft).detach()`."),
            "integer_cast": (f"{what} was cast to an integer/bool dtype{_at(site)}{_code(site)}",
                             "Integer and bool tensors cannot carry gradients.",
                             "keep the value in floating point for the loss (round only for reporting), or use a "
                             "straight-through estimator."),
            "reentrant_checkpoint": (f"{what} was computed inside checkpoint(use_reentrant=True){_at(site)}{_code(site)}",
                                     "The reentrant checkpoint only builds a graph when one of its *inputs* requires "
                                     "grad; parameters inside the checkpointed function do not count.",
                                     "use checkpoint(..., use_reentrant=False), or make an input require grad."),
        }
        head, why, fix = texts.get(cause, (f"{what} stopped carrying gradient{_at(site)}{_code(site)}",
                                           "The operation produced a result without autograd history.",
                                           "keep the computation differentiable."))
        tail = f"so backward from `{root}` stops there." if returned else f"and `{root}` never received it back with history."
        summary = f"{name}.grad is None: {head}, {tail}"
        steps = [PathStep(name)]
        for j, x in enumerate(path or []):
            if x.kind == "module":
                continue
            cut_here = (x is se) if (se is not None and se in (path or [])) else (j == k)
            steps.append(PathStep(_opname(x) if x.kind != "external" else _short(x.op), x.op, x.site, flows=not cut_here,
                                  note=f"cut: {_opname(x)}()" if cut_here else ""))
        if returned:
            steps.append(PathStep(root))
        ev = [e] + ([se] if se is not e else [])
        return Explanation(cause, site, name, summary, detail=why, fix=fix, path=steps, evidence=ev)

    def _lib_name(self, e) -> str:
        g = self._governing_grad_mode(e)
        lib = g.detail.get("lib_fn") if g is not None else None
        return lib.rsplit(".", 1)[-1] if lib else "a parametrization"

    def _lib_nograd_text(self, e, what, site):
        if e.cut != "no_grad":
            return None
        g = self._governing_grad_mode(e)
        lib = g.detail.get("lib_fn") if g is not None else None
        if not lib:
            return None
        fix = "use an operation that keeps the graph."
        if lib.endswith(".sample") or lib.endswith("sample_n"):
            fix = ("use `.rsample()` (the reparameterised sample) so gradients reach the distribution's parameters, "
                   "or a score-function (REINFORCE) estimator that weights the sample's log_prob by its reward.")
        return (f"{what} went through {lib}(){_at(site)}{_code(site)}, which runs without gradient",
                f"{lib}() computes its result under torch.no_grad(), so nothing flows back through it.", fix)

    def _cut_input_label(self, e: Event, tid) -> str:
        for r in sorted(e.inputs, key=lambda r: not r.requires_grad):  # (the input gradient should flow from)
            lab = self.label(r.tid)
            if not lab.startswith("t") or not lab[1:].isdigit():
                return lab
        # the expression the method was called on, as written: `torch.relu(self.fc1(x))`.detach()
        if e.site is not None and e.site.code:
            op = _opname(e)
            code = e.site.code
            dunder = _DUNDER_CALLS.get(op)
            if dunder:  # float(x), int(x)
                arg = _first_arg(code, dunder)
                if arg:
                    return arg
            recv = _receiver(code, f".{op}(") if op.isidentifier() else None
            if recv in _MODULE_NAMES or (recv and recv.split(".")[0] in ("torch", "np", "numpy")):
                recv = _first_arg(code, f".{op}(")  # torch.tensor(boxes): what it copies
            if recv and recv != "self":
                return recv
        # name after the module that produced the input
        for r in e.inputs:
            p = self.d.producer(r.tid)
            if p and p.module:
                return f"{p.module}'s output"
        return self.label(tid) if e.inputs and e.inputs[0].tid == tid else "the value"

    def _replaced(self, tid, name):
        """param_recreated when ``tid`` is a parameter (or belongs to a module) that was replaced."""
        for e in self.ev:
            if e.kind == "module_set" and tid in (e.detail.get("old_params") or ()):
                rewrapped = e.detail.get("new_class") == "Parameter" and any(
                    x.kind == "cut" and x.op == "torch.nn.Parameter" and x.site is not None and e.site is not None
                    and x.site.stack == e.site.stack for x in self.ev[max(0, e.index - 8): e.index + 3])
                attr = e.detail.get("attr")
                if e.detail.get("tied"):
                    fix = "tie the weights before creating the optimizer (or create it again after tying)."
                elif rewrapped:  # `m.w = nn.Parameter(m.w.clamp(...))` every step
                    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=[^=]", e.site.code or "") if e.site else None
                    lhs = m.group(1) if m else attr
                    fix = (f"change the values in place so the optimizer keeps its Parameter: "
                           f"`with torch.no_grad(): {lhs}.clamp_(...)` (or .copy_(new_values)), not a new "
                           f"nn.Parameter.")
                else:
                    fix = ("create the optimizer after replacing layers (or add the new parameters with "
                           "optimizer.add_param_group), and drop the old module's parameters.")
                return Explanation(
                    "param_recreated", e.site, name,
                    f"{name}.grad is None: {attr} was "
                    + (f"tied to `{e.detail['tied_to']}`" if e.detail.get("tied_to") else
                       f"replaced by a new {e.detail.get('new_class')}")
                    + f"{_at(e.site)}{_code(e.site)}; the forward uses the new one, while this parameter belongs to the "
                    f"old instance (which the optimizer may still hold).",
                    detail="Parameters are objects: an optimizer built before the replacement keeps updating the old "
                           "module's parameters, which no longer take part in the forward.",
                    fix=fix, evidence=[e])
        return None

    def _skipped_child(self, name, cpath, info) -> Explanation:
        """A child module the forward never called: the early return (or partial loop) that skipped it."""
        f = Frame.from_json(info["return_line"])
        parent = [e for e in self.ev if e.kind == "module" and (e.op == info["parent"] or not info["parent"])]
        outer = parent[-1].site.stack if parent and parent[-1].site else ()
        site = self._frame_site(f, outer)
        if info.get("loop"):
            return Explanation(
                "unused_parameter", site, name,
                f"{name}.grad is None: `{cpath}` was never called: the loop{_at(site)}{_code(site)} goes "
                f"over only part of `{info['loop']}` ({info.get('ran')} of its {info.get('of')} modules ran).",
                detail="A module that is skipped in the forward gets no gradient for its parameters "
                       "(and DDP reports them as unused).",
                fix=f"loop over all of `{info['loop']}` (check the slice, or a zip with a shorter list).",
                evidence=parent[-1:])
        return Explanation(
            "unused_parameter", site, name,
            f"{name}.grad is None: `{cpath}` was never called: "
            + ("the forward" if f.function.endswith("forward") else f"`{f.function.rsplit('.', 1)[-1]}`")
            + f" returned early{_at(site)}{_code(site)} before reaching it.",
            detail="A module that is skipped in the forward gets no gradient for its parameters "
                   "(and DDP reports them as unused).",
            fix=f"check the condition under which `{_plain(site)}` runs: it returns before `{cpath}` is called.",
            evidence=parent[-1:])

    def _stale_optimizer(self, tid, name, used):
        """An optimizer holds ``tid``, which no module of the model names any more, while the forward trains
        parameters no optimizer holds: the optimizer was built before layers were replaced or added."""
        info = self.d.tensors[tid]
        if not self.trainable or tid not in self.trainable:
            return None
        newer = [t for t in self.d.tensors.values() if t.role == "param" and t.name and t.requires_grad
                 and t.tid not in self.trainable and t.tid in used]
        if not any(t.shape == info.shape for t in newer):  # (a replacement: a new parameter of the same shape)
            return None
        owners = self.d.meta.get("param_owner") or {}
        made = next((Site.from_json(owners[str(t.tid)]["site"]) for t in newer
                     if (owners.get(str(t.tid)) or {}).get("site")), None)
        step = next((e for e in self.ev if e.kind == "optimizer_step" and tid in (e.detail.get("params") or ())), None)
        site = made or (step.site if step else None)
        mods = sorted({t.name.rsplit(".", 1)[0] for t in newer if "." in t.name}) or [t.name for t in newer]
        opt = (_receiver(step.site.code, ".step(") if step is not None and step.site is not None else None) \
            or "optimizer"
        shown = ", ".join(f"`{m}`" for m in mods[:3]) + (", …" if len(mods) > 3 else "")
        return Explanation(
            "param_recreated", site, name,
            f"{name}.grad is None: the optimizer holds this parameter ({'x'.join(map(str, info.shape)) or 'scalar'}), "
            f"which no module of the model uses any more, while the forward trains {shown}, which no optimizer holds"
            + (f" (created{_at(made)}{_code(made)})" if made else "")
            + ": the optimizer was built before those layers were replaced or added.",
            detail="An optimizer keeps the Parameter objects it was given; layers replaced or added afterwards are "
                   "not in it, and the replaced ones no longer take part in the forward.",
            fix=f"build the optimizer after the model is complete, or add the new parameters: "
                f"`{opt}.add_param_group({{'params': {py_expr(mods[0])}.parameters()}})`.",
            evidence=[step] if step else [])

    def _defined_site(self, name) -> Site | None:
        """Where the module holding parameter ``name`` is defined in its owner's class (``self.extra = ...``),
        when the recorder found that line for a child that was never called."""
        defined = self.d.meta.get("uncalled_defined") or {}
        best = max((c for c in defined if name.startswith(c + ".")), key=len, default=None)
        if best is None:
            return None
        return self._frame_site(Frame.from_json(defined[best]))

    def _unused(self, tid, name):
        d = self.d
        cone = self.cone(tid)
        # a state_dict()/load_state_dict() copy (a teacher made from the student) is no use in the forward
        if cone and all(e.context == "library" or _is_copy(e) for e in cone):
            cone = []
        rep = self._replaced(tid, name)
        if rep is not None:
            return rep
        hp = (d.meta.get("hook_params") or {}).get(str(tid))
        if hp is not None and not cone:
            owner = hp["owner"]
            if not [e for e in self.ev if e.kind == "module" and e.op == owner]:
                # the hooked module ran without __call__ (module.forward(x)): its hooks never ran
                ran = [e for e in self.ev if e.kind == "op" and any(
                    (self.d.tensors.get(r.tid) and (self.d.tensors[r.tid].name or "").startswith(owner + "."))
                    for r in e.inputs)]
                site = ran[0].site if ran else None
                return Explanation(
                    "unused_parameter", site, name,
                    f"{name}.grad is None: it is used only by a forward hook on `{owner}`, and `{owner}` was run"
                    f"{_at(site)}{_code(site)} without calling the module (its .forward(...)), which skips its hooks.",
                    detail="Hooks run in Module.__call__; calling module.forward(x) directly runs the layer but none of "
                           "its forward hooks.",
                    fix=f"call the module itself (`{owner.rsplit('.', 1)[-1]}(x)`), not its .forward(x).",
                    evidence=ran[:1])
        # used in the computation (not a copy between models, nor a requires_grad_ or hook call on it)
        used = {r.tid for e in self.ev if e.context == "user" and e.kind in ("op", "cut", "module", "inplace")
                and not _is_copy(e) for r in e.inputs}
        owners = d.meta.get("param_owner") or {}
        mine = owners.get(str(tid))
        if not cone and mine:
            info = d.tensors[tid]
            for t in d.tensors.values():
                o = owners.get(str(t.tid))
                if (t.tid != tid and t.tid in used and o and o["class"] == mine["class"] and o["attr"] == mine["attr"]
                        and t.shape == info.shape and t.tid not in self.trainable and tid in self.trainable):
                    order = list(owners)  # (registration order)
                    if order.index(str(tid)) > order.index(str(t.tid)) and mine.get("site"):
                        # the optimizer's instance is the newer one: `Adam(Net().parameters())`
                        site = Site.from_json(mine["site"])
                        other = Site.from_json(o["site"]) if o.get("site") else None
                        if other is not None:  # the user line where the two creations part ways
                            for i, (a, b) in enumerate(zip(site.stack, other.stack)):
                                if a != b:
                                    site = self._frame_site(a, site.stack[:i])
                                    break
                        return Explanation(
                            "param_recreated", site, name,
                            f"{name}.grad is None: it belongs to a second {mine['class']} instance created"
                            f"{_at(site)}{_code(site)}, which the optimizer holds; the forward uses the first one.",
                            detail="An optimizer built from the parameters of a new instance updates parameters the "
                                   "forward never uses.",
                            fix=f"in `{_plain(site)}`, pass the parameters of the {mine['class']} that runs the forward "
                                f"instead of a new instance's.",
                            evidence=[])
                    site = Site.from_json(o["site"]) if o.get("site") else None
                    return Explanation(
                        "param_recreated", site, name,
                        f"{name}.grad is None: the forward uses another {mine['class']} instance (created"
                        f"{_at(site)}{_code(site)}), not the one this parameter belongs to.",
                        detail="The optimizer (or your code) holds parameters of an instance the forward no longer uses.",
                        fix="build the optimizer from the model that runs the forward, after all layers are replaced.",
                        evidence=[])
        if not cone:
            # a module that returned its input unchanged
            for e in self.ev:
                if e.kind == "module" and e.detail.get("returned_input") and name.startswith(e.op + ".") and e.op:
                    fr = e.detail.get("return_line")
                    site = e.site
                    if fr:
                        f = Frame.from_json(fr)
                        site = self._frame_site(f, e.site.stack if e.site else ())
                    return Explanation(
                        "unused_parameter", site, name,
                        f"{name}.grad is None: {e.op} returned its input unchanged{_at(site)}{_code(site)}, so its "
                        f"layers (including {name}) never ran.",
                        detail="A parameter that is not used in the forward gets no gradient (and DDP complains "
                               "about unused parameters).",
                        fix=f"check the condition under which `{_plain(site)}` returns the input unchanged.",
                        evidence=[e])
            for cpath, info in (d.meta.get("skipped_children") or {}).items():
                if name.startswith(cpath + "."):
                    res = self._skipped_child(name, cpath, info)
                    dsite = self._defined_site(name)
                    if dsite is not None:
                        res.extra_sites.append(dsite)
                    return res
            stale = self._stale_optimizer(tid, name, used)
            if stale is not None:
                return stale
            mod = name.rsplit(".", 1)[0] if "." in name else None
            called = [e for e in self.ev if e.kind == "module" and e.op == mod]
            dsite = self._defined_site(name)
            return Explanation(
                "unused_parameter", dsite, name,
                f"{name}.grad is None: {name} was never used by any torch call in the traced step"
                + ("" if called or mod is None else f" (module `{mod}` was never called)")
                + (f"; it is defined{_at(dsite)}{_code(dsite)}" if dsite else "") + ".",
                detail="A parameter that takes no part in the forward gets no gradient.",
                fix=(f"call `{mod}` in forward, or leave it out of the model/optimizer." if mod else
                     f"use {name} in the forward, or leave it out of the optimizer."),
                evidence=[])
        # used, but its output was thrown away        # used, but its output was thrown away
        dead = None
        mods = [e for e in cone if e.kind == "module" and e.context == "user"]
        for e in reversed(mods):  # (the outermost module whose output is dropped: it completes last)
            outs = e.output_ids()
            if outs and all(not [i for i in self.consumers.get(o, ()) if i > e.index and self.ev[i].kind != "module"]
                            for o in outs):
                dead = e
                break
        if dead is None:
            for e in cone:
                if e.kind in ("op", "cut") and e.context == "user":
                    outs = e.output_ids()
                    if outs and all(not self.consumers.get(o) for o in outs):
                        dead = e
                        break
        if dead is not None and dead.kind != "module" and dead.output_ids():  # the module that returned it
            outs = dead.output_ids()
            for e in self.ev[dead.index + 1: dead.index + 64]:
                if e.kind == "module" and e.output_ids() == outs:
                    dead = e
                    break
        if dead is not None and dead.kind == "module":  # a container that returned this output as its own
            outs = dead.output_ids()
            for e in self.ev[dead.index + 1: dead.index + 64]:
                if e.kind == "module" and e.output_ids() == outs and dead.op.startswith(e.op + ".") and e.op:
                    dead = e
        if dead is not None and dead.kind == "module":
            fh = (self.d.meta.get("module_forward_hooks") or {}).get(dead.op)
            if fh:  # its output was replaced by a forward hook's return value, not dropped by the forward
                f = Frame.from_json(fh[0])
                site = self._frame_site(f, dead.site.stack if dead.site else ())
                return Explanation(
                    "hook_modified", site, name,
                    f"{name}.grad is None: a forward hook on `{dead.op}` returns a value{_at(site)}{_code(site)}, "
                    f"which replaces the module's output, so what {name} computed never reaches the loss.",
                    detail="A forward hook (register_forward_hook) that returns something other than None replaces "
                           "the module's output with it.",
                    fix="return None from a hook that only looks at (or collects) the output; return a modified "
                        "output only on purpose.", evidence=[dead])
        site = dead.site if dead else None
        what = f"{dead.op}'s output" if dead is not None and dead.kind == "module" else "its result"
        return Explanation(
            "unused_parameter", site, name,
            f"{name}.grad is None: {name} was used{_at(site)}{_code(site)}, but {what} was never used afterwards, "
            f"so it does not reach the loss.",
            detail="A result that is computed and then discarded contributes nothing to the loss.",
            fix=(f"use the output of `{dead.op}`{_at(site)} in what the loss is computed from (assign it and pass it "
                 f"on), or remove `{dead.op}`." if dead is not None and dead.kind == "module" else
                 f"use the result of `{_plain(site)}` (assign it and pass it on to what the loss is computed "
                 f"from), or remove that computation." if _plain(site) else
                 "use the result in what the loss is computed from, or remove that computation."),
            evidence=[dead] if dead else [])

    # --- failure ---------------------------------------------------------------------------------
    def failure(self) -> Explanation | None:
        x = self.d.exception
        if x is None:
            return None
        msg = x.message
        exp = None
        for pattern, handler in _ERRORS:
            if pattern.search(msg):
                exp = getattr(self, handler)(msg)
                if exp is not None:
                    break
        if exp is None:
            e = self._error_event()
            exp = Explanation("unknown", (e.site if e else None) or x.site, "the step",
                              f"The traced step raised {x.type}: {msg.splitlines()[0] if msg else ''}",
                              detail="gradscope has no rule for this error; the site is where it was raised.",
                              fix="see the error message.", evidence=[e] if e else [])
        exp.status = "error"
        exp.site = statement_site(exp.site)
        return exp

    def _fail_unused_input(self, msg):
        """autograd.grad(outputs, inputs): an input "was not used in the graph". What cut it from the outputs
        (a NumPy round trip, a re-wrap, a detach) is the cause, found on the data path like any cut."""
        e = self._error_event()
        bw = e if e is not None and e.kind == "backward" else self._failing_backward()
        for tid in (bw.detail.get("inputs") or ()) if bw is not None else ():
            if tid not in self.d.tensors:
                continue
            name = self.label(tid)
            res = self._data_cut(tid, name, [bw])
            if res is not None:
                head = f"{name}.grad is None: "
                body = res.summary[len(head):] if res.summary.startswith(head) else res.summary
                res.summary = (f"torch.autograd.grad failed: the input `{name}` was not used to compute the outputs "
                               f"with history: {body}")
                res.target = name
                return res
        return Explanation("unused_parameter", e.site if e else self.d.exception.site, "backward",
                           "torch.autograd.grad failed: one of the inputs was not used to compute the outputs.",
                           fix="pass allow_unused=True, or remove that input.", evidence=[e] if e else [])

    def _one_backward_fix(self, *bws) -> str:
        """Sum the losses of several backward calls into one: named from the user's loss names when they have some."""
        names = list(dict.fromkeys(self._root_label(b) for b in bws))
        named = len(names) > 1 and not any(re.fullmatch(r"t\d+|the loss|.*\(\.\.\.\)", n) for n in names)
        how = f" (`({' + '.join(names)}).backward()`)" if named else " on their sum"
        return f"add the losses and call backward once{how}, or pass retain_graph=True to every backward but the last."

    def _error_event(self):
        i = self.d.exception.event if self.d.exception else None
        if i is not None and 0 <= i < len(self.ev):
            return self.ev[i]
        return None

    def _failing_backward(self):
        e = self._error_event()
        if e is not None and e.kind == "backward":
            return e
        bws = self._backward_events()
        return bws[-1] if bws else None

    def _fail_inplace(self, msg):
        m = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", msg)
        shape = tuple(int(s) for s in m.group(1).split(",") if s.strip()) if m else None
        mv = re.search(r"is at version (\d+); expected version (\d+)", msg)
        expected = int(mv.group(2)) if mv else None
        mo = re.search(r"output (\d+) of (\w+)", msg)
        node = mo.group(2) if mo else None
        bw = self._failing_backward()
        limit = bw.index if bw else len(self.ev)
        # one candidate per written tensor: (event, target, base, version before, saved, saved_by)
        cands = []
        for e in self.ev[:limit]:
            if not (e.kind == "inplace" or (e.kind == "cut" and e.cut == "data_set")):
                continue
            d = e.detail
            if d.get("targets") and d.get("versions_before"):  # optimizer.step(): every parameter it wrote
                saved = set(d.get("saved") or ())
                by = d.get("saved_by") or {}
                for t, vb in zip(d["targets"], d["versions_before"]):
                    cands.append((e, t, None, vb, t in saved, by.get(t, by.get(str(t)))))
            else:
                cands.append((e, d.get("target"), d.get("base"), d.get("version_before"), bool(d.get("saved")),
                              d.get("saved_by")))

        def fam_shapes(tgt, base):
            out = set()
            for t in (tgt, base):
                if t is not None and t in self.d.tensors:
                    out.add(tuple(self.d.tensors[t].shape))
                    for v in self.d.tensors.values():  # other views of the same base
                        if v.base == t:
                            out.add(tuple(v.shape))
            return out

        def numel(s):
            n = 1
            for x in s:
                n *= x
            return n

        def score(c):
            e, tgt, base, vb, saved, _ = c
            s = 0
            if saved:
                s += 4
            if shape is not None:
                fs = fam_shapes(tgt, base)
                if shape in fs:
                    s += 3
                elif any(numel(f) == numel(shape) for f in fs):
                    s += 1
            if expected is not None and vb == expected:
                s += 2
            return s

        best = None
        for c in cands:  # (ties go to the latest write before backward)
            sc = score(c)
            if sc >= 3 and (best is None or sc >= best[0]):
                best = (sc, c)
        if best is None:
            return Explanation(
                "inplace_saved_tensor", bw.site if bw else None, "backward",
                "backward failed: a tensor saved for backward was modified in place, but the trace did not see the write "
                "(it may have happened through .data, NumPy, or outside the traced block).",
                detail=msg.splitlines()[0], fix="look for in-place writes (+=, x[...] =, add_, relu_(inplace=True)) on "
                "tensors used earlier in the forward.", evidence=[bw] if bw else [])
        e, tgt, base, _, _, saver = best[1]
        se = self.ev[saver] if isinstance(saver, int) and 0 <= saver < len(self.ev) else None
        tname = self.label(tgt) if tgt is not None else "a tensor"
        what = f"`{tname}`"
        if tgt is not None and base is not None and tname == f"t{tgt}" and self.label(base) != f"t{base}":
            tname = self.label(base)  # an unnamed view (w[i], w[:, k]) of a named tensor: name the tensor
            what = f"a view of `{tname}`"
        op = _opname(e) if e.op else "in-place write"
        if op == "__setitem__":
            op = "slice assignment"
        if e.context == "optimizer" and e.op.endswith(".step"):
            op = e.op.split(".")[0] + ".step()"
        saved_txt = f"; {_opname(se)}{_at(se.site)} saved it for backward" if se is not None else (
            f" (saved by {node})" if node else "")
        who = " (inside optimizer.step())" if e.context == "optimizer" and not op.endswith(".step()") else ""
        return Explanation(
            "inplace_saved_tensor", e.site, tname,
            f"backward failed: {op}{who}{_at(e.site)}{_code(e.site)} modified {what} in place after it was saved "
            f"for backward{saved_txt}.",
            detail=("Autograd saves some inputs/outputs of an operation to compute its gradient; writing into them "
                    "afterwards (+=, x[...] = v, add_, relu(inplace=True), optimizer.step()) makes the saved value wrong, "
                    "so backward refuses to run."),
            fix=(("a graph kept alive across steps (retain_graph=True, e.g. on a hidden state carried into the next "
                  "batch) still holds the weights that optimizer.step() changed: detach the carried state every step "
                  "(`<state> = <state>.detach()`) and drop retain_graph=True."
                  if e.context == "optimizer" and any(b.kind == "backward" and b.detail.get("retain_graph")
                                                      and b.index < e.index for b in self.ev) else
                  _out_of_place(e.site.code if e.site else "") or
                  (f"write `{_plain(e.site)}` out of place (a new tensor instead of writing into one autograd "
                   f"saved; inplace=False for activations)" + (", or run backward for every loss before "
                                                               "optimizer.step() changes the weights"
                                                               if e.context == "optimizer" else "") + "."))),
            path=[PathStep(_opname(se), se.op, se.site, note="saved for backward")] if se else [],
            evidence=[e] + ([se] if se else []))

    def _fail_no_grad_fn(self, msg=None):
        bw = self._failing_backward()
        roots = (bw.detail.get("roots") or bw.input_ids()) if bw else []
        root = self._root_label(bw) if bw is not None and roots else "the loss"
        anc = self.ancestors(roots, before=bw.index if bw else None) if roots else set()
        evs = [self.ev[i] for i in sorted(anc)]
        tids = {r.tid for e in evs for r in e.inputs}
        ag = [e for e in evs if e.kind == "backward" and e.op == "torch.autograd.grad" and not e.detail.get("create_graph")]
        if ag:
            e = ag[-1]
            return Explanation(
                "autograd_grad_not_backward", e.site, root,
                f"backward on `{root}` failed: it is built from gradients returned by torch.autograd.grad"
                f"{_at(e.site)}{_code(e.site)} without create_graph=True, so they carry no graph to differentiate.",
                detail="autograd.grad returns plain tensors unless create_graph=True records the backward pass itself.",
                fix="pass create_graph=True to torch.autograd.grad when the gradients are used in a loss (gradient "
                    "penalties, meta-learning).", evidence=[e])
        frozen = [e for e in self.ev if e.kind == "requires_grad" and e.detail.get("value") is False
                  and set(e.input_ids()) & tids and (bw is None or e.index < bw.index)]
        # a cut of a parameter that still requires grad (the student run inside the teacher's no_grad block)
        # explains it better than a freeze that was meant (the teacher's)
        # (not what torch did on the user's behalf: module.to() sets each parameter's .data)
        param_cut = any(e.kind == "cut" and e.context not in _NOT_FORWARD and any(
            r.requires_grad and r.is_leaf and self.d.tensors.get(r.tid) is not None
            and self.d.tensors[r.tid].role == "param" for r in e.inputs) for e in evs)
        if frozen and not param_cut:
            e = frozen[-1]
            names = sorted({self.label(t) for f in frozen for t in f.input_ids() if t in tids})
            shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            whole = self._froze_everything(e)
            return Explanation(
                "frozen_param", e.site, root,
                f"backward on `{root}` failed: nothing in it requires grad because {shown} "
                f"{'was' if len(names) == 1 else 'were'} frozen{_at(e.site)}{_code(e.site)} and never unfrozen."
                + (f" {whole[0]}" if whole else ""),
                detail="With every parameter frozen (requires_grad=False) and the other inputs detached, the loss has no "
                       "grad_fn, so backward has nothing to differentiate.",
                fix=whole[1] if whole and whole[1] else
                    f"set requires_grad_(True) again on {shown} before the step that trains them (after the step "
                    f"that needed them frozen).", evidence=frozen[-3:])
        cuts = [e for e in evs if e.kind == "cut" and e.cut != "zero_grad_op" and e.context not in _NOT_FORWARD
                and any(r.requires_grad for r in e.inputs)]
        if cuts:
            e = cuts[-1]
            k = evs.index(e)
            cause, se = self._cause_of_cut(e, evs, k)
            rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
            site = self._region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
            what = self._cut_input_label(e, e.inputs[0].tid if e.inputs else None)
            fix = self._cut_explanation(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root).fix
            same = [c for c in cuts if c.site is not None and e.site is not None and c.site.stack == e.site.stack
                    and c.cut == e.cut and c.op == e.op and e.cut in _EXPLICIT_CUTS and c.module == e.module]
            if len(same) > 1:  # one line, many tensors: a loop or comprehension (every parameter detached)
                labels = [self._cut_input_label(c, c.inputs[0].tid if c.inputs else None) for c in same]
                what = (f"every one of {len(same)} tensors on that line ({', '.join(labels[:3])}"
                        + (", …" if len(labels) > 3 else "") + ")")
                fix = (f"drop the {_opname(se)}() in that loop/comprehension for the tensors that should train "
                       f"(torch.func.functional_call and friends keep the graph through the tensors you pass); "
                       f"keep it only where no gradient is wanted.")
            off = self._grad_off_elsewhere(se) if cause == "no_grad_block" else ""
            w = _sgd_rebind(site) if cause == "no_grad_block" else None
            if w:  # a manual SGD step that rebinds the leaf
                return Explanation(
                    cause, site, root,
                    f"backward on `{root}` failed: `{w}` was rebound{_at(site)}{_code(site)} to the result of "
                    f"an update made under no_grad, a new tensor that does not require grad, so `{root}` computed "
                    f"from it has no grad_fn.",
                    detail="Under no_grad, `w = w - lr * w.grad` creates a new tensor without history and rebinds the "
                           "name; the original leaf that required grad is no longer used.",
                    fix=fix, evidence=[e])
            return Explanation(
                cause, site, root,
                (f"backward on `{root}` failed: `{root}` does not require grad because {what} was computed while grad "
                 f"was switched off{_at(site)}{_code(site)}; {off}." if off else
                 f"backward on `{root}` failed: `{root}` does not require grad because {what} "
                 f"{'were' if len(same) > 1 else 'was'} cut off from autograd"
                 f"{_at(site)}{_code(site)} ({_opname(se)}), and nothing else in it requires grad."),
                detail="backward() needs a result with a grad_fn; every path from a trainable tensor to it was cut.",
                fix=fix, evidence=[e])
        def built_outside(t):  # no producer, or made by a factory from Python values (torch.tensor(float))
            info = self.d.tensors.get(t)
            if info is None or info.producer is None:
                return True
            p = self.d.producer(t)
            return p is not None and p.kind in ("op", "cut") and not p.inputs

        if not evs or all(built_outside(t) for t in roots):
            # the loss came from outside torch: the last value that left autograd before it
            lim = bw.index if bw else len(self.ev)
            left = [e for e in self.ev[:lim] if e.kind == "cut" and e.context == "user" and e.cut != "zero_grad_op"
                    and any(r.requires_grad for r in e.inputs)]
            if left:
                e = left[-1]
                cause, se = self._cause_of_cut(e)
                rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
                site = self._region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
                what = self._cut_input_label(e, e.inputs[0].tid if e.inputs else None)
                return Explanation(
                    cause, site, root,
                    f"backward on `{root}` failed: `{root}` has no autograd history (it was built outside torch); the "
                    f"last value that left autograd before it was {what}{_at(site)}{_code(site)}.",
                    detail="backward() needs a result with a grad_fn; a tensor rebuilt from NumPy or Python numbers "
                           "has none.",
                    fix=self._cut_explanation(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root).fix,
                    evidence=[e] + ([se] if se is not e else []))
        params = [t for t in tids if self.d.tensors.get(t) and self.d.tensors[t].role == "param"
                  and not self.d.tensors[t].requires_grad]
        if params:
            use = self._first_use(params[0])
            return Explanation(
                "frozen_param", use.site if use else None, root,
                f"backward on `{root}` failed: its parameters ({', '.join(self.label(p) for p in params[:3])}) have "
                f"requires_grad=False.",
                fix="unfreeze the parameters that should train.", evidence=[use] if use else [])
        site = bw.site if bw else None
        leaves = [t for t in tids if self.d.tensors.get(t) and self.d.tensors[t].producer is None]
        rg = [t for t in leaves if self.d.tensors[t].requires_grad]
        if rg:  # trainable tensors went in, yet nothing recorded cut them off: say so, do not guess
            return Explanation(
                "unknown", site, root,
                f"backward on `{root}` failed: `{root}` does not require grad, although it was computed from "
                f"{', '.join(self.label(t) for t in rg[:3])}, which do; the trace did not see where the connection "
                f"was cut.",
                detail="Something between them dropped the graph without a recorded call: code outside the traced "
                       "block, an extension op, or a value rebuilt from Python numbers.",
                fix=f"print `.requires_grad` / `.grad_fn` of the intermediate results between "
                    f"{self.label(rg[0])} and `{root}`; the first one without a grad_fn is the cut.",
                evidence=[bw] if bw else [])
        return Explanation(
            "requires_grad_false", site, root,
            f"backward on `{root}` failed: none of the tensors it was computed from requires grad"
            + (f" ({', '.join(self.label(t) for t in leaves[:3])})" if leaves else "") + ".",
            fix="create the parameters with requires_grad=True (or use nn.Parameter).", evidence=[bw] if bw else [])

    def _custom_node(self, fname=None):
        """The latest backward node of a custom autograd.Function (named ``fname`` if given), or None."""
        for b in reversed(self.d.backwards):
            for n in b.nodes.values():
                if n.custom_backward is not None and (fname is None or n.name == fname):
                    return n
        return None

    def _fail_custom(self, msg):
        m = re.search(r"[Ff]unction (\w+) returned", msg)
        bw = self._failing_backward()
        node = self._custom_node(m.group(1) if m else None)
        if node is None:
            return None
        f = node.custom_backward
        site = self._frame_site(f)
        first = msg.splitlines()[0]
        return Explanation(
            "custom_function", site, node.name.replace("Backward", ""),
            f"backward failed in the custom autograd.Function {node.name.replace('Backward', '')}: its backward "
            f"returns{_at(site)}{_code(site)} gradients that do not match its forward inputs ({first}).",
            detail="backward() must return exactly one gradient (or None) per input of forward(), each with the shape "
                   "of that input.",
            fix="return one value per forward input, in order, with matching shapes (None for inputs that need no "
                "gradient).", evidence=[bw] if bw else [])

    def _fail_once_differentiable(self, msg):
        """A second differentiation (create_graph=True: gradient penalty, double backward) through a custom
        Function whose backward is decorated with @once_differentiable."""
        node = self._custom_node()
        if node is None:
            return None
        f = node.custom_backward
        site = self._frame_site(f)
        fn = node.name.replace("Backward", "")
        cg = [e for e in self._backward_events() if e.detail.get("create_graph")]
        where = f" (create_graph=True{_at(cg[-1].site)}{_code(cg[-1].site)})" if cg and cg[-1].site else ""
        return Explanation(
            "custom_function", site, fn,
            f"backward failed: {fn}.backward{_at(site)} is decorated with @once_differentiable, but the step "
            f"differentiates through it a second time{where}.",
            detail="@once_differentiable runs backward without recording a graph, so its result cannot be "
                   "differentiated again (gradient penalties, double backward, meta-learning).",
            fix=f"remove @once_differentiable and write {fn}.backward with differentiable torch operations, or keep "
                f"this Function out of the part that is differentiated twice.", evidence=cg[-1:])

    def _fail_no_derivative(self, msg):
        m = re.search(r"derivative for '([\w\.:]+)' is not implemented", msg)
        op = (m.group(1) if m else "").split("::")[-1].split(".")[0]
        base = op.strip("_").rstrip("0123456789").rstrip("_")
        bw = self._failing_backward()
        roots = (bw.detail.get("roots") or bw.input_ids()) if bw else []
        anc = self.ancestors(roots, before=bw.index if bw else None) if roots else set()
        cand = []
        for key in (base, base.split("_")[0]):
            cand = [self.ev[i] for i in sorted(anc) if key and key in _opname(self.ev[i]).lower()]
            if cand:
                break
        e = cand[-1] if cand else None
        if e is None:
            return None
        return Explanation(
            "nondifferentiable_op", e.site, self._root_label(bw) if bw else "the loss",
            f"backward failed: {_opname(e)}(){_at(e.site)}{_code(e.site)} has no derivative in PyTorch ('{op}').",
            detail="Some operations (unique, sort indices, bucketize, ...) have no gradient formula; backward "
                   "cannot pass through them.",
            fix="keep this operation out of the path to the loss (compute it on a detached copy), or use a "
                "differentiable surrogate.", evidence=[e])

    def _fail_reduction_unused(self, msg):
        """DistributedDataParallel's "Expected to have finished reduction ..." error: some parameters did not
        receive a gradient in the previous iteration. Named from the trace (what the last complete backward
        delivered), each group explained like any starved parameter (by module path, with its line)."""
        done = [b for b in self.d.backwards if b.error is None]
        last = done[-1] if done else None
        params = [t for t in self.d.tensors.values() if t.role == "param" and t.requires_grad
                  and (not self.trainable or t.tid in self.trainable)]
        missing = [t for t in params if last is not None and t.tid not in last.arrived]
        e = self._error_event()
        if not missing:
            return None
        sub = self.why(missing[0].tid)
        names = [self.label(t.tid) for t in missing]
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        reason = sub.summary.split(": ", 1)[1] if ": " in sub.summary else sub.summary
        site = sub.site or (e.site if e else None) or self.d.exception.site
        return Explanation(
            "unused_parameter", site, names[0],
            f"DistributedDataParallel stopped{_at(e.site if e else None)}: {len(names)} parameter(s) did not receive "
            f"a gradient in the previous iteration: {shown}; {reason}",
            detail="DDP waits for a gradient for every parameter it holds; a parameter the forward did not use "
                   "never gets one, so the reduction of the previous iteration never finished.",
            fix=(sub.fix.rstrip(".") + "; if skipping it is intended, pass find_unused_parameters=True to "
                 "DistributedDataParallel (or set requires_grad=False on it)."),
            path=sub.path, evidence=([e] if e else []) + list(sub.evidence)[:1])

    def _fail_numpy(self, msg=None):
        e = self._error_event()
        if e is None:
            for x in reversed(self.ev):
                if x.kind == "cut" and x.cut == "numpy":
                    e = x
                    break
        what = self._cut_input_label(e, e.inputs[0].tid) if e and e.inputs else "the tensor"
        return Explanation(
            "numpy_roundtrip", e.site if e else None, what,
            f"numpy() failed{_at(e.site if e else None)}{_code(e.site if e else None)}: `{what}` requires grad, and a "
            f"NumPy array cannot carry gradients.",
            detail="PyTorch refuses to convert a tensor that is part of the autograd graph, because the NumPy result "
                   "would silently cut gradient flow.",
            fix=f"for logging/plotting: `{what}.detach().cpu().numpy()`; if the result feeds the loss, keep the "
                f"computation in torch instead.", evidence=[e] if e else [])

    def _fail_inference(self, msg=None):
        e = self._error_event()
        src = None
        if e is not None:
            for r in e.inputs:
                p = self.d.producer(r.tid)
                if p is not None and p.inference_mode:
                    src = p
                    break
        site = src.site if src else (e.site if e else None)
        return Explanation(
            "inference_mode", site, "the step",
            f"backward cannot use a tensor created under torch.inference_mode(){_at(site)}{_code(site)}: "
            f"{_opname(e) if e else 'an operation'}{_at(e.site if e else None)} tried to save it for backward.",
            detail="Inference tensors have no version counter and cannot be saved for backward.",
            fix="compute it outside torch.inference_mode() when it takes part in training (cloning it only hides "
                "the problem: the clone has no history).", evidence=[x for x in (src, e) if x])

    def _fail_twice(self, msg=None):
        bw = self._failing_backward()
        earlier = [e for e in self._backward_events() if bw is not None and e.index < bw.index]
        prev = earlier[-1] if earlier else None
        carried = None
        if bw is not None and prev is not None:
            prev_anc = self.ancestors(prev.detail.get("roots") or prev.input_ids(), before=prev.index)
            cur_anc = self.ancestors(bw.detail.get("roots") or bw.input_ids(), before=bw.index)
            for i in sorted(cur_anc):
                e = self.ev[i]
                if i <= prev.index or e.context != "user":
                    continue
                for r in e.inputs:
                    p = self.d.producer(r.tid)
                    if r.requires_grad and not r.is_leaf and p is not None and p.index in prev_anc:
                        carried = (e, r.tid)
                        break
                if carried:
                    break
        if carried is not None:
            e, t = carried
            name = self.label(t)
            p = self.d.producer(t)
            stepped = p is not None and any(x.kind == "optimizer_step" and p.index < x.index < bw.index for x in self.ev)
            if p is not None and not stepped:
                # no optimizer step in between: several losses on one shared computation in the same step
                return Explanation(
                    "backward_twice", p.site if p.site else e.site, name,
                    f"backward{_at(bw.site)} failed: `{name}` (computed{_at(p.site)}) feeds more than one loss, and the "
                    f"earlier backward{_at(prev.site)} already freed the graph behind it.",
                    detail="Each backward frees the graph it ran through; a second loss built on the same shared "
                           "part cannot backpropagate through it again.",
                    fix=self._one_backward_fix(prev, bw),
                    evidence=[e, prev, bw])
            return Explanation(
                "backward_twice", p.site if p is not None and p.site else e.site, name,
                f"backward{_at(bw.site)} failed: `{name}` was computed{_at(p.site if p else None)} before the earlier "
                f"backward{_at(prev.site)} and is used again{_at(e.site)}{_code(e.site)} without detach(), so the new "
                f"backward runs into the freed graph.",
                detail="After backward, autograd frees the saved tensors of the graph. A tensor carried into the next "
                       "step (an RNN hidden state, a running statistic) still points into that freed graph.",
                fix=f"detach the carried state before reusing it (`{name} = {name}.detach()`), or pass "
                    f"retain_graph=True to the earlier backward if you really need gradients through both.",
                evidence=[e, prev, bw])
        return Explanation(
            "backward_twice", bw.site if bw else None, "backward",
            f"backward{_at(bw.site if bw else None)} ran through a graph that an earlier backward"
            f"{_at(prev.site if prev else None)} already freed.",
            detail="After backward, autograd frees the saved tensors of the graph. Running backward again through any "
                   "part of it fails, e.g. when a hidden state is carried across steps without detach().",
            fix="detach state carried between steps (`<state> = <state>.detach()`), recompute the forward, or pass "
                "retain_graph=True to the first backward if you really need two.",
            evidence=[x for x in (bw, prev) if x])

    # --- cuts: harmful or benign -------------------------------------------------------------------
    def cuts(self, now=None) -> list:
        """Events that cut or endanger gradient flow, with verdicts."""
        if now is not None:
            self.set_now(now)
        if not self._verdicts_done:
            self._verdicts()
        return [e for e in self.ev if e.verdict]

    def _verdicts(self):
        self._verdicts_done = True
        ev = self.ev
        roots = set()
        failed_inplace = self.d.exception is not None and "inplace" in (self.d.exception.message or "")
        for e in ev:
            if e.kind == "backward":
                roots.update(e.detail.get("roots") or e.input_ids())
        reach = self.ancestors(list(roots)) if roots else set()
        # upstream leaves of each tensor, as bitsets over trainable/grad leaves; a cut is harmful when it
        # stood between a starved tensor (the one verdict: self.starved) and a backward root
        for e in ev:
            e.verdict = None
        bits: dict = {}
        leaf_index: dict = {}

        def leaf_bit(tid):
            b = leaf_index.get(tid)
            if b is None:
                b = leaf_index[tid] = 1 << len(leaf_index)
            return b

        starving = 0
        for e in ev:
            acc = 0
            for r in e.inputs:
                b = bits.get(r.tid)
                if b is None:
                    info = self.d.tensors.get(r.tid)
                    b = 0
                    if info is not None and info.producer is None and info.is_leaf and (
                            r.requires_grad or info.role == "param"):
                        b = leaf_bit(r.tid)
                        if self.starved(r.tid):
                            starving |= b
                    bits[r.tid] = b
                acc |= b
            for l in e.detail.get("links", ()) if e.detail else ():
                if isinstance(l, int) and 0 <= l < len(ev):
                    for r in ev[l].inputs:
                        acc |= bits.get(r.tid, 0)
            for o in e.output_ids():
                if o not in bits or e.kind == "inplace":
                    bits[o] = bits.get(o, 0) | acc
            if e.kind == "cut" and (e.context in ("user", "checkpoint", "compiled") or e.context == "library" and any(
                    self.consumers.get(o) for o in e.output_ids())):  # (torch's own cut, when the user used its result)
                if e.cut == "zero_grad_op":
                    e.verdict = "harmful" if (e.index in reach and acc & starving) or self._zero_harm(e) else "benign"
                else:
                    down = e.index in reach or any(j in reach for j in self.value_users.get(e.index, ()))
                    e.verdict = "harmful" if down and (acc & starving) else "benign"
            elif e.kind == "inplace" and e.detail.get("saved"):
                e.verdict = "harmful" if failed_inplace else "benign"
            elif e.kind == "requires_grad" and e.detail.get("value") is False and e.context == "user":
                t = e.input_ids()[0] if e.inputs else None
                e.verdict = "harmful" if (t is not None and self.consumers.get(t) and any(
                    i > e.index and i in reach for i in self.consumers[t])) else "benign"
        self._mark_corrupting()

    def _corrupting_writes(self) -> list:
        """In-place writes through a ``.data`` alias into a tensor that autograd saved for a backward that ran
        afterwards: [(write, the .data event, the op that saved the tensor)]. PyTorch's version check does not see
        them, so backward silently uses the overwritten values."""
        hit = self.__dict__.get("_corrupt")
        if hit is not None:
            return hit
        out = []
        alias = {}
        for e in self.ev:
            # (.data only: a .detach() alias shares the version counter, so autograd raises instead)
            if e.kind == "cut" and e.cut == "data" and e.inputs and e.outputs:
                alias[e.outputs[0].tid] = (e, e.inputs[0].tid)
        ran = {}  # forward event index -> first backward that ran its node
        if alias:
            for b in self.d.backwards:
                for n in b.nodes.values():
                    if n.ran and n.event is not None:
                        ran.setdefault(n.event, b.event)
        for w in self.ev if alias else ():
            if w.kind != "inplace":
                continue
            a = alias.get(w.detail.get("target")) or alias.get(w.detail.get("base"))
            if a is None:
                continue
            cut, orig = a
            savers = [self.ev[i] for i in self.consumers.get(orig, ()) if i < w.index and self.ev[i].kind == "op"
                      and _opname(self.ev[i]) not in _NO_SAVE]
            p = self.d.producer(orig)
            if p is not None and p.index < w.index and _opname(p) in _SAVES_RESULT:
                savers.insert(0, p)
            saver = next((x for x in savers if ran.get(x.index, -1) > w.index), None)
            if saver is not None:
                out.append((w, cut, saver))
        self._corrupt = out
        return out

    def _corrupted(self, tid, name, status):
        """``tid``'s gradient was computed from values overwritten through .data / a detached alias."""
        writes = self._corrupting_writes()
        if not writes:
            return None
        cone = {x.index for x in self.cone(tid)}
        for w, cut, saver in writes:
            if saver.index not in cone and saver.index != self.d.tensors[tid].producer:
                continue
            orig = self.label(cut.inputs[0].tid)
            how = ".data"
            got = {"zero": "all zeros", "nonfinite": "inf/nan", "received": "computed from overwritten values"}.get(
                status, "wrong")
            return Explanation(
                "inplace_saved_tensor", w.site, name,
                f"{name}.grad is {got}: {_opname(w)}(){_at(w.site)}{_code(w.site)} wrote into `{orig}` through {how} "
                f"after {_opname(saver)}(){_at(saver.site)} saved it for backward, so backward used the overwritten "
                f"values; PyTorch does not notice writes through {how}.",
                detail="Autograd saves some inputs and results of an operation to compute its gradient. A write "
                       "through .data changes them without bumping the version autograd checks, so the gradient is "
                       "silently wrong instead of an error.",
                fix=f"do not write into `{orig}` through {how} while the graph that saved it is still "
                    f"to be used: compute a new tensor instead (out of place), or make the change after backward.",
                evidence=[w, cut, saver])
        return None

    def _mark_corrupting(self):
        for w, cut, _saver in self._corrupting_writes():
            w.verdict = cut.verdict = "harmful"

    def _zero_harm(self, e):
        for b in self.d.backwards:
            for n in b.nodes.values():
                if n.event == e.index and n.ran and n.out_norms and all(v == 0.0 for v in n.out_norms if v is not None):
                    return True
        return False

    # --- summary -----------------------------------------------------------------------------------
    def summarize(self, now=None) -> StepSummary:
        now = now or {}
        self.set_now(now)
        d = self.d
        s = StepSummary()
        s.n_events = len(self.ev)
        s.n_ops = sum(1 for e in self.ev if e.kind in ("op", "cut", "inplace") and e.context == "user")
        bws = self._backward_events()
        s.n_backward = len(bws)
        s.backward_roots = [self._root_label(b) for b in bws]
        s.n_optimizer_steps = sum(1 for e in self.ev if e.kind == "optimizer_step")
        s.unseen = list(d.unseen)
        cuts = self.cuts()
        seen_cut = set()
        s.harmful_cuts = []
        for e in cuts:  # the same line in every training step is one cut
            if e.verdict == "harmful":
                key = e.site.short if e.site else (e.cut or e.kind, e.op)  # one row per source line
                if key not in seen_cut:
                    seen_cut.add(key)
                    s.harmful_cuts.append(e)
        s.benign_cuts = [e for e in cuts if e.verdict == "benign"]
        used = set()
        for e in self.ev:
            if e.context == "user" and e.kind in ("op", "cut", "inplace", "module"):
                used.update(e.input_ids())
        trainable = self.trainable
        problems = []
        groups = {}
        for t in d.tensors.values():
            if self.out_of_model(t.tid):  # only copied or built, then replaced: not in the model
                continue
            if t.role != "param":
                # leaves the user made with requires_grad=True and used count too (x = torch.randn(..., requires_grad=True))
                if not (t.is_leaf and t.requires_grad and t.tid in used
                        and t.tid not in self.trainable and not trainable):
                    continue
            n = now.get(t.tid)
            if n is not None:
                status, norm, rg = n["status"], n["norm"], n["requires_grad"]
            else:
                status = t.grad.status if t.grad else "none"
                norm = t.grad.norm if t.grad else None
                rg = t.requires_grad
                for e in self.ev:
                    if e.kind == "requires_grad" and t.tid in e.input_ids():
                        rg = bool(e.detail.get("value"))
            is_trainable = (t.tid in trainable) if trainable else rg
            if status in ("none", "zero") and self.grad_status(t.tid) == "received":  # consumed, then cleared
                status = "received"
                norm = t.grad.norm if t.grad else norm
            shown = status
            if not rg:
                shown = "frozen"
            elif not bws:
                shown = "not_run"
            ps = ParamStatus(self.label(t.tid), t.tid, t.shape, shown, norm, is_trainable)
            bad = self.starved(t.tid)  # the one verdict (the cuts use it too)
            if not rg and trainable and t.tid in trainable and t.tid in used:
                bad = True  # handed to an optimizer, used in the forward, but frozen
            if bad and bws:
                exp = self.why(t.tid, n)
                if "the backward that should have reached it failed" in exp.summary:  # covered by the failure
                    ps.cause, ps.site = exp.cause, exp.site
                    s.params.append(ps)
                    continue
                ps.cause, ps.site = exp.cause, exp.site
                key = (exp.cause, exp.site.short if exp.site else None, exp.status)
                if key in groups:
                    groups[key].append(exp)
                else:
                    groups[key] = [exp]
                    problems.append(exp)
            elif not rg and t.tid in used:
                exp = self.why(t.tid, n)
                ps.cause, ps.site = exp.cause, exp.site
            s.params.append(ps)
        # merge grouped explanations: one panel per cause+site, listing every target
        merged = []
        for exp in problems:
            key = (exp.cause, exp.site.short if exp.site else None, exp.status)
            grp = groups[key]
            if len(grp) > 1:
                names = [g.target for g in grp]
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
                exp = Explanation(exp.cause, exp.site, shown,
                                  exp.summary.replace(f"{exp.target}.grad is", f"{shown}: .grad is", 1)
                                  if exp.summary.startswith(exp.target) else exp.summary,
                                  exp.detail, exp.fix, exp.path, exp.evidence, exp.status)
            merged.append(exp)
        s.problems = merged
        s.failure = self.failure()
        if not bws and not s.failure:
            s.verdict = "no backward ran in the traced block: nothing to check yet"
            s.ok = True
        elif s.failure is not None or merged:
            n = len(merged) + (1 if s.failure else 0)
            s.verdict = f"{n} problem{'s' if n != 1 else ''} found"
            s.ok = False
        else:
            s.verdict = "OK: every trainable parameter used in the step got a finite, non-zero gradient"
            s.ok = True
        return s
