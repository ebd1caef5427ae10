"""InstanceNorm1d/2d/3d and LocalResponseNorm, as PyTorch's. InstanceNorm starts with
affine=False and track_running_stats=False; its running statistics (when tracked) are updated
in training mode and used in evaluation mode, and ``num_batches_tracked`` is kept for the state
dict but never counted, as in PyTorch."""

from __future__ import annotations

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm"]

from ..._state import state as _state
from ...errors import ShapeError
from ...ops.meta import describe
from ..module import Module
from ..norm_composed import instance_norm, local_response_norm
from ._check import check_size
from .normalization import _BatchNorm


class _InstanceNorm(_BatchNorm):
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)

    def forward(self, x):
        name = type(self).__name__
        batched = self._spatial + 2
        if getattr(x, "ndim", None) not in (batched - 1, batched):
            raise ShapeError(f"expected {batched - 1}D or {batched}D input (got "
                             f"{getattr(x, 'ndim', '?')}D input)", op=name,
                             module=_state.module_path or None, inputs=describe((x,)),
                             hint="pass (C, *spatial) or (N, C, *spatial)")
        unbatched = x.ndim == batched - 1
        channels = x.shape[0 if unbatched else 1]
        if channels != self.num_features and self.affine:
            raise ShapeError(f"expected input's size at dim={0 if unbatched else 1} to match "
                             f"num_features ({self.num_features}), but got: {channels}.",
                             op=name, module=_state.module_path or None, inputs=describe((x,)),
                             hint=f"build the layer with num_features={channels}")
        if unbatched:
            x = x.unsqueeze(0)
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalise each sample's channel of (N, C, L) (or (C, L)) over L.

    Args: as BatchNorm1d, with affine=False and track_running_stats=False by default."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalise each sample's channel of (N, C, H, W) (or (C, H, W)) over H, W."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalise each sample's channel of (N, C, D, H, W) (or (C, D, H, W)) over D, H, W."""

    _spatial = 3


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels) ^ beta.

    Shape: (N, C, *) with at least one spatial dimension -> same."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = check_size("LocalResponseNorm", "size", size)
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
