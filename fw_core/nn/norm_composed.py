"""``instance_norm`` and ``local_response_norm`` as PyTorch's, composed of other fw ops:
instance norm is batch norm over a (1, N * C, *) view, with the running statistics repeated per
sample and averaged back (PyTorch's own construction, so the running-statistics update is its
update); local response norm averages the squares over neighbouring channels with avg_pool."""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["instance_norm", "local_response_norm"]

from ..errors import ShapeError
from ..ops import normalization as _normalization
from ..ops import rearrange as _rearrange
from ..ops.meta import argument_error, describe
from ..ops.pooling import avg_pool2d, avg_pool3d


def _channel_view(t, ndim: int):
    return t.reshape(1, -1, *([1] * (ndim - 2)))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each sample's channel of (N, C, *) over its spatial elements; with
    ``use_input_stats=False`` by ``running_mean``/``running_var`` instead. Given running
    statistics and ``use_input_stats``, they are updated in place with the batch's mean over
    samples of each instance's mean and unbiased variance, as PyTorch."""
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise ShapeError(f"instance_norm expects an input (N, C, *), got shape {shape}",
                         op="instance_norm", inputs=describe((input,)),
                         hint="add the batch dimension with x.unsqueeze(0)")
    if (running_mean is None) != (running_var is None):
        raise argument_error("instance_norm", "running_mean and running_var must be given "
                             "together", "pass both, or neither", values=(input,),
                             running_mean=running_mean, running_var=running_var)
    if not use_input_stats and running_mean is None:
        raise argument_error("instance_norm", "running_mean and running_var must be defined "
                             "when use_input_stats=False",
                             "pass the running statistics, or use_input_stats=True",
                             values=(input,), use_input_stats=use_input_stats)
    n, c = shape[0], shape[1]
    spatial = 1
    for s in shape[2:]:
        spatial *= s
    if use_input_stats and spatial <= 1:
        raise ShapeError(f"expected more than 1 spatial element when training, got input size "
                         f"{list(shape)}", op="instance_norm", inputs=describe((input,)),
                         hint="instance statistics need several elements per channel: use "
                         "larger inputs, or use_input_stats=False")
    folded = input.reshape(1, n * c, *shape[2:])
    mean_rep = var_rep = None
    if running_mean is not None:
        mean_rep = running_mean.detach().repeat(n)
        var_rep = running_var.detach().repeat(n)
    out = _normalization.batch_norm(folded, mean_rep, var_rep, None, None, use_input_stats,
                                    momentum, eps)
    if running_mean is not None and use_input_stats:
        running_mean.copy_(mean_rep.reshape(n, c).mean(0))
        running_var.copy_(var_rep.reshape(n, c).mean(0))
    out = out.reshape(shape)
    if weight is not None:
        out = out * _channel_view(weight, len(shape))
    if bias is not None:
        out = out + _channel_view(bias, len(shape))
    return out


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels) ^ beta, for (N, C, *)
    with at least one spatial dimension (PyTorch's construction)."""
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise ShapeError(f"Expected 3D or higher dimensionality input (got {len(shape)} "
                         f"dimensions)", op="local_response_norm", inputs=describe((input,)),
                         hint="pass (N, C, L) or (N, C, H, W, ...)")
    if input.numel() == 0:
        return input
    div = input * input
    if len(shape) == 3:
        div = _rearrange.pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        div = div.reshape(shape[0], 1, shape[1], shape[2], -1)
        div = _rearrange.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(shape)
    return input / (div * alpha + k) ** beta
