"""fw_cuda's Python launch wrappers run end to end, without a GPU, through ``host_cupy``.

``host_cupy`` stands in for CuPy (``sys.modules["cupy"]``): arrays are NumPy arrays and a
``RawKernel`` / ``RawModule`` launch runs the very CUDA C source on the host (g++, one block of
``block`` threads, called through ctypes), after checking each argument against its C
parameter. So what the other tests leave out runs here: the wrappers' argument order, scalar
types, block size, output allocation, ``out=`` buffers and in-place aliasing, and their
fallbacks, compared with fw's CPU kernels:

- ``fusion.generate(group)`` (``CudaKernel.__call__``): pointwise groups with a broadcast bias,
  pointwise + row reductions, float16 groups; ``out=`` buffers, an input's own buffer as the
  output (in place), a non-contiguous buffer; the contraction + epilogue kernel
  (``fw_core.compile.epilogue`` with the head's *CPU* kernel as the contraction and the CUDA
  loop as the epilogue, writing into the product's buffer);
- ``rows.guards`` chained over fw_cpu's NumPy generic table: softmax family over a middle
  dim (float32 / float64 / float16), layer norm with weight and bias, RMS norm, attention with
  a causal and a boolean mask; an int input and mixed dtypes reach the generic kernel;
- ``optim_kernels.adam_guard`` chained over the generic kernel: AdamW and amsgrad in place, to
  the bit against the CPU kernel.
"""

from __future__ import annotations

import sys

import host_cuda
import host_cupy
import numpy as np
import pytest
import scipy.special
from cuda_chains import chained
from cuda_fusion_groups import EXACT, Builder, build, tolerance

import fw_core as fw
from fw_core.compile import epilogue
from fw_cpu.kernels import all_kernels
from fw_cuda import fusion, optim_kernels, rows
from fw_cuda.fusion import codegen
from fw_cuda.raw_module import RawModule

pytestmark = pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")


@pytest.fixture
def launches(monkeypatch):
    """host_cupy as ``cupy``, the wrappers' compiled-kernel caches empty; the list of launches
    made, as (entry point, grid, block)."""
    monkeypatch.setitem(sys.modules, "cupy", host_cupy)
    monkeypatch.setattr(codegen, "_cache", {})
    monkeypatch.setattr(rows, "_module", RawModule(rows.SOURCE, rows.KERNELS))
    monkeypatch.setattr(optim_kernels, "_module",
                        RawModule(optim_kernels.SOURCE, optim_kernels.KERNELS))
    made, launch = [], host_cupy._Function.__call__

    def record(function, grid, block, args):
        made.append((function.name, *grid, *block))
        return launch(function, grid, block, args)

    monkeypatch.setattr(host_cupy._Function, "__call__", record)
    return made


def _cpu(name, *arrays, **attrs):
    return np.asarray(fw.ops.kernel(name, "cpu")(*arrays, **attrs))


def _close(got, want, **tol):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True,
                               **tol)


def test_the_stand_in_refuses_arguments_cupy_would_pass_as_wrong_bytes():
    source = 'extern "C" __global__ void k(const float* x, float* out, long long n, int flag)'
    function = host_cupy.RawKernel(source + " {}", "k")
    x = np.zeros(4, np.float32)
    for args in [(x, x, np.int32(4), np.int32(0)), (x, x.astype(np.float64), np.int64(4),
                                                     np.int32(0)), (x, x, 4, np.int32(0)),
                 (x, x, np.int64(4))]:
        with pytest.raises(TypeError):
            function((1,), (32,), args)
    with pytest.raises(ValueError, match="launch configuration"):
        function((0,), (32,), (x, x, np.int64(4), np.int32(0)))


# -- fused groups ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gelu_bias", "exp_rowsum_f64", "where_sum_to",
                                  "rsqrt_full_sum", "compare_cast_pow", "half_activation_chain",
                                  "half_rowsum", "half_casts"])
def test_fused_group_kernel_matches_cpu(launches, name):
    b, group = build(name)
    got = fusion.generate(group)(*[b.arrays[v.index] for v in group.inputs])
    assert len(got) == len(group.outputs) and len(launches) == 1
    for value, array in zip(group.outputs, got):
        _close(array, b.arrays[value.index], **tolerance(value.dtype, name in EXACT))


def test_fused_kernel_writes_out_buffers_in_place_and_copies_into_strided_ones(launches):
    b, group = build("gelu_bias")  # gelu(x + w), x (4, 33), w (33,)
    x, w = (b.arrays[v.index] for v in group.inputs)
    want = b.arrays[group.outputs[0].index]
    kernel = fusion.generate(group)
    fresh = np.empty_like(want)
    assert kernel(x, w, out=(fresh,))[0] is fresh
    np.testing.assert_array_equal(fresh, kernel(x, w)[0])
    _close(fresh, want, **tolerance(np.float32))
    own = x.copy()  # the input's own buffer as the output: read, then overwritten
    assert kernel(own, w, out=(own,))[0] is own
    np.testing.assert_array_equal(own, fresh)
    strided = np.zeros((33, 4), np.float32).T  # not C-contiguous: a temporary, then copied in
    assert kernel(x, w, out=(strided,))[0] is strided
    np.testing.assert_array_equal(strided, fresh)
    wider = np.zeros((4, 33), np.float64)  # another dtype: never handed to the kernel raw
    assert kernel(x, w, out=(wider,))[0] is wider
    np.testing.assert_array_equal(wider, fresh.astype(np.float64))
    assert [(name, block) for name, _, block in launches] == [(fusion.NAME, 256)] * 5


def test_reduction_group_with_one_out_buffer_that_is_its_input(launches):
    b, group = build("exp_rowsum_f64")  # e = exp(x - 0.5) (5, 7) and its row sums (5, 1)
    (x,) = (b.arrays[v.index] for v in group.inputs)
    e_want, sum_want = (b.arrays[v.index] for v in group.outputs)
    own, sums = x.copy(), np.full((5, 1), np.nan)
    e, total = fusion.generate(group)(own, out=(own, None))
    assert e is own and total.shape == (5, 1)
    _close(e, e_want, **tolerance(np.float64))
    _close(total, sum_want, **tolerance(np.float64))
    e, total = fusion.generate(group)(x, out=(None, sums))
    assert total is sums and e is not x
    _close(sums, sum_want, **tolerance(np.float64))
    assert launches == [(fusion.NAME, 5, 32)] * 2  # a block per row, a warp wide


def test_epilogue_kernel_writes_into_the_products_buffer(launches):
    b = Builder()
    x, w, bias = b.input((6, 10)), b.input((33, 10)), b.input((33,))
    out = b.op("gelu", b.op("add", b.op("linear", x, w), bias), approximate="tanh")
    group = b.group(out)
    kernel = epilogue.generate(group, "cpu", fusion.generate)  # head: the linear CPU kernel
    assert kernel.in_place and isinstance(kernel.loop, fusion.CudaKernel)
    products, contract = [], kernel.contract
    kernel.contract = lambda *a, **k: products.append(contract(*a, **k)) or products[-1]
    (got,) = kernel(*[b.arrays[v.index] for v in group.inputs])
    assert got is products[0] and len(launches) == 1
    _close(got, b.arrays[out.index], **tolerance(np.float32))


# -- row kernels ----------------------------------------------------------------------------------
@pytest.fixture
def table(launches):
    """fw_cpu's NumPy generic kernels with the row ops replaced as ``cuda_kernels()`` does."""
    kernels = all_kernels(np, scipy.special)
    kernels.update(chained(kernels, rows.guards(np)))
    return kernels


ROW_TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13),
                 np.float16: dict(rtol=1e-3, atol=1e-3)}


@pytest.mark.parametrize("name, dtype", [("softmax", np.float32), ("log_softmax", np.float64),
                                         ("safe_softmax", np.float32), ("softmax", np.float16)])
def test_softmax_family_over_a_middle_dim(table, launches, name, dtype):
    x = (np.random.default_rng(1).standard_normal((3, 37, 4)) * 3).astype(dtype)
    _close(table[name](x, 1), _cpu(name, x, dim=1), **ROW_TOLERANCE[dtype])
    sfx = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}[dtype]
    assert launches == [(f"fw_softmax_{sfx}", 12, 64)]


def test_layer_norm_with_weight_and_bias(table, launches):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 2, 30)) * 4 + 2).astype(np.float32)
    weight, bias = (rng.standard_normal((2, 30), np.float32) for _ in range(2))
    attrs = dict(normalized_shape=(2, 30), eps=1e-5, has_weight=True, has_bias=True)
    want = _cpu("layer_norm", x, weight, bias, **attrs)
    _close(table["layer_norm"](x, weight, bias, **attrs), want, **ROW_TOLERANCE[np.float32])
    assert launches == [("fw_norm_f32", 5, 64)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rms_norm_with_weight(table, dtype):
    rng = np.random.default_rng(4)
    x, weight = (rng.standard_normal(s).astype(dtype) for s in ((7, 33), (33,)))
    attrs = dict(normalized_shape=(33,), eps=1e-6, has_weight=True)
    _close(table["rms_norm"](x, weight, **attrs), _cpu("rms_norm", x, weight, **attrs),
           **ROW_TOLERANCE[dtype])


@pytest.mark.parametrize("case", ["causal", "bool"])
def test_attention_with_a_causal_or_boolean_mask(table, launches, case):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               ((2, 3, 5, 8), (2, 3, 40, 8), (2, 3, 40, 4)))
    extra = []
    if case == "bool":
        mask = rng.random((5, 40)) > 0.4
        mask[2] = False  # a fully masked row: zero weights
        extra.append(mask)
    attrs = dict(scale=8 ** -0.5, is_causal=case == "causal", dropout_p=0.0,
                 has_mask=case == "bool")
    got = table["scaled_dot_product_attention"](q, k, v, *extra, **attrs)
    _close(got, _cpu("scaled_dot_product_attention", q, k, v, *extra, **attrs),
           **ROW_TOLERANCE[np.float32])
    assert launches == [("fw_attention_f32", 30, 64)]


def test_fallbacks_reach_the_generic_kernels_without_a_launch(table, launches):
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    generic = all_kernels(np, scipy.special)["softmax"]
    with pytest.raises(Exception) as expected:
        generic(ints, 1)
    with pytest.raises(expected.type):  # the generic kernel's own error for an int input
        table["softmax"](ints, 1)
    rng = np.random.default_rng(6)
    x, weight = rng.standard_normal((4, 6), np.float32), rng.standard_normal(6)  # f32 / f64
    attrs = dict(normalized_shape=(6,), eps=1e-5, has_weight=True, has_bias=False)
    np.testing.assert_array_equal(table["layer_norm"](x, weight, **attrs),
                                  _cpu("layer_norm", x, weight, **attrs))
    assert launches == [] and rows._module.functions is None  # nothing compiled either


# -- adam -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_updates_in_place_to_the_bit(launches, amsgrad):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((37, 29)), rng.standard_normal((37, 29)),
              rng.standard_normal((37, 29)) * 0.1, rng.random((37, 29)) * 0.01]
    if amsgrad:
        arrays.append(arrays[3] * rng.uniform(0.5, 1.5, (37, 29)))
    arrays = [a.astype(np.float32) for a in arrays]
    attrs = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01,
                 decoupled=not amsgrad, maximize=False, step=7.0)
    want = [a.copy() for a in arrays]
    fw.ops.kernel("adam_update", "cpu")(*want, **attrs)
    kernel = chained(all_kernels(np, scipy.special),
                     {"adam_update": optim_kernels.adam_guard})["adam_update"]
    before = arrays[0].copy()
    assert kernel(*arrays, **attrs) is arrays[0]
    for got, expected in zip(arrays, want):
        np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(arrays[0], before)
    assert launches == [("fw_adam_f32", 5, 256)]  # 1073 elements: the grid-stride loop strides
