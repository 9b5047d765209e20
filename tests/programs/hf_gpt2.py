# Source: github.com/huggingface/transformers docs/source/en/training.md ("Train in native PyTorch")
#         @ 6ce62e29e46975b66d0d8e9cec024ca05c4beb4d, run with the installed transformers package.
# Adapted for gradscope's test suite: the same native-PyTorch loop as hf_bert.py, for causal language
# modelling with GPT2LMHeadModel (HF Conv1D layers; labels=input_ids); a tiny randomly initialised
# GPT2Config (no hub download) and synthetic token batches; gradient-norm clipping before the step as
# in transformers' no_trainer examples; the tqdm bar is left out.
import torch
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel, get_scheduler


def synthetic_dataset(n, seed, vocab_size=32, seq_len=8):
    """Stands in for a tokenized text dataset grouped into blocks: input_ids / attention_mask / labels."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (n, seq_len), generator=g)
    return [{"input_ids": ids[i], "attention_mask": torch.ones(seq_len, dtype=torch.long), "labels": ids[i].clone()}
            for i in range(n)]


def main():
    torch.manual_seed(0)
    train_dataloader = DataLoader(synthetic_dataset(4, 1), shuffle=True, batch_size=2)
    eval_dataloader = DataLoader(synthetic_dataset(2, 2), batch_size=2)

    config = GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)

    optimizer = AdamW(model.parameters(), lr=5e-5)

    num_epochs = 1
    num_training_steps = num_epochs * len(train_dataloader)
    lr_scheduler = get_scheduler(
        name="linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=num_training_steps
    )

    device = torch.device("cpu")
    model.to(device)

    model.train()
    for epoch in range(num_epochs):
        for batch in train_dataloader:
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            loss.backward()

            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            print(f"epoch {epoch} loss {loss.item():.4f}")

    losses = []
    model.eval()
    for batch in eval_dataloader:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad():
            outputs = model(**batch)
        losses.append(outputs.loss.item())
    print(f"eval loss {sum(losses) / len(losses):.4f}")


if __name__ == "__main__":
    main()
