"""One trigger per autograd message of the catalogue (docs/errors.md): realistic user code -- a training
step, a module, an optimizer -- that makes torch 2.13 raise (or warn) that message.

Each function runs the whole step itself (so it can be run plain or under ``gradscope.trace()``). The line
that causes the problem ends with ``# <- cause`` (tests/test_error_catalogue.py checks gradscope's site
against it); a cause outside the function (the plain list in ``ListNet``) ends with ``# <- cause: <what>``,
which the row names. Triggers for rows where the message is a warning or a missing gradient return the tensor to
ask ``tr.why`` about. Not a test module: tests/test_error_catalogue.py runs these.
"""
from __future__ import annotations

import contextlib
import copy
import gc
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def _data(n=8, d=4, k=2):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, d, generator=g), torch.randint(0, k, (n,), generator=g)


class MLP(nn.Module):
    def __init__(self, d=4, h=8, k=2):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, k)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


# --- in-place writes on leaves and views --------------------------------------------------------------------

def leaf_inplace_init():
    """A hand-written initialisation writes into a parameter in place, outside `torch.no_grad()`."""
    model = MLP()
    model.fc1.weight.normal_(0, 0.02)  # <- cause
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def leaf_inplace_manual_sgd():
    """A hand-rolled SGD update `w -= lr * w.grad` without `torch.no_grad()`."""
    w = torch.randn(4, 2, requires_grad=True)
    x, y = _data()
    loss = F.cross_entropy(x @ w, y)
    loss.backward()
    w -= 0.1 * w.grad  # <- cause


def view_of_leaf_inplace():
    """Zeroing one row of an embedding table (a padding row) by slice assignment."""
    emb = nn.Embedding(10, 4)
    emb.weight[0] = 0  # <- cause
    ids = torch.tensor([[0, 3, 5]])
    emb(ids).sum().backward()


def view_of_leaf_inplace_column():
    """Masking a column of a parameter in place: `w[:, 0].zero_()` is a view of the leaf."""
    model = MLP()
    model.fc2.weight[:, 0].zero_()  # <- cause
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def out_argument():
    """A preallocated output buffer (`out=`) for a product with a parameter."""
    w = nn.Parameter(torch.randn(4, 3))
    x, _ = _data()
    buf = torch.empty(8, 3)
    torch.matmul(x, w, out=buf)  # <- cause
    buf.sum().backward()


def out_argument_add():
    """`torch.add(..., out=)` into a running-sum buffer with inputs that require grad."""
    model = MLP()
    x, _ = _data()
    acc = torch.zeros(8, 2)
    torch.add(acc, model(x), out=acc)  # <- cause
    acc.sum().backward()


def split_view_inplace():
    """Gates from `chunk` of an LSTM-like pre-activation, each activated in place."""
    lin = nn.Linear(4, 8)
    x, _ = _data()
    i, f = lin(x).chunk(2, dim=1)
    i.sigmoid_()  # <- cause
    (i * f).sum().backward()


def unbind_view_inplace():
    """Per-time-step rows from `unbind`, each normalised in place."""
    rnn_out = nn.Linear(4, 4)(_data()[0])
    for row in rnn_out.unbind(0):
        row.div_(row.norm())  # <- cause
    rnn_out.sum().backward()


def view_from_no_grad_inplace():
    """A view taken under `no_grad` (a cached slice of the weights) is written in place with grad on."""
    model = MLP()
    with torch.no_grad():
        head = model.fc2.weight[0]  # <- cause
    x, y = _data()
    out = model(x)
    head.mul_(0.5)
    F.cross_entropy(out, y).backward()


def inplace_saved_tensor():
    """`x += ...` on an activation that sigmoid saved for backward."""
    model = MLP()
    x, y = _data()
    h = torch.sigmoid(model.fc1(x))
    h += 1  # <- cause
    F.cross_entropy(model.fc2(h), y).backward()


def inplace_relu_after_sigmoid():
    """A gate `sigmoid` followed by an in-place ReLU module: sigmoid saved its output for backward."""
    lin, act = nn.Linear(4, 4), nn.ReLU(inplace=True)
    x, _ = _data()
    gate = torch.sigmoid(lin(x))
    out = act(gate)  # <- cause
    out.sum().backward()


def expanded_inplace():
    """A score buffer made by `expand`ing one row over the batch, then accumulated into in place."""
    model = MLP()
    x, y = _data()
    scores = torch.zeros(1, 2).expand(8, 2)  # <- cause
    scores += model(x)
    F.cross_entropy(scores, y).backward()


def resize_requires_grad():
    """`resize_` on an activation to flatten it (instead of view/reshape)."""
    conv = nn.Conv2d(1, 2, 3)
    h = conv(torch.randn(2, 1, 5, 5))
    h.resize_(2, 18)  # <- cause
    h.sum().backward()


def detach_view_inplace():
    """`detach_()` on a slice of the hidden state (truncated BPTT) -- a view."""
    rnn = nn.RNN(4, 4, batch_first=True)
    out, h = rnn(torch.randn(2, 3, 4))
    last = out[:, -1]
    last.detach_()  # <- cause
    h.sum().backward()


# --- backward and autograd.grad calls -----------------------------------------------------------------------

def nonscalar_backward():
    """A per-sample loss (`reduction='none'`) passed to backward without a reduction."""
    model = MLP()
    x, y = _data()
    loss = F.cross_entropy(model(x), y, reduction="none")  # <- cause
    loss.backward()


def no_grad_fn_eval():
    """The forward ran under `torch.no_grad()` (an evaluation helper reused for training)."""
    model = MLP()
    x, y = _data()
    with torch.no_grad():  # <- cause
        out = model(x)
    F.cross_entropy(out, y).backward()


def backward_twice_rnn_hidden():
    """A recurrent hidden state carried across batches without `detach()`."""
    cell = nn.RNNCell(4, 4)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    h = torch.zeros(8, 4)
    for _ in range(2):
        x, _ = _data()
        h = cell(x, h)  # <- cause
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def numpy_of_grad_tensor():
    """Logging predictions with `.numpy()` inside the step."""
    import numpy as np
    model = MLP()
    x, y = _data()
    logits = model(x)
    preds = np.argmax(logits.numpy(), axis=1)  # <- cause
    F.cross_entropy(logits, y).backward()
    return preds


def no_grad_fn_rewrapped():
    """A loss rebuilt from Python numbers (`torch.tensor(losses).mean()`) before backward."""
    model = MLP()
    x, y = _data()
    losses = [F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).item() for i in range(4)]  # <- cause
    loss = torch.tensor(losses).mean()
    loss.backward()


def gan_step_before_generator_backward():
    """A GAN step: the discriminator's `optimizer.step()` runs before the generator's backward through it."""
    G, D = nn.Linear(2, 4), nn.Linear(4, 1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    z = torch.randn(8, 2)
    fake = G(z)
    d_fake = D(fake)
    loss_d = F.softplus(d_fake).mean()
    loss_g = F.softplus(-d_fake).mean()
    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    opt_d.step()  # <- cause
    loss_g.backward()


def no_grad_fn_frozen():
    """Transfer learning: the whole backbone is frozen, and the new head was frozen with it."""
    backbone = nn.Linear(4, 8)
    model = nn.Sequential(backbone, nn.ReLU(), nn.Linear(8, 2))
    for p in model.parameters():
        p.requires_grad = False  # <- cause
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def backward_twice_two_losses():
    """A multi-task step that calls backward on each loss; the second goes through the freed shared trunk."""
    trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 2), nn.Linear(8, 1)
    x, y = _data()
    h = torch.relu(trunk(x))
    loss_a = F.cross_entropy(head_a(h), y)
    loss_b = head_b(h).pow(2).mean()
    loss_a.backward()  # <- cause
    loss_b.backward()


def backward_twice_cached_outside_loop():
    """Class prototypes computed once before the loop and reused by every step's loss."""
    enc = nn.Linear(4, 4)
    opt = torch.optim.SGD(enc.parameters(), lr=0.1)
    protos = enc(torch.eye(4)[:2])  # <- cause
    for _ in range(2):
        x, y = _data()
        loss = F.cross_entropy(enc(x) @ protos.t(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def gradient_penalty_without_create_graph():
    """A WGAN-GP penalty from `autograd.grad` without `create_graph=True`, backwarded on its own."""
    D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    real, fake = torch.randn(8, 4), torch.randn(8, 4)
    eps = torch.rand(8, 1)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_()
    (g,) = torch.autograd.grad(D(x_hat).sum(), x_hat)  # <- cause
    gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
    gp.backward()


def backward_inputs_empty():
    """`loss.backward(inputs=list(model.parameters()))` on a model whose layers sit in a plain list."""
    model = ListNet()
    x, y = _data()
    loss = F.cross_entropy(model(x), y)
    loss.backward(inputs=list(model.parameters()))


def grad_shape_mismatch():
    """`backward(gradient=...)` with a gradient of the wrong shape."""
    model = MLP()
    x, _ = _data()
    out = model(x)
    out.backward(torch.ones(8))  # <- cause


def grad_count_mismatch():
    """`torch.autograd.backward` with two outputs and one gradient."""
    model = MLP()
    x, _ = _data()
    a, b = model(x).unbind(1)
    torch.autograd.backward([a.sum(), b.sum()], [torch.tensor(1.0)])  # <- cause


def autograd_grad_input_not_required():
    """`autograd.grad` w.r.t. an input that does not require grad (an input-gradient penalty)."""
    model = MLP()
    x, y = _data()  # <- cause
    loss = F.cross_entropy(model(x), y)
    torch.autograd.grad(loss, x)


def autograd_grad_unused():
    """`autograd.grad` w.r.t. a parameter the loss does not use (an auxiliary head)."""
    model = MLP()
    aux = nn.Linear(8, 2)
    x, y = _data()
    loss = F.cross_entropy(model(x), y)
    torch.autograd.grad(loss, [model.fc1.weight, aux.weight])  # <- cause


def dtype_mismatch_bce():
    """A float64 target (from NumPy) in a BCE loss: 'Found dtype Double but expected Float'."""
    import numpy as np
    model = nn.Linear(4, 1)
    x, _ = _data()
    target = torch.from_numpy(np.ones((8, 1)))  # <- cause
    loss = F.binary_cross_entropy(torch.sigmoid(model(x)), target)
    loss.backward()


def no_derivative():
    """A survival model's Gamma CDF with a learnable shape: `gammainc` has no derivative for its shape."""
    shape = nn.Parameter(torch.tensor(2.0))
    t = torch.rand(8) * 3
    cdf = torch.special.gammainc(shape, t)  # <- cause
    (-torch.log(1 - cdf + 1e-6)).mean().backward()


# --- requires_grad, retain_grad, hooks ----------------------------------------------------------------------

def requires_grad_integer():
    """Token ids made to require grad (to get input saliency)."""
    ids = torch.tensor([[1, 2, 3]])
    ids.requires_grad_()  # <- cause
    emb = nn.Embedding(5, 4)
    emb(ids).sum().backward()


def requires_grad_nonleaf():
    """Freezing a layer's *output* instead of its parameters."""
    model = MLP()
    x, y = _data()
    h = model.fc1(x)
    h.requires_grad = False  # <- cause
    F.cross_entropy(model.fc2(h), y).backward()


def retain_grad_no_grad():
    """`retain_grad()` on an input batch (for a saliency map) that does not require grad."""
    model = MLP()
    x, y = _data()  # <- cause
    x.retain_grad()
    F.cross_entropy(model(x), y).backward()


def hook_no_grad():
    """`register_hook` on a feature map computed under `no_grad` (Grad-CAM in an eval helper)."""
    model = MLP()
    x, y = _data()
    with torch.no_grad():  # <- cause
        feats = model.fc1(x)
    feats.register_hook(lambda g: g)
    F.cross_entropy(model.fc2(feats), y).backward()


def hook_changed_size():
    """A gradient hook that returns a reduced gradient (sum over the batch)."""
    model = MLP()
    x, y = _data()
    h = model.fc1(x)
    h.register_hook(lambda g: g.sum(0))  # <- cause
    F.cross_entropy(model.fc2(h), y).backward()


def hook_changed_dtype():
    """A gradient-clipping hook that returns a float64 gradient."""
    model = MLP()
    x, y = _data()
    h = model.fc1(x)
    h.register_hook(lambda g: g.double().clamp(-1, 1))  # <- cause
    F.cross_entropy(model.fc2(h), y).backward()


def full_backward_hook_inplace_relu():
    """Grad-CAM with `register_full_backward_hook` on a module followed by `ReLU(inplace=True)`."""
    feat = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    act = nn.ReLU(inplace=True)  # <- cause
    grads = []
    feat.register_full_backward_hook(lambda m, gi, go: grads.append(go[0]))
    out = act(feat(torch.randn(2, 1, 5, 5)))
    out.sum().backward()


def both_backward_hooks():
    """A logging hook (`register_backward_hook`) and a Grad-CAM hook (full) on the same module."""
    model = MLP()
    model.fc1.register_backward_hook(lambda m, gi, go: None)
    model.fc1.register_full_backward_hook(lambda m, gi, go: None)  # <- cause
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def grad_assign_wrong_size():
    """Loading gradients from another model whose layer has a different size."""
    model, other = MLP(h=8), MLP(h=6)
    x, y = _data()
    F.cross_entropy(other(x), y).backward()
    for p, q in zip(model.parameters(), other.parameters()):
        p.grad = q.grad  # <- cause


def grad_assign_wrong_dtype():
    """Gradient averaging that assigns a float64 mean to a float32 parameter's `.grad`."""
    model = MLP()
    x, y = _data()
    F.cross_entropy(model(x), y).backward()
    for p in model.parameters():
        p.grad = p.grad.double() / 2  # <- cause


def param_assign_tensor():
    """A manual weight normalisation that assigns the scaled tensor back as the parameter."""
    class Scaled(nn.Linear):
        def forward(self, x):
            self.weight = self.weight / self.weight.norm()  # <- cause
            return super().forward(x)
    model = Scaled(4, 2)
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def weight_norm_deepcopy():
    """An EMA copy of a vocoder layer built with the old `torch.nn.utils.weight_norm`, after a forward."""
    conv = nn.utils.weight_norm(nn.Conv1d(1, 2, 3))  # <- cause
    conv(torch.randn(1, 1, 8)).sum().backward()
    copy.deepcopy(conv)


def deepcopy_nonleaf():
    """An EMA copy (`copy.deepcopy`) of a model that caches a computed tensor as an attribute."""
    class Cached(MLP):
        def forward(self, x):
            self.last_hidden = self.fc1(x)  # <- cause
            return self.fc2(torch.relu(self.last_hidden))
    model = Cached()
    x, y = _data()
    F.cross_entropy(model(x), y).backward()
    copy.deepcopy(model)


def nonleaf_grad_access():
    """Reading `.grad` of an intermediate activation after backward (warning; the value is None)."""
    model = MLP()
    x, y = _data()
    h = model.fc1(x)  # <- cause
    F.cross_entropy(model.fc2(torch.relu(h)), y).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert h.grad is None
    return h


def scalar_of_requires_grad():
    """A learnable temperature read as a Python float (warning): the temperature gets no gradient."""
    model = MLP()
    tau = nn.Parameter(torch.tensor(1.5))
    x, y = _data()
    t = float(tau)  # <- cause
    loss = F.cross_entropy(model(x) / t, y)
    loss.backward()
    return tau


def create_graph_backward():
    """A gradient penalty computed with `loss.backward(create_graph=True)` (warning: reference cycle)."""
    model = MLP()
    x, y = _data()
    loss = F.cross_entropy(model(x), y)
    loss.backward(create_graph=True)  # <- cause
    return model.fc1.weight


def non_full_backward_hook():
    """`register_backward_hook` (not the full variant) on a module of several ops (warning)."""
    model = MLP()
    seen = []
    model.register_backward_hook(lambda m, gi, go: seen.append(go))  # <- cause
    x, y = _data()
    F.cross_entropy(model(x), y).backward()
    return model.fc1.weight


# --- custom autograd.Function ---------------------------------------------------------------------------------

def legacy_function():
    """An old-style autograd.Function with an instance `forward`, called as `Fn()(x)`."""
    class Clip(torch.autograd.Function):
        def forward(self, x):
            return x.clamp(-1, 1)

        def backward(self, g):
            return g
    model = MLP()
    x, y = _data()
    h = Clip()(model.fc1(x))  # <- cause
    F.cross_entropy(model.fc2(h), y).backward()


def function_wrong_grad_count():
    """A custom Function whose backward returns a gradient for only one of two inputs."""
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, s):
            ctx.save_for_backward(s)
            return x * s

        @staticmethod
        def backward(ctx, g):
            (s,) = ctx.saved_tensors
            return g * s  # <- cause
    model = MLP()
    x, y = _data()
    h = Scale.apply(model.fc1(x), torch.tensor(2.0))
    F.cross_entropy(model.fc2(h), y).backward()


def function_wrong_grad_shape():
    """A custom Function whose backward returns the gradient summed over the batch."""
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return (2 * x * g).sum(0)  # <- cause
    model = MLP()
    x, y = _data()
    h = Square.apply(model.fc1(x))
    F.cross_entropy(model.fc2(h), y).backward()


def save_for_backward_non_tensor():
    """`ctx.save_for_backward` given a Python number (a temperature)."""
    class Temp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, t):
            ctx.save_for_backward(x, t)  # <- cause
            return x / t

        @staticmethod
        def backward(ctx, g):
            x, t = ctx.saved_tensors
            return g / t, None
    model = MLP()
    x, y = _data()
    h = Temp.apply(model.fc1(x), 2.0)
    F.cross_entropy(model.fc2(h), y).backward()


def once_differentiable_double_backward():
    """A gradient penalty (double backward) through a `@once_differentiable` custom activation."""
    from torch.autograd.function import once_differentiable

    class Swish(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sigmoid(x)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(x)
            return g * (s + x * s * (1 - s))  # <- cause
    model = MLP()
    x, y = _data()
    x.requires_grad_()
    out = model.fc2(Swish.apply(model.fc1(x)))
    (gx,) = torch.autograd.grad(F.cross_entropy(out, y), x, create_graph=True)
    gx.pow(2).sum().backward()


# --- inference mode -------------------------------------------------------------------------------------------

def inference_tensor_saved():
    """Features precomputed under `inference_mode` then fed to a trainable head."""
    backbone, head = nn.Linear(4, 8), nn.Linear(8, 2)
    x, y = _data()
    with torch.inference_mode():
        feats = backbone(x)  # <- cause
    F.cross_entropy(head(feats), y).backward()


def inference_tensor_inplace():
    """A model built under `inference_mode` (a loader helper) then trained: BatchNorm updates its stats."""
    with torch.inference_mode():
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))  # <- cause
    model.train()
    x, y = _data()
    F.cross_entropy(model(x), y).backward()


def inference_tensor_requires_grad():
    """An embedding table loaded under `inference_mode` and then made trainable."""
    with torch.inference_mode():
        table = torch.randn(10, 4)  # <- cause
    table.requires_grad_()


# --- optimizers and containers ---------------------------------------------------------------------------------

class ListNet(nn.Module):
    """Layers kept in a plain Python list: `parameters()`, `.to()`, `.double()` never see them."""
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 8), nn.Linear(8, 2)]  # <- cause: plain list

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def empty_parameter_list():
    """An optimizer over a model whose layers sit in a plain list."""
    model = ListNet()
    torch.optim.Adam(model.parameters(), lr=1e-3)


def list_layers_dtype_mismatch():
    """`model.double()` misses layers kept in a plain list: the layer meets a double input."""
    model = ListNet().double()
    x, y = _data()
    F.cross_entropy(model(x.double()), y).backward()


class DictNet(nn.Module):
    """Heads kept in a plain dict next to a registered trunk: the optimizer never holds the heads."""
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = {"a": nn.Linear(8, 2)}  # <- cause: plain dict

    def forward(self, x):
        return self.heads["a"](torch.relu(self.trunk(x)))


def dict_layers_not_optimized():
    """The heads train (they get gradients) but no optimizer holds them: they never change."""
    model = DictNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data()
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    return model.heads["a"].weight


def list_layers_device_mismatch():
    """`model.to(device)` misses layers kept in a plain list: they stay on the CPU. (`meta` stands in for
    `cuda` on this CPU-only machine; on a GPU the message is 'Expected all tensors to be on the same device'.)"""
    class Net(ListNet):
        def __init__(self):
            super().__init__()
            self.out = nn.Linear(2, 2)

        def forward(self, x):
            return self.out(super().forward(x))
    device = torch.device("meta")
    model = Net().to(device)
    model(torch.randn(8, 4, device=device))


def param_in_two_groups():
    """A lower learning rate for the backbone, listed again inside `model.parameters()`."""
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    groups = [{"params": model[0].parameters(), "lr": 1e-3}, {"params": model.parameters()}]  # <- cause
    torch.optim.SGD(groups, lr=0.1)


def optimizer_given_modules():
    """An optimizer given the layers instead of their parameters."""
    model = MLP()
    torch.optim.Adam([model.fc1, model.fc2], lr=1e-3)  # <- cause


def optimizer_given_tensor():
    """An optimizer given a single parameter instead of a list of them."""
    model = MLP()
    torch.optim.SGD(model.fc2.weight, lr=0.1)  # <- cause


def clip_empty_generator():
    """Gradient clipping and a hand-written SGD step over `parameters()` of a model whose layers sit in a
    plain list (warning: nothing is clipped, and nothing is updated)."""
    model = ListNet()
    x, y = _data()
    F.cross_entropy(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    return model.layers[0].weight


def optimize_non_leaf():
    """Parameters moved with `.double()` after `requires_grad=True`: the optimizer gets non-leaves."""
    w = torch.randn(4, 2, requires_grad=True).double()  # <- cause
    torch.optim.SGD([w], lr=0.1)


def clip_nonfinite():
    """`clip_grad_norm_(error_if_nonfinite=True)` after a loss that overflowed to inf."""
    model = MLP()
    x, y = _data()
    # (the scaled logits overflow to inf here)
    logits = model(x) * 3e38  # <- cause
    F.cross_entropy(logits, y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)


def anomaly_nan():
    """Anomaly mode reports a backward that returned NaN: `sqrt` of a distance that is exactly zero."""
    model = MLP()
    x, _ = _data()
    with torch.autograd.detect_anomaly():
        z = model(x)
        d = (z - z.detach()).pow(2).sum(1).sqrt()  # <- cause
        d.mean().backward()


@contextlib.contextmanager
def _one_process_group():
    """A gloo process group of one rank in this process, for DistributedDataParallel (destroyed after)."""
    import tempfile
    import torch.distributed as dist
    with tempfile.TemporaryDirectory() as d:  # (a FileStore removes its file when it goes)
        dist.init_process_group("gloo", store=dist.FileStore(f"{d}/store", 1), rank=0, world_size=1)
        try:
            yield
        finally:
            # (DDP's reducers before the group: a gloo group destroyed by a reducer's last reference joins its
            # worker threads holding the GIL, torch issue #56297)
            gc.collect()
            dist.destroy_process_group()


def ddp_unused_parameter():
    """DDP over a model with an auxiliary head the forward skips (two steps, one process, gloo)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.aux = nn.Linear(4, 2)  # <- cause

        def forward(self, x):
            return self.fc(x)
    with _one_process_group():
        model = DDP(Net())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = _data()
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()


def ddp_shared_block_checkpointed_twice():
    """DDP with `find_unused_parameters=True` over a weight-shared block (ALBERT-style) run twice, each time
    under a reentrant checkpoint: its parameters are marked ready twice."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Linear(4, 4)

        def forward(self, x):
            for _ in range(2):
                x = checkpoint(self.block, x, use_reentrant=True)  # <- cause
            return x
    with _one_process_group():
        model = DDP(Shared(), find_unused_parameters=True)
        x, _ = _data()
        model(x.requires_grad_()).pow(2).mean().backward()


# --- checkpoint -----------------------------------------------------------------------------------------------

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.fc(x)))


def checkpoint_reentrant_autograd_grad():
    """A gradient penalty through `autograd.grad` on a reentrant-checkpointed block."""
    block = Block()
    x, _ = _data()
    x.requires_grad_()
    out = checkpoint(block, x, use_reentrant=True)  # <- cause
    torch.autograd.grad(out.sum(), x)


def checkpoint_reentrant_no_input_grad():
    """Reentrant checkpoint of the first block: its input needs no grad, so its weights get none."""
    block, head = Block(), nn.Linear(4, 2)
    x, y = _data()
    h = checkpoint(block, x, use_reentrant=True)  # <- cause
    F.cross_entropy(head(h), y).backward()
    return block.fc.weight


def checkpoint_nondeterministic():
    """A checkpointed function whose recomputation takes another branch (it reads a step counter)."""
    lin = nn.Linear(4, 4)
    calls = []

    def block(x):
        calls.append(1)
        if len(calls) == 1:
            return torch.relu(lin(x)) * torch.sigmoid(x)
        return torch.relu(lin(x))
    x, _ = _data()
    out = checkpoint(block, x, use_reentrant=False)  # <- cause
    out.sum().backward()


def checkpoint_no_use_reentrant():
    """`checkpoint(fn, x)` without `use_reentrant` (warning): the reentrant default, and an input that
    needs no grad, leave the block's weights without gradients."""
    block, head = Block(), nn.Linear(4, 2)
    x, y = _data()
    h = checkpoint(block, x)  # <- cause
    F.cross_entropy(head(h), y).backward()
    return block.fc.weight


# --- torch.func -------------------------------------------------------------------------------------------------

def backward_in_functorch():
    """Per-sample gradients with `vmap` over a function that calls `loss.backward()`."""
    model = MLP()
    x, y = _data()

    def per_sample(xi, yi):
        loss = F.cross_entropy(model(xi[None]), yi[None])
        loss.backward()  # <- cause
        return loss
    torch.func.vmap(per_sample)(x, y)


def item_in_vmap():
    """A per-sample loss that calls `.item()` (for logging) under `vmap`."""
    model = MLP()
    x, y = _data()

    def per_sample(xi, yi):
        loss = F.cross_entropy(model(xi[None]), yi[None])
        if loss.item() > 10:  # <- cause
            loss = loss * 0.1
        return loss
    torch.func.vmap(per_sample)(x, y)


def func_grad_nonscalar():
    """`torch.func.grad` of a per-sample loss vector."""
    from torch.func import functional_call, grad
    model = MLP()
    params = dict(model.named_parameters())
    x, y = _data()

    def loss_fn(p):
        return F.cross_entropy(functional_call(model, p, (x,)), y, reduction="none")  # <- cause
    grad(loss_fn)(params)


# --- jit --------------------------------------------------------------------------------------------------------

def jit_trace_constant():
    """`torch.jit.trace` of a function that closes over a tensor requiring grad."""
    scale = torch.ones(4, requires_grad=True)

    def f(x):
        return x * scale  # <- cause
    torch.jit.trace(f, torch.randn(2, 4))
