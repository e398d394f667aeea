#!/usr/bin/env python3
"""PyTorch reference for apps/mnist_cnn: the classic Keras MNIST CNN of seed 004, same data,
optimizer and batch.

Conv2D(32, 3, relu) -> Conv2D(64, 3, relu) -> MaxPool(2) -> Dropout(0.25) -> Flatten ->
Dense(128, relu) -> Dropout(0.5) -> Dense(10, softmax); Adadelta (lr 1.0, rho 0.95, eps 1e-7,
as Keras 2 had it), batch 128, 12 epochs, validation on the test set after every epoch.
1,199,882 parameters.

Reads the IDX files scripts/fetch_data.sh prepared (mnist or fashion), or makes synthetic
images of the same shape (--dataset synthetic, for timing only). Channels-last tensors, the
whole set on the device, PyTorch's precision defaults (cuDNN convolutions in TF32 on the GPU;
--no-tf32 makes them FP32). Prints per-epoch seconds; --json writes them.
"""
import argparse
import json
import os

import numpy as np
import torch

from common import (describe_precision, evaluate, fit, keras_init, load, parameter_count,
                    set_threads, synthetic)


def make_model():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
                         nn.Linear(12 * 12 * 64, 128), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="data")
    p.add_argument("--dataset", default="mnist", choices=["mnist", "fashion", "synthetic"])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--steps-per-epoch", type=int, default=0,
                   help="cut every epoch short after this many steps (0: the whole set)")
    p.add_argument("--no-tf32", action="store_true",
                   help="cuDNN convolutions in FP32 instead of PyTorch's default TF32")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="let cuDNN time its algorithms first (PyTorch's default is off)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json")
    a = p.parse_args()

    torch.manual_seed(a.seed)
    set_threads(a.threads)
    torch.backends.cudnn.allow_tf32 = not a.no_tf32
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    dev = torch.device(a.device)
    if a.dataset == "synthetic":
        x_train, y_train = synthetic(60000, (28, 28), a.seed)
        x_test, y_test = synthetic(10000, (28, 28), a.seed + 1)
        description = "synthetic: random 28x28 images with random labels; NOT real data"
    else:
        folder = os.path.join(a.data_dir, a.dataset)
        x_train, y_train = load(folder, "train")
        x_test, y_test = load(folder, "t10k")
        description = f"{a.dataset} from {folder}"
    print(f"Data: {description}; {x_train.shape[0]} train / {x_test.shape[0]} test")

    def to_device(x):  # (N, 28, 28) -> (N, 1, 28, 28), as the Keras script reshapes
        return x.unsqueeze(1).to(dev).contiguous(memory_format=torch.channels_last)

    x_train, x_test = to_device(x_train), to_device(x_test)
    y_train, y_test = y_train.to(dev), y_test.to(dev)

    model = make_model()
    keras_init(model)
    model.to(dev, memory_format=torch.channels_last)
    print(f"Model: Keras MNIST CNN, {parameter_count(model):,} parameters; "
          f"{describe_precision(dev)}")
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-7)

    epochs = fit(model, opt, x_train, y_train, a.epochs, a.batch_size, a.steps_per_epoch,
                 validation=(x_test, y_test))
    test_loss, accuracy = evaluate(model, x_test, y_test, a.batch_size)
    seconds = [e["seconds"] for e in epochs]
    median = float(np.median(seconds)) if seconds else 0.0
    print(f"test accuracy {accuracy:.4f} - test loss {test_loss:.4f}; median epoch {median:.3f} s "
          f"on {a.device} ({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"framework": f"pytorch {torch.__version__}", "app": "mnist_cnn",
                       "device": a.device,
                       "device_name": torch.cuda.get_device_name() if dev.type == "cuda" else "",
                       "precision": describe_precision(dev), "threads": torch.get_num_threads(),
                       "dataset": a.dataset, "data": description, "batch_size": a.batch_size,
                       "parameters": parameter_count(model), "epochs_run": epochs,
                       "epoch_seconds": seconds, "test_loss": test_loss,
                       "test_accuracy": accuracy}, f, indent=2)


if __name__ == "__main__":
    main()
