"""Seq2seq GRU translator shaped like the PyTorch NMT tutorial, trained without teacher forcing.
The user took the tutorial's "detach from history" comment on decoder_input as a rule and also
detached the encoder's final hidden state before handing it to the decoder. The decoder trains;
the encoder's grads stay None.
Thread: discuss.pytorch.org/t/146161 (seq2seq NMT decoder_input detach), adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder.embedding.weight"
EXPECT = "grad_none"

SOS_token = 0
HIDDEN = 16


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, tokens, hidden):
        embedded = self.embedding(tokens).view(len(tokens), 1, -1)
        return self.gru(embedded, hidden)

    def initHidden(self):
        return torch.zeros(1, 1, self.hidden_size)


class DecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, token, hidden):
        output = F.relu(self.embedding(token).view(1, 1, -1))
        output, hidden = self.gru(output, hidden)
        return F.log_softmax(self.out(output[0]), dim=1), hidden


def train(input_tensor, target_tensor, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    _, encoder_hidden = encoder(input_tensor, encoder.initHidden())
    decoder_input = torch.tensor([SOS_token])
    decoder_hidden = encoder_hidden.detach()  # <-- CUT
    loss = 0.0
    for di in range(target_tensor.size(0)):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        topv, topi = decoder_output.topk(1)
        decoder_input = topi.squeeze(-1).detach()  # detach from history as input
        loss = loss + criterion(decoder_output, target_tensor[di:di + 1])
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / target_tensor.size(0)


def run():
    torch.manual_seed(0)
    encoder = EncoderRNN(12, HIDDEN)
    decoder = DecoderRNN(HIDDEN, 10)
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    src = torch.randint(1, 12, (6,))
    tgt = torch.randint(1, 10, (5,))
    avg = train(src, tgt, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion)
    return {"encoder": encoder, "decoder": decoder, "avg": avg}
