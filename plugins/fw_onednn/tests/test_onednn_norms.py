"""fw_onednn's softmax, layer_norm and batch_norm kernels: values against fw_cpu and PyTorch,
gradients through fw's VJPs, batch_norm's running statistics, NaN and inf, the calls the guards
leave to fw_cpu, and log_softmax left to fw_cpu (oneDNN's is ~15 ulps off)."""

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_core.testing import conformance as cf
from fw_core.testing.cases import ALL
from fw_onednn import norms

torch = pytest.importorskip("torch")
F = torch.nn.functional
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def _leaf(x):
    return fw.from_numpy(x).requires_grad_(True), torch.from_numpy(x.copy()).requires_grad_(True)


def _backward(rng, ours, theirs, leaves):
    g = rng.standard_normal(tuple(ours.shape)).astype(np.float32)
    ours.backward(fw.from_numpy(g))
    theirs.backward(torch.from_numpy(g))
    for mine, their in leaves:
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=1e-4, atol=1e-5)


# -- softmax -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dim", [((7,), 0), ((64, 10), -1), ((16, 4, 64, 64), 3),
                                        ((3, 5, 1), 1), ((2, 9, 1, 1), -3)], ids=str)
def test_softmax_matches_fw_cpu_and_torch_with_gradients(rng, fw_cpu_kernels, shape, dim):
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x[..., 0] = -np.inf  # a masked entry, as attention's causal mask makes
    if shape[dim] == 1 or x.ndim == 1:
        x = np.where(np.isinf(x), 0, x).astype(np.float32)
    assert norms.SOFTMAX.takes(x, dim)
    mine, their = _leaf(x)
    ours, theirs = fw.softmax(mine, dim), torch.softmax(their, dim)
    np.testing.assert_allclose(ours.detach().numpy(), fw_cpu_kernels["softmax"](x, dim),
                               **TOLERANCE)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **TOLERANCE)
    _backward(rng, ours, theirs, [(mine, their)])
    assert fw_onednn.cache_info().by_kind == {"softmax:f32": 1}


def test_rows_with_nan_or_inf_go_to_fw_cpu(fw_cpu_kernels):
    """oneDNN gives NaN only where the NaN (or +inf) is and 0 elsewhere; fw a row of NaN."""
    x = np.array([[0, 1, 2, 3], [np.nan, 1, 2, 3], [np.inf, 1, 2, 3], [-np.inf] * 4,
                  [-np.inf, 1, 2, 3]], np.float32)
    assert not norms.SOFTMAX.takes(x, 1)
    assert norms.SOFTMAX.takes(x[3:], 1)  # -inf alone: oneDNN computes it as fw does
    got = fw.softmax(fw.from_numpy(x), 1).numpy()
    np.testing.assert_allclose(got, fw_cpu_kernels["softmax"](x, 1), equal_nan=True,
                               **TOLERANCE)
    got = fw.softmax(fw.from_numpy(x[3:]), 1).numpy()
    np.testing.assert_allclose(got, fw_cpu_kernels["softmax"](x[3:], 1), equal_nan=True,
                               **TOLERANCE)


def test_log_softmax_is_fw_cpus_within_an_ulp_of_torch(rng):
    """oneDNN's log_softmax (its log of each row's sum ~15 ulps off) is not served: fw's
    values and gradients are PyTorch's to 1e-7, as tinygrad's test_log_softmax asks."""
    assert "log_softmax" not in {op for op, *_ in norms.KERNELS}
    x = rng.uniform(-2, 2, (45, 65)).astype(np.float32)
    mine, their = _leaf(x)
    ours, theirs = fw.log_softmax(mine, 1), torch.log_softmax(their, 1)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-6,
                               rtol=1e-6)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), atol=1e-7, rtol=1e-3)


def test_softmax_over_another_dimension_goes_to_fw_cpu(rng, fw_cpu_kernels):
    x = rng.standard_normal((8, 16, 4)).astype(np.float32)
    assert not norms.SOFTMAX.takes(x, 1)  # oneDNN has only reference loops for it
    assert not norms.SOFTMAX.takes(x[:, :, :2], 2)  # not contiguous
    assert not norms.SOFTMAX.takes(x.astype(np.float64), 2)
    assert fw_onednn.cache_info().misses == 0  # refused before oneDNN was asked
    np.testing.assert_allclose(fw.softmax(fw.from_numpy(x), 1).numpy(),
                               fw_cpu_kernels["softmax"](x, 1), rtol=1e-6)


# -- layer_norm ----------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("shape, normalized", [((1024, 128), (128,)), ((2, 3, 8), (8,)),
                                               ((4, 5, 6), (5, 6)), ((12,), (12,))], ids=str)
def test_layer_norm_matches_fw_cpu_and_torch_with_gradients(rng, fw_cpu_kernels, shape,
                                                            normalized, affine):
    x = (rng.standard_normal(shape) * 3 + 5).astype(np.float32)
    weight = rng.standard_normal(normalized).astype(np.float32) if affine in ("both", "weight") \
        else None
    bias = rng.standard_normal(normalized).astype(np.float32) if affine in ("both", "bias") \
        else None
    attrs = {"normalized_shape": normalized, "eps": 1e-5, "has_weight": weight is not None,
             "has_bias": bias is not None}
    tensors = [t for t in (weight, bias) if t is not None]
    assert norms.takes_layer_norm(x, *tensors, **attrs)
    leaves = [_leaf(a) for a in (x, *tensors)]
    it = iter(leaves[1:])
    w, b = (next(it) if t is not None else (None, None) for t in (weight, bias))
    ours = fw.layer_norm(leaves[0][0], normalized, w[0], b[0])
    theirs = F.layer_norm(leaves[0][1], normalized, w[1], b[1])
    np.testing.assert_allclose(ours.detach().numpy(),
                               fw_cpu_kernels["layer_norm"](x, *tensors, **attrs), **TOLERANCE)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **TOLERANCE)
    _backward(rng, ours, theirs, leaves)
    assert fw_onednn.cache_info().by_kind == {"layer_norm:f32": 1}


def test_layer_norm_with_nan_and_inf_rows_matches_fw_cpu(fw_cpu_kernels):
    x = np.array([[0, 1, 2, 3], [np.nan, 1, 2, 3], [np.inf, 1, 2, 3], [-np.inf, 1, 2, 3],
                  [1e30, 1, 2, 3], [5, 5, 5, 5]], np.float32)
    attrs = {"normalized_shape": (4,), "eps": 1e-5, "has_weight": False, "has_bias": False}
    assert norms.takes_layer_norm(x, **attrs)
    np.testing.assert_allclose(fw.layer_norm(fw.from_numpy(x), 4).numpy(),
                               fw_cpu_kernels["layer_norm"](x, **attrs), equal_nan=True,
                               **TOLERANCE)


def test_layer_norm_leaves_what_it_does_not_take_to_fw_cpu(rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    attrs = {"normalized_shape": (6,), "eps": 1e-5, "has_weight": True, "has_bias": False}
    assert not norms.takes_layer_norm(x, np.ones(5, np.float32), **attrs)  # fw_cpu raises
    assert not norms.takes_layer_norm(x, np.ones(6), **attrs)  # a float64 weight
    assert not norms.takes_layer_norm(x[:, ::2], np.ones(3, np.float32),
                                      **{**attrs, "normalized_shape": (3,)})
    with pytest.raises(fw.errors.ShapeError, match="weight has shape"):
        fw.layer_norm(fw.from_numpy(x), 6, fw.ones(5))


# -- batch_norm ----------------------------------------------------------------------------------
def _batch_norm_inputs(rng, batch=32, channels=12):
    x = (rng.standard_normal((batch, channels)) * 2 + 1).astype(np.float32)
    weight = rng.standard_normal(channels).astype(np.float32)
    bias = rng.standard_normal(channels).astype(np.float32)
    mean = rng.standard_normal(channels).astype(np.float32)
    var = (rng.random(channels) + 0.5).astype(np.float32)
    return x, weight, bias, mean, var


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm_matches_fw_cpu_and_torch_with_running_statistics(rng, fw_cpu_kernels,
                                                                      training, affine):
    x, weight, bias, mean, var = _batch_norm_inputs(rng)
    params = (weight, bias) if affine else ()
    attrs = {"training": training, "momentum": 0.1, "eps": 1e-5, "has_running": True,
             "has_weight": affine, "has_bias": affine}
    assert norms.takes_batch_norm(x, mean, var, *params, **attrs)
    running = [fw.from_numpy(mean.copy()), fw.from_numpy(var.copy())]
    their_running = [torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())]
    leaves = [_leaf(a) for a in (x, *params)]
    affine_ours = [leaf[0] for leaf in leaves[1:]] or [None, None]
    affine_theirs = [leaf[1] for leaf in leaves[1:]] or [None, None]
    ours = fw.batch_norm(leaves[0][0], *running, *affine_ours, training=training)
    theirs = F.batch_norm(leaves[0][1], *their_running, *affine_theirs, training=training)
    ref_mean, ref_var = mean.copy(), var.copy()
    want = fw_cpu_kernels["batch_norm"](x, ref_mean, ref_var, *params, **attrs)
    np.testing.assert_allclose(ours.detach().numpy(), want, **TOLERANCE)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **TOLERANCE)
    for mine, cpu, their in zip(running, (ref_mean, ref_var), their_running):
        np.testing.assert_allclose(mine.numpy(), cpu, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(mine.numpy(), their.numpy(), rtol=1e-6, atol=1e-6)
    _backward(rng, ours, theirs, leaves)
    assert fw_onednn.cache_info().by_kind == {"batch_norm:f32": 1}


def test_batch_norm_without_running_statistics_trains_on_the_batch(rng, fw_cpu_kernels):
    x = _batch_norm_inputs(rng)[0]
    attrs = {"training": True, "momentum": 0.1, "eps": 1e-3, "has_running": False,
             "has_weight": False, "has_bias": False}
    assert norms.takes_batch_norm(x, **attrs)
    np.testing.assert_allclose(fw.batch_norm(fw.from_numpy(x), training=True, eps=1e-3).numpy(),
                               fw_cpu_kernels["batch_norm"](x, **attrs), **TOLERANCE)


def test_batch_norm_leaves_channels_first_images_and_single_rows_to_fw_cpu(rng):
    attrs = {"training": True, "momentum": 0.1, "eps": 1e-5, "has_running": False,
             "has_weight": False, "has_bias": False}
    image = rng.standard_normal((8, 4, 5, 5)).astype(np.float32)
    assert not norms.takes_batch_norm(image, **attrs)  # oneDNN's ncsp code loses to fw_cpu
    assert not norms.takes_batch_norm(image[:1, :, 0, 0], **attrs)
    assert not norms.takes_batch_norm(image[:, :, 0, 0].astype(np.float64), **attrs)
    assert fw_onednn.cache_info().misses == 0


def test_layouts_below_the_measured_cutoffs_go_to_fw_cpu(rng):
    fw_onednn.set_min_elements(None)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    assert not norms.SOFTMAX.takes(x, 1)
    assert not norms.takes_layer_norm(x, normalized_shape=(8,), eps=1e-5, has_weight=False,
                                      has_bias=False)
    assert not norms.takes_batch_norm(x, training=True, momentum=0.1, eps=1e-5,
                                      has_running=False, has_weight=False, has_bias=False)


@pytest.mark.parametrize("case", [c for c in ALL if c.op in {op for op, *_ in norms.KERNELS}],
                         ids=lambda c: c.id)
def test_fws_conformance_cases_pass_with_onednn_taking_every_size(case):
    """tests/conformance runs these too; here oneDNN takes every call its guards allow."""
    for noncontiguous in (False, True):
        cf.check_forward(fw, case, "cpu", "float32", noncontiguous=noncontiguous)
    if case.torch:
        cf.check_torch(fw, torch, case, "float32")
