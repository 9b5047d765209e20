"""Templates for a cut on the data path (cuts.py decides the cut; these say it), per cause: the head of the
summary, the detail and the fix, filled from the user's code and names the cut rule found."""
from __future__ import annotations

import re

from .common import _opname, _short
from .wording import _as_written, _at, _code, grad_off_text, said, words


def _detach(f):
    what, name, plain, users, site = f["what"], f["name"], f["plain"], f["users"], f["site"]
    return (f"{what} was detached{_at(site)}{_code(site)}",
            "detach() returns a tensor that shares the values but has no history, so backward stops there.",
            (f"keep that detach() for the terms that must not train through it (it feeds {len(users)} "
             f"computations), but compute the term that should train {name} from the undetached value"
             + (f" `{what}`" if plain else "") + "." if len(users) > 1 else
             (f"use `{what}` instead of `{what}.detach()`" if plain else "remove that .detach()") +
             f" where the result should train {name}; keep detach() only for logging or for targets that "
             f"must not get gradients."))


def _data_attr(f):
    what, plain, site = f["what"], f["plain"], f["site"]
    return (f"{what} was read through .data{_at(site)}{_code(site)}",
            ".data gives the values without autograd history, so the result is a constant to backward.",
            (f"use `{what}` directly instead of `{what}.data`" if plain else "use the tensor itself "
             "instead of its .data") + "; to change values without tracking, use "
            "`with torch.no_grad():` in the update code only.")


#: NumPy functions and their torch twins (the fix names the one the cut's line calls)
_TORCH_TWIN = {"clip": "torch.clamp", "exp": "torch.exp", "log": "torch.log", "tanh": "torch.tanh",
               "where": "torch.where", "maximum": "torch.maximum", "minimum": "torch.minimum", "abs": "torch.abs",
               "sqrt": "torch.sqrt", "mean": "torch.mean", "sum": "torch.sum", "dot": "torch.dot",
               "matmul": "torch.matmul", "sign": "torch.sign", "linalg.norm": "torch.linalg.norm",
               "concatenate": "torch.cat", "stack": "torch.stack", "power": "torch.pow", "square": "torch.square",
               "log1p": "torch.log1p", "cumsum": "torch.cumsum", "sin": "torch.sin", "cos": "torch.cos"}
_NP_CALL = re.compile(r"\b(?:np|numpy)\.((?:linalg\.)?\w+)\(")


def _numpy_roundtrip(f):
    what, site, came_back = f["what"], f["site"], f["came_back"]
    twins = [(n, _TORCH_TWIN[n]) for n in dict.fromkeys(_NP_CALL.findall(site.code or "")) if n in _TORCH_TWIN] \
        if site is not None else []
    return (f"{what} left autograd through NumPy{_at(site)}{_code(site)}{came_back}",
            "NumPy arrays carry no autograd history; a tensor made from one (torch.from_numpy, "
            "torch.tensor) is a constant to backward.",
            (f"keep the computation in torch: `{twins[0][1]}(...)` instead of `np.{twins[0][0]}(...)` on the "
             f"tensor itself, without .detach().numpy(); if you need NumPy for logging, convert a copy." if twins else
             "keep the computation in torch (most NumPy functions have a torch twin); if you need "
             "NumPy for logging, convert a copy and keep using the tensor."))


def _item_roundtrip(f):
    what, site, came_back = f["what"], f["site"], f["came_back"]
    return (f"{what} became a Python number{_at(site)}{_code(site)}{came_back}",
            ".item()/float() return a plain Python number; arithmetic with it is a constant to backward.",
            f"keep `{what}` as a tensor in the computation (drop .item()/float()); use .item() only "
            f"for logging.")


def _tolist_roundtrip(f):
    what, site, came_back = f["what"], f["site"], f["came_back"]
    return (f"{what} became Python lists{_at(site)}{_code(site)}{came_back}",
            ".tolist() returns plain Python numbers; a tensor rebuilt from them has no history.",
            "keep the values as a tensor and use tensor operations (e.g. torch.clamp instead of "
            "min/max in a Python loop over .tolist()).")


def _tensor_rewrap(f):
    what, site, copied, listed = f["what"], f["site"], f["copied"], f["listed"]
    return (f"{what} was copied into a new tensor{_at(site)}{_code(site)}",
            "torch.tensor()/new_tensor()/as_tensor(copy) copy the values into a fresh tensor without "
            "history.",
            (f"use `{copied}` itself (torch.tensor() copies it without history); for another dtype "
             f"or device use `{copied}.float()` / `{copied}.to(...)`." if copied else
             f"combine the tensors with `torch.stack({listed})` (torch.cat to join along an existing "
             f"dimension) instead of copying their values into a new tensor." if listed else
             "combine tensors with torch.stack / torch.cat (or use the tensor directly) instead of "
             "copying their values into a new tensor."))


def _no_grad_block(f):
    what, site, se_site, rebind, off_by, decorated = (f["what"], f["site"], f["se_site"], f["rebind"], f["off_by"],
                                                      f["decorated"])
    return ((f"`{rebind}` was rebound{_at(site)}{_code(site)} to the result of an update made under "
             f"no_grad, a new tensor that does not require grad" if rebind else
             f"{what} was used while grad was switched off{_at(site)}{_code(site)}; "
             f"{off_by}" if off_by else
             f"{what} was used{_at(se_site)}{_code(se_site)} inside the no_grad region opened"
             f"{_at(site)}{_code(site)}" if site is not se_site and se_site is not None else
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
             "step; keep no_grad for evaluation and target computations."))


def _param_recreated(f):
    what, site, lib = f["what"], f["site"], f["lib"]
    return (f"{what} went through {lib}(){_at(site)}{_code(site)}, which moves the "
            f"weight into new Parameters that the forward uses from then on",
            "A parametrization (weight_norm, spectral_norm, ...) replaces the module's weight with "
            "new Parameters; an optimizer built before holds the old weight, which no longer takes "
            "part in the forward.",
            "apply it before creating the optimizer (or add the new parameters with "
            "optimizer.add_param_group).")


def _inference_mode(f):
    what, site, se_site, cached = f["what"], f["site"], f["se_site"], f["cached"]
    return ((f"{what} was used{_at(se_site)}{_code(se_site)} under torch.inference_mode(), opened"
             f"{_at(site)}{_code(site)}" if site is not se_site and se_site is not None else
             f"{what} was used under torch.inference_mode(){_at(site)}{_code(site)}")
            + ("; that result was cached: later calls of "
               f"`{cached}` reused it instead of computing it again" if cached else ""),
            "Tensors created under inference_mode have no history; .clone() afterwards makes a "
            "normal tensor but cannot restore it.",
            ("do not keep tensors computed from parameters across calls (recompute them in training, "
             "or invalidate the cache when grad is on / in train mode)." if cached else
             "run this part of the forward outside torch.inference_mode() during training."))


def lib_nograd_text(what, site, lib):
    """A cut inside a library function that runs under no_grad (``lib``: its qualified name)."""
    fix = "use an operation that keeps the graph."
    if lib.endswith(".sample") or lib.endswith("sample_n"):
        fix = ("use `.rsample()` (the reparameterised sample) so gradients reach the distribution's parameters, "
               "or a score-function (REINFORCE) estimator that weights the sample's log_prob by its reward.")
    return (f"{what} went through {lib}(){_at(site)}{_code(site)}, which runs without gradient",
            f"{lib}() computes its result under torch.no_grad(), so nothing flows back through it.", fix)


def _nondifferentiable_op(f):
    what, site, e, lib = f["what"], f["site"], f["e"], f["nograd_lib"]
    if lib:
        return lib_nograd_text(what, site, lib)
    return (f"{what} went through {_as_written(e)}{_at(site)}{_code(site)}",
            f"{_opname(e)}() has no gradient (its result is integer/boolean or piecewise "
            f"constant), so nothing flows back through it.",
            "use a differentiable relaxation: softmax/gumbel-softmax instead of argmax, a "
            "sigmoid instead of a hard threshold, or a straight-through estimator "
            "`soft + (hard - soft).detach()`.")


def _integer_cast(f):
    what, site = f["what"], f["site"]
    return (f"{what} was cast to an integer/bool dtype{_at(site)}{_code(site)}",
            "Integer and bool tensors cannot carry gradients.",
            "keep the value in floating point for the loss (round only for reporting), or use a "
            "straight-through estimator.")


def _reentrant_checkpoint(f):
    what, site = f["what"], f["site"]
    return (f"{what} was computed inside checkpoint(use_reentrant=True){_at(site)}{_code(site)}",
            "The reentrant checkpoint only builds a graph when one of its *inputs* requires "
            "grad; parameters inside the checkpointed function do not count.",
            "use checkpoint(..., use_reentrant=False), or make an input require grad.")


def _other(f):
    what, site = f["what"], f["site"]
    return (f"{what} stopped carrying gradient{_at(site)}{_code(site)}",
            "The operation produced a result without autograd history.",
            "keep the computation differentiable.")


_BY_CAUSE = {
    "detach": _detach, "data_attr": _data_attr, "numpy_roundtrip": _numpy_roundtrip,
    "item_roundtrip": _item_roundtrip, "tolist_roundtrip": _tolist_roundtrip, "tensor_rewrap": _tensor_rewrap,
    "no_grad_block": _no_grad_block, "param_recreated": _param_recreated, "inference_mode": _inference_mode,
    "nondifferentiable_op": _nondifferentiable_op, "integer_cast": _integer_cast,
    "reentrant_checkpoint": _reentrant_checkpoint,
}


def came_back_text(back):
    """`` and came back through ...``: where a value that left autograd (``back``: the step that linked it back)
    re-entered the computation."""
    how = _short(back.op) if back.kind == "external" else _opname(back) + "()"
    by = {"memory": "shared memory", "shape": "matching shape", "value": "matching values"}.get(
        back.detail.inferred, "")
    if back.kind == "external":
        return f" and came back through {how} (first used{_at(back.site)}" + (f"; linked by {by})" if by else ")")
    return f" and came back through {how}{_at(back.site)}" + (f" (linked by {by})" if by else "")


@words("data_cut")
def cut_text(cause, name, root, returned, **found):
    """data_cut (any cut cause): summary, detail, fix of a cut on the data path from ``name`` to
    ``root``; ``found``: what the cut rule found (what, site, se_site, plain, users, came_back: the step that
    linked the value back, copied, listed, rebind, off_by: the grad_mode event of a switch outside the cut's
    call chain, decorated, cached, lib, nograd_lib, e)."""
    back = found.get("came_back")
    found = dict(found, name=name, came_back=came_back_text(back) if back is not None else "",
                 off_by=grad_off_text(found.get("off_by")))
    head, detail, fix = _BY_CAUSE.get(cause, _other)(found)
    tail = f"so backward from `{root}` stops there." if returned else f"and `{root}` never received it back with history."
    return said(f"{name}.grad is None", f"{head}, {tail}", of=name), detail, fix
