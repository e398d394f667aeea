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
import os

import torch

from common import (capturable, cnn_arguments, describe_precision, evaluate, fit, keras_init,
                    load, parameter_count, report, setup_torch, synthetic)


def make_model():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
                         nn.Linear(12 * 12 * 64, 128), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(128, 10))


def main():
    a = cnn_arguments(__doc__, ["mnist", "fashion", "synthetic"], epochs=12,
                      batch_size=128).parse_args()

    dev = setup_torch(a)
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
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-7,
                               **capturable(a.graphed, fused=False))

    epochs = fit(model, opt, x_train, y_train, a.epochs, a.batch_size, a.steps_per_epoch,
                 validation=(x_test, y_test), graphed=a.graphed)
    test_loss, accuracy = evaluate(model, x_test, y_test, a.batch_size)
    report(a, dev, model, "mnist_cnn",
           {"dataset": a.dataset, "data": description, "train_samples": x_train.shape[0]}, epochs,
           test_loss, accuracy)


if __name__ == "__main__":
    main()
