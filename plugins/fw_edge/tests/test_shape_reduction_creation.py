"""shape, reduction and creation kernels, and size expressions resolved per call."""

from __future__ import annotations

import numpy as np
import pytest
from fwm_writer import Builder, size

F32 = {"rtol": 1e-6, "atol": 1e-6}


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_reshape_permute_broadcast(one, rng):
    x = f32(rng, 2, 3, 4)
    np.testing.assert_array_equal(one("reshape", [x], [6, 4], shape=(6, 4)), x.reshape(6, 4))
    np.testing.assert_array_equal(one("permute", [x], [4, 2, 3], dims=(2, 0, 1)),
                                  x.transpose(2, 0, 1))
    y = f32(rng, 3, 1)
    np.testing.assert_array_equal(one("broadcast_to", [y], [2, 3, 5], shape=(2, 3, 5)),
                                  np.broadcast_to(y, (2, 3, 5)))


def test_getitem_basic_and_array_indices(run, one, rng):
    x = f32(rng, 4, 5, 6)
    index = (slice(1, None, 2), Ellipsis, None, 3)
    np.testing.assert_array_equal(one("getitem", [x], [2, 5, 1], index=index), x[index])
    b = Builder()
    xi = b.input("x", "float32", [4, 5, 6])
    picks = np.array([3, 0, 3])
    b.weight(picks, "const.picks")
    node = b.node("getitem", [xi], "float32", [4, 3, 6], index=(slice(None),))
    b.nodes[-1]["attrs"]["index"] = [{"slice": [None, None, None]}, {"array": 1}]
    b.output(node, "output")
    np.testing.assert_array_equal(run(b)(x), x[:, picks])


def test_cat_stack_flip_pad(one, rng):
    a, c = f32(rng, 2, 3), f32(rng, 2, 4)
    np.testing.assert_array_equal(one("cat", [a, c], [2, 7], dim=1), np.concatenate([a, c], 1))
    d = f32(rng, 2, 3)
    np.testing.assert_array_equal(one("stack", [a, d], [2, 2, 3], dim=1), np.stack([a, d], 1))
    np.testing.assert_array_equal(one("flip", [a], [2, 3], dims=(0, 1)), a[::-1, ::-1])
    out = one("pad", [a], [3, 6], pad_width=((1, 0), (2, 1)), mode="constant", value=7.0)
    np.testing.assert_array_equal(out, np.pad(a, ((1, 0), (2, 1)), constant_values=7.0))


@pytest.mark.parametrize("op, ref", [("sum", np.sum), ("mean", np.mean), ("amax", np.max),
                                     ("amin", np.min), ("prod", np.prod)])
@pytest.mark.parametrize("dim, keepdim", [((1,), False), ((0, 2), True), (None, False)])
def test_reductions(one, rng, op, ref, dim, keepdim):
    x = f32(rng, 3, 4, 5)
    expected = ref(x.astype(np.float64), axis=dim, keepdims=keepdim)
    out = one(op, [x], list(np.shape(expected)), dim=dim, keepdim=keepdim)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_max_min_argmax_and_integer_sum(one, rng):
    x = f32(rng, 3, 4)
    np.testing.assert_array_equal(one("max", [x], [3], dim=1, keepdim=False), x.max(1))
    np.testing.assert_array_equal(one("min", [x], [4], dim=0, keepdim=False), x.min(0))
    np.testing.assert_array_equal(one("argmax", [x], [3], "int64", dim=1, keepdim=False),
                                  x.argmax(1))
    flags = x > 0
    np.testing.assert_array_equal(one("sum", [flags], [], "int64", dim=None, keepdim=False),
                                  flags.sum())


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_with_correction(one, rng, op):
    x = f32(rng, 3, 6)
    for correction in (0, 1):
        expected = getattr(np, op)(x.astype(np.float64), axis=1, ddof=correction)
        out = one(op, [x], [3], dim=(1,), keepdim=False, correction=correction)
        np.testing.assert_allclose(out, expected, **F32)


def test_creation_sizes_follow_the_call(run):
    b = Builder({"batch": 2})
    x = b.input("x", "float32", ["batch", 3])
    z = b.node("zeros", [], "float32", ["batch", 3], shape=[size(["batch"]), 3])
    f = b.node("full", [], "float32", ["batch", 3], shape=[size(["batch"]), 3], fill_value=2.5)
    r = b.node("arange", [], "int64", [size(["batch"], 2, 1)], start=0,
               end=size(["batch"], 2, 1), step=1)
    s = b.pointwise([x, z, f], [["add", ["arg", 0], ["arg", 1]], ["mul", ["step", 0], ["arg", 2]]],
                    ["step", 1], "float32", ["batch", 3])
    b.output(s, "y")
    b.output(r, "r")
    b.output(b.node("ones", [], "int32", [2], shape=(2,)), "one")
    prog = run(b)
    for n in (1, 4):
        x_ = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        out = prog(x_)
        np.testing.assert_array_equal(out["y"], x_ * 2.5)
        np.testing.assert_array_equal(out["r"], np.arange(2 * n + 1))
        np.testing.assert_array_equal(out["one"], [1, 1])


def test_reshape_with_size_expression_and_slice_bounds(run, rng):
    b = Builder({"batch": 2, "seq": 3})
    x = b.input("x", "float32", ["batch", "seq", 4])
    flat = b.node("reshape", [x], "float32", [size(["batch", "seq"]), 4],
                  shape=[size(["batch", "seq"]), 4])
    head = b.node("getitem", [flat], "float32", [size(["batch", "seq"], 1, -1), 4],
                  index=[{"slice": [None, size(["batch", "seq"], 1, -1), None]},
                         {"ellipsis": True}])
    b.output(head, "output")
    prog = run(b)
    for shape in ((2, 3, 4), (5, 1, 4)):
        x_ = f32(rng, *shape)
        np.testing.assert_array_equal(prog(x_), x_.reshape(-1, 4)[:-1])


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf"), float("-inf")])
def test_vector_norms(one, rng, p):
    x = f32(rng, 3, 6)
    x[0, 0] = 0
    expected = np.linalg.norm(x.astype(np.float64), ord=p, axis=1, keepdims=True)
    out = one("norm", [x], [3, 1], dim=(1,), keepdim=True, p=p)
    np.testing.assert_allclose(out, expected, **F32)
