"""The fused (Numba) Adam and SGD kernels compute what the generic xp kernels compute."""

import numpy as np
import pytest
import scipy.special

from fw_cpu import fused_optim
from fw_cpu.fused_optim import MIN_ELEMENTS
from fw_cpu.kernels.optim import kernels
from tests.fw_cpu.chains import above

TABLE = kernels(np, scipy.special)
CHAINS = above(TABLE, fused_optim.KERNELS)
GENERIC, FUSED = TABLE["adam_update"], CHAINS["adam_update"]


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


SGD_GENERIC, SGD_FUSED = TABLE["sgd_update"], CHAINS["sgd_update"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("momentum, dampening, nesterov, weight_decay, maximize", [
    (0.0, 0.0, False, 0.0, False), (0.9, 0.0, False, 0.0, False), (0.9, 0.1, False, 0.01, False),
    (0.9, 0.0, True, 0.01, True), (0.0, 0.0, False, 0.01, True)])
def test_fused_sgd_equals_generic(dtype, momentum, dampening, nesterov, weight_decay, maximize):
    rng = np.random.default_rng(1)
    shape = (MIN_ELEMENTS // 64, 128)
    p = rng.standard_normal(shape).astype(dtype)
    states = [(p.copy(), np.zeros(shape, dtype)) for _ in range(2)]
    for step in range(3):
        g = rng.standard_normal(shape).astype(dtype)
        for kernel, (pp, buf) in zip((SGD_GENERIC, SGD_FUSED), states):
            out = kernel(pp, g, buf if momentum else None, lr=0.05, momentum=momentum,
                         dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                         maximize=maximize, first=step == 0)
            assert out is pp
    for a, b in zip(*states):
        np.testing.assert_array_equal(a, b)  # the same operations in the same order
    assert not np.array_equal(states[0][0], p)


def test_the_fused_sgd_pass_is_a_guarded_kernel_of_the_cpu_table():
    import fw_core as fw

    why = next(r["why"] for r in fw.plugins.dispatch_table()
               if (r["op"], r["device"]) == ("sgd_update", "cpu"))
    assert "fw_cpu's fused_optim.sgd_update when it takes the call" in why
