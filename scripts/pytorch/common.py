"""What the PyTorch reference scripts share: data readers (IDX, CIFAR-10 binary, synthetic),
Keras' initialisation, and a fit/evaluate loop timed the way our engine times its epochs.

The loop keeps the whole set on the device and cuts batches by indexing (PyTorch's fastest
path, no DataLoader), and waits for the device once per epoch, like our engine's final line.
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    _, _, dtype, ndim = struct.unpack(">BBBB", data[:4])
    assert dtype == 0x08, f"{path}: only unsigned-byte IDX files are supported"
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(folder, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise SystemExit(f"missing {stem} in {folder}: run scripts/fetch_data.sh")


def load(folder, split):
    """An MNIST-style split ("train" or "t10k"): images (N, 28, 28) in [0, 1], labels (N,)."""
    x = read_idx(find(folder, f"{split}-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = read_idx(find(folder, f"{split}-labels-idx1-ubyte")).astype(np.int64)
    return torch.from_numpy(x.copy()), torch.from_numpy(y.copy())


CIFAR_TRAIN = [f"data_batch_{i}.bin" for i in range(1, 6)]
CIFAR_TEST = "test_batch.bin"
CIFAR_RECORD = 1 + 3 * 32 * 32  # label byte + R, G, B planes of 32x32


def cifar_dir(data_dir):
    return os.path.join(data_dir, "cifar10", "cifar-10-batches-bin")


def read_cifar_batches(paths):
    """CIFAR-10 binary batches: images (N, 3, 32, 32) in [0, 1] (PyTorch's NCHW view of the
    planar records), labels (N,)."""
    records = []
    for path in paths:
        if not os.path.exists(path):
            raise SystemExit(f"missing {path}: put cifar-10-binary.tar.gz into its data dir's "
                             "cifar10/ and run scripts/fetch_data.sh, or use --dataset synthetic")
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size != 10000 * CIFAR_RECORD:
            raise SystemExit(f"{path}: {raw.size} bytes, expected 10000 records of {CIFAR_RECORD}")
        records.append(raw.reshape(-1, CIFAR_RECORD))
    rec = np.concatenate(records)
    if rec[:, 0].max() > 9:
        raise SystemExit(f"{paths}: a label above 9")
    x = rec[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / 255.0
    return torch.from_numpy(x), torch.from_numpy(rec[:, 0].astype(np.int64))


def synthetic(count, shape, seed):
    """Random byte images / 255 with random labels 0..9: for timing only."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(count, *shape), dtype=np.uint8).astype(np.float32) / 255.0
    return torch.from_numpy(x), torch.from_numpy(rng.integers(0, 10, size=count, dtype=np.int64))


def keras_init(model):
    # Keras defaults (Glorot uniform kernels, zero biases), as our engine does. PyTorch's
    # fans for a conv weight (out, in, kh, kw) are in*kh*kw and out*kh*kw, as Keras'.
    for m in model.modules():
        if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)):
            torch.nn.init.xavier_uniform_(m.weight)
            torch.nn.init.zeros_(m.bias)


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def evaluate(model, x, y, batch_size):
    """Mean loss and accuracy over (x, y), in batches, without gradients."""
    model.eval()
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    total = torch.zeros((), device=x.device)
    correct = torch.zeros((), device=x.device)
    with torch.no_grad():
        for first in range(0, x.shape[0], batch_size):
            logits = model(x[first:first + batch_size])
            target = y[first:first + batch_size]
            total += loss_fn(logits, target)
            correct += (logits.argmax(dim=1) == target).sum()
    n = x.shape[0]
    return total.item() / n, correct.item() / n


def capturable(graphed, fused):
    """An optimizer's options for --graphed: capturable (its step count on the device, which a
    captured step needs), and fused (one kernel for every parameter) where PyTorch has a fused
    form of it (Adam), else foreach (a few launches over lists of tensors)."""
    if not graphed:
        return {}
    return {"capturable": True, "fused": True} if fused else {"capturable": True, "foreach": True}


def count_argmax_correct(logits, target):
    """Correct predictions of a classifier's logits (one column per class)."""
    return (logits.argmax(dim=1) == target).sum()


class EagerStep:
    """One training step launched op by op from Python: PyTorch's default ("eager").
    `loss_fn(logits, target)` is the batch's mean loss; `count_correct(logits, target)` the
    batch's correct predictions."""

    def __init__(self, model, opt, loss_fn, x, y, count_correct=count_argmax_correct):
        self.model, self.opt, self.loss_fn, self.x, self.y = model, opt, loss_fn, x, y
        self.count_correct = count_correct
        self.total = torch.zeros((), device=x.device)    # the epoch's summed loss
        self.correct = torch.zeros((), device=x.device)  # and correct predictions

    def __call__(self, idx):
        target = self.y[idx]
        self.opt.zero_grad(set_to_none=True)
        logits = self.model(self.x[idx])
        loss = self.loss_fn(logits, target)
        loss.backward()
        self.opt.step()
        self.total += loss.detach() * idx.numel()
        self.correct += self.count_correct(logits.detach(), target)


class GraphedStep(EagerStep):
    """PyTorch at its best: the whole step (gather, forward, loss, backward, the fused Adam,
    the running sums) captured once as a CUDA graph and replayed for every full batch; only the
    batch's row indices are copied in first. A partial last batch runs eagerly."""

    def __init__(self, model, opt, loss_fn, x, y, batch_size, count_correct=count_argmax_correct):
        super().__init__(model, opt, loss_fn, x, y, count_correct)
        self.batch_size = batch_size
        self.idx = torch.zeros(batch_size, dtype=torch.long, device=x.device)
        # Capture needs a few steps run first on a side stream (PyTorch's rule: lazy
        # initialisations, cuDNN's benchmark); they train, so the weights before them come back.
        # The optimizer's state (step counts, moments) must exist before the capture: made
        # inside it, its zero fills would be captured too and every replay would start the
        # optimizer afresh (for Adam or RMSprop, a step of about lr * sign(g)). So it is kept
        # and zeroed in place, which is the state of a fresh optimizer.
        saved_model = {k: v.clone() for k, v in model.state_dict().items()}
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                super().__call__(self.idx)
        torch.cuda.current_stream().wait_stream(side)
        model.load_state_dict(saved_model)
        for state in opt.state.values():
            for value in state.values():
                if torch.is_tensor(value):
                    value.zero_()
        self.total.zero_()
        self.correct.zero_()
        # The gradients are made inside the graph (from None), so a replay writes them afresh.
        opt.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            target = y[self.idx]
            logits = model(x[self.idx])
            loss = loss_fn(logits, target)
            loss.backward()
            opt.step()
            self.total += loss.detach() * batch_size
            self.correct += count_correct(logits.detach(), target)

    def __call__(self, idx):
        if idx.numel() != self.batch_size:
            super().__call__(idx)
            return
        self.idx.copy_(idx)
        self.graph.replay()


def fit(model, opt, x, y, epochs, batch_size, steps_per_epoch=0, validation=None, graphed=False):
    """Trains like Keras' fit: shuffled batches, the last one partial, softmax cross-entropy
    fused in the loss; prints one line per epoch and returns one dict per epoch. `seconds` is
    the training steps only; validation is timed on its own. `graphed`: GraphedStep (on cuda)."""
    loss_fn = torch.nn.CrossEntropyLoss()
    n = x.shape[0]
    steps = (n + batch_size - 1) // batch_size
    if steps_per_epoch > 0:
        steps = min(steps, steps_per_epoch)
    model.train()
    step = (GraphedStep(model, opt, loss_fn, x, y, batch_size) if graphed
            else EagerStep(model, opt, loss_fn, x, y))
    records = []
    for epoch in range(epochs):
        model.train()
        start = time.perf_counter()
        order = torch.randperm(n, device=x.device)
        step.total.zero_()
        step.correct.zero_()
        seen = 0
        for s in range(steps):
            idx = order[s * batch_size:(s + 1) * batch_size]
            step(idx)
            seen += idx.numel()
        record = {"epoch": epoch + 1, "steps": steps, "loss": step.total.item() / seen,
                  "accuracy": step.correct.item() / seen}  # .item(): one wait per epoch
        record["seconds"] = time.perf_counter() - start
        line = (f"Epoch {epoch + 1}/{epochs} - {record['seconds']:.3f} s "
                f"({record['seconds'] / steps * 1e6:.0f} us/step) - loss: {record['loss']:.4f} "
                f"- acc: {record['accuracy']:.4f}")
        if validation is not None:
            start = time.perf_counter()
            record["val_loss"], record["val_accuracy"] = evaluate(model, *validation, batch_size)
            record["val_seconds"] = time.perf_counter() - start
            line += f" - val_loss: {record['val_loss']:.4f} - val_acc: {record['val_accuracy']:.4f}"
        print(line, flush=True)
        records.append(record)
    return records


def set_threads(threads):
    if threads > 0:
        torch.set_num_threads(threads)


def describe_precision(device):
    """What PyTorch computes convolutions and matmuls in on this device."""
    if device.type != "cuda":
        return "FP32 (CPU)"
    conv = "TF32" if torch.backends.cudnn.allow_tf32 else "FP32"
    matmul = "TF32" if torch.backends.cuda.matmul.allow_tf32 else "FP32"
    return (f"cuDNN {torch.backends.cudnn.version()} convolutions in {conv}, matmuls in {matmul}, "
            f"cudnn.benchmark={torch.backends.cudnn.benchmark}")


def cnn_arguments(doc, datasets, epochs, batch_size):
    """The flags the CNN scripts share, defaults as their apps have them (--dataset: the first
    of `datasets`); a script adds its own flags before parse_args()."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="data")
    p.add_argument("--dataset", default=datasets[0], choices=datasets)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--steps-per-epoch", type=int, default=0,
                   help="cut every epoch short after this many steps (0: the whole set)")
    p.add_argument("--no-tf32", action="store_true",
                   help="cuDNN convolutions in FP32 instead of PyTorch's default TF32")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="let cuDNN time its algorithms first (PyTorch's default is off)")
    add_graphed_flag(p)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json")
    return p


def add_graphed_flag(p):
    p.add_argument("--graphed", action="store_true",
                   help="PyTorch at its best (cuda only): the whole step captured as one CUDA "
                        "graph and replayed, the fused capturable Adam, cudnn.benchmark, and "
                        "matmuls in TF32 unless --no-tf32")


def check_graphed(a):
    if a.graphed and a.device != "cuda":
        raise SystemExit("--graphed needs --device cuda (a CUDA graph)")


def setup_torch(a):
    """Applies the flags of cnn_arguments (seed, threads, cuDNN's TF32 and benchmark, which
    --graphed turns on) and returns the device."""
    check_graphed(a)
    torch.manual_seed(a.seed)
    set_threads(a.threads)
    torch.backends.cudnn.allow_tf32 = not a.no_tf32
    # At its best, the matmuls too run in TF32 where the convolutions do (as ours with --tf32);
    # eager keeps PyTorch's default, FP32 matmuls.
    torch.backends.cuda.matmul.allow_tf32 = a.graphed and not a.no_tf32
    torch.backends.cudnn.benchmark = a.cudnn_benchmark or a.graphed
    return torch.device(a.device)


def mode(a):
    """How the steps ran, for the records: "graphed" or "eager"."""
    return "graphed" if a.graphed else "eager"


def report(a, dev, model, app, fields, epochs, test_loss, accuracy):
    """The CNN scripts' last line and, with --json, their record: `fields` (the app's own,
    e.g. the data's description) stand between the device's fields and batch_size."""
    seconds = [e["seconds"] for e in epochs]
    median = float(np.median(seconds)) if seconds else 0.0
    print(f"test accuracy {accuracy:.4f} - test loss {test_loss:.4f}; median epoch {median:.3f} s "
          f"on {a.device}, {mode(a)} ({torch.get_num_threads()} threads, torch {torch.__version__})")
    if a.json:
        record = {"framework": f"pytorch {torch.__version__}", "app": app, "device": a.device,
                  "mode": mode(a),
                  "device_name": torch.cuda.get_device_name() if dev.type == "cuda" else "",
                  "precision": describe_precision(dev), "threads": torch.get_num_threads()}
        record.update(fields)
        record.update({"batch_size": a.batch_size, "parameters": parameter_count(model),
                       "epochs_run": epochs, "epoch_seconds": seconds, "test_loss": test_loss,
                       "test_accuracy": accuracy})
        with open(a.json, "w") as f:
            json.dump(record, f, indent=2)
