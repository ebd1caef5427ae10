"""fw_cuda's hand-written row kernels (fw_cuda/rows.py, rows_source.py), checked without a GPU.

- the CUDA C compiles with ``nvcc -arch=sm_90 -cubin``; ptxas's registers and spills per
  kernel are written to ``test-artifacts/fw_cuda/ptxas_rows.json`` and must be spill-free;
- the same source runs on the host (``host_cuda``: one block of one thread) with the arguments
  the wrappers prepare (``rows.*_launch(numpy, ...)``), and its results are compared with the
  ops' CPU kernels: softmax family over a middle dim, NaN / +inf / all -inf rows, layer and
  RMS norm with and without parameters, attention with causal, boolean, additive and dropout
  masks; float32, float64 and float16. For attention the two products are NumPy's matmul
  there (cuBLAS on the GPU); the row kernel between them is the CUDA text;
- the wrappers' host-side logic: which inputs fall back to the generic kernels, launch sizes,
  the row geometry.
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
from fw_cuda import nvcc, rows, rows_source
from fw_cuda.kernels import FAST, cuda_kernels, fast_guards

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_cuda"

needs_gxx = pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13),
             np.float16: dict(rtol=1e-3, atol=1e-3)}


def _c_text(scalar) -> str:
    if isinstance(scalar, np.float64):
        return repr(float(scalar))
    return f"{int(scalar)}LL" if isinstance(scalar, np.int64) else str(int(scalar))


def _host(tmp_path, launch: rows.Launch, threads: int = 32) -> np.ndarray:
    """``launch``'s kernel run on the host as one block of ``threads`` threads (a warp's worth:
    the shared-memory reductions run with real barriers); its first output."""
    outputs = [(o.dtype, o.shape) for o in launch.outputs]
    return host_cuda.run(tmp_path, rows_source.SOURCE, launch.kernel, list(launch.inputs),
                         outputs, [_c_text(s) for s in launch.scalars], threads)[0]


def _cpu(name, *arrays, **attrs):
    return np.asarray(fw.ops.kernel(name, "cpu")(*arrays, **attrs))


def _check(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               **TOLERANCE[dtype])


# -- nvcc -----------------------------------------------------------------------------------------
@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_source_compiles_for_sm90_without_spills():
    report = nvcc.compile_cubin(rows_source.SOURCE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ptxas_rows.json").write_text(json.dumps(report, indent=2, sort_keys=True))
    print({name: figures["registers"] for name, figures in sorted(report.items())})
    assert sorted(report) == sorted(rows_source.KERNELS)
    for name, figures in report.items():
        assert figures["spill_stores"] == 0 and figures["spill_loads"] == 0, name
        # full occupancy: an SM's 64K registers hold 2048 resident threads at <= 32 each
        assert figures["registers"] <= 32, name


# -- host runs ------------------------------------------------------------------------------------
@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("name", ["softmax", "safe_softmax", "log_softmax"])
def test_softmax_family_over_a_middle_dim_matches_cpu(tmp_path, name, dtype):
    x = (np.random.default_rng(1).standard_normal((3, 37, 4)) * 3).astype(dtype)
    launch = rows.softmax_launch(np, x, 1, name)
    assert (launch.rows, launch.length) == (12, 37)
    _check(_host(tmp_path, launch), _cpu(name, x, dim=1), dtype)


@needs_gxx
@pytest.mark.parametrize("name", ["softmax", "safe_softmax", "log_softmax"])
def test_softmax_family_nan_inf_rows_behave_as_on_cpu(tmp_path, name):
    x = np.random.default_rng(2).standard_normal((6, 9)).astype(np.float32)
    x[0, 3] = np.nan  # the whole row NaN
    x[1, 4] = np.inf  # the whole row NaN (inf - inf)
    x[2] = -np.inf  # zeros for safe_softmax, NaN otherwise
    x[3, ::2] = -np.inf  # masked entries: zero probability
    x[4] = [np.nan] + [-np.inf] * 8
    got, want = _host(tmp_path, rows.softmax_launch(np, x, -1, name)), _cpu(name, x, dim=-1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if name == "safe_softmax":
        assert (got[2] == 0).all()


@needs_gxx
@pytest.mark.parametrize("dtype, params", [(np.float32, "wb"), (np.float64, ""),
                                           (np.float16, "wb"), (np.float32, "b")])
def test_layer_norm_matches_cpu(tmp_path, dtype, params):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 3, 40)) * 4 + 2).astype(dtype)
    weight = rng.standard_normal((3, 40)).astype(dtype) if "w" in params else None
    bias = rng.standard_normal((3, 40)).astype(dtype) if "b" in params else None
    launch = rows.norm_launch(np, x, weight, bias, (3, 40), 1e-5, center=True)
    assert (launch.rows, launch.length) == (5, 120)
    tensors = [t for t in (weight, bias) if t is not None]
    want = _cpu("layer_norm", x, *tensors, normalized_shape=(3, 40), eps=1e-5,
                has_weight=weight is not None, has_bias=bias is not None)
    _check(_host(tmp_path, launch), want, dtype)


@needs_gxx
@pytest.mark.parametrize("dtype, has_weight", [(np.float32, True), (np.float64, False),
                                               (np.float16, True)])
def test_rms_norm_matches_cpu(tmp_path, dtype, has_weight):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((7, 33)) * 2).astype(dtype)
    weight = rng.standard_normal(33).astype(dtype) if has_weight else None
    launch = rows.norm_launch(np, x, weight, None, (33,), 1e-6, center=False)
    want = _cpu("rms_norm", x, *([weight] if has_weight else []), normalized_shape=(33,),
                eps=1e-6, has_weight=has_weight)
    _check(_host(tmp_path, launch), want, dtype)


def _attention_case(case, dtype):
    """(q, k, v, extra, attrs) for one masking case: 2 batches x 3 heads, L 5, S 6."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in
               ((2, 3, 5, 8), (2, 3, 6, 8), (2, 3, 6, 4)))
    attrs = dict(scale=8 ** -0.5, is_causal=case == "causal", dropout_p=0.0, has_mask=False)
    extra = []
    if case == "bool_shared":
        mask = rng.random((5, 6)) > 0.4
        mask[2] = False  # a fully masked row: zeros
        extra.append(mask)
    elif case == "bool_per_sample":
        mask = rng.random((2, 1, 5, 6)) > 0.4
        mask[1, 0, 0] = False
        extra.append(mask)
    elif case == "additive":
        extra.append(rng.standard_normal((3, 5, 6)).astype(np.float32))
    elif case == "dropout":
        attrs["dropout_p"] = 0.25
        extra.append(rng.random((2, 3, 5, 6)) >= 0.25)
    attrs["has_mask"] = case.startswith(("bool", "additive"))
    return q, k, v, extra, attrs


@needs_gxx
@pytest.mark.parametrize("case, dtype", [("causal", np.float32), ("bool_shared", np.float32),
                                         ("bool_per_sample", np.float64),
                                         ("additive", np.float32), ("dropout", np.float16),
                                         ("none", np.float64)])
def test_attention_rows_match_cpu(tmp_path, case, dtype):
    q, k, v, extra, attrs = _attention_case(case, dtype)
    mask = extra[0] if attrs["has_mask"] else None
    keep = extra[-1] if attrs["dropout_p"] > 0 else None
    launch = rows.attention_launch(np, q, k, mask, keep, attrs["scale"], attrs["is_causal"],
                                   attrs["dropout_p"])
    expected_rows = {"bool_shared": 5, "bool_per_sample": 30, "additive": 30}
    assert launch.scalars[3] == expected_rows.get(case, 1)  # mask rows read modulo
    weights = _host(tmp_path, launch)
    got = rows.attention_output(np, weights, v, q.dtype)
    want = _cpu("scaled_dot_product_attention", q, k, v, *extra, **attrs)
    _check(got, want, dtype)
    if case.startswith("bool"):  # the fully masked rows are exactly zero
        assert (weights.reshape(2, 3, 5, 6)[(slice(None), slice(None), 2) if case ==
                                            "bool_shared" else (1, 0, 0)] == 0).all()


# -- host-side logic ------------------------------------------------------------------------------
def test_launch_size_is_a_warp_to_max_block_power_of_two():
    assert rows.launch_size(10, 1) == (10, 32)
    assert rows.launch_size(10, 33) == (10, 64)
    assert rows.launch_size(3, 256) == (3, 256)
    assert rows.launch_size(1 << 20, 100_000) == (rows.MAX_GRID, rows_source.MAX_BLOCK)


def test_softmax_row_geometry_over_any_dim():
    x = np.zeros((2, 3, 4, 5), np.float32)
    for dim, (outer, n, inner) in {0: (1, 2, 60), 2: (6, 4, 5), -1: (24, 5, 1)}.items():
        launch = rows.softmax_launch(np, x, dim, "softmax")
        assert launch.scalars[:3] == (outer, n, inner) and launch.rows == outer * inner
    assert rows.softmax_launch(np, x, 1, "log_softmax").scalars[3] == 2
    assert rows.softmax_launch(np, x.astype(np.float16), 0, "softmax").kernel == \
        "fw_softmax_f16"


@pytest.mark.parametrize("x, dim", [(np.zeros((3, 4), np.int64), 1),  # not float
                                    (np.zeros((3, 4), np.complex64), 1),
                                    (np.float32(2.0), 0),  # 0-d
                                    (np.zeros((0, 4), np.float32), 1),  # empty
                                    (np.zeros((3, 4), np.float32), 2),  # dim out of range
                                    (np.zeros((3, 4), np.float32), (0, 1))])
def test_softmax_falls_back(x, dim):
    assert rows.softmax_launch(np, np.asarray(x), dim, "softmax") is None


def test_norm_falls_back():
    x = np.zeros((4, 6), np.float32)
    assert rows.norm_launch(np, x, None, None, (5,), 1e-5, True) is None  # shape mismatch
    assert rows.norm_launch(np, x, np.ones(6, np.float64), None, (6,), 1e-5, True) is None
    assert rows.norm_launch(np, x, np.ones(5, np.float32), None, (6,), 1e-5, True) is None
    assert rows.norm_launch(np, x.astype(np.int32), None, None, (6,), 1e-5, True) is None
    assert rows.norm_launch(np, np.zeros((0, 6), np.float32), None, None, (6,), 1e-5,
                            False) is None
    assert rows.norm_launch(np, x, None, None, (4, 6), 1e-5, True).rows == 1
    alone = np.ones(6, np.float32)  # x is its own weight: still a weight
    assert rows.norm_launch(np, alone, alone, None, (6,), 1e-5, True).scalars[-2:] == (1, 0)


def test_attention_mask_layout_and_fallbacks():
    assert rows.attention_geometry((2, 3, 5, 8), (2, 3, 6, 8), (5, 6)) == \
        ((2, 3, 5, 6), (5, 6))
    assert rows.attention_geometry((2, 3, 5, 8), (3, 6, 8), (1, 1, 1, 6)) == \
        ((2, 3, 5, 6), (5, 6))
    assert rows.attention_geometry((2, 3, 5, 8), (2, 3, 6, 8), (2, 1, 5, 6)) == \
        ((2, 3, 5, 6), (2, 3, 5, 6))
    assert rows.attention_geometry((2, 3, 5, 8), (2, 3, 6, 8), (4, 6)) is None
    q, k = np.zeros((2, 5, 8), np.float32), np.zeros((2, 6, 8), np.float32)
    args = (1.0, False, 0.0)
    assert rows.attention_launch(np, q, k, np.zeros((5, 6), np.int64), None, *args) is None
    assert rows.attention_launch(np, q, k.astype(np.float64), None, None, *args) is None
    assert rows.attention_launch(np, q[:, :0], k, None, None, *args) is None  # empty
    assert rows.attention_launch(np, q, k, None, np.ones((2, 5, 6), np.float32), 1.0, False,
                                 0.5) is None  # a keep mask must be bool
    half = rows.attention_launch(np, q.astype(np.float16), k.astype(np.float16), None, None,
                                 *args)
    assert half.kernel == "fw_attention_f32" and half.outputs[0].dtype == np.float32


def test_fallbacks_reach_the_generic_kernels_without_touching_cupy():
    kernels = all_kernels(np, scipy.special)  # NumPy stands in for CuPy as the generic table
    kernels.update(chained(kernels, rows.guards(np)))  # as the dispatch table chains them
    assert kernels["softmax"].__qualname__ == "guarded[softmax@cuda]"
    assert kernels["softmax"](np.asarray(np.float32(3.0)), 0) == 1.0  # 0-d
    assert kernels["log_softmax"](np.zeros((0, 3), np.float16), 1).shape == (0, 3)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(ValueError):  # the generic kernel's own error for a bad shape
        kernels["layer_norm"](ints, normalized_shape=(4,), eps=1e-5, has_weight=False,
                              has_bias=False)


def test_the_row_ops_have_guarded_kernels_above_the_generic_table():
    assert set(rows.NAMES) <= set(FAST) and set(fast_guards(np)) == set(FAST)
    table = cuda_kernels()  # the generic kernels, on CuPy
    assert set(rows.NAMES) <= set(table)
    assert getattr(table["exp"], "__module__", None) != "fw_cuda.rows"
