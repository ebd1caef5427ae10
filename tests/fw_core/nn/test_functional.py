"""fw.nn.functional: every function called with PyTorch's argument names gives PyTorch's values
and gradients (the ops themselves are covered by the conformance suite)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import fw_core as fw
import fw_core.nn as nn
import fw_core.nn.functional as F
from fw_core.errors import UnsupportedError

from .layer_check import const

rng = np.random.default_rng(0)


def _x(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def _logits_and_labels():
    return [_x(4, 5), rng.integers(0, 5, 4)]


def _compare(call, arrays, grad=True):
    """``call(lib_functional, lib, *tensors)`` in fw and torch: values and input gradients."""
    wants = [grad and not isinstance(a, const) and a.dtype.kind == "f" for a in arrays]
    arrays = [a.array if isinstance(a, const) else a for a in arrays]
    ours_in = [fw.tensor(a, requires_grad=w) for a, w in zip(arrays, wants)]
    theirs_in = [torch.tensor(a, requires_grad=w) for a, w in zip(arrays, wants)]
    ours, theirs = call(F, fw, *ours_in), call(TF, torch, *theirs_in)
    if isinstance(theirs, tuple):
        ours, theirs = ours[0], theirs[0]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-10)
    if grad and theirs.requires_grad:
        cot = rng.standard_normal(tuple(theirs.shape))
        ours.backward(fw.tensor(cot))
        theirs.backward(torch.tensor(cot))
        for a, b in zip(ours_in, theirs_in):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9,
                                           atol=1e-10)


CASES = {
    "relu": (lambda F, lib, x: F.relu(x, inplace=False), [_x(3, 4)]),
    "relu6": (lambda F, lib, x: F.relu6(x * 4), [_x(3, 4)]),
    "leaky_relu": (lambda F, lib, x: F.leaky_relu(x, negative_slope=0.2), [_x(3, 4)]),
    "elu": (lambda F, lib, x: F.elu(x, alpha=0.7), [_x(3, 4)]),
    "gelu": (lambda F, lib, x: F.gelu(x, approximate="tanh"), [_x(3, 4)]),
    "silu": (lambda F, lib, x: F.silu(x), [_x(3, 4)]),
    "mish": (lambda F, lib, x: F.mish(x), [_x(3, 4)]),
    "softplus": (lambda F, lib, x: F.softplus(x, beta=2.0, threshold=1.0), [_x(3, 4)]),
    "hardtanh": (lambda F, lib, x: F.hardtanh(x, min_val=-0.5, max_val=0.5), [_x(3, 4)]),
    "sigmoid": (lambda F, lib, x: F.sigmoid(x), [_x(3, 4)]),
    "tanh": (lambda F, lib, x: F.tanh(x), [_x(3, 4)]),
    "softmax": (lambda F, lib, x: F.softmax(x, dim=0), [_x(3, 4)]),
    "log_softmax": (lambda F, lib, x: F.log_softmax(x, dim=-1), [_x(3, 4)]),
    "linear": (lambda F, lib, x, w, b: F.linear(x, w, bias=b), [_x(2, 3), _x(4, 3), _x(4)]),
    "bilinear": (lambda F, lib, a, b, w, bias: F.bilinear(a, b, w, bias),
                 [_x(2, 3), _x(2, 4), _x(5, 3, 4), _x(5)]),
    "conv1d": (lambda F, lib, x, w: F.conv1d(x, w, stride=2, padding=1, dilation=1, groups=2),
               [_x(1, 4, 9), _x(6, 2, 3)]),
    "conv2d": (lambda F, lib, x, w, b: F.conv2d(x, w, b, padding="same", dilation=2),
               [_x(1, 2, 6, 6), _x(3, 2, 3, 3), _x(3)]),
    "conv_transpose2d": (lambda F, lib, x, w: F.conv_transpose2d(
        x, w, stride=2, padding=1, output_padding=1), [_x(1, 2, 4, 4), _x(2, 3, 3, 3)]),
    "max_pool2d": (lambda F, lib, x: F.max_pool2d(x, kernel_size=2, stride=1,
                                                   return_indices=True),
                   [rng.permutation(32).reshape(1, 2, 4, 4) / 3.0]),
    "avg_pool2d": (lambda F, lib, x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                   count_include_pad=False), [_x(1, 2, 5, 5)]),
    "adaptive_avg_pool2d": (lambda F, lib, x: F.adaptive_avg_pool2d(x, output_size=(2, 3)),
                            [_x(1, 2, 5, 7)]),
    "interpolate": (lambda F, lib, x: F.interpolate(x, scale_factor=2, mode="bilinear",
                                                    align_corners=False), [_x(1, 2, 3, 3)]),
    "pad": (lambda F, lib, x: F.pad(x, (1, 2, 0, 1), mode="reflect"), [_x(1, 2, 4, 4)]),
    "batch_norm": (lambda F, lib, x, w, b: F.batch_norm(
        x, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64), weight=w, bias=b,
        training=True, momentum=0.2, eps=1e-3), [_x(4, 3, 2), _x(3), _x(3)]),
    "layer_norm": (lambda F, lib, x, w: F.layer_norm(x, (4,), weight=w, eps=1e-3),
                   [_x(2, 3, 4), _x(4)]),
    "group_norm": (lambda F, lib, x: F.group_norm(x, 2, eps=1e-4), [_x(2, 4, 3)]),
    "rms_norm": (lambda F, lib, x, w: F.rms_norm(x, [4], weight=w, eps=1e-6),
                 [_x(2, 3, 4), _x(4)]),
    "dropout_eval": (lambda F, lib, x: F.dropout(x, p=0.5, training=False), [_x(3, 4)]),
    "embedding": (lambda F, lib, i, w: F.embedding(i, w, padding_idx=1),
                  [rng.integers(0, 5, (2, 3)), _x(5, 4)]),
    "one_hot": (lambda F, lib, i: F.one_hot(i, num_classes=6), [rng.integers(0, 5, (4,))]),
    "sdpa": (lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                     scale=0.3),
             [_x(2, 4, 3), _x(2, 4, 3), _x(2, 4, 5)]),
    "cross_entropy": (lambda F, lib, x, t: F.cross_entropy(x, t, label_smoothing=0.1,
                                                           reduction="sum"),
                      _logits_and_labels()),
    "nll_loss": (lambda F, lib, x, t: F.nll_loss(F.log_softmax(x, 1), t, ignore_index=2),
                 _logits_and_labels()),
    "mse_loss": (lambda F, lib, x, y: F.mse_loss(x, y, reduction="none"), [_x(3, 4), _x(3, 4)]),
    "l1_loss": (lambda F, lib, x, y: F.l1_loss(x, y), [_x(3, 4), _x(3, 4)]),
    "smooth_l1_loss": (lambda F, lib, x, y: F.smooth_l1_loss(x, y, beta=0.5),
                       [_x(3, 4), _x(3, 4)]),
    "binary_cross_entropy": (lambda F, lib, p, y: F.binary_cross_entropy(p, y),
                             [_x(3, 4, low=0.05, high=0.95), _x(3, 4, low=0, high=1)]),
    "bce_with_logits": (lambda F, lib, x, y, pw: F.binary_cross_entropy_with_logits(
        x, y, pos_weight=pw), [_x(3, 4), _x(3, 4, low=0, high=1),
                               const(_x(4, low=0.5, high=2))]),
    "kl_div": (lambda F, lib, x, y: F.kl_div(x, y, reduction="batchmean", log_target=True),
               [_x(3, 4, low=-3, high=-0.1), _x(3, 4, low=-3, high=-0.1)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_functional(name):
    call, arrays = CASES[name]
    _compare(call, arrays)


def test_every_listed_function_is_exported():
    for name in F.__all__:
        assert callable(getattr(F, name)), name
    assert set(F.__all__) >= {"relu", "gelu", "softmax", "linear", "conv2d", "cross_entropy",
                              "scaled_dot_product_attention", "embedding", "interpolate"}


def test_dropout_training_flag_and_inplace():
    x = fw.ones(1000)
    assert F.dropout(x, 0.5, training=False) is x
    out = F.dropout(x, 0.5, training=True, inplace=True)
    assert out is x and (x.numpy() == 0).any()


def test_unsupported_arguments_raise_with_a_fix():
    with pytest.raises(UnsupportedError, match="sparse"):
        F.embedding(fw.tensor([0]), fw.randn(3, 2), sparse=True)
    with pytest.raises(UnsupportedError, match="antialias"):
        F.interpolate(fw.randn(1, 1, 4, 4), size=2, mode="bilinear", antialias=True)


def test_utils_clip_grad_is_the_optimizer_one():
    from fw_core.optim import clip_grad_norm_, clip_grad_value_

    assert nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert nn.utils.clip_grad_value_ is clip_grad_value_
    layer = nn.Linear(3, 3)
    layer(fw.randn(4, 3) * 100).sum().backward()
    total = nn.utils.clip_grad_norm_(layer.parameters(), max_norm=1.0)
    assert total.item() > 1.0
    norms = np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum()
                        for p in layer.parameters()))
    assert norms == pytest.approx(1.0, rel=1e-4)
