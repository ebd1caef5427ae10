"""The Numba row loops of fw_cpu/row_loops.py agree with the generic kernels they replace.

Elementwise float32 outputs within rtol 1e-6 / atol 1e-7 (the sums accumulate differently),
reductions within 1e-6 relative, NaN and inf in the same places; class_distribution exactly.
Log-probabilities and per-sample losses near 0 are ``x - max - lse``: they differ by the rounding
of the log-sum-exp ``lse`` (a float32 sum there, a float64 one here), an absolute error of a few
ulps of 1, hence an absolute 1e-6 for them.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from fw_cpu import row_loops
from fw_cpu.kernels import all_kernels
from fw_cpu.plugin import fw_register_kernels
from fw_cpu.row_loops import MIN_ELEMENTS
from tests.fw_cpu.chains import above

GENERIC = all_kernels(np, scipy.special)
FAST = above(GENERIC, row_loops.KERNELS)
DTYPES = (np.float32, np.float64)
TOLERANCE = {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-12, atol=1e-15)}
LOG_TOLERANCE = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-14)}
SHAPES = ((64, 64), (300, 97), (8, 4, 16, 33), (MIN_ELEMENTS + 3,), (5000, 1), (3, 2000))


def agree(fast, generic, dtype, log=False):
    assert fast.shape == generic.shape and fast.dtype == generic.dtype
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(generic))
    np.testing.assert_array_equal(np.isinf(fast), np.isinf(generic))
    np.testing.assert_allclose(fast, generic, equal_nan=True,
                               **(LOG_TOLERANCE if log else TOLERANCE)[dtype])


def scores(shape, dtype, seed=0, special=True):
    """Random scores; with ``special``, rows holding NaN, +inf, -inf, all -inf, all NaN."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    rows = x.reshape(-1, shape[-1])
    if special and rows.shape[0] >= 8:
        rows[0, -1] = np.nan
        rows[1, 0] = np.inf
        rows[2, ::2] = -np.inf
        rows[3] = -np.inf
        rows[4] = np.nan
        rows[5, :] = -np.inf
        rows[5, -1] = np.nan
        rows[6] = rows[6] * 30  # a wide range: many exps underflow
    return x


@pytest.mark.parametrize("name", ["softmax", "safe_softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_family_matches_generic(name, dtype, shape):
    x = scores(shape, dtype)
    for dim in range(-1, len(shape)):  # the last axis twice (as -1), then every axis
        agree(FAST[name](x, dim=dim), GENERIC[name](x, dim=dim), dtype, log=name == "log_softmax")


@pytest.mark.parametrize("name", ["softmax", "safe_softmax", "log_softmax"])
def test_softmax_family_other_layouts_fall_back(name):
    x = scores((200, 64), np.float32)
    for arg in (x.T, x[:, ::2], x.astype(np.float16), x[:10]):
        np.testing.assert_array_equal(FAST[name](arg, dim=-1), GENERIC[name](arg, dim=-1))


def test_float32_softmax_is_accurate():
    x = scores((256, 500), np.float32, special=False)
    x[::3] *= 10
    exact = scipy.special.softmax(x.astype(np.float64), axis=-1)
    np.testing.assert_allclose(FAST["softmax"](x, dim=1), exact, rtol=1e-6, atol=1e-9)
    exact_log = scipy.special.log_softmax(x.astype(np.float64), axis=-1)
    np.testing.assert_allclose(FAST["log_softmax"](x, dim=1), exact_log, rtol=1e-6, atol=1e-6)


def test_causal_attention_rows():
    s = scores((4, 2, 64, 64), np.float32, special=False)
    s[..., ~np.tri(64, dtype=bool)] = -np.inf
    s[0, 0, 5] = -np.inf
    out = FAST["safe_softmax"](s, dim=3)
    agree(out, GENERIC["safe_softmax"](s, dim=3), np.float32)
    assert not out[0, 0, 5].any()


def cross_entropy(table, x, target, weight, **attrs):
    try:
        return table["cross_entropy"](x, target, weight, probs=False, **attrs)
    except IndexError as error:
        return type(error)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
@pytest.mark.parametrize("shape", [(64, 100), (513, 10), (20, 1000)])
def test_cross_entropy_matches_generic(dtype, reduction, smoothing, weighted, ignore_index,
                                       shape):
    rng = np.random.default_rng(1)
    x = scores(shape, dtype, special=False)
    target = rng.integers(0, shape[1], shape[0])
    target[::7] = ignore_index
    weight = rng.uniform(0.5, 2, shape[1]).astype(dtype) if weighted else None
    attrs = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=smoothing)
    fast, generic = (cross_entropy(t, x, target, weight, **attrs) for t in (FAST, GENERIC))
    agree(fast, generic, dtype, log=reduction == "none")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_special_values(dtype, smoothing):
    x = scores((64, 100), dtype)
    target = np.arange(64) % 100
    target[4] = -100  # an all-NaN row, ignored: contributes nothing
    for reduction in ("none", "sum", "mean"):
        attrs = dict(ignore_index=-100, reduction=reduction, label_smoothing=smoothing)
        fast, generic = (cross_entropy(t, x, target, None, **attrs) for t in (FAST, GENERIC))
        agree(fast, generic, dtype, log=reduction == "none")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_edge_targets(reduction):
    x = scores((100, 50), np.float32, special=False)
    attrs = dict(ignore_index=-100, reduction=reduction, label_smoothing=0.0)
    for target in (np.full(100, -100), np.arange(100) % 50 - 1, np.arange(100) + 1,
                   (np.arange(100) % 50).astype(np.int32)):
        fast, generic = (cross_entropy(t, x, target, None, **attrs) for t in (FAST, GENERIC))
        if isinstance(generic, type):
            assert fast is generic
        else:
            agree(fast, generic, np.float32, log=reduction == "none")


def test_cross_entropy_other_forms_fall_back():
    rng = np.random.default_rng(2)
    x = scores((16, 50, 8), np.float32, special=False)
    target = rng.integers(0, 50, (16, 8))
    attrs = dict(ignore_index=-100, reduction="mean", label_smoothing=0.0)
    agree(FAST["cross_entropy"](x, target, probs=False, **attrs),
          GENERIC["cross_entropy"](x, target, probs=False, **attrs), np.float32)
    probs = scipy.special.softmax(x[:, :, 0], axis=1).astype(np.float32)
    agree(FAST["cross_entropy"](x[:, :, 0].copy(), probs, probs=True, **attrs),
          GENERIC["cross_entropy"](x[:, :, 0].copy(), probs, probs=True, **attrs), np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 0])
def test_class_distribution_is_exact(dtype, smoothing, weighted, ignore_index):
    rng = np.random.default_rng(3)
    classes = 97
    target = rng.integers(-1, classes + 1, 300)  # out-of-range targets give no one-hot entry
    target[::5] = ignore_index
    weight = rng.uniform(-1, 2, classes).astype(np.float32) if weighted else None
    if weighted:
        weight[:3] = (np.inf, np.nan, -0.5)
    attrs = dict(num_classes=classes, ignore_index=ignore_index, label_smoothing=smoothing,
                 dtype=np.dtype(dtype))
    fast = FAST["class_distribution"](target, weight, **attrs)
    generic = GENERIC["class_distribution"](target, weight, **attrs)
    assert fast.dtype == generic.dtype
    np.testing.assert_array_equal(fast, generic)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(generic))


def test_class_distribution_other_forms_fall_back():
    target = np.random.default_rng(4).integers(0, 10, (64, 30))
    attrs = dict(num_classes=10, ignore_index=-100, label_smoothing=0.1, dtype=np.dtype("f4"))
    np.testing.assert_array_equal(FAST["class_distribution"](target, **attrs),
                                  GENERIC["class_distribution"](target, **attrs))


def test_plugin_registers_the_loops_as_guarded_kernels_above_the_generic_ones():
    specs = [s for s in fw_register_kernels() if s.op in (
        "softmax", "safe_softmax", "log_softmax", "cross_entropy", "class_distribution")]
    assert sorted((s.op, s.priority, s.guard is None) for s in specs) == sorted(
        (op, p, p == 0) for op in ("softmax", "safe_softmax", "log_softmax", "cross_entropy",
                                   "class_distribution") for p in (0, 1))


def test_dispatch_names_the_loop_or_the_generic_kernel_that_runs_a_call():
    import fw_core.plugins as plugins

    big = np.ones((64, 128), np.float64)  # fw_onednn, where installed, takes float32
    _, why = plugins.serving("softmax", "cpu", (big,), {"dim": 1})
    assert "fw_cpu's guard takes it" in why and why.endswith("it runs fw_cpu.row_loops.softmax")
    _, why = plugins.serving("softmax", "cpu", (big[:, :4],), {"dim": 1})
    assert why.endswith("it runs fw_cpu.kernels.nn.softmax")
