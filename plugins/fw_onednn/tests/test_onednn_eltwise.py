"""fw_onednn's eltwise kernels: values against fw_cpu and PyTorch, gradients through fw's VJPs,
the calls the guards leave to fw_cpu (NaN and inf where oneDNN differs, other dtypes and
layouts, small arrays), one primitive per size, and the ops it does not serve."""

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_core.testing import conformance as cf
from fw_core.testing.cases import ALL
from fw_onednn import eltwise

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: (fw op, attributes, fw function, torch function, input transform)
CASES = [
    ("relu", {}, fw.relu, torch.relu, None),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: fw.leaky_relu(x, 0.2),
     lambda t: F.leaky_relu(t, 0.2), None),
    ("leaky_relu", {"negative_slope": 0.0}, lambda x: fw.leaky_relu(x, 0.0),
     lambda t: F.leaky_relu(t, 0.0), None),
    ("elu", {"alpha": 0.7}, lambda x: fw.elu(x, 0.7), lambda t: F.elu(t, 0.7), None),
    ("gelu", {"approximate": "none"}, fw.gelu, F.gelu, None),
    ("gelu", {"approximate": "tanh"}, lambda x: fw.gelu(x, "tanh"),
     lambda t: F.gelu(t, approximate="tanh"), None),
    ("sigmoid", {}, fw.sigmoid, torch.sigmoid, None),
    ("silu", {}, fw.silu, F.silu, None),
    ("mish", {}, fw.mish, F.mish, None),
    ("sqrt", {}, fw.sqrt, torch.sqrt, np.abs),
]
IDS = [f"{op}-{'-'.join(map(str, attrs.values()))}" for op, attrs, *_ in CASES]
#: oneDNN's gelu (erf) and mish are up to ~1.3e-6 off in absolute terms (see eltwise.py)
TOLERANCE = {"rtol": 1e-5, "atol": 2e-6}


def _draw(rng, shape, transform):
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    return transform(x) if transform else x


@pytest.mark.parametrize("op, attrs, ours, theirs, transform", CASES, ids=IDS)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (64, 300), (2, 3, 4, 5)], ids=str)
def test_values_match_fw_cpu_and_torch(rng, fw_cpu_kernels, op, attrs, ours, theirs, transform,
                                       shape):
    x = _draw(rng, shape, transform)
    assert eltwise.BY_OP[op].takes(x, **attrs)
    got = ours(fw.from_numpy(x)).numpy()
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(got, fw_cpu_kernels[op](x, **attrs), **TOLERANCE)
    np.testing.assert_allclose(got, theirs(torch.from_numpy(x)).numpy(), **TOLERANCE)
    assert fw_onednn.cache_info().by_kind == {f"{op}:f32": 1}


@pytest.mark.parametrize("op, attrs, ours, theirs, transform", CASES, ids=IDS)
def test_gradients_match_torch(rng, op, attrs, ours, theirs, transform):
    x = _draw(rng, (16, 33), transform) + (0.5 if op == "sqrt" else 0)
    g = rng.standard_normal(x.shape).astype(np.float32)
    mine = fw.from_numpy(x).requires_grad_(True)
    ours(mine).backward(fw.from_numpy(g))
    their = torch.from_numpy(x).requires_grad_(True)
    theirs(their).backward(torch.from_numpy(g))
    np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert fw_onednn.cache_info().misses >= 1


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 88.0, -100.0, 1e30,
                    -1e30, 3.0, -3.0], np.float32)


@pytest.mark.parametrize("op, attrs, ours, theirs, transform", CASES, ids=IDS)
def test_nan_and_inf_give_fw_cpus_results(fw_cpu_kernels, op, attrs, ours, theirs, transform):
    x = transform(SPECIAL) if transform else SPECIAL
    got = ours(fw.from_numpy(x)).numpy()
    want = fw_cpu_kernels[op](x, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and \
        np.array_equal(np.isinf(got), np.isinf(want))


def every_finite_float32() -> np.ndarray:
    """Every 65537th finite float32 bit pattern (both signs, every exponent, subnormals)."""
    bits = np.arange(0, 2**32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([bits[np.isfinite(bits)], np.float32([3.4028235e38, -3.4028235e38])])


@pytest.mark.parametrize("op, attrs, ours, theirs, transform", CASES, ids=IDS)
def test_the_whole_float32_range_stays_within_fws_tolerance_of_fw_cpu(fw_cpu_kernels, op, attrs,
                                                                       ours, theirs, transform):
    # the tails round differently (sigmoid flushes below 1.2e-38 to 0), never beyond tolerance
    x = every_finite_float32()
    x = transform(x) if transform else x
    if attrs.get("approximate") == "none":
        x = x[x < 2.0**127]  # the erf gelu overflows from there: its guard refuses (below)
    with np.errstate(all="ignore"):
        want = fw_cpu_kernels[op](x, **attrs).astype(np.float64)
    assert fw.plugins.serving(op, "cpu", (x,), attrs)[0] == "fw_onednn"
    got = fw.ops.kernel(op, "cpu")(x, **attrs)
    outside = ~(np.abs(got - want) <= 1e-5 + 1e-4 * np.abs(want))
    assert not outside.any(), (x[outside][:5], got[outside][:5], want[outside][:5])


@pytest.mark.parametrize("op, attrs, why", [
    ("relu", {}, "oneDNN's relu gives 0 for NaN"),
    ("leaky_relu", {"negative_slope": 0.0}, "the same max(x, 0) instruction"),
    ("gelu", {"approximate": "none"}, "oneDNN's erf gelu gives NaN for +inf"),
    ("gelu", {"approximate": "none"}, "oneDNN's erf gelu overflows to +inf from 2**127"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else "")
def test_the_guard_refuses_what_onednn_would_compute_differently(op, attrs, why):
    x = np.ones(64, np.float32)
    assert eltwise.BY_OP[op].takes(x, **attrs)
    x[5] = {"gelu": np.inf if "NaN" in why else 2.0**127}.get(op, np.nan)
    assert not eltwise.BY_OP[op].takes(x, **attrs), why


def test_a_nan_still_reaches_onednn_where_it_computes_it_as_fw_does():
    x = np.ones(64, np.float32)
    x[3] = np.nan
    for op, attrs in (("leaky_relu", {"negative_slope": 0.1}), ("gelu", {"approximate": "tanh"}),
                      ("sigmoid", {}), ("elu", {"alpha": 1.0})):
        assert eltwise.BY_OP[op].takes(x, **attrs), op


@pytest.mark.parametrize("make", [
    lambda rng: rng.standard_normal((8, 8)),  # float64: gradcheck's dtype
    lambda rng: rng.standard_normal((8, 8)).astype(np.float16),
    lambda rng: rng.integers(-5, 5, (8, 8)).astype(np.int32),
    lambda rng: rng.standard_normal((8, 16)).astype(np.float32)[:, ::2],  # strided
    lambda rng: rng.standard_normal((8, 8)).astype(np.float32).T,  # transposed
    lambda rng: np.ones((0, 4), np.float32),
], ids=["float64", "float16", "int32", "strided", "transposed", "empty"])
def test_other_dtypes_and_layouts_go_to_fw_cpu(rng, fw_cpu_kernels, make):
    x = make(rng)
    for op, kernel in eltwise.BY_OP.items():
        attrs = {"negative_slope": 0.1} if op == "leaky_relu" else \
            {"alpha": 1.0} if op == "elu" else {"approximate": "none"} if op == "gelu" else {}
        assert not kernel.takes(x, **attrs), op
    if x.dtype.kind == "f":  # fw converts integers to float32 before a kernel sees them
        got = fw.gelu(fw.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, fw_cpu_kernels["gelu"](x, approximate="none"),
                                   rtol=1e-6)
        assert fw_onednn.cache_info().misses == 0


def test_small_arrays_go_to_fw_cpu_under_the_measured_cutoffs():
    fw_onednn.set_min_elements(None)
    relu = eltwise.BY_OP["relu"]
    small = np.ones(relu.spec.min_elements - 1, np.float32)
    large = np.ones(relu.spec.min_elements, np.float32)
    assert not relu.takes(small) and relu.takes(large)
    fw_onednn.set_min_elements(0)
    assert relu.takes(small)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0"])
def test_min_elements_must_be_none_or_an_integer_of_at_least_0(bad):
    with pytest.raises(fw.errors.ArgumentError, match="an integer of at least 0"):
        fw_onednn.set_min_elements(bad)


def test_arrays_of_one_size_share_a_primitive(rng):
    for shape in ((2, 6), (3, 4), (12,), (1, 3, 4)):
        fw.sigmoid(fw.from_numpy(rng.standard_normal(shape).astype(np.float32)))
    info = fw_onednn.cache_info()
    assert (info.misses, info.hits, info.by_kind) == (1, 3, {"sigmoid:f32": 1})


def test_the_dispatch_table_names_fw_onednn_for_the_ops_it_serves_and_only_those():
    rows = {r["op"]: r for r in fw.plugins.dispatch_table() if r["device"] == "cpu"}
    for op, _, _, takes in eltwise.KERNELS:
        assert rows[op]["plugin"] == "fw_onednn"
        assert f"fw_onednn when it takes the call ({takes}), " in rows[op]["why"]
        assert ", else fw_cpu" in rows[op]["why"]
    # oneDNN differs from fw's definition (exp of NaN, clamp of NaN, softplus's log near 1,
    # log's accuracy) or wins by under 1.3x (tanh, abs, square, round)
    for op in ("exp", "log", "clamp", "hardtanh", "softplus", "tanh", "abs", "square", "round"):
        assert rows[op]["plugin"] == "fw_cpu", op


@pytest.mark.parametrize("case", [c for c in ALL if c.op in eltwise.BY_OP], ids=lambda c: c.id)
def test_fws_conformance_cases_pass_with_onednn_taking_every_size(case):
    """tests/conformance runs these too; here oneDNN takes every call its guards allow."""
    for noncontiguous in (False, True):
        cf.check_forward(fw, case, "cpu", "float32", noncontiguous=noncontiguous)
    if case.torch:
        cf.check_torch(fw, torch, case, "float32")
