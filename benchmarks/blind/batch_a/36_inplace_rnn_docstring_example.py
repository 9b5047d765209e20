"""The nn.RNN docstring's "efficient" reference implementation
(pytorch/pytorch#165621, fixed by #173888): hidden states are written in place with
h_t[layer] = torch.tanh(...). With two layers, layer 1 reads h_t[0], which the
matmul saved, and the next in-place write makes backward() raise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def rnn_forward(rnn, x, hx=None):
    if rnn.batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h_t_minus_1 = hx.clone()
    h_t = hx.clone()
    output = []
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t[layer] = torch.tanh(  # <-- CUT
                input_t @ getattr(rnn, f"weight_ih_l{layer}").T
                + getattr(rnn, f"bias_ih_l{layer}")
                + h_t_minus_1[layer] @ getattr(rnn, f"weight_hh_l{layer}").T
                + getattr(rnn, f"bias_hh_l{layer}")
            )
        output.append(h_t[-1].clone())
        h_t_minus_1 = h_t.clone()
    output = torch.stack(output)
    if rnn.batch_first:
        output = output.transpose(0, 1)
    return output, h_t


def run():
    torch.manual_seed(0)
    rnn = nn.RNN(input_size=4, hidden_size=8, num_layers=2, batch_first=True)
    head = nn.Linear(8, 2)
    opt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=1e-3)
    x, y = torch.randn(3, 5, 4), torch.randint(0, 2, (3,))
    output, h_n = rnn_forward(rnn, x)
    loss = F.cross_entropy(head(output[:, -1]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"rnn": rnn, "head": head, "loss": loss}
