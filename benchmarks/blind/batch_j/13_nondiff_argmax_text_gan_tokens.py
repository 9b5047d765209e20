"""Text GAN: the generator (a GRU language model) emits vocabulary logits, the sequence is
discretised with argmax and one-hot encoded before going to the discriminator, exactly the
step the forum question is about. The D step (real one-hots vs fake.detach()) is fine; in the
G step the discriminator trains, but the generator's parameters get no gradient.
Thread: discuss.pytorch.org/t/157415 (text GAN using the logits without argmax).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.proj.weight"
EXPECT = "grad_none"

VOCAB, SEQ, HID = 15, 6, 24


class TextGenerator(nn.Module):
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
            logits = self.proj(o)
            ids = logits.argmax(-1)  # <-- CUT
            tok = F.one_hot(ids, VOCAB).float()
            outs.append(tok)
        return torch.cat(outs, 1)


class TextDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(VOCAB, HID, bias=False)
        self.rnn = nn.GRU(HID, HID, batch_first=True)
        self.out = nn.Linear(HID, 1)

    def forward(self, onehots):
        _, h = self.rnn(self.emb(onehots))
        return self.out(h[-1])


def run():
    torch.manual_seed(0)
    G, D = TextGenerator(), TextDiscriminator()
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
    g_loss = F.binary_cross_entropy_with_logits(D(fake), torch.ones(4, 1))
    g_loss.backward()
    opt_G.step()
    return {"G": G, "D": D, "g_loss": g_loss}
