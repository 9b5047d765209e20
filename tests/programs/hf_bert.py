# Source: github.com/huggingface/transformers docs/source/en/training.md ("Train in native PyTorch")
#         @ 6ce62e29e46975b66d0d8e9cec024ca05c4beb4d, run with the installed transformers package.
# Adapted for gradscope's test suite: the native-PyTorch fine-tuning loop as written (AdamW,
# get_scheduler("linear"), outputs = model(**batch), loss.backward(); optimizer.step();
# lr_scheduler.step(); optimizer.zero_grad(), then evaluation under no_grad); the pretrained
# checkpoint and the Yelp dataset are replaced by a tiny randomly initialised BertConfig (no hub
# download) and synthetic token batches; the tqdm bar and the `evaluate` metric are left out.
import torch
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForSequenceClassification, get_scheduler


def synthetic_dataset(n, seed, vocab_size=64, seq_len=8):
    """Stands in for the tokenized Yelp review dataset: dicts of input_ids / attention_mask / labels."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab_size, (n, seq_len), generator=g)
    labels = torch.randint(0, 2, (n,), generator=g)
    return [{"input_ids": ids[i], "attention_mask": torch.ones(seq_len, dtype=torch.long), "labels": labels[i]}
            for i in range(n)]


def main():
    torch.manual_seed(0)
    train_dataloader = DataLoader(synthetic_dataset(4, 1), shuffle=True, batch_size=2)
    eval_dataloader = DataLoader(synthetic_dataset(2, 2), batch_size=2)

    config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=16, num_labels=2)
    model = BertForSequenceClassification(config)

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

            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            print(f"epoch {epoch} loss {loss.item():.4f}")

    correct = total = 0
    model.eval()
    for batch in eval_dataloader:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad():
            outputs = model(**batch)

        logits = outputs.logits
        predictions = torch.argmax(logits, dim=-1)
        correct += (predictions == batch["labels"]).sum().item()
        total += len(predictions)
    print(f"accuracy {correct / total:.2f}")


if __name__ == "__main__":
    main()
