#!/usr/bin/env python3
"""PyTorch reference for apps/mnist_mlp: the same seed-000 model, data, optimizer and batch.

Reads the IDX files that scripts/fetch_data.sh prepared, keeps the whole set in memory (on
the GPU for --device cuda) and cuts batches by indexing, which is PyTorch's fastest path;
so the comparison with our engine measures the training step, not a DataLoader.
Prints per-epoch seconds and the test accuracy; --json writes them (apps/bench reads
epochs_run, batch_size and train_samples).
"""
import argparse
import json
import os
import time

import numpy as np
import torch

from common import keras_init, load, synthetic


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data-dir", default="data")
    p.add_argument("--dataset", default="mnist", choices=["mnist", "fashion", "synthetic"])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps-per-epoch", type=int, default=0,
                   help="cut every epoch short after this many steps (0: the whole set)")
    p.add_argument("--wide", action="store_true")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json")
    a = p.parse_args()

    torch.manual_seed(a.seed)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    if a.dataset == "synthetic":  # random images with random labels, for timing only
        x_train, y_train = (t.to(dev) for t in synthetic(60000, (28, 28), a.seed))
        x_test, y_test = (t.to(dev) for t in synthetic(10000, (28, 28), a.seed + 1))
    else:
        folder = os.path.join(a.data_dir, a.dataset)
        x_train, y_train = (t.to(dev) for t in load(folder, "train"))
        x_test, y_test = (t.to(dev) for t in load(folder, "t10k"))

    nn = torch.nn
    if a.wide:
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 1000), nn.ReLU(), nn.Dropout(0.2),
                              nn.Linear(1000, 1000), nn.ReLU(), nn.Dropout(0.2), nn.Linear(1000, 10))
    else:
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2),
                              nn.Linear(128, 10))
    keras_init(model)
    model.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()  # softmax + sparse categorical cross-entropy, fused

    n = x_train.shape[0]
    steps = (n + a.batch_size - 1) // a.batch_size
    if a.steps_per_epoch > 0:
        steps = min(steps, a.steps_per_epoch)
    epochs_run = []
    for epoch in range(a.epochs):
        model.train()
        start = time.perf_counter()
        order = torch.randperm(n, device=dev)
        total = torch.zeros((), device=dev)
        seen = 0
        for step in range(steps):
            idx = order[step * a.batch_size:(step + 1) * a.batch_size]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            loss.backward()
            opt.step()
            total += loss.detach() * idx.numel()
            seen += idx.numel()
        mean_loss = (total / seen).item()  # one sync per epoch, like our engine's final line
        seconds = time.perf_counter() - start
        epochs_run.append({"epoch": epoch + 1, "seconds": seconds, "steps": steps, "loss": mean_loss})
        print(f"epoch {epoch + 1}: {seconds:.3f} s ({steps} steps) loss {mean_loss:.4f}", flush=True)
    epoch_seconds = [e["seconds"] for e in epochs_run]

    model.eval()
    with torch.no_grad():
        pred = model(x_test).argmax(dim=1)
        accuracy = (pred == y_test).float().mean().item()
    print(f"test accuracy {accuracy:.4f}; median epoch {float(np.median(epoch_seconds)):.3f} s "
          f"on {a.device} ({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"framework": f"pytorch {torch.__version__}", "device": a.device,
                       "threads": torch.get_num_threads(), "dataset": a.dataset, "wide": a.wide,
                       "batch_size": a.batch_size, "train_samples": n, "epochs_run": epochs_run,
                       "epoch_seconds": epoch_seconds, "test_accuracy": accuracy}, f, indent=2)


if __name__ == "__main__":
    main()
