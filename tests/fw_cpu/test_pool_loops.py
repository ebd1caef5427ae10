"""The Numba max-pool kernels return exactly what the generic xp kernels return."""

import itertools

import numpy as np
import pytest
import scipy.special

from fw_cpu import pool_loops
from fw_cpu.kernels.pooling import kernels
from tests.fw_cpu.chains import above

GENERIC = kernels(np, scipy.special)
FAST = above(GENERIC, pool_loops.KERNELS)

# (kernel, stride, padding, dilation, ceil_mode)
WINDOWS = [((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 3), (1, 1), (1, 1), (1, 1), False),
           ((3, 3), (2, 2), (1, 1), (1, 1), True), ((2, 3), (3, 2), (1, 0), (1, 1), True),
           ((3, 2), (2, 1), (1, 1), (2, 1), False), ((3, 3), (2, 2), (1, 1), (2, 2), True),
           ((1, 1), (2, 2), (0, 0), (1, 1), True), ((5, 5), (3, 3), (2, 2), (1, 1), True),
           ((4, 4), (4, 4), (2, 2), (1, 1), True)]
SHAPES = [(2, 3, 7, 9), (3, 1, 10, 10), (5, 8, 8), (1, 1, 6, 13)]


@pytest.fixture(autouse=True)
def _every_size_takes_the_loops(monkeypatch):
    monkeypatch.setattr(pool_loops, "MIN_ELEMENTS", 0)


def _input(rng, shape, dtype, kind):
    """Random values, or few distinct values (ties, signed zeros, -inf), or some NaNs."""
    if kind == "ties":
        return rng.choice(np.array([0.0, -0.0, 1.0, -np.inf], dtype), size=shape)
    x = rng.standard_normal(shape).astype(dtype)
    if kind == "nan":
        x[rng.random(shape) < 0.15] = np.nan
    return x


def _attrs(window):
    kernel, stride, padding, dilation, ceil_mode = window
    return dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                ceil_mode=ceil_mode)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["random", "ties", "nan"])
def test_indices_and_gradient_match_the_generic_kernels(dtype, kind):
    rng = np.random.default_rng(0)
    for window, shape in itertools.product(WINDOWS, SHAPES):
        x = _input(rng, shape, dtype, kind)
        attrs = _attrs(window)
        expected = GENERIC["max_pool2d_indices"](x, **attrs)
        indices = FAST["max_pool2d_indices"](x, **attrs)
        assert indices.dtype == np.int64
        np.testing.assert_array_equal(indices, expected, err_msg=f"{window} {shape}")
        g = rng.standard_normal(indices.shape).astype(dtype)
        expected = GENERIC["max_pool2d_backward"](g, indices, input_size=shape[-2:])
        grad = FAST["max_pool2d_backward"](g, indices, input_size=shape[-2:])
        assert grad.dtype == expected.dtype and grad.shape == expected.shape
        np.testing.assert_array_equal(grad, expected, err_msg=f"{window} {shape}")


def test_the_cnn_pool_matches_and_non_contiguous_inputs_too():
    rng = np.random.default_rng(1)
    x = np.maximum(rng.standard_normal((16, 8, 28, 28)).astype(np.float32), 0)
    for view in (x, x.transpose(1, 0, 2, 3), x[:, :, ::2, 1:]):
        attrs = _attrs(WINDOWS[0])
        np.testing.assert_array_equal(FAST["max_pool2d_indices"](view, **attrs),
                                      GENERIC["max_pool2d_indices"](view, **attrs))


def test_other_dtypes_and_bad_indices_take_the_generic_kernels():
    attrs = _attrs(WINDOWS[1])
    for x in (np.arange(64, dtype=np.int32).reshape(1, 8, 8) % 7,
              np.random.default_rng(2).standard_normal((2, 6, 6)).astype(np.float16)):
        np.testing.assert_array_equal(FAST["max_pool2d_indices"](x, **attrs),
                                      GENERIC["max_pool2d_indices"](x, **attrs))
    g = np.ones((1, 2, 2), np.float32)
    with pytest.raises(ValueError):  # bincount's complaint about a negative index
        FAST["max_pool2d_backward"](g, np.full((1, 2, 2), -1, np.int64), input_size=(4, 4))
    np.testing.assert_array_equal(  # an index past the plane spills into the next, as bincount
        FAST["max_pool2d_backward"](np.ones((2, 1, 1)), np.array([[[16]], [[0]]]),
                                    input_size=(4, 4)),
        GENERIC["max_pool2d_backward"](np.ones((2, 1, 1)), np.array([[[16]], [[0]]]),
                                       input_size=(4, 4)))
