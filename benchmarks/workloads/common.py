"""What a workload is, and the two frameworks behind one interface, so that each workload's
model, optimizer and loss are written once and run identically in fw and in PyTorch."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

#: PyTorch's intra-op threads in every benchmark process (the issue fixes it at 2)
TORCH_THREADS = 2


@dataclass(frozen=True)
class Workload:
    """One benchmark model, defined for either framework.

    build(lib) -> model; optimizer(optim, params, **extra) -> optimizer (``extra`` carries
    PyTorch's ``fused=True``); data(batch, rng) -> (inputs, targets) as NumPy arrays;
    loss(lib, output, targets) -> scalar loss tensor.
    """

    name: str
    train_batch: int
    infer_batches: tuple[int, ...]
    build: Callable
    optimizer: Callable
    data: Callable
    loss: Callable


def cross_entropy(lib, output, targets):
    """The loss every workload uses: mean cross-entropy over the rows of ``output``."""
    return lib.cross_entropy(output, targets)


def labels(rng: np.random.Generator, shape, classes: int) -> np.ndarray:
    """Random int64 class labels."""
    return rng.integers(0, classes, shape, dtype=np.int64)


def normal(rng: np.random.Generator, shape) -> np.ndarray:
    """Standard-normal float32 inputs."""
    return rng.standard_normal(shape, dtype=np.float32)


def fw_lib() -> SimpleNamespace:
    """fw behind the workload interface."""
    import fw_core as fw

    return SimpleNamespace(name="fw", module=fw, nn=fw.nn, optim=fw.optim, tensor=fw.tensor,
                           no_grad=fw.no_grad, sigmoid=fw.sigmoid, tanh=fw.tanh,
                           cross_entropy=fw.cross_entropy, manual_seed=fw.manual_seed,
                           state=lambda model: {k: v.numpy() for k, v in
                                                model.state_dict().items()},
                           load=lambda model, weights: model.load_state_dict(weights))


def torch_lib() -> SimpleNamespace:
    """PyTorch behind the workload interface, with its thread count set as the issue says."""
    import torch

    torch.set_num_threads(int(os.environ.get("FW_BENCH_THREADS", TORCH_THREADS)))
    return SimpleNamespace(
        name="torch", module=torch, nn=torch.nn, optim=torch.optim,
        tensor=lambda a: torch.from_numpy(np.array(a)), no_grad=torch.no_grad,
        sigmoid=torch.sigmoid, tanh=torch.tanh,
        cross_entropy=torch.nn.functional.cross_entropy, manual_seed=torch.manual_seed,
        state=lambda model: {k: v.detach().numpy().copy() for k, v in
                             model.state_dict().items()},
        load=lambda model, weights: model.load_state_dict(
            {k: torch.from_numpy(np.array(v)) for k, v in weights.items()}))


def lib_for(mode: str) -> SimpleNamespace:
    """The framework a mode runs on: fw_* -> fw, torch_* -> PyTorch."""
    return fw_lib() if mode.startswith("fw") else torch_lib()


def initial_weights(workload: Workload, seed: int = 0) -> dict[str, np.ndarray]:
    """PyTorch's initial weights for ``workload`` (seeded), as NumPy arrays by state-dict
    name: every mode of every framework starts from these."""
    torch = torch_lib()
    torch.manual_seed(seed)
    return torch.state(workload.build(torch))


def build_model(workload: Workload, lib, weights: dict[str, np.ndarray]):
    """``workload``'s model in ``lib`` carrying ``weights`` (state-dict keys and shapes must
    match: a mismatch means the two definitions differ)."""
    model = workload.build(lib)
    ours = lib.state(model)
    if list(ours) != list(weights) or any(ours[k].shape != weights[k].shape for k in ours):
        raise ValueError(f"{workload.name}: {lib.name} state dict "
                         f"{[(k, v.shape) for k, v in ours.items()]} differs from the "
                         f"reference {[(k, v.shape) for k, v in weights.items()]}")
    lib.load(model, weights)
    return model
