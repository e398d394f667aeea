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
import os

import torch

from common import (CIFAR_TEST, CIFAR_TRAIN, capturable, cifar_dir, cnn_arguments,
                    describe_precision, evaluate, fit, keras_init, parameter_count,
                    read_cifar_batches, report, setup_torch, synthetic)


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
    p = cnn_arguments(__doc__, ["auto", "cifar10", "synthetic"], epochs=10, batch_size=100)
    p.add_argument("--relu", action="store_true", help="relu after every convolution")
    a = p.parse_args()

    dev = setup_torch(a)
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
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7,
                           **capturable(a.graphed, fused=True))

    epochs = fit(model, opt, x_train, y_train, a.epochs, a.batch_size, a.steps_per_epoch,
                 validation=(x_test[:1000], y_test[:1000]), graphed=a.graphed)
    test_loss, accuracy = evaluate(model, x_test, y_test, a.batch_size)
    report(a, dev, model, "cifar10_cnn",
           {"data": description, "relu": a.relu, "train_samples": x_train.shape[0]}, epochs,
           test_loss, accuracy)


if __name__ == "__main__":
    main()
