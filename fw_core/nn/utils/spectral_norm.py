"""Spectral normalisation (Miyato et al., 2018) by a forward pre-hook, as PyTorch's older
``torch.nn.utils.spectral_norm`` / ``remove_spectral_norm``: ``weight = weight_orig / sigma``,
sigma the largest singular value of ``weight_orig`` seen as a matrix (``dim`` first, the other
dimensions flattened), estimated by power iteration on the buffers ``weight_u`` and
``weight_v``: ``n_power_iterations`` steps before each forward in training mode, none in eval
mode. The state-dict keys ``weight_orig``, ``weight_u`` and ``weight_v`` are PyTorch's.

:func:`fw_core.nn.utils.parametrizations.spectral_norm` is the newer form (keys
``parametrizations.weight.original`` and ``parametrizations.weight.0._u`` / ``_v``); the
helpers here serve both.
"""

from __future__ import annotations

__all__ = ["SpectralNorm", "check_power_iterations", "output_dim", "remove_spectral_norm",
           "spectral_norm", "unit_normal", "weight_matrix"]

from ...autograd import no_grad
from ...errors import ArgumentError, InvalidArgumentError, MissingKeyError
from ...ops.linalg_composed import dot, mv
from ...tensor import Tensor
from ..functional import normalize
from ..layers.conv import _ConvNd
from ..module import Module
from ..parameter import Parameter
from .weight_norm import hooks_of, pop_hook


def output_dim(module: Module) -> int:
    """The dimension of ``module.weight`` that indexes its outputs, spectral_norm's default
    ``dim``: 1 for transposed convolutions (their weight is (in, out, ...)), 0 otherwise."""
    return 1 if isinstance(module, _ConvNd) and module._transposed else 0


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix: dimension ``dim`` as the rows, all others flattened."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def check_power_iterations(n_power_iterations: int, op: str) -> None:
    """Raise ArgumentError (a ValueError, as PyTorch's) unless the count is positive."""
    if n_power_iterations <= 0:
        raise ArgumentError("Expected n_power_iterations to be positive, but got "
                            f"n_power_iterations={n_power_iterations}", op=op,
                            hint="pass n_power_iterations=1 or more")


def unit_normal(size: int, like: Tensor, eps: float) -> Tensor:
    """A random unit vector of ``size`` entries, ``like``'s dtype and device."""
    return normalize(like.new_empty(size).normal_(0, 1), dim=0, eps=eps)


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>`` as ``<name>_orig / sigma``
    before each forward (after power-iteration steps in training mode)."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        check_power_iterations(n_power_iterations, "spectral_norm")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(mv(mat.T, u), dim=0, eps=self.eps))
                    u.copy_(normalize(mv(mat, v), dim=0, eps=self.eps))
            # the buffers change in place at the next step; autograd keeps these copies
            u, v = u.clone(), v.clone()
        return weight / dot(u, mv(mat, v))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide the parameter ``name`` by its spectral norm before every forward.

    The parameter moves to ``<name>_orig``; the buffers ``<name>_u`` (rows) and ``<name>_v``
    (columns) hold the singular-vector estimates, started at random unit vectors; ``name``
    becomes a plain attribute. ``dim`` (the output dimension) defaults to 1 for transposed
    convolutions and 0 otherwise. Returns ``module``.

    Raises:
        InvalidArgumentError: (a RuntimeError, as PyTorch's) if ``name`` already has one.
        ArgumentError: (a ValueError) for ``n_power_iterations <= 0`` or a None parameter.
        MissingKeyError: (a KeyError, as PyTorch's) if the module has no parameter ``name``.
    """
    if hooks_of(module, SpectralNorm, name):
        raise InvalidArgumentError(
            f"Cannot register two spectral_norm hooks on the same parameter {name}",
            op="spectral_norm", hint="call remove_spectral_norm first")
    hook = SpectralNorm(name, n_power_iterations, output_dim(module) if dim is None else dim,
                        eps)
    if name not in module._parameters:
        raise MissingKeyError(f"{type(module).__name__} has no parameter {name!r}",
                              op="spectral_norm", hint="name one of its parameters")
    weight = module._parameters[name]
    if weight is None:
        raise ArgumentError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None",
                            op="spectral_norm", hint="apply it to a parameter that is set")
    with no_grad():
        rows, cols = weight_matrix(weight, hook.dim).shape
        u = unit_normal(rows, weight, eps)
        v = unit_normal(cols, weight, eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``name`` is one parameter again, holding
    ``<name>_orig / sigma`` from the current estimates (no further power iteration).

    Raises:
        ArgumentError: (a ValueError, as PyTorch's) when ``name`` has no spectral norm.
    """
    hook = pop_hook(module, SpectralNorm, name, "spectral_norm")
    with no_grad():
        weight = hook.compute_weight(module, do_power_iteration=False)
    for attr in (name, name + "_u", name + "_v", name + "_orig"):
        delattr(module, attr)
    module.register_parameter(name, Parameter(weight.detach()))
    return module
