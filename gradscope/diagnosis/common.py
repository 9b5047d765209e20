"""Constants and small pure helpers shared by the facts, the rules and the wording (no torch)."""
from __future__ import annotations

import ast
import linecache
import re

from ..core import _source
from ..core._source import in_installed_package
from ..core.model import Cause, Event, Site, strip_torch_prefix


#: Event.cut -> Explanation.cause (a view of :class:`~gradscope.core.model.Cause`: ``Cause(cut).cause``)
CUT_CAUSE = {str(k): k.cause for k in Cause.cut_kinds()}


_ESCAPES = ("numpy", "item", "tolist")


# causes that mean "the flow from the tensor to the loss was cut somewhere" (where further cuts are worth naming)
_FLOW_CAUSES = set(CUT_CAUSE.values()) | {Cause.ZERO_GRADIENT}


_TO_OPS = {"to", "double", "float", "half", "bfloat16", "type", "cuda", "cpu", "type_as"}


_ZERO_OPS = {"round", "sign", "floor", "ceil", "trunc", "fix", "sgn", "floor_divide", "__floordiv__", "round_",
             "bernoulli", "bernoulli_", "poisson", "heaviside", "normal", "binomial", "multinomial"}


_NOT_FORWARD = ("optimizer", "init", "clip", "backward", "setup")  # (setup: torch converting modules for the user)
# whose cuts are not the user's: also torch.distributed's own code (FSDP's copies, DTensor's redistribution: in the
# data's flow, but no cut the user made)
_NOT_USERS = _NOT_FORWARD + ("distributed",)


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


# ops whose backward uses their own result and not their input (sigmoid' = s(1-s)): writing into the result corrupts
# it, writing into the input does not (tests/test_rules_zero.py checks each against torch; elu, selu and hardsigmoid
# read their input). Only ops that make a new tensor: an in-place one (`h.sigmoid_()`) is not the producer of what it
# wrote, and its backward node is not mapped to its event, so a write into its result is not seen (a known gap).
_SAVES_RESULT = {"sigmoid", "tanh", "exp", "softmax", "log_softmax", "relu", "sqrt", "rsqrt", "expm1", "reciprocal"}


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


_UNNAMED = re.compile(r"t\d+$")


def unnamed(label: str) -> bool:
    """Is ``label`` the trace-local name of a tensor nobody named (``t12``: Facts.label's fallback)?"""
    return bool(_UNNAMED.match(label))


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _find_in_function(filename: str, lineno: int, needle: str):
    """(line, code) of the first line containing ``needle`` in the function around ``filename:lineno`` (in a
    script's module-level code: in the top-level statement around it, a ``for`` loop with its body)."""

    lines = linecache.getlines(filename)
    if not lines or not 0 < lineno <= len(lines):
        return None
    # up through the blocks that enclose the line (each header less indented than what it holds) to the
    # function's def; when no def encloses it, the top-level statement it is in
    cur = _indent(lines[lineno - 1])
    top = lineno - 1
    for i in range(lineno - 2, -1, -1):
        if cur == 0:
            break
        text = lines[i]
        code = text.lstrip()
        if not code or code.startswith("#") or _indent(text) >= cur:
            continue
        cur = _indent(text)
        if code.startswith(("def ", "async def ")):
            return _first_in_block(lines, i + 1, cur, needle)  # the function's body
        top = i
    return _first_in_block(lines, top, _indent(lines[top]), needle, header=True)


def _undone_later(filename: str, lineno: int) -> bool:
    """Does the function around ``filename:lineno`` (a freeze) switch grad back on after that line
    (``requires_grad_(True)``, ``requires_grad = True``): a temporary freeze for one phase of the step?"""
    lines = linecache.getlines(filename)
    if not lines or not 0 < lineno <= len(lines):
        return False
    for needle in ("requires_grad_(True)", "requires_grad = True", "requires_grad=True)", "requires_grad_()"):
        hit = _find_in_function(filename, lineno, needle)
        if hit is not None and hit[0] > lineno:
            return True
    return False


def _first_in_block(lines, first: int, outer: int, needle: str, header: bool = False):
    """(line, code) of the first line from ``first`` on containing ``needle``, up to the next line indented
    ``outer`` or less (the end of the block; ``header``: line ``first`` is the block's own first line)."""
    for i in range(first, len(lines)):
        text = lines[i]
        if (i > first or not header) and text.strip() and _indent(text) <= outer:
            break
        if needle in text:
            return i + 1, text.strip()
    return None


def _sgd_rebind(site) -> str | None:
    """`w = w - lr * w.grad` (a manual SGD step that rebinds the name to a new tensor): ``w``."""
    code = (site.code or "") if site is not None else ""
    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=\s*\1\s*[-+]", code)
    return m.group(1) if m and ".grad" in code else None


def cleared_by_zero_grad(e: Event) -> bool:
    """The clear ``e`` of .grad is a zero_grad() call (else a `.grad = None` the user wrote)."""
    code = e.site.code if e.site else ""
    return e.context == "optimizer" or "zero_grad" in (code or "") or e.kind == "inplace"


def _is_copy(e: Event) -> bool:
    """A value copy between tensors (load_state_dict's copy_, a detach for state_dict()): not a use of the
    tensor in the computation."""
    return e.kind in ("inplace", "cut") and _opname(e) in ("copy_", "detach")


_short = strip_torch_prefix


def _opname(e: Event) -> str:
    s = _short(e.op)
    s = s.rsplit(".", 1)[-1] if "." in s and not s.startswith("nn.") else s
    if e.kind == "cut" and e.detail.outputs_of is not None:
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


def users_site(site: Site | None, labels=None) -> Site | None:
    """A site inside an installed package (Lightning's ``freeze()`` setting ``requires_grad = False``): the user's
    own line that called into it (the innermost frame of the stack outside installed packages), with the whole
    stack kept (its last frame is still the library's line). Unchanged when every frame is a package's.
    ``labels``: filename -> its notebook cell label ("" for a file)."""
    if site is None or len(site.stack) < 2 or not in_installed_package(site.filename):
        return site
    for fr in reversed(site.stack[:-1]):
        if not in_installed_package(fr.filename):
            return Site(fr.filename, fr.lineno, fr.function, fr.code, site.stack, labels(fr.filename) if labels else "")
    return site


def _call_args(code: str) -> list:
    """The argument expressions of the first call on a line of source (`torch.optim.SGD(groups, lr=0.1)`:
    ['groups']; keywords left out), or []."""
    try:
        tree = ast.parse(code.strip().rstrip(":"))
    except SyntaxError:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    return [ast.unparse(a) for a in calls[0].args] if calls else []


_LHS = re.compile(r"^\s*([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\s*=(?!=)")


def stored_in_attribute(site):
    """(the frame, line, code) of `<obj>.<attr> = <name>` after a line of ``site``'s stack that assigned ``name``
    (`out, hidden = self.rnn(x, self.hidden)` then `self.hidden = hidden`; `state = env.step(...)` then
    `env.state = state`): where a carried state is kept for the next step. Innermost frame first; None if none."""
    for f in reversed(site.stack if site is not None else ()):
        m = _LHS.match(f.code or "")
        lines = linecache.getlines(f.filename)
        if m is None or not lines or not 0 < f.lineno <= len(lines):
            continue
        names = [n.strip() for n in m.group(1).split(",")]
        store = re.compile(r"^\s*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\s*=\s*(" + "|".join(map(re.escape, names))
                           + r")\s*(?:#.*)?$")
        here = _indent(lines[f.lineno - 1])
        top = next((_indent(lines[j]) for j in range(f.lineno - 2, -1, -1)
                    if lines[j].lstrip().startswith(("def ", "async def ")) and _indent(lines[j]) < here), -1)
        for i in range(f.lineno, min(len(lines), f.lineno + 60)):
            text = lines[i]
            if text.strip() and _indent(text) <= top and not text.lstrip().startswith("#"):
                break  # (the end of the function the assignment is in)
            if store.match(text):
                return f, i + 1, text.strip()
    return None


#: ops whose result can be inf/nan from finite inputs (at the edge of their domain, or overflowing)
_DOMAIN_EDGE = {"div", "__truediv__", "__rtruediv__", "true_divide", "reciprocal", "log", "log2", "log10", "log1p",
                "sqrt", "rsqrt", "pow", "__pow__", "__rpow__", "acos", "asin", "atanh", "exp", "expm1", "tan"}

def _at_domain_edge(e) -> bool:
    """An op that can make inf/nan from finite inputs: a division only by a tensor (`x / 8 ** 0.5` cannot)."""
    op = _opname(e)
    if op in ("div", "__truediv__", "true_divide"):
        return len(e.inputs) >= 2
    if op in ("pow", "__pow__") and len(e.inputs) < 2 and _INT_POWER.search((e.site.code or "") if e.site else ""):
        return False  # (a whole power of a tensor, `.pow(2)`, `x ** 2`: no nan from finite values)
    return op in _DOMAIN_EDGE


#: ops whose backward cannot make an inf/nan out of finite values and a finite gradient (a linear layer, a sum):
#: a non-finite gradient they sent came in with a saved input
_PASS_ON = {"linear", "matmul", "mm", "bmm", "addmm", "mul", "__mul__", "__rmul__", "add", "__add__", "__radd__",
            "sub", "__sub__", "__rsub__", "sum", "mean", "conv1d", "conv2d", "conv3d", "relu", "cat", "stack",
            "reshape", "view", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "embedding", "dropout"}

_INT_POWER = re.compile(r"(?:\*\*\s*|\.pow\(\s*)\d+(?![.\d\w])")


#: loss functions whose second argument is the target (what the prediction is compared with)
_LOSSES = {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "cross_entropy"}


#: ops that map -inf to a finite value (0): a masked entry stops being non-finite there
_SQUASHING = {"softmax", "log_softmax", "exp", "sigmoid", "softmin", "logsumexp", "scaled_dot_product_attention",
              "exp_", "sigmoid_"}
