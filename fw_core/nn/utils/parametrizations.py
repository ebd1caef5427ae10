"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``
registered through :mod:`fw_core.nn.utils.parametrize` (state-dict keys
``parametrizations.<name>.original0`` for the magnitude g and ``original1`` for the
direction v, as PyTorch's)."""

from __future__ import annotations

__all__ = ["weight_norm"]

from ..module import Module
from . import parametrize
from .weight_norm import norm_except_dim, weight_norm_of


class _WeightNorm(Module):
    """weight = g * v / ||v|| (norm per slice along ``dim``; the whole tensor for None)."""

    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise ``module.<name>`` as g * v / ||v|| (Salimans & Kingma, 2016), g and v
    the parametrization's originals. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
