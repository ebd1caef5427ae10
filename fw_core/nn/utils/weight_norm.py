"""Weight normalisation (Salimans & Kingma, 2016) by a forward pre-hook, as PyTorch's older
``torch.nn.utils.weight_norm`` / ``remove_weight_norm``: ``weight = g * v / ||v||`` with the
magnitude ``weight_g`` and direction ``weight_v`` as the parameters (PyTorch's state-dict
keys), the weight recomputed before every forward.

:func:`fw_core.nn.utils.parametrizations.weight_norm` is the newer form of the same
reparametrisation (keys ``parametrizations.weight.original0/1``).
"""

from __future__ import annotations

__all__ = ["hooks_of", "norm_except_dim", "pop_hook", "remove_weight_norm", "weight_norm",
           "weight_norm_of"]

from ...errors import ArgumentError, InvalidArgumentError
from ...ops.reduction import norm
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (one norm per slice along ``dim``); ``dim=-1`` gives the norm of the whole tensor (0-d),
    as PyTorch's ``norm_except_dim``."""
    if dim == -1:
        return norm(v, pow)
    others = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return norm(v, pow, others, keepdim=True) if others else abs(v)  # 1-d: one entry a slice


def weight_norm_of(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """g * v / norm_except_dim(v, 2, dim): PyTorch's ``_weight_norm``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before each forward."""

    def __init__(self, name: str, dim: int):
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        return weight_norm_of(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                              self.dim)

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def hooks_of(module: Module, kind: type, name: str) -> list:
    """The (key, hook) pairs of ``module``'s forward pre-hooks of class ``kind`` that
    reparametrise ``name``."""
    return [(key, hook) for key, hook in module._forward_pre_hooks.items()
            if isinstance(hook, kind) and hook.name == name]


def pop_hook(module: Module, kind: type, name: str, reparametrisation: str):
    """Unregister and return ``module``'s forward pre-hook of class ``kind`` on ``name``.

    Raises:
        ArgumentError: (a ValueError, as PyTorch's) when there is none.
    """
    hooks = hooks_of(module, kind, name)
    if not hooks:
        raise ArgumentError(f"{reparametrisation} of '{name}' not found in "
                            f"{type(module).__name__}", op=f"remove_{reparametrisation}",
                            hint=f"apply {reparametrisation} first")
    key, hook = hooks[0]
    del module._forward_pre_hooks[key]
    return hook


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace the parameter ``name`` by ``name_g`` (its norm per slice along ``dim``, or of
    the whole tensor for ``dim=None``) and ``name_v`` (the tensor itself); ``name`` becomes a
    plain attribute recomputed before every forward. Returns ``module``.

    Raises:
        FwError: (a RuntimeError, as PyTorch's) when ``name`` already has a weight-norm hook.
    """
    if hooks_of(module, WeightNorm, name):
        raise InvalidArgumentError(
            f"Cannot register two weight_norm hooks on the same parameter {name}",
            op="weight_norm", hint="call remove_weight_norm first")
    dim = -1 if dim is None else dim
    hook = WeightNorm(name, dim)
    weight = module._parameters[name]
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``name`` is one parameter again, holding the current
    g * v / ||v||. Returns ``module``.

    Raises:
        ArgumentError: (a ValueError, as PyTorch's) when ``name`` has no weight norm.
    """
    hook = pop_hook(module, WeightNorm, name, "weight_norm")
    weight = hook.compute_weight(module).detach()
    module.__dict__.pop(name, None)
    del module._parameters[name + "_g"]
    del module._parameters[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module
