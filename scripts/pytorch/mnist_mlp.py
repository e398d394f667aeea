#!/usr/bin/env python3
"""PyTorch reference for apps/mnist_mlp: the same seed-000 model, data, optimizer and batch.

Reads the IDX files that scripts/fetch_data.sh prepared, keeps the whole set in memory (on
the GPU for --device cuda) and cuts batches by indexing, which is PyTorch's fastest path;
so the comparison with our engine measures the training step, not a DataLoader.
Prints per-epoch seconds and the test accuracy; --json writes them (apps/bench reads
epochs_run, batch_size and train_samples). --graphed: PyTorch at its best, the whole step
captured as one CUDA graph with the fused, capturable Adam (common.GraphedStep).
"""
import argparse
import json
import os

import numpy as np
import torch

from common import (add_graphed_flag, capturable, check_graphed, evaluate, fit, keras_init, load,
                    mode, set_threads, synthetic)


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
    add_graphed_flag(p)
    a = p.parse_args()
    check_graphed(a)

    torch.manual_seed(a.seed)
    set_threads(a.threads)
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
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7,
                           **capturable(a.graphed, fused=True))
    # The loss is softmax + sparse categorical cross-entropy, fused (common.fit).
    epochs_run = fit(model, opt, x_train, y_train, a.epochs, a.batch_size, a.steps_per_epoch,
                     graphed=a.graphed)
    epoch_seconds = [e["seconds"] for e in epochs_run]
    _, accuracy = evaluate(model, x_test, y_test, 10000)
    print(f"test accuracy {accuracy:.4f}; median epoch {float(np.median(epoch_seconds)):.3f} s "
          f"on {a.device}, {mode(a)} ({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"framework": f"pytorch {torch.__version__}", "device": a.device,
                       "mode": mode(a), "threads": torch.get_num_threads(), "dataset": a.dataset,
                       "wide": a.wide, "batch_size": a.batch_size,
                       "train_samples": x_train.shape[0], "epochs_run": epochs_run,
                       "epoch_seconds": epoch_seconds, "test_accuracy": accuracy}, f, indent=2)


if __name__ == "__main__":
    main()
