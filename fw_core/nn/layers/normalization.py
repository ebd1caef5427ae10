"""Normalisation layers: BatchNorm1d/2d (with running statistics), LayerNorm, GroupNorm,
RMSNorm. Affine parameters start at weight = 1, bias = 0, as in PyTorch."""

from __future__ import annotations

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm", "RMSNorm"]

import numbers

from ... import capture
from ... import dtypes as _dt
from ...errors import ShapeError
from ...ops.creation import ones, tensor, zeros
from ...ops.meta import argument_error, describe
from ...ops.normalization import batch_norm, group_norm, layer_norm, rms_norm
from .. import init
from ..module import Module
from ._check import check_features, check_ndim, check_range, check_size
from ._params import affine_parameters, reset_affine


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()
    _layout = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        name = type(self).__name__
        shown = {"num_features": num_features, "eps": eps, "momentum": momentum}
        self.num_features = check_size(name, "num_features", num_features, **shown)
        self.eps = check_range(name, "eps", eps, 0.0, **shown)
        self.momentum = momentum if momentum is None else check_range(
            name, "momentum", momentum, 0.0, 1.0, hint="momentum is the weight of each new batch "
            "in the running statistics: between 0 and 1 (PyTorch's default 0.1), or None for a "
            "cumulative average", **shown)
        self.affine = affine
        self.track_running_stats = track_running_stats
        affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 tensor(0, dtype=_dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        reset_affine(self)

    def forward(self, x):
        check_ndim(type(self).__name__, x, self._dims, self._layout)
        check_features(type(self).__name__, x, self.num_features, "num_features", dim=1)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            count = self.num_batches_tracked
            capture.host_effect("num_batches_tracked += 1", lambda: count.add_(1))
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return batch_norm(x, self.running_mean if keep else None,
                          self.running_var if keep else None, self.weight, self.bias,
                          use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L): each channel is normalised by the batch's
    mean and (biased) variance while training, by running estimates in evaluation mode.

    Args:
        num_features: C.
        eps: added to the variance.
        momentum: weight of each new batch in the running estimates (None: a cumulative
            average over all batches seen).
        affine: learn a per-channel scale ``weight`` and shift ``bias`` (keyword ``bias=False``
            keeps only the scale).
        track_running_stats: keep ``running_mean``/``running_var`` buffers (else batch
            statistics are used in evaluation mode too).

    Shape: (N, C) or (N, C, L) -> same.
    """

    _dims = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) images (see BatchNorm1d for the arguments).

    Shape: (N, C, H, W) -> same.
    """

    _dims = (4,)
    _layout = "(N, C, H, W)"


def _as_shape(layer: str, normalized_shape) -> tuple[int, ...]:
    sizes = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) or not \
        hasattr(normalized_shape, "__iter__") else tuple(normalized_shape)
    return tuple(check_size(layer, "normalized_shape", s, normalized_shape=normalized_shape)
                 for s in sizes)


def _check_trailing(layer: str, x, normalized_shape) -> None:
    n = len(normalized_shape)
    if tuple(x.shape[x.ndim - n:]) != normalized_shape or x.ndim < n:
        from ..._state import state

        raise ShapeError(f"expected an input ending in normalized_shape={normalized_shape}, got "
                         f"shape {tuple(x.shape)}", op=layer, module=state.module_path or None,
                         inputs=describe((x,)),
                         hint="normalize over the input's trailing dimensions: build the layer "
                         f"with normalized_shape={tuple(x.shape[x.ndim - n:])} or reshape")


class LayerNorm(Module):
    """Normalise each sample over its trailing ``normalized_shape`` dimensions (mean 0,
    variance 1), then scale by ``weight`` and shift by ``bias`` (elementwise, that shape).

    Shape: (*, *normalized_shape) -> same.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape("LayerNorm", normalized_shape)
        self.eps = check_range("LayerNorm", "eps", eps, 0.0)
        self.elementwise_affine = elementwise_affine
        affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, x):
        if tuple(x.shape[x.ndim - len(self.normalized_shape):]) != \
                self.normalized_shape:
            _check_trailing("LayerNorm", x, self.normalized_shape)
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Split the C channels into ``num_groups`` groups and normalise each sample's group (mean
    0, variance 1), then scale and shift per channel.

    Shape: (N, C, *) -> same.

    Raises:
        ShapeError: when num_groups does not divide num_channels (at construction).
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        shown = {"num_groups": num_groups, "num_channels": num_channels}
        check_size("GroupNorm", "num_groups", num_groups, **shown)
        check_size("GroupNorm", "num_channels", num_channels, **shown)
        if num_channels % num_groups:
            raise argument_error("GroupNorm", f"num_channels={num_channels} must be divisible "
                                 f"by num_groups={num_groups}",
                                 "pick a number of groups that divides the channels",
                                 error=ShapeError, **shown)
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        affine_parameters(self, num_channels, affine, bias, device, dtype)

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, x):
        check_features("GroupNorm", x, self.num_channels, "num_channels", dim=1)
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the trailing ``normalized_shape`` dimensions, times
    ``weight``. ``eps=None`` uses the machine epsilon of the input's dtype, as PyTorch.

    Shape: (*, *normalized_shape) -> same.
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape("RMSNorm", normalized_shape)
        self.eps = eps if eps is None else check_range("RMSNorm", "eps", eps, 0.0)
        self.elementwise_affine = elementwise_affine
        affine_parameters(self, self.normalized_shape, elementwise_affine, False, device, dtype)
        del self.bias  # RMSNorm has no shift at all (not even a None entry), as in PyTorch

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, x):
        if tuple(x.shape[x.ndim - len(self.normalized_shape):]) != \
                self.normalized_shape:
            _check_trailing("RMSNorm", x, self.normalized_shape)
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
