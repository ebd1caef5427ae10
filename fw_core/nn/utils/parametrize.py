"""Parametrizations, as ``torch.nn.utils.parametrize``: a module's tensor computed on every
access from an unconstrained original (``weight = parametrization(original)``), so a
constraint (orthogonal, symmetric, normalised, ...) holds after every optimizer step.

``register_parametrization(module, "weight", p)`` moves the parameter to
``module.parametrizations.weight.original`` (``original0``, ``original1``, ... when
``p.right_inverse`` returns a tuple) and gives the module a class of its own,
``Parametrized<Class>``, whose ``weight`` property evaluates the chain. State-dict keys are
PyTorch's, so parametrized checkpoints load either way.
"""

from __future__ import annotations

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

from collections.abc import Sequence
from contextlib import contextmanager

from ...autograd import no_grad
from ...errors import ArgumentError, ArgumentTypeError, InvalidArgumentError, ShapeError
from ...tensor import Tensor
from ..layers.container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

#: nesting depth of ``cached()``; while > 0, each parametrized tensor is computed once
_cache_depth = [0]
_cache: dict = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, at its first access,
    and reused (e.g. a weight read at every step of an RNN loop)."""
    _cache_depth[0] += 1
    try:
        yield
    finally:
        _cache_depth[0] -= 1
        if not _cache_depth[0]:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original(s) they start
    from (``original``, or ``original0``, ``original1``, ... when the first parametrization's
    ``right_inverse`` gives several tensors)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with no_grad():
            try:
                new = first.right_inverse(original) if hasattr(first, "right_inverse") \
                    else original
            except NotImplementedError:  # as PyTorch's: an identity right_inverse
                new = original
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.dtype != original.dtype or
                               tuple(new.shape) != tuple(original.shape)):
                raise ShapeError(f"right_inverse must keep the tensor's dtype and shape: got "
                                 f"{new.dtype.name} {tuple(new.shape)} from {original.dtype.name} "
                                 f"{tuple(original.shape)}", op="register_parametrization",
                                 hint="return a tensor like the original, or pass unsafe=True")
            if tuple(new.shape) == tuple(original.shape) and new.dtype == original.dtype:
                with no_grad():
                    original.copy_(new)  # the Parameter keeps its identity (optimizers)
            elif isinstance(original, Parameter):
                original = Parameter(new.detach(), original.requires_grad)
            else:
                original = new.detach()
            if isinstance(original, Parameter):
                self.original = original
            else:
                self.register_buffer("original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ArgumentTypeError(f"right_inverse returned a {type(value).__name__} "
                                            f"at position {i}, not a tensor",
                                            op="register_parametrization",
                                            hint="return a tensor or a tuple of tensors")
                tensor = value.detach()
                if isinstance(original, Parameter):
                    setattr(self, f"original{i}", Parameter(tensor, original.requires_grad))
                else:
                    self.register_buffer(f"original{i}", tensor)
        if not unsafe:
            self._check_consistent(original)

    def _check_consistent(self, original: Tensor) -> None:
        value = self()
        if not isinstance(value, Tensor):
            raise ArgumentTypeError(f"a parametrization must return a tensor, got "
                                    f"{type(value).__name__}", op="register_parametrization",
                                    hint="return one tensor from forward")
        if value.dtype != original.dtype or tuple(value.shape) != tuple(original.shape):
            raise ShapeError(f"registering a parametrization may not change the tensor's dtype "
                             f"or shape: {original.dtype.name} {tuple(original.shape)} became "
                             f"{value.dtype.name} {tuple(value.shape)}",
                             op="register_parametrization",
                             hint="keep them, or pass unsafe=True")

    def _originals(self) -> tuple:
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self):
        modules = list(self)
        x = modules[0](*self._originals())
        for module in modules[1:]:
            x = module(x)
        return x

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so the chain gives ``value``, through each parametrization's
        ``right_inverse`` from last to first (untracked)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise InvalidArgumentError(
                        f"parametrization {type(module).__name__} does not implement "
                        "right_inverse.", op="parametrize",
                        hint="define right_inverse(value) on it to allow assignment")
                value = module.right_inverse(value)
            values = (value,) if self.is_tensor else tuple(value)
            if len(values) != self.ntensors:
                raise ShapeError(f"right_inverse returned {len(values)} tensors, expected "
                                 f"{self.ntensors}", op="parametrize",
                                 hint="return as many tensors as at registration")
            for original, new in zip(self._originals(), values):
                original.copy_(new)


def _property(tensor_name: str) -> property:
    def get(self):
        chain = self.parametrizations[tensor_name]
        if not _cache_depth[0]:
            return chain()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = chain()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    return property(get, set_, doc=f"``{tensor_name}``, computed by its parametrizations")


def _parametrized_setattr(self, name: str, value) -> None:
    """Assigning a parametrized name sets its originals through right_inverse."""
    if name in type(self)._fw_parametrized:
        object.__setattr__(self, name, value)  # the property's setter
    else:
        Module.__setattr__(self, name, value)


def _make_parametrized(module: Module) -> None:
    cls = type(module)
    new = type(f"Parametrized{cls.__name__}", (cls,),
               {"_fw_parametrized": set(), "_fw_original_class": cls,
                "__setattr__": _parametrized_setattr})
    module.__class__ = new
    module.parametrizations = ModuleDict()


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Compute ``module.<tensor_name>`` as ``parametrization(original)`` from now on.

    The first parametrization of a tensor moves it to
    ``module.parametrizations[tensor_name].original`` (through ``right_inverse`` if the
    parametrization has one, which may also split it into ``original0``, ``original1``, ...);
    later ones are appended to the chain. Returns ``module``.

    Raises:
        ArgumentError: if the module has no parameter or buffer ``tensor_name``.
        ShapeError: if the parametrization changes dtype or shape (unless ``unsafe``).
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            original = getattr(module, tensor_name)
            value = parametrization(original)
            if not isinstance(value, Tensor) or value.dtype != original.dtype or \
                    tuple(value.shape) != tuple(original.shape):
                raise ShapeError("registering a parametrization may not change the tensor's "
                                 "dtype or shape", op="register_parametrization",
                                 hint="keep them, or pass unsafe=True")
        chain.append(parametrization)
        _cache.clear()
        return module
    is_param = tensor_name in module._parameters and module._parameters[tensor_name] is not None
    is_buffer = tensor_name in module._buffers and module._buffers[tensor_name] is not None
    if not (is_param or is_buffer):
        raise ArgumentError(f"Module '{type(module).__name__}' does not have a parameter, a "
                            f"buffer, or a parametrized element with name '{tensor_name}'",
                            op="register_parametrization",
                            hint="name one of its parameters or buffers, e.g. 'weight'")
    original = getattr(module, tensor_name)
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not is_parametrized(module):
        _make_parametrized(module)
    delattr(module, tensor_name)
    module.parametrizations[tensor_name] = chain
    type(module)._fw_parametrized.add(tensor_name)
    setattr(type(module), tensor_name, _property(tensor_name))
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (on ``tensor_name``, if given)."""
    chains = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(chains, ModuleDict) or not hasattr(type(module), "_fw_parametrized"):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo :func:`register_parametrization` for ``tensor_name``: it becomes a plain
    parameter (or buffer) again, holding the parametrized value with ``leave_parametrized``
    or the original otherwise. When no parametrization is left the module gets its class back.

    Raises:
        ArgumentError: if the tensor is not parametrized, or ``leave_parametrized=False``
            with several originals (which cannot become one tensor).
    """
    if not is_parametrized(module, tensor_name):
        raise ArgumentError(f"Module {type(module).__name__} does not have a parametrization "
                            f"on {tensor_name}", op="remove_parametrizations",
                            hint="check is_parametrized(module, name) first")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                original.copy_(value)
    else:
        if not leave_parametrized:
            raise ArgumentError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                                "tensor that is parametrized in terms of a sequence of tensors.",
                                op="remove_parametrizations", hint="pass leave_parametrized=True")
        with no_grad():
            value = getattr(module, tensor_name)
        first = chain.original0
        original = (Parameter(value.detach(), first.requires_grad)
                    if isinstance(first, Parameter) else value.detach())
    cls = type(module)
    delattr(cls, tensor_name)
    cls._fw_parametrized.discard(tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not len(module.parametrizations):
        delattr(module, "parametrizations")
        module.__class__ = cls._fw_original_class
    _cache.clear()
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered."""
    return getattr(type(module), "_fw_original_class", type(module)) \
        if is_parametrized(module) else type(module)
