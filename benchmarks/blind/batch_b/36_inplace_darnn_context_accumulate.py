"""DA-RNN temporal-attention decoder (Seanny123/da-rnn#14: "I am trying to modify
an item with +=, but it doesn't work"): the context vector is accumulated in
place with context += beta_t * enc_t while the previous step's gate multiplied
by it (saving it for backward), so loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Decoder(nn.Module):
    def __init__(self, enc_hidden=8, dec_hidden=8):
        super().__init__()
        self.attn = nn.Linear(enc_hidden + dec_hidden, 1)
        self.lstm = nn.LSTMCell(1, dec_hidden)
        self.gate = nn.Linear(dec_hidden, enc_hidden)
        self.fc_final = nn.Linear(dec_hidden + enc_hidden, 1)

    def forward(self, input_encoded, y_history):
        B, T, E = input_encoded.shape
        h = torch.zeros(B, self.lstm.hidden_size)
        c = torch.zeros(B, self.lstm.hidden_size)
        context = torch.zeros(B, E)
        for t in range(T):
            score = self.attn(torch.cat([h[:, None].expand(-1, T, -1), input_encoded], dim=2)).squeeze(-1)
            beta_t = torch.softmax(score, dim=1)[:, t:t + 1]
            context += beta_t * input_encoded[:, t]  # <-- CUT
            gated = torch.sigmoid(self.gate(h)) * context
            h, c = self.lstm(y_history[:, t:t + 1] + gated.mean(1, keepdim=True), (h, c))
        return self.fc_final(torch.cat([h, context], dim=1))


def run():
    torch.manual_seed(0)
    encoder = nn.GRU(3, 8, batch_first=True)
    decoder = Decoder()
    opt = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-3)
    X, y_history, y_target = torch.randn(4, 5, 3), torch.randn(4, 5), torch.randn(4, 1)
    input_encoded, _ = encoder(X)
    y_pred = decoder(input_encoded, y_history)
    loss = F.mse_loss(y_pred, y_target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "decoder": decoder, "loss": loss}
