"""The fused (Numba) Adam kernel computes what the generic xp kernel computes."""

import numpy as np
import pytest
import scipy.special

from fw_cpu import fused_optim
from fw_cpu.fused_optim import MIN_ELEMENTS
from fw_cpu.kernels.optim import kernels
from tests.fw_cpu.chains import above

GENERIC = kernels(np, scipy.special)["adam_update"]
FUSED = above({"adam_update": GENERIC}, fused_optim.KERNELS)["adam_update"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight_decay, decoupled, maximize, beta1", [
    (0.0, False, False, 0.9), (0.01, False, False, 0.9), (0.01, True, False, 0.9),
    (0.0, False, True, 0.9), (0.01, False, True, 0.3)])
def test_fused_adam_matches_generic(dtype, weight_decay, decoupled, maximize, beta1):
    rng = np.random.default_rng(0)
    shape = (MIN_ELEMENTS // 64, 128)
    p, m, v = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    v = np.abs(v)
    states = [(p.copy(), m.copy(), v.copy()) for _ in range(2)]
    for step in range(1, 4):
        g = rng.standard_normal(shape).astype(dtype)
        for kernel, (pp, mm, vv) in zip((GENERIC, FUSED), states):
            out = kernel(pp, g, mm, vv, None, lr=1e-2, beta1=beta1, beta2=0.999, eps=1e-8,
                         weight_decay=weight_decay, decoupled=decoupled, maximize=maximize,
                         step=float(step))
            assert out is pp
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-13}
    for a, b in zip(*states):
        np.testing.assert_allclose(a, b, **tol)
    assert not np.array_equal(states[0][0], p)  # it did update


def test_small_or_amsgrad_parameters_take_the_generic_kernel():
    p = np.ones(8, np.float32)
    FUSED(p, np.ones(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32),
          np.zeros(8, np.float32), lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
          weight_decay=0.0, decoupled=False, maximize=False, step=1.0)
    np.testing.assert_allclose(p, 0.9, rtol=1e-5)  # the first Adam step moves by lr
