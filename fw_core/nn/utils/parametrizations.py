"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``, each registered
through :mod:`fw_core.nn.utils.parametrize` with PyTorch's state-dict keys:

- ``weight_norm``: ``parametrizations.<name>.original0`` (the magnitude g) and ``original1``
  (the direction v);
- ``spectral_norm``: ``parametrizations.<name>.original`` and the power-iteration buffers
  ``parametrizations.<name>.0._u`` / ``._v``;
- ``orthogonal``: ``parametrizations.<name>.original`` and, with the trivialization,
  ``parametrizations.<name>.0.base``.
"""

from __future__ import annotations

from functools import partial

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

from ...autograd import no_grad
from ...errors import ArgumentError, IndexOutOfRangeError, ShapeError
from ...ops.linalg_composed import dot, mv
from ...tensor import Tensor
from ..functional import normalize
from ..module import Module
from . import parametrize
from .orthogonal_maps import Orthogonal, check_map
from .spectral_norm import check_power_iterations, output_dim, unit_normal, weight_matrix
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
    module.register_load_state_dict_pre_hook(partial(_weight_norm_from_hook_keys, name))
    return module


def _weight_norm_from_hook_keys(name: str, _module, state_dict, prefix, *_):
    """Load a state dict of the older weight_norm (``<name>_g``, ``<name>_v``) into this one's
    originals, as torch does."""
    g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
    if g in state_dict and v in state_dict:
        state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
        state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)


class _SpectralNorm(Module):
    """weight / sigma, sigma estimated by power iteration on the buffers ``_u`` and ``_v``
    (``n_power_iterations`` steps at each evaluation in training mode, none in eval mode); a
    1-d weight is divided by its norm."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexOutOfRangeError(f"Dimension out of range (expected to be in range of "
                                       f"[-{ndim}, {ndim - 1}] but got {dim})",
                                       op="spectral_norm",
                                       hint=f"pass dim in [-{ndim}, {ndim - 1}]: the weight's "
                                            "output dimension")
        check_power_iterations(n_power_iterations, "spectral_norm")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = weight_matrix(weight, self.dim)
            rows, cols = mat.shape
            self.register_buffer("_u", unit_normal(rows, mat, eps))
            self.register_buffer("_v", unit_normal(cols, mat, eps))
            self._power_method(mat, 15)  # start from estimates, not random vectors

    def _power_method(self, mat: Tensor, steps: int) -> None:
        with no_grad():
            for _ in range(steps):
                self._u.copy_(normalize(mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(mv(mat.T, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        mat = weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        # the buffers change in place at the next step; autograd keeps these copies
        u, v = self._u.clone(), self._v.clone()
        return weight / dot(u, mv(mat, v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _tensor_named(module: Module, name: str, op: str) -> Tensor:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ArgumentError(f"Module '{type(module).__name__}' has no parameter or buffer with "
                            f"name '{name}'", op=op,
                            hint="name one of its parameters or buffers, e.g. 'weight'")
    return weight


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrise ``module.<name>`` as W / sigma(W) (Miyato et al., 2018), sigma the largest
    singular value of W seen as a matrix (``dim`` first, the rest flattened), estimated by
    ``n_power_iterations`` steps of power iteration each time the weight is read in training
    mode (15 at registration). ``dim`` defaults to 1 for transposed convolutions, else 0.
    Returns ``module``.

    Raises:
        ArgumentError: (a ValueError, as PyTorch's) if there is no tensor ``name`` or
            ``n_power_iterations <= 0``.
        IndexOutOfRangeError: (an IndexError) if ``dim`` is not a dimension of the weight.
    """
    weight = _tensor_named(module, name, "spectral_norm")
    dim = output_dim(module) if dim is None else dim
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Reparametrise the matrix (or batch of matrices, the last two dimensions) ``name`` as an
    orthogonal one, Q^T Q = I (Q Q^T = I when wide), as PyTorch's.

    ``orthogonal_map``: ``"matrix_exp"`` (exp of a skew-symmetric matrix built from the
    original's lower triangle; the default for square matrices) or ``"householder"`` (a
    product of reflections; the default otherwise). ``"cayley"`` raises UnsupportedError (fw
    has no linear solve yet). With ``use_trivialization`` (default) Q is ``base @ map(X)``,
    ``base`` a buffer holding the initial orthogonal matrix: the weight itself if orthogonal,
    else its QR factor Q. Returns ``module``.

    Raises:
        ArgumentError: (a ValueError, as PyTorch's) for no tensor ``name``, fewer than 2
            dimensions, or an unknown map.
        UnsupportedError: (a NotImplementedError) for ``"cayley"``.
    """
    weight = _tensor_named(module, name, "orthogonal")
    if weight.ndim < 2:
        raise ShapeError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.", op="orthogonal",
                         hint="apply it to a weight with at least 2 dimensions")
    orthogonal_map = check_map(orthogonal_map, weight)
    parametrize.register_parametrization(
        module, name, Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True)
    return module
