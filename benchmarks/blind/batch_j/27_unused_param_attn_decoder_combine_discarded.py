"""Attention decoder in the shape of the PyTorch NMT tutorial's AttnDecoderRNN. While debugging
shapes the user turned output = self.attn_combine(output).unsqueeze(0) into a bare call and fed
F.relu(embedded) to the GRU instead. The call still runs, but its result is discarded: the
decoder trains, while attn_combine (and attn) never receive a gradient.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "decoder.attn_combine.weight"
EXPECT = "grad_none"

MAX_LENGTH, H, VOCAB = 6, 16, 11


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.0, max_length=MAX_LENGTH):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attn = nn.Linear(hidden_size * 2, max_length)
        self.attn_combine = nn.Linear(hidden_size * 2, hidden_size)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input).view(1, 1, -1))
        attn_weights = F.softmax(self.attn(torch.cat((embedded[0], hidden[0]), 1)), dim=1)
        attn_applied = torch.bmm(attn_weights.unsqueeze(0), encoder_outputs.unsqueeze(0))
        output = torch.cat((embedded[0], attn_applied[0]), 1)
        self.attn_combine(output).unsqueeze(0)  # <-- CUT
        output = F.relu(embedded)
        output, hidden = self.gru(output, hidden)
        return F.log_softmax(self.out(output[0]), dim=1), hidden, attn_weights


def run():
    torch.manual_seed(0)
    encoder = nn.GRU(H, H)
    decoder = AttnDecoderRNN(H, VOCAB)
    params = list(encoder.parameters()) + list(decoder.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    src = torch.randn(MAX_LENGTH, 1, H)
    encoder_outputs, hidden = encoder(src)
    encoder_outputs = encoder_outputs.squeeze(1)
    target = torch.randint(0, VOCAB, (4,))
    decoder_input = torch.tensor([[0]])
    loss = 0.0
    for di in range(4):
        out, hidden, _ = decoder(decoder_input, hidden, encoder_outputs)
        loss = loss + F.nll_loss(out, target[di:di + 1])
        decoder_input = target[di].view(1, 1)          # teacher forcing
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "decoder": decoder, "loss": loss}
