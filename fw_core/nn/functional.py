"""The functional forms of the layers, with PyTorch's names and arguments (``torch.nn.functional``).

Each function is an fw op (``fw.ops.get(name)`` holds its contract, its gradient and where its
linear approximation breaks): the convolutions, pools and losses already take PyTorch's
arguments and are re-exported as they are; the others get a thin front that adapts the call to
PyTorch's signature (``input``, ``inplace``, ``training``, ...). The losses PyTorch builds from
other ops (huber, margin, triplet, Poisson, Gaussian, CTC ...) are compositions of fw ops here too
(:mod:`fw_core.ops.loss_composed`, :mod:`fw_core.ops.loss_margin`, :mod:`fw_core.ops.ctc`),
differentiated through those ops.

``inplace=True`` follows PyTorch's wording, "can optionally do the operation in-place": fw
writes into the input when autograd does not record it, and computes out of place otherwise (a
recorded tensor cannot be overwritten without breaking its backward).

>>> import fw_core.nn.functional as F
>>> F.relu(fw.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "bilinear",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d", "conv2d",
           "conv_transpose2d", "cross_entropy", "dropout", "elu", "embedding", "gelu",
           "group_norm", "hardtanh", "interpolate", "kl_div", "l1_loss", "layer_norm",
           "leaky_relu", "linear", "log_softmax", "max_pool2d", "mish", "mse_loss", "nll_loss",
           "one_hot", "pad", "relu", "relu6", "rms_norm", "scaled_dot_product_attention",
           "sigmoid", "silu", "smooth_l1_loss", "softmax", "softmin", "softplus", "tanh",
           # losses composed of other ops
           "cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
           "huber_loss", "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss",
           # activations composed of other ops
           "celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "logsigmoid", "normalize",
           "prelu", "selu", "softshrink", "softsign", "tanhshrink", "threshold",
           # random, embedding and distance functions composed of other ops
           "alpha_dropout", "cosine_similarity", "dropout1d", "dropout2d", "dropout3d",
           "embedding_bag", "feature_alpha_dropout", "gumbel_softmax", "pairwise_distance",
           # convolutions, pools and resampling in 1, 2 and 3 d
           "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool3d", "conv3d",
           "conv_transpose1d", "conv_transpose3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "max_pool1d", "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           # shuffles and normalisations composed of other ops
           "instance_norm", "local_response_norm", "pixel_shuffle", "pixel_unshuffle",
           # im2col and sampling grids composed of other ops
           "affine_grid", "fold", "grid_sample", "unfold"]

import warnings

from .._state import state
from ..errors import UnsupportedError
from ..ops import attention as _attention
from ..ops import elementwise as _ew
from ..ops import linalg as _linalg
from ..ops import nn as _nn
from ..ops import normalization as _normalization
from ..ops import rearrange as _rearrange
from ..ops import resample as _resample
from ..ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ..ops.cross_entropy import cross_entropy, nll_loss
from ..ops.ctc import ctc_loss
from ..ops.distance import cosine_similarity, pairwise_distance
from ..ops.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    kl_div,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ..ops.loss_composed import gaussian_nll_loss, huber_loss, poisson_nll_loss
from ..ops.loss_margin import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ..ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ..tensor import Tensor
from ..tensor_methods import maybe_inplace
from .activations_composed import (
    celu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    logsigmoid,
    normalize,
    prelu,
    selu,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from .embedding_composed import embedding, embedding_bag
from .im2col import fold, unfold
from .norm_composed import instance_norm, local_response_norm
from .random_composed import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
    gumbel_softmax,
)
from .sampling_grid import affine_grid, grid_sample
from .shuffle_composed import pixel_shuffle, pixel_unshuffle


# -- activations ----------------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), elementwise."""
    return maybe_inplace(input, _ew.relu(input), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6), elementwise."""
    return maybe_inplace(input, _ew.hardtanh(input, 0.0, 6.0), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise."""
    return maybe_inplace(input, _ew.leaky_relu(input, negative_slope), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    return maybe_inplace(input, _ew.elu(input, alpha), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x); ``approximate="tanh"`` uses the tanh approximation."""
    return _ew.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (swish)."""
    return maybe_inplace(input, _ew.silu(input), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return maybe_inplace(input, _ew.mish(input), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return _ew.softplus(input, beta, threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clipped to [min_val, max_val]."""
    return maybe_inplace(input, _ew.hardtanh(input, min_val, max_val), inplace)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _ew.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return _ew.tanh(input)


def _legacy_softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"implicit dimension choice for {name} is deprecated (as in PyTorch); pass "
                  "dim=", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, *, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (``dim=None`` picks PyTorch's legacy dim, warning);
    ``dtype`` converts the input first."""
    if dim is None:
        dim = _legacy_softmax_dim("softmax", input.ndim)
    return _nn.softmax(input, dim, dtype)


def softmin(input: Tensor, dim: int | None = None, *, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``: the smallest entries get the largest probabilities."""
    if dim is None:
        dim = _legacy_softmax_dim("softmin", input.ndim)
    return _nn.softmax(-input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, *, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    if dim is None:
        dim = _legacy_softmax_dim("log_softmax", input.ndim)
    return _nn.log_softmax(input, dim, dtype)


# -- linear ---------------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x W^T + b: (*, in_features) -> (*, out_features), weight (out_features, in_features)."""
    return _linalg.linear(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """y_k = x1^T W_k x2 + b_k: (*, in1), (*, in2) -> (*, out) with weight (out, in1, in2)."""
    out = _linalg.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


# -- resampling and padding -----------------------------------------------------------------------
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W) to
    ``size`` or by ``scale_factor``; see :func:`fw_core.ops.resample.interpolate` for modes.

    Raises:
        UnsupportedError: for ``antialias=True`` (not implemented).
    """
    if antialias:
        raise UnsupportedError("interpolate: antialias=True is not implemented",
                               op="interpolate", module=state.module_path or None,
                               hint="downsample with avg_pool2d first, or pass antialias=False")
    return _resample.interpolate(input, size, scale_factor, mode, align_corners,
                                 recompute_scale_factor)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad) / 2 dimensions: ``pad = (left, right, top, bottom, ...)``, from
    the last dimension backwards; mode "constant", "reflect", "replicate" or "circular"."""
    return _rearrange.pad(input, pad, mode, value)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 (*, num_classes) with a 1 at each index (num_classes=-1: max index + 1)."""
    return _rearrange.one_hot(tensor, num_classes)


# -- normalisation, dropout, embedding, attention -------------------------------------------------
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Per-channel normalisation of (N, C, *) by batch (training, updating the running
    statistics in place) or running statistics (evaluation)."""
    return _normalization.batch_norm(input, running_mean, running_var, weight, bias, training,
                                     momentum, eps)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalisation of each sample over its trailing ``normalized_shape`` dimensions."""
    return _normalization.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalisation of (N, C, *) over groups of C / num_groups channels."""
    return _normalization.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing ``normalized_shape`` dimensions."""
    return _normalization.rms_norm(input, normalized_shape, weight, eps)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero elements with probability ``p`` and scale the rest by 1 / (1 - p) (when
    ``training``; the identity otherwise)."""
    out = _nn.dropout(input, p, training)
    return out if out is input else maybe_inplace(input, out, inplace)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v: (..., L, E), (..., S, E), (..., S, Ev) -> (..., L, Ev).
    A bool ``attn_mask`` is True where attention is allowed; a float one is added;
    ``enable_gqa`` lets key and value have fewer heads than query (grouped-query attention)."""
    return _attention.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                   is_causal, scale, enable_gqa)

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from ..names import guard as _guard  # noqa: E402

_guard(__name__, "nn.functional")
