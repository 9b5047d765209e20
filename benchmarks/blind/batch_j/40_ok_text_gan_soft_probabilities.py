"""Control, the fix discussed in the text-GAN thread: the generator feeds softmax probabilities
(not argmax ids) to the discriminator, while argmax is used only to decode sample strings for the
log. The D step uses fake.detach() and real one-hot sequences, as it should. The generator's
projection gets a nonzero gradient in the G step.
Thread: discuss.pytorch.org/t/157415 (text GAN using the logits without argmax).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.proj.weight"
EXPECT = "grad_ok"

VOCAB, SEQ, HID = 15, 6, 24
ITOS = "abcdefghijklmno"


class SoftTextGenerator(nn.Module):
    def __init__(self, nz=8):
        super().__init__()
        self.init_h = nn.Linear(nz, HID)
        self.rnn = nn.GRU(VOCAB, HID, batch_first=True)
        self.proj = nn.Linear(HID, VOCAB)

    def forward(self, z):
        h = torch.tanh(self.init_h(z)).unsqueeze(0)
        tok = torch.zeros(z.size(0), 1, VOCAB)
        outs = []
        for _ in range(SEQ):
            o, h = self.rnn(tok, h)
            tok = F.softmax(self.proj(o), dim=-1)
            outs.append(tok)
        return torch.cat(outs, 1)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(VOCAB, HID, bias=False)
        self.rnn = nn.GRU(HID, HID, batch_first=True)
        self.out = nn.Linear(HID, 1)

    def forward(self, dists):
        _, h = self.rnn(self.emb(dists))
        return self.out(h[-1])


def decode(probs):
    return ["".join(ITOS[i] for i in row) for row in probs.argmax(-1).tolist()]


def run():
    torch.manual_seed(0)
    G, D = SoftTextGenerator(), Discriminator()
    opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
    opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
    real = F.one_hot(torch.randint(0, VOCAB, (4, SEQ)), VOCAB).float()
    fake = G(torch.randn(4, 8))
    opt_D.zero_grad()
    d_loss = (F.binary_cross_entropy_with_logits(D(real), torch.ones(4, 1))
              + F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(4, 1)))
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    g_loss = F.binary_cross_entropy_with_logits(D(fake), torch.ones(4, 1))  # <-- CUT
    g_loss.backward()
    opt_G.step()
    samples = decode(fake.detach())
    return {"G": G, "D": D, "g_loss": g_loss.item(), "samples": samples}
