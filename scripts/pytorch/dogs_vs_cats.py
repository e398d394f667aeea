#!/usr/bin/env python3
"""PyTorch reference for apps/dogs_vs_cats: the seed-004 Keras Dogs-vs-Cats CNN (the Keras blog's
"very little data" model), same model, loss, optimizer, batch and images per epoch.

150x150x3 -> Conv(32, 3x3, valid) relu -> MaxPool(2) -> Conv(32) relu -> MaxPool(2) -> Conv(64)
relu -> MaxPool(2) -> Flatten (17*17*64) -> Dense(64, relu) -> Dropout(0.5) -> Dense(1, sigmoid);
binary cross-entropy, RMSprop (Keras: lr 0.001, rho 0.9, eps 1e-7), batch 32, 50 epochs of the
2,000 training images, validation on the 800 others after each. 1,212,513 parameters.

Two modes:
  --mode compute   the images are tensors on the device before the first epoch: the folder
                   decoded and resized once (Pillow), or random bytes with random labels
                   (--dataset synthetic, or auto without a folder). Batches are cut by indexing,
                   with no augmentation: this times PyTorch's training alone.
  --mode pipeline  the folder is read every epoch, as the Keras script did: torchvision's
                   ImageFolder decodes each JPEG and augments it (Resize((150, 150)),
                   RandomAffine(shear 0.2 rad, zoom 0.8-1.2), RandomHorizontalFlip, ToTensor) and
                   a DataLoader with --workers processes and pinned memory feeds the device.
                   Needs torchvision (exit status 3 without it).
  --graphed        (with --mode compute) PyTorch at its best: each full training batch one replay
                   of the whole step captured as a CUDA graph (common.GraphedStep), RMSprop
                   capturable over foreach lists (PyTorch has no fused RMSprop), channels_last
                   tensors, cudnn.benchmark.

The folder is the Keras layout, DATA_DIR/{train,validation}/{cats,dogs}/*.jpg (the classes
numbered alphabetically, cats 0 and dogs 1); datasets/make_dogs_cats writes a synthetic one and
docs/datasets/dogs_vs_cats.md says how to use Kaggle's photographs instead.

The sigmoid is fused into the loss (BCEWithLogitsLoss, the numerically safe form); the tensors
are NCHW, PyTorch's own layout. Each epoch prints its training seconds (the device waited for
before the clock is read) and its validation seconds, loss and accuracy; the article's seconds
per epoch (CPU 526, GPU 41, GPU + cuDNN 38) include both. --json writes them.

Where the augmentation differs from Keras' ImageDataGenerator(shear_range=0.2, zoom_range=0.2,
horizontal_flip=True): Keras 1 (the article's) read the shear in radians, so it is 11.46 degrees
here; Keras zooms x and y by two independent factors, RandomAffine by one; Keras fills the
uncovered border with the nearest edge pixel, RandomAffine with black; Keras resizes on loading
with the nearest pixel, torchvision's Resize bilinearly.
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch

from common import (GraphedStep, capturable, cnn_arguments, describe_precision, keras_init,
                    mode, parameter_count, setup_torch)

SIDE = 150  # the Keras script's target_size
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp")


def make_model():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(17 * 17 * 64, 64), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(64, 1))  # a logit: the sigmoid lives in the loss


# ---- data -----------------------------------------------------------------------------------

def describe_tree(root):
    """What the folder is, for the output: make_dogs_cats leaves a SYNTHETIC.txt beside train/."""
    if os.path.exists(os.path.join(root, "SYNTHETIC.txt")):
        return (f"folder {root}: a synthetic tree written by make_dogs_cats, NOT Kaggle's "
                "photographs")
    return f"folder {root}"


def list_images(folder):
    """The classes (sub-folders, alphabetical) of `folder` and a (path, label) per image."""
    if not os.path.isdir(folder):
        raise SystemExit(f"missing {folder}: make a tree with make_dogs_cats --out DIR, or see "
                         "docs/datasets/dogs_vs_cats.md for Kaggle's photographs")
    classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    items = []
    for label, name in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(folder, name))):
            if f.lower().endswith(IMAGE_EXTENSIONS):
                items.append((os.path.join(folder, name, f), label))
    if len(classes) != 2 or not items:
        raise SystemExit(f"{folder}: expected two class folders of images (cats, dogs), found "
                         f"{classes} with {len(items)} images")
    return classes, items


def decode_folder(folder):
    """Every image of `folder`, decoded once, in RGB (gray and CMYK files converted) and resized
    to 150x150 as torchvision's Resize does it: uint8 (N, 3, 150, 150) and labels (N,)."""
    from PIL import Image
    _, items = list_images(folder)
    x = np.empty((len(items), 3, SIDE, SIDE), dtype=np.uint8)
    y = np.empty(len(items), dtype=np.int64)
    for i, (path, label) in enumerate(items):
        with Image.open(path) as image:
            rgb = image.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR)
        x[i] = np.asarray(rgb).transpose(2, 0, 1)
        y[i] = label
    return torch.from_numpy(x), torch.from_numpy(y)


def random_images(count, seed):
    """Random bytes with random labels 0/1: for timing only."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(count, 3, SIDE, SIDE), dtype=np.uint8)
    return torch.from_numpy(x), torch.from_numpy(rng.integers(0, 2, size=count, dtype=np.int64))


def have_pillow():
    try:
        import PIL  # noqa: F401
        return True
    except ImportError:
        return False


def compute_data(a, dev):
    """--mode compute: (x_train, y_train, x_val, y_val) as float tensors in [0, 1] on the device,
    and a description of the data."""
    root = a.data_dir
    has_tree = os.path.isdir(os.path.join(root, "train"))
    if a.dataset == "folder" or (a.dataset == "auto" and has_tree and have_pillow()):
        if not have_pillow():
            print("dogs_vs_cats.py: decoding the folder needs Pillow (python3-pil), which is not "
                  "importable here; --dataset synthetic times the training without it",
                  file=sys.stderr)
            sys.exit(3)
        start = time.perf_counter()
        x_train, y_train = decode_folder(os.path.join(root, "train"))
        x_val, y_val = decode_folder(os.path.join(root, "validation"))
        description = (f"{describe_tree(root)}, decoded once in "
                       f"{time.perf_counter() - start:.1f} s")
    else:
        x_train, y_train = random_images(2000, a.seed)
        x_val, y_val = random_images(800, a.seed + 1)
        why = ""
        if a.dataset == "auto":
            why = (f" ({root}/train is missing)" if not has_tree
                   else " (Pillow is not importable to decode the folder)")
        description = ("synthetic: random 150x150x3 images with random labels; NOT real data, "
                       "for timing only" + why)

    def to_device(x):  # uint8 over the bus, then floats in [0, 1] on the device
        x = x.to(dev).float().div_(255.0)
        return x.contiguous(memory_format=torch.channels_last) if a.graphed else x

    return to_device(x_train), y_train.to(dev), to_device(x_val), y_val.to(dev), description


def pipeline_loaders(a, dev):
    """--mode pipeline: DataLoaders that read, decode and augment the folder every epoch."""
    try:
        from torchvision import datasets, transforms
    except ImportError:
        print("dogs_vs_cats.py: --mode pipeline needs torchvision (python3-torchvision), which is "
              "not importable here; --mode compute works without it", file=sys.stderr)
        sys.exit(3)
    root = a.data_dir
    for split in ("train", "validation"):
        list_images(os.path.join(root, split))  # a clear message for a missing or odd folder
    augment = transforms.Compose([
        transforms.Resize((SIDE, SIDE)),
        transforms.RandomAffine(degrees=0, shear=math.degrees(0.2), scale=(0.8, 1.2),
                                interpolation=transforms.InterpolationMode.BILINEAR),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),  # also the rescale 1/255
    ])
    plain = transforms.Compose([transforms.Resize((SIDE, SIDE)), transforms.ToTensor()])
    train = datasets.ImageFolder(os.path.join(root, "train"), transform=augment)
    validation = datasets.ImageFolder(os.path.join(root, "validation"), transform=plain)
    options = {"batch_size": a.batch_size, "num_workers": a.workers,
               "pin_memory": dev.type == "cuda", "persistent_workers": a.workers > 0}
    return (torch.utils.data.DataLoader(train, shuffle=True, **options),
            torch.utils.data.DataLoader(validation, shuffle=False, **options),
            f"{describe_tree(root)}, read and augmented every epoch by {a.workers} DataLoader "
            f"worker(s)", len(train), len(validation))


def tensor_batches(x, y, batch_size, shuffle):
    """Batches cut from tensors already on the device (--mode compute)."""
    n = x.shape[0]
    order = torch.randperm(n, device=x.device) if shuffle else torch.arange(n, device=x.device)
    for first in range(0, n, batch_size):
        idx = order[first:first + batch_size]
        yield x[idx], y[idx]


# ---- training -------------------------------------------------------------------------------

def wait_for(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def run_batches(model, batches, steps, dev, opt=None):
    """Trains on (with `opt`) or evaluates up to `steps` batches; returns the summed loss and
    correct count (kept on the device until the caller reads them) and the number of images."""
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
    total = torch.zeros((), device=dev)
    correct = torch.zeros((), device=dev)
    seen = 0
    model.train(opt is not None)
    with torch.set_grad_enabled(opt is not None):
        for step, (x, y) in enumerate(batches):
            if steps > 0 and step == steps:
                break
            x = x.to(dev, non_blocking=True)
            target = y.to(dev, non_blocking=True).float()
            logits = model(x).squeeze(1)
            loss = loss_fn(logits, target)
            if opt is not None:
                opt.zero_grad(set_to_none=True)
                (loss / x.shape[0]).backward()  # the batch's mean, as Keras' loss
                opt.step()
            total += loss.detach()
            correct += ((logits.detach() > 0) == (target > 0.5)).sum()
            seen += x.shape[0]
    return total, correct, seen


def graphed_epoch(a, model, opt, x, y):
    """--graphed: a function that trains one epoch on (x, y), resident on the device, a full
    batch a replay of one CUDA graph; it returns what run_batches does."""
    bce = torch.nn.BCEWithLogitsLoss()  # the batch's mean, as Keras' loss
    model.train()  # the graph is captured with dropout on
    step = GraphedStep(model, opt, lambda logits, target: bce(logits.squeeze(1), target), x,
                       y.float(), a.batch_size,
                       count_correct=lambda logits, target: ((logits.squeeze(1) > 0) == (target > 0.5)).sum())

    def train_epoch():
        n = x.shape[0]
        steps = math.ceil(n / a.batch_size)
        if a.steps_per_epoch > 0:
            steps = min(steps, a.steps_per_epoch)
        order = torch.randperm(n, device=x.device)
        step.total.zero_()
        step.correct.zero_()
        seen = 0
        for s in range(steps):
            idx = order[s * a.batch_size:(s + 1) * a.batch_size]
            step(idx)
            seen += idx.numel()
        return step.total, step.correct, seen
    return train_epoch


def fit(a, model, opt, dev, train_epoch, val_batches):
    """Keras' fit: one line per epoch. `train_epoch()` trains one epoch and returns what
    run_batches does; `val_batches()` gives a fresh iterable of (x, y) batches."""
    records = []
    for epoch in range(a.epochs):
        start = time.perf_counter()
        total, correct, seen = train_epoch()
        wait_for(dev)
        seconds = time.perf_counter() - start
        record = {"epoch": epoch + 1, "images": seen, "steps": math.ceil(seen / a.batch_size),
                  "seconds": seconds, "loss": total.item() / seen, "accuracy": correct.item() / seen}
        start = time.perf_counter()
        total, correct, seen = run_batches(model, val_batches(), a.validation_steps, dev)
        record["val_loss"], record["val_accuracy"] = total.item() / seen, correct.item() / seen
        record["val_seconds"] = time.perf_counter() - start
        steps = record["steps"]
        print(f"Epoch {epoch + 1}/{a.epochs} - {seconds:.3f} s ({seconds / steps * 1e3:.1f} ms/step, "
              f"{record['images']} images) - loss: {record['loss']:.4f} - acc: "
              f"{record['accuracy']:.4f} - validation {record['val_seconds']:.3f} s - val_loss: "
              f"{record['val_loss']:.4f} - val_acc: {record['val_accuracy']:.4f}", flush=True)
        records.append(record)
    return records


def write_record(a, dev, model, description, train_samples, epochs):
    seconds = [e["seconds"] for e in epochs]
    totals = [e["seconds"] + e["val_seconds"] for e in epochs]
    median, median_total = (float(np.median(seconds)), float(np.median(totals))) if epochs else (0, 0)
    last = epochs[-1] if epochs else {}
    print(f"val accuracy {last.get('val_accuracy', float('nan')):.4f} - val loss "
          f"{last.get('val_loss', float('nan')):.4f}; median epoch {median:.3f} s training, "
          f"{median_total:.3f} s with validation; --mode {a.mode} on {a.device}, {mode(a)} "
          f"({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        record = {"framework": f"pytorch {torch.__version__}", "app": "dogs_vs_cats",
                  "mode": a.mode, "steps_ran": mode(a), "device": a.device,
                  "device_name": torch.cuda.get_device_name() if dev.type == "cuda" else "",
                  "precision": describe_precision(dev), "threads": torch.get_num_threads(),
                  "workers": a.workers if a.mode == "pipeline" else 0, "data": description,
                  "batch_size": a.batch_size, "train_samples": train_samples,
                  "parameters": parameter_count(model),
                  "epochs_run": epochs, "epoch_seconds": seconds,
                  "epoch_seconds_with_validation": totals,
                  "val_loss": last.get("val_loss"), "val_accuracy": last.get("val_accuracy")}
        with open(a.json, "w") as f:
            json.dump(record, f, indent=2)


def main():
    p = cnn_arguments(__doc__, ["auto", "folder", "synthetic"], epochs=50, batch_size=32)
    p.set_defaults(data_dir="data/dogs_vs_cats")
    p.add_argument("--mode", default="compute", choices=["compute", "pipeline"],
                   help="compute: tensors on the device, PyTorch alone; pipeline: torchvision "
                        "reads and augments the folder every epoch")
    p.add_argument("--workers", type=int, default=4,
                   help="DataLoader worker processes for --mode pipeline (0: the main process)")
    p.add_argument("--validation-steps", type=int, default=0,
                   help="validation batches per epoch (0: every validation image)")
    a = p.parse_args()
    if a.batch_size < 1 or a.epochs < 0 or a.steps_per_epoch < 0 or a.workers < 0 \
            or a.validation_steps < 0 or a.threads < 0:
        p.error("--batch-size must be at least 1, and the counts not negative")
    if a.mode == "pipeline" and a.dataset == "synthetic":
        p.error("--mode pipeline reads the folder; --dataset synthetic is for --mode compute")
    if a.mode == "pipeline" and a.graphed:
        p.error("--graphed captures a step over resident tensors: it needs --mode compute")
    if a.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda, but PyTorch sees no usable GPU here")

    dev = setup_torch(a)  # the seed, --threads, cuDNN's TF32 and benchmark settings
    if a.mode == "compute":
        x_train, y_train, x_val, y_val, description = compute_data(a, dev)
        n_train, n_val = x_train.shape[0], x_val.shape[0]

        def train_batches():
            return tensor_batches(x_train, y_train, a.batch_size, shuffle=True)

        def val_batches():
            return tensor_batches(x_val, y_val, a.batch_size, shuffle=False)
    else:
        train_loader, val_loader, description, n_train, n_val = pipeline_loaders(a, dev)

        def train_batches():
            return train_loader

        def val_batches():
            return val_loader
    print(f"Data: {description}; {n_train} train / {n_val} validation images")

    model = make_model()
    keras_init(model)
    model.to(dev, memory_format=torch.channels_last if a.graphed else torch.preserve_format)
    print(f"Model: seed-004 Dogs-vs-Cats CNN, {parameter_count(model):,} parameters; "
          f"{describe_precision(dev)}; steps {mode(a)}")
    # Keras' RMSprop: lr 0.001, rho 0.9 (PyTorch's alpha), epsilon 1e-7 added to the root.
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=1e-7,
                              **capturable(a.graphed, fused=False))

    if a.graphed:
        train_epoch = graphed_epoch(a, model, opt, x_train, y_train)
    else:
        def train_epoch():
            return run_batches(model, train_batches(), a.steps_per_epoch, dev, opt)
    epochs = fit(a, model, opt, dev, train_epoch, val_batches)
    write_record(a, dev, model, description, n_train, epochs)


if __name__ == "__main__":
    main()
