"""Control for the "why is the previous input symbol detached" thread: the NMT tutorial's train()
without teacher forcing, decoder_input = topi.squeeze().detach(). The detached value is an argmax
index that carries no gradient anyway, and the hidden state is passed on undetached, so the
encoder and decoder both get gradients; loss.item() is only for logging.
Thread: discuss.pytorch.org/t/146161 (seq2seq NMT decoder_input detach).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder.embedding.weight"
EXPECT = "grad_ok"

SOS_token, H = 0, 16


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, tokens, hidden):
        return self.gru(self.embedding(tokens).view(len(tokens), 1, -1), hidden)


class DecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, token, hidden):
        output, hidden = self.gru(F.relu(self.embedding(token).view(1, 1, -1)), hidden)
        return F.log_softmax(self.out(output[0]), dim=1), hidden


def run():
    torch.manual_seed(0)
    encoder, decoder = EncoderRNN(12, H), DecoderRNN(H, 10)
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    input_tensor, target_tensor = torch.randint(1, 12, (6,)), torch.randint(1, 10, (5,))
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    _, encoder_hidden = encoder(input_tensor, torch.zeros(1, 1, H))
    decoder_input, decoder_hidden = torch.tensor([SOS_token]), encoder_hidden
    loss = 0
    for di in range(target_tensor.size(0)):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        topv, topi = decoder_output.topk(1)
        decoder_input = topi.squeeze(-1).detach()  # detach from history as input
        loss = loss + criterion(decoder_output, target_tensor[di:di + 1])  # <-- CUT
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    avg = loss.item() / target_tensor.size(0)
    return {"encoder": encoder, "decoder": decoder, "avg": avg}
