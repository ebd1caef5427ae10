"""With fw_onednn loaded, ``fw.compile`` trains every benchmark workload as fw eager does: the
same 20 losses and the same weights after 20 optimizer steps, from the same initial weights and
data, within float32 rounding (the compiled step fuses elementwise chains into generated
kernels and sends linear+add, matmul+mul ... to oneDNN's post-ops, so sums are reassociated and
the two runs are not bit-identical in general)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import initial_weights  # noqa: E402
from benchmarks.workloads.modes import Session  # noqa: E402
from benchmarks.workloads.transformer import D  # noqa: E402

STEPS = 20
#: relative to the largest eager loss; measured at most 6.7e-8 (transformer; lstm_cell 5.2e-8;
#: mlp, cnn and lstm bit-identical): under one ulp, with room for a different fusion choice
#: (fw.compile times its candidates, so a loaded machine may fuse differently)
LOSS_RTOL = 1e-6
#: max |eager - compiled| over max |eager|, per parameter after 20 steps; measured at most
#: 2.0e-6 (transformer's linear2.weight; lstm_cell 1.5e-6; mlp, cnn and lstm bit-identical).
#: Adam and AdamW divide each step by the gradient's running size, so a rounding difference in
#: a small gradient moves the weight by up to lr: the bound is that of 20 noisy steps, not of
#: one float32 product
WEIGHT_RTOL = 1e-5
#: the attention key bias gets a gradient that is exactly zero in exact arithmetic (softmax over
#: the keys is invariant to adding q.b_k to every score of a row), so both runs move it by
#: rounding noise only and need not agree (measured: 2.1e-5 apart, moved 2.8e-5); it must stay
#: that still in both, against about 2e-2 for every other weight
KEY_BIAS_MOVE = 1e-4


def require_onednn() -> None:
    """Skip when fw-onednn is not installed or is blocked; fail when it is installed but broken."""
    info = next((i for i in fw.plugins.info() if i.name == "fw_onednn"), None)
    if info is None:
        pytest.skip("fw-onednn is not installed (pip install fw-onednn)")
    if info.state == "blocked":
        pytest.skip(f"fw_onednn is blocked: {info.reason}")
    fw.plugins.require("fw_onednn")


def train(name: str, mode: str, weights: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The STEPS losses and the final weights of ``name`` trained in ``mode``."""
    session = Session(WORKLOADS[name], mode, weights)
    losses = np.array([float(session.train().item()) for _ in range(STEPS)])
    return losses, session.lib.state(session.model)


def key_bias(weights: dict) -> dict[str, np.ndarray]:
    """The key third of every attention in-projection bias, by parameter name."""
    return {k: v[D:2 * D] for k, v in weights.items() if k.endswith("self_attn.in_proj_bias")}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_compiled_training_equals_eager_with_onednn(name):
    require_onednn()
    weights = initial_weights(WORKLOADS[name])
    eager_losses, eager = train(name, "fw_eager", weights)
    compiled_losses, compiled = train(name, "fw_compiled", weights)

    assert eager_losses[-1] < eager_losses[0]  # it trained: the comparison is not of idle runs
    loss_difference = np.abs(compiled_losses - eager_losses).max() / np.abs(eager_losses).max()
    assert loss_difference <= LOSS_RTOL, (
        f"{name}: compiled losses differ from eager by {loss_difference:.1e} (relative)\n"
        f"eager    {eager_losses}\ncompiled {compiled_losses}")

    assert list(compiled) == list(eager)
    still = key_bias(weights)
    for run in (eager, compiled):
        for key, moved in key_bias(run).items():
            assert np.abs(moved - still[key]).max() <= KEY_BIAS_MOVE, key
    for key, want in eager.items():
        got = compiled[key]
        if key in still:  # the key third is noise (checked above); compare the rest
            got, want = (np.concatenate([a[:D], a[2 * D:]]) for a in (got, want))
        difference = np.abs(got - want).max() / np.abs(want).max()
        assert difference <= WEIGHT_RTOL, (
            f"{name}: after {STEPS} steps compiled {key} differs from eager by "
            f"{difference:.1e} (relative to its largest entry)")
