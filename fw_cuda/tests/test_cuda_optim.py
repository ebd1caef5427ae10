"""fw_cuda's hand-written ``adam_update`` kernel (fw_cuda/optim_kernels.py), checked without a GPU.

- the CUDA C compiles with ``nvcc -arch=sm_90 -cubin``; ptxas's registers and spills per entry
  point are written to ``test-artifacts/fw_cuda/ptxas_optim.json`` and must be spill-free;
- the same source runs on the host (``host_cuda``: one block of 8 threads, so the grid-stride
  loop strides) with the arguments the wrapper prepares (``optim_kernels.adam_launch``), on
  separate output buffers (on the GPU they are the inputs' own), and its updated parameter and
  moments are compared with the op's CPU kernel on copies of the same arrays: plain Adam,
  AdamW, L2 decay, maximize, amsgrad (with NaN/inf gradients), both forms of the first-moment
  update, steps 1 and 1000. float32 and float64 must equal the CPU to the bit (the kernel's
  operations are the generic kernel's, each rounded once); float16 must equal the float32 CPU
  update of the widened arrays rounded to half, and be close to the CPU's all-half update;
- the wrapper's host-side logic: which inputs fall back to the generic kernel, launch sizes,
  the scalars it passes, and that the cuda table takes the kernel.
"""

from __future__ import annotations

import json
import pathlib

import host_cuda
import numpy as np
import pytest
import scipy.special
from cuda_chains import chained

import fw_core as fw
from fw_cpu.kernels import all_kernels
from fw_cuda import nvcc, optim_kernels
from fw_cuda.kernels import FAST, fast_guards

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_cuda"

BASE = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False,
            maximize=False, step=1.0)
CASES = {
    "adam_step1": {},
    "adam_step1000": dict(step=1000.0),
    "adamw": dict(weight_decay=0.01, decoupled=True, step=7.0),
    "l2": dict(weight_decay=0.05, step=3.0),
    "l2_maximize": dict(weight_decay=0.05, maximize=True, step=3.0),
    "maximize": dict(maximize=True, step=1000.0),
    "large_beta1_weight": dict(beta1=0.3, step=2.0),  # 1 - beta1 >= 0.5: the other form
    "amsgrad": dict(amsgrad=True, step=1000.0),
    "amsgrad_adamw_lr": dict(amsgrad=True, weight_decay=0.1, decoupled=True, lr=0.1, step=5.0),
}


def _state(dtype, case, size=1000):
    """(arrays, attrs): parameter, gradient and moments of ``size`` elements; with amsgrad a
    running maximum and a few NaN / inf gradients."""
    attrs = {**BASE, **CASES[case]}
    amsgrad = attrs.pop("amsgrad", False)
    rng = np.random.default_rng(len(case))
    arrays = [rng.standard_normal(size), rng.standard_normal(size),
              rng.standard_normal(size) * 0.1, rng.random(size) * 0.01]
    if amsgrad:
        arrays.append(arrays[3] * rng.uniform(0.5, 1.5, size))
        arrays[1][:3] = [np.nan, np.inf, -np.inf]
    return [a.astype(dtype) for a in arrays], attrs


def _cpu(arrays, attrs):
    """The CPU kernel's update of copies: (param, exp_avg, exp_avg_sq[, max_exp_avg_sq])."""
    copies = [a.copy() for a in arrays]
    fw.ops.kernel("adam_update", "cpu")(*copies, **attrs)
    return [copies[0], *copies[2:]]


def _c_text(scalar) -> str:
    if isinstance(scalar, np.int64):
        return f"{int(scalar)}LL"
    if isinstance(scalar, np.int32):
        return str(int(scalar))
    return float(scalar).hex()  # exact, and a float32 value fits a float argument exactly


def _host(tmp_path, arrays, attrs):
    """The kernel's update run on the host: (param, exp_avg, exp_avg_sq[, max_exp_avg_sq])."""
    launch = optim_kernels.adam_launch(*arrays, **attrs)
    assert launch is not None
    outputs = [(o.dtype, o.shape) for o in launch.outputs]
    got = host_cuda.run(tmp_path, optim_kernels.SOURCE, launch.kernel,
                        list(launch.inputs), outputs, [_c_text(s) for s in launch.scalars],
                        threads=8)
    return got[:len(arrays) - 1]


# -- nvcc -----------------------------------------------------------------------------------------
@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_source_compiles_for_sm90_without_spills():
    report = nvcc.compile_cubin(optim_kernels.SOURCE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ptxas_optim.json").write_text(json.dumps(report, indent=2, sort_keys=True))
    assert sorted(report) == sorted(optim_kernels.KERNELS)
    for name, figures in report.items():
        assert figures["spill_stores"] == 0 and figures["spill_loads"] == 0, name
        # <= 64 keeps 4 blocks of 256 (1024 threads) resident per SM: ample for a stream
        assert figures["registers"] <= 64, name


# -- host runs ------------------------------------------------------------------------------------
needs_gxx = pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")


@needs_gxx
@pytest.mark.parametrize(("case", "dtype"), [  # every case in float32, the main ones in float64
    *((case, np.float32) for case in CASES),
    *((case, np.float64) for case in ("adam_step1000", "adamw", "l2_maximize",
                                      "large_beta1_weight", "amsgrad"))])
def test_update_equals_cpu_to_the_bit(tmp_path, case, dtype):
    arrays, attrs = _state(dtype, case)
    want = _cpu(arrays, attrs)
    got = _host(tmp_path, arrays, attrs)
    tolerance = dict(rtol=1e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-13, atol=0)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **tolerance)
        np.testing.assert_array_equal(g, w)  # stronger still: no fused multiply-adds
    assert not np.array_equal(got[0], arrays[0])  # it did update


@needs_gxx
@pytest.mark.parametrize("case", ["adam_step1", "l2_maximize", "amsgrad_adamw_lr"])
def test_float16_is_the_float_update_rounded_once(tmp_path, case):
    arrays, attrs = _state(np.float16, case)
    got = _host(tmp_path, arrays, attrs)
    widened = _cpu([a.astype(np.float32) for a in arrays], attrs)
    for g, w in zip(got, widened):
        assert g.dtype == np.float16
        np.testing.assert_array_equal(g, w.astype(np.float16))
    # the CPU computes in half, rounding every operation (the moments near 0 lose most):
    # close, within about a half ulp of 1, and with the same NaN / inf
    for g, w in zip(got, _cpu(arrays, attrs)):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=4e-3,
                                   atol=1e-3)


# -- the wrapper ----------------------------------------------------------------------------------
def test_launch_size_is_256_threads_up_to_max_grid():
    assert optim_kernels.launch_size(1) == (1, 256)
    assert optim_kernels.launch_size(257) == (2, 256)
    assert optim_kernels.launch_size(1 << 40) == (optim_kernels.MAX_GRID, 256)


def test_launch_is_in_place_with_the_generic_constants():
    arrays, attrs = _state(np.float16, "large_beta1_weight", size=12)
    launch = optim_kernels.adam_launch(*[a.reshape(3, 4) for a in arrays], **attrs)
    assert launch.kernel == "fw_adam_f16" and launch.size == 12
    param, grad, m, v = launch.inputs[:4]
    assert [a is b for a, b in zip(launch.outputs, (param, m, v, v))] == [True] * 4
    assert launch.inputs[4] is v  # no amsgrad: the running maximum stands in, untouched
    n, decay, l2, maximize, small, weight, *_, amsgrad, scale, offset = launch.scalars
    assert (n, decay, l2, maximize, small, amsgrad) == (12, 1, 0, 0, 0, 0)
    assert isinstance(weight, np.float32) and weight == np.float32(0.3)  # beta1, not 1 - beta1
    step_size = 1e-3 / (1 - 0.3 ** 2.0)
    assert scale == np.float32(1 / ((1 - 0.999 ** 2.0) ** 0.5 * -step_size))
    assert offset == np.float32(1e-8 / -step_size)
    wide = optim_kernels.adam_launch(*[a.astype(np.float64) for a in arrays],
                                     **{**attrs, "weight_decay": 0.5, "decoupled": True})
    assert wide.kernel == "fw_adam_f64" and wide.scalars[1] == np.float64(1 - 1e-3 * 0.5)
    assert all(isinstance(s, (np.int64, np.int32, np.float64)) for s in wide.scalars)


def test_fortran_order_and_0d_launch_but_strided_mixed_and_empty_fall_back():
    arrays, attrs = _state(np.float32, "adam_step1", size=12)
    fortran = [np.asfortranarray(a.reshape(3, 4)) for a in arrays]
    assert optim_kernels.adam_launch(*fortran, **attrs).size == 12
    assert optim_kernels.adam_launch(*[a[:1].reshape(()) for a in arrays], **attrs).size == 1
    mixed_layout = [fortran[0], *[a.reshape(3, 4) for a in arrays[1:]]]
    strided = [a[::2] for a in arrays]
    mixed_dtype = [arrays[0], arrays[1].astype(np.float64), *arrays[2:]]
    ints = [a.astype(np.int32) for a in arrays]
    empty = [a[:0] for a in arrays]
    for case in (mixed_layout, strided, mixed_dtype, ints, empty):
        assert optim_kernels.adam_launch(*case, **attrs) is None
    assert optim_kernels.adam_launch(*arrays, np.ones(6, np.float32), **attrs) is None


def test_fallbacks_reach_the_generic_kernel_without_touching_cupy():
    generic = all_kernels(np, scipy.special)["adam_update"]  # NumPy stands in for CuPy
    kernel = chained({"adam_update": generic},
                     {"adam_update": optim_kernels.adam_guard})["adam_update"]
    arrays, attrs = _state(np.float32, "adamw", size=16)
    strided = [a.copy()[::2] for a in arrays]
    want = _cpu([a.copy() for a in strided], attrs)
    assert kernel(*strided, **attrs) is strided[0]
    for g, w in zip([strided[0], *strided[2:]], want):
        np.testing.assert_array_equal(g, w)


def test_adam_has_a_guarded_kernel_above_the_generic_one():
    assert "adam_update" in FAST and fast_guards(np)["adam_update"] is optim_kernels.adam_guard
