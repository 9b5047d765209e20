"""Real torch models shaped like the ones users draw (for tests/test_graph_scale.py).

Built from ``torch.nn`` only, at a small width so a traced step takes well under a
second, but with the module structure (names, nesting, repetition) of the originals:

* :class:`BlockStack`: ``embed``, ``blocks.0..N-1`` (``norm``, ``attn.qkv``/``attn.proj``,
  ``mlp.fc1``/``mlp.fc2``), ``head``; ``cut_after=k`` detaches the residual stream after
  block ``k`` (blocks ``0..k`` then get no gradient);
* :class:`GPT2`: nanoGPT / HF GPT-2 layout (``transformer.wte``, ``transformer.wpe``,
  ``transformer.h.N.ln_1/attn.c_attn/attn.c_proj/ln_2/mlp.c_fc/mlp.c_proj``,
  ``transformer.ln_f``, ``lm_head``);
* :class:`Bert`: HF BERT layout (``embeddings.*``, ``encoder.layer.N.attention.self.query``
  ..., ``attention.output.dense``, ``intermediate.dense``, ``output.dense``, ``pooler``,
  ``classifier``);
* :func:`resnet50`: torchvision's ResNet-50 layout (``conv1``, ``bn1``, ``layer1..4`` of
  ``Bottleneck`` blocks [3, 4, 6, 3] with ``downsample.0/1``, ``fc``) at 1/16 width.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


# --------------------------------------------------------------------------- blocks
class Attn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return self.proj(a @ v)


class Mlp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = Attn(d)
        self.mlp = Mlp(d)

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(x)


class BlockStack(nn.Module):
    def __init__(self, n_blocks=20, d=16, cut_after=None):
        super().__init__()
        self.embed = nn.Linear(8, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(n_blocks))
        self.head = nn.Linear(d, 1)
        self.cut_after = cut_after

    def forward(self, x):
        h = self.embed(x)
        for i, blk in enumerate(self.blocks):
            h = blk(h)
            if i == self.cut_after:
                h = h.detach()  # BLOCKSTACK-CUT
        return self.head(h)


def block_stack_step(n_blocks=20, cut_after=None):
    """One traced SGD step of a :class:`BlockStack`; returns the trace."""
    import gradscope

    torch.manual_seed(0)
    model = BlockStack(n_blocks, cut_after=cut_after)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(2, 5, 8), torch.randn(2, 5, 1)
    with gradscope.trace() as tr:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return tr


# --------------------------------------------------------------------------- GPT-2
class CausalSelfAttention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.n_head = n_head
        self.detach_input = False  # a bug to plant: gpt2_step(detach_attn=5)

    def forward(self, x):
        if self.detach_input:
            x = x.detach()  # GPT2-ATTN-CUT
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPTMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class GPTBlock(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = GPTMLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=50, block_size=16, n_layer=12, n_head=2, d=16):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(  # noqa: C408  (as nanoGPT writes it)
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block_size, d),
            h=nn.ModuleList(GPTBlock(d, n_head) for _ in range(n_layer)), ln_f=nn.LayerNorm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def gpt2_step(detach_attn=None):
    import gradscope

    torch.manual_seed(0)
    model = GPT2()
    for i in ([detach_attn] if isinstance(detach_attn, int) else detach_attn or ()):  # one block or several
        model.transformer.h[i].attn.detach_input = True
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    idx = torch.randint(0, 50, (2, 16))
    with gradscope.trace() as tr:
        loss = model(idx, idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return tr


# --------------------------------------------------------------------------- BERT
class BertSelfAttention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.n_head = n_head

    def split(self, x):
        B, T, C = x.shape
        return x.view(B, T, self.n_head, C // self.n_head).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask
        ctx = torch.softmax(scores, dim=-1) @ v
        return ctx.permute(0, 2, 1, 3).reshape(x.shape)


class BertSelfOutput(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense, self.LayerNorm, self.dropout = nn.Linear(d, d), nn.LayerNorm(d), nn.Dropout(0.1)

    def forward(self, h, x):
        return self.LayerNorm(self.dropout(self.dense(h)) + x)


class BertAttention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.self = BertSelfAttention(d, n_head)
        self.output = BertSelfOutput(d)

    def forward(self, x, mask):
        return self.output(self.self(x, mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, 4 * d)

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense, self.LayerNorm, self.dropout = nn.Linear(4 * d, d), nn.LayerNorm(d), nn.Dropout(0.1)

    def forward(self, h, x):
        return self.LayerNorm(self.dropout(self.dense(h)) + x)


class BertLayer(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.attention = BertAttention(d, n_head)
        self.intermediate = BertIntermediate(d)
        self.output = BertOutput(d)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, d, n_head, n_layer):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(d, n_head) for _ in range(n_layer))

    def forward(self, x, mask):
        for layer in self.layer:
            x = layer(x, mask)
        return x


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, d, max_pos):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.token_type_embeddings = nn.Embedding(2, d)
        self.LayerNorm, self.dropout = nn.LayerNorm(d), nn.Dropout(0.1)

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        e = self.word_embeddings(ids) + self.position_embeddings(pos) + self.token_type_embeddings(types)
        return self.dropout(self.LayerNorm(e))


class BertPooler(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class Bert(nn.Module):
    def __init__(self, vocab=100, d=16, n_head=2, n_layer=12, max_pos=32, n_labels=2):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, d, max_pos)
        self.encoder = BertEncoder(d, n_head, n_layer)
        self.pooler = BertPooler(d)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(d, n_labels)

    def forward(self, ids, types, attn_mask):
        mask = (1.0 - attn_mask[:, None, None, :].float()) * -10000.0
        h = self.encoder(self.embeddings(ids, types), mask)
        return self.classifier(self.dropout(self.pooler(h)))


def bert_step():
    import gradscope

    torch.manual_seed(0)
    model = Bert()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 100, (2, 12))
    types, mask, labels = torch.zeros_like(ids), torch.ones_like(ids), torch.tensor([0, 1])
    with gradscope.trace() as tr:
        loss = F.cross_entropy(model(ids, types, mask), labels)
        loss.backward()
        opt.step()
        opt.zero_grad()
    return tr


# --------------------------------------------------------------------------- ResNet-50
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers=(3, 4, 6, 3), width=4, num_classes=10):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], 2)
        self.layer3 = self._make_layer(width * 4, layers[2], 2)
        self.layer4 = self._make_layer(width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * 4, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * 4:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50():
    return ResNet()


def resnet50_step():
    import gradscope

    torch.manual_seed(0)
    model = resnet50()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(2, 3, 32, 32), torch.tensor([1, 3])
    with gradscope.trace() as tr:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return tr
