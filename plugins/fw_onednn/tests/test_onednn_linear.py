"""linear through fw_onednn: x @ weight.T (+ bias in the same primitive), every layout of x and
the weight, leading dimensions of x, against fw_cpu's kernel and PyTorch."""

import itertools

import numpy as np
import pytest
from onednn_views import servable, views

import fw_core as fw
from fw_onednn import kernels

torch = pytest.importorskip("torch")

#: (x shape, weight shape): a batch of rows, one vector, (batch, time, features), out_features 1
SHAPES = [((5, 3), (4, 3)), ((3,), (2, 3)), ((2, 3, 4), (5, 4)), ((2, 7, 16), (1, 16)),
          ((128, 784), (512, 784)), ((16, 64, 128), (384, 128))]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("x_shape, w_shape", SHAPES, ids=str)
def test_linear_matches_fw_cpu_and_torch(rng, cpu_kernels, x_shape, w_shape, bias):
    b = rng.standard_normal(w_shape[0]).astype(np.float32) if bias else None
    for (nx, x), (nw, w) in itertools.product(views(rng, x_shape).items(),
                                              views(rng, w_shape).items()):
        args = (x, w) if b is None else (x, w, b)
        got = fw.linear(*(fw.from_numpy(a) for a in args)).numpy()
        reference = cpu_kernels["linear"](*(a.astype(np.float64) for a in args))
        theirs = torch.nn.functional.linear(*(torch.from_numpy(a) for a in args)).numpy()
        name = f"{x_shape}:{nx}, {w_shape}:{nw}"
        assert got.dtype == np.float32 and got.shape == reference.shape, name
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4, err_msg=name)
        np.testing.assert_allclose(got, theirs, rtol=1e-4, atol=1e-4, err_msg=name)
        served = servable(nx, x_shape) and servable(nw, w_shape)
        assert (kernels.takes_linear(*args) is not None) == served


def test_a_strided_bias_goes_to_fw_cpu(rng):
    """oneDNN 3.2's matmul reads the bias as contiguous whatever its descriptor says."""
    x, w = rng.standard_normal((5, 3), np.float32), rng.standard_normal((4, 3), np.float32)
    bias = np.repeat(np.arange(4, dtype=np.float32), 2)[::2]
    assert not kernels.takes_linear(x, w, bias)
    got = fw.linear(fw.from_numpy(x), fw.from_numpy(w), fw.from_numpy(bias)).numpy()
    np.testing.assert_allclose(got, x @ w.T + bias, rtol=1e-5, atol=1e-6)


def test_an_empty_batch_goes_to_fw_cpu(rng):
    x, w, b = np.ones((0, 3), np.float32), np.ones((2, 3), np.float32), np.ones(2, np.float32)
    assert not kernels.takes_linear(x, w, b)
    assert fw.linear(fw.from_numpy(x), fw.from_numpy(w), fw.from_numpy(b)).shape == (0, 2)


def test_mismatched_features_raise_fws_error(rng):
    x, w = rng.standard_normal((5, 3), np.float32), rng.standard_normal((4, 6), np.float32)
    assert not kernels.takes_linear(x, w)
    with pytest.raises(fw.errors.ShapeError, match="in_features"):
        fw.linear(fw.from_numpy(x), fw.from_numpy(w))
