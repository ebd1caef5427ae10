"""One workload in one benchmark mode: a ready-to-call training step and inference function.

Modes: ``fw_eager``, ``fw_compiled`` (``fw.compile`` of the train step and of the model),
``torch_eager`` (with PyTorch's default optimizer, or ``variant="fused"`` for ``fused=True``)
and ``torch_compile`` (``torch.compile``, inductor). Inputs are converted to tensors once per
batch size, so the timed calls hold only the framework's own work.
"""

from __future__ import annotations

import numpy as np

from .common import Workload, build_model, lib_for

MODES = ("fw_eager", "fw_compiled", "torch_eager", "torch_compile")
#: the timed pairs: fw mode over PyTorch eager, as time ratios (above 1: fw is slower)
PAIRS = (("fw_compiled", "torch_eager"), ("fw_eager", "torch_eager"))


class ModeError(Exception):
    """A mode cannot run here (``fw.compile`` missing, ``torch.compile`` failing, ...): its
    figures are reported as ``{"error": message}`` and the run carries on."""


class Session:
    """``workload`` set up for ``mode`` from ``weights``.

    ``train()`` runs one optimizer step on the training batch; ``infer(batch)`` one forward
    pass without gradients on a batch of that size. Compiled modes compile within the first
    calls of each (fw from its third call, by default; torch.compile on the first, with
    recompiles after), which is what the compile time measures. ``eval()`` switches the model
    to inference (PyTorch's encoder layers take their fast path only there).
    """

    def __init__(self, workload: Workload, mode: str, weights: dict, variant: str = "default",
                 seed: int = 0):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        self.workload, self.mode, self.variant = workload, mode, variant
        self.lib = lib = lib_for(mode)
        self.model = model = build_model(workload, lib, weights)
        extra = {"fused": True} if variant == "fused" else {}
        opt = workload.optimizer(lib.optim, model.parameters(), **extra)
        rng = np.random.default_rng(seed)
        self._batches = {b: tuple(lib.tensor(a) for a in workload.data(b, rng))
                         for b in {workload.train_batch, *workload.infer_batches}}

        def train_step(x, y):
            opt.zero_grad()
            loss = workload.loss(lib, model(x), y)
            loss.backward()
            opt.step()
            return loss

        self._compiled: list = []
        self._step, self._forward = self._wrap(train_step, model)

    def _wrap(self, train_step, model):
        """The train step and forward function of this mode (compiled where it says so)."""
        if self.mode == "fw_compiled":
            compile_ = getattr(self.lib.module, "compile", None)
            if compile_ is None:
                raise ModeError("fw.compile is missing (compiled mode not available yet)")
            return (_guard(compile_, train_step, "fw.compile", self._compiled),
                    _guard(compile_, model, "fw.compile", self._compiled))
        if self.mode == "torch_compile":
            compile_ = self.lib.module.compile
            return (_guard(compile_, train_step, "torch.compile", self._compiled),
                    _guard(compile_, model, "torch.compile", self._compiled))
        return train_step, model

    def train(self):
        x, y = self._batches[self.workload.train_batch]
        return self._step(x, y)

    def infer(self, batch: int):
        with self.lib.no_grad():
            return self._forward(self._batches[batch][0])

    def eval(self) -> None:
        self.model.eval()

    def reported_compile_s(self) -> float | None:
        """The seconds fw.compile itself says it spent compiling (fw_compiled only)."""
        spent = [getattr(c, "compile_seconds", None) for c in self._compiled]
        if self.mode != "fw_compiled" or None in spent:
            return None
        return sum(sum(s) for s in spent)

    def explain(self) -> str | None:
        """fw.compile's own account of what it did (fw_compiled only, where it exists)."""
        explain = getattr(getattr(self.lib.module, "compile", None), "explain", None)
        if self.mode != "fw_compiled" or explain is None:
            return None
        try:
            return str(explain())
        except Exception as e:  # an explanation that fails must not fail the benchmark
            return f"fw.compile.explain() raised {type(e).__name__}: {e}"


def _guard(compile_, fn, what: str, keep: list):
    """``compile_(fn)`` (appended to ``keep``) whose failures, at compile time or on a call,
    become ModeError."""
    try:
        compiled = compile_(fn)
    except Exception as e:
        raise ModeError(f"{what} raised {type(e).__name__}: {e}") from e
    keep.append(compiled)

    def call(*args):
        try:
            return compiled(*args)
        except Exception as e:
            raise ModeError(f"{what}'d function raised {type(e).__name__}: {e}") from e

    return call
