#!/usr/bin/env python3
"""PyTorch reference for apps/cifar10_cnn: the seed-003 Keras CIFAR-10 CNN, same data,
optimizer, batch and validation.

Conv2D(32, 3, same) x2 -> MaxPool(2) -> Conv2D(64) x2 -> MaxPool(2) -> Conv2D(128) x2 ->
Flatten -> Dropout(0.3) -> Dense(128, relu) -> Dense(10, softmax); no activation on the convs,
as in the article (--relu adds one). Adam (Keras defaults), batch 100, validation on the first
1,000 test images after every epoch, then the whole test set. 1,337,002 parameters.

Channels-last tensors (our engine's NHWC layout, and what cuDNN's tensor-core kernels want)
and PyTorch's defaults otherwise: on the GPU cuDNN convolutions run in TF32 (--no-tf32 makes
them FP32, the precision of our plain kernels), matmuls in FP32. The whole set stays on the
device. CIFAR-10 is read from the binary batches fetch_data.sh unpacks; without them
(--dataset auto, the default) the run uses synthetic data of the same shape and says so.
Prints per-epoch seconds; --json writes them.
"""
import argparse
import json
import os

import numpy as np
import torch

from common import (CIFAR_TEST, CIFAR_TRAIN, cifar_dir, describe_precision, evaluate, fit,
                    keras_init, parameter_count, read_cifar_batches, set_threads, synthetic)


def make_model(relu):
    nn = torch.nn

    def conv(cin, cout):
        layers = [nn.Conv2d(cin, cout, 3, padding="same")]
        return layers + [nn.ReLU()] if relu else layers

    return nn.Sequential(*conv(3, 32), *conv(32, 32), nn.MaxPool2d(2),
                         *conv(32, 64), *conv(64, 64), nn.MaxPool2d(2),
                         *conv(64, 128), *conv(128, 128),
                         nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 8 * 128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def load_data(a):
    folder = cifar_dir(a.data_dir)
    real = os.path.exists(os.path.join(folder, CIFAR_TRAIN[0]))
    if a.dataset == "cifar10" or (a.dataset == "auto" and real):
        x_train, y_train = read_cifar_batches([os.path.join(folder, f) for f in CIFAR_TRAIN])
        x_test, y_test = read_cifar_batches([os.path.join(folder, CIFAR_TEST)])
        return x_train, y_train, x_test, y_test, f"cifar10: real CIFAR-10 from {folder}"
    x_train, y_train = synthetic(50000, (3, 32, 32), a.seed)
    x_test, y_test = synthetic(10000, (3, 32, 32), a.seed + 1)
    why = "" if a.dataset == "synthetic" else f" (CIFAR-10 is not in {folder})"
    return (x_train, y_train, x_test, y_test,
            "synthetic: random 32x32x3 images with random labels; NOT real data, for timing "
            "only" + why)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="data")
    p.add_argument("--dataset", default="auto", choices=["auto", "cifar10", "synthetic"])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--steps-per-epoch", type=int, default=0,
                   help="cut every epoch short after this many steps (0: the whole set)")
    p.add_argument("--relu", action="store_true", help="relu after every convolution")
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
    x_train, y_train, x_test, y_test, description = load_data(a)
    print(f"Data: {description}; {x_train.shape[0]} train / {x_test.shape[0]} test")

    def to_device(x):  # NCHW shape, NHWC memory
        return x.to(dev).contiguous(memory_format=torch.channels_last)

    x_train, x_test = to_device(x_train), to_device(x_test)
    y_train, y_test = y_train.to(dev), y_test.to(dev)

    model = make_model(a.relu)
    keras_init(model)
    model.to(dev, memory_format=torch.channels_last)
    print(f"Model: seed-003 CNN{' with relu' if a.relu else ''}, "
          f"{parameter_count(model):,} parameters; {describe_precision(dev)}")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)

    epochs = fit(model, opt, x_train, y_train, a.epochs, a.batch_size, a.steps_per_epoch,
                 validation=(x_test[:1000], y_test[:1000]))
    test_loss, accuracy = evaluate(model, x_test, y_test, a.batch_size)
    seconds = [e["seconds"] for e in epochs]
    median = float(np.median(seconds)) if seconds else 0.0
    print(f"test accuracy {accuracy:.4f} - test loss {test_loss:.4f}; median epoch {median:.3f} s "
          f"on {a.device} ({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"framework": f"pytorch {torch.__version__}", "app": "cifar10_cnn",
                       "device": a.device,
                       "device_name": torch.cuda.get_device_name() if dev.type == "cuda" else "",
                       "precision": describe_precision(dev), "threads": torch.get_num_threads(),
                       "data": description, "relu": a.relu, "batch_size": a.batch_size,
                       "parameters": parameter_count(model), "epochs_run": epochs,
                       "epoch_seconds": seconds, "test_loss": test_loss,
                       "test_accuracy": accuracy}, f, indent=2)


if __name__ == "__main__":
    main()
