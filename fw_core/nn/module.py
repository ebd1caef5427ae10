"""Module: the unit of models — owns parameters, buffers and child modules, and names them.

Every op a module's forward runs records the module's dotted path (``encoder.layers.0.fc1``,
the same names ``state_dict`` uses), so tensors, errors and tools can say where they came from.
"""

from __future__ import annotations

import inspect
import itertools
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator

from .. import capture
from .._state import state
from ..errors import ArgumentTypeError, FwError, StateDictError
from ..tensor import Tensor
from .parameter import Parameter


class _Consumed:
    """Stands for a constructor argument that was an iterator (read once, by the constructor)."""

    def __repr__(self) -> str:
        return "<an iterator, consumed by the constructor>"

    def __reduce__(self) -> str:
        return "CONSUMED"  # copies and pickles stay the one sentinel


CONSUMED = _Consumed()

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])

#: the module tree's version: set to a new number whenever any module gains or loses a child,
#: so cached paths are recomputed. New numbers come from ``_tree_changes`` (``next`` on it is
#: atomic), never from ``+= 1``, whose read and write two threads can interleave: a stale
#: cache could then match a version number that comes back.
_tree_changes = itertools.count(1)
_tree_version = [0]


def _tree_changed() -> None:
    _tree_version[0] = next(_tree_changes)


class _Handle:
    """Returned by hook registration; ``remove()`` unregisters."""

    def __init__(self, hooks: dict, key: int):
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


def _bad_call(module, args, kwargs, exc: TypeError) -> ArgumentTypeError:
    """The error for calling ``module`` with arguments its forward does not take."""
    from ..ops.meta import describe

    name = type(module).__name__
    try:
        signature = f"forward{inspect.signature(module.forward)}"
    except (TypeError, ValueError):
        signature = "forward(...)"
    return ArgumentTypeError(
        f"called with arguments its {signature} does not take ({exc})", op=name,
        module=module.path or None, inputs=describe(args, **kwargs) or "no arguments",
        hint=f"call the module as its forward is defined: {name}(...)({signature[8:-1]})")


class Module:
    """Base class of all layers and models: subclass it, create children and parameters in
    ``__init__``, compute in ``forward``, call the module (not ``forward``) to run it.

    >>> class MLP(fw.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1, self.fc2 = fw.nn.Linear(4, 8), fw.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(fw.relu(self.fc1(x)))
    """

    def __new__(cls, *args, **kwargs):
        module = super().__new__(cls)
        # the constructor's arguments: with the class name, what model folders store to
        # rebuild the module without pickling it (fw_core.io.config). An iterator is used up
        # by the constructor, so only the fact that one was passed is kept.
        module.__dict__["_fw_init"] = (
            tuple(CONSUMED if isinstance(a, Iterator) else a for a in args),
            {k: CONSUMED if isinstance(v, Iterator) else v for k, v in kwargs.items()})
        return module

    def __init__(self):
        d = self.__dict__
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = {}
        d["_forward_hooks"] = {}
        d["_load_state_dict_pre_hooks"] = {}
        d["training"] = True
        d["_fw_parent"] = None
        d["_fw_name"] = ""
        d["_fw_path"] = ("", -1)

    # -- attribute registration ---------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise FwError(f"{type(self).__name__}.__init__ must call super().__init__() before "
                          f"assigning {name!r}", hint="add super().__init__() as its first line")
        params, buffers, modules = d["_parameters"], d["_buffers"], d["_modules"]
        if isinstance(value, Parameter):
            buffers.pop(name, None)
            modules.pop(name, None)
            d.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            d.pop(name, None)
            modules[name] = value
            value.__dict__["_fw_parent"] = weakref.ref(self)
            value.__dict__["_fw_name"] = name
            _tree_changed()
        elif value is None and name in params:
            params[name] = None
        elif name in buffers and (value is None or isinstance(value, Tensor)):
            buffers[name] = value
        else:
            params.pop(name, None)
            if modules.pop(name, None) is not None:
                _tree_changed()
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            entries = d.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if name in d[table]:
                del d[table][name]
                _tree_changed()
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a declared but absent one like a disabled bias)."""
        if param is None:
            self._parameters[name] = None
            self.__dict__.pop(name, None)
        else:
            setattr(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics, masks).
        Non-persistent buffers are left out of ``state_dict``."""
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is None:
            self._modules[name] = None
        else:
            setattr(self, name, module)

    register_module = add_module

    # -- where am I ---------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """Dotted path from the root module ("" for the root), as in ``named_modules``."""
        cached, version = self._fw_path
        current = _tree_version[0]  # read before the walk: a change during it voids the result
        if version == current:
            return cached
        parts = []
        module = self
        seen = set()
        while module is not None and id(module) not in seen:
            seen.add(id(module))
            parent_ref = module._fw_parent
            parent = parent_ref() if parent_ref is not None else None
            if parent is None or module._fw_name not in parent._modules or \
                    parent._modules[module._fw_name] is not module:
                break
            parts.append(module._fw_name)
            module = parent
        path = ".".join(reversed(parts))
        self.__dict__["_fw_path"] = (path, current)
        return path

    # -- running ------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise FwError(f"{type(self).__name__} has no forward()",
                      hint="define forward(self, ...) in your Module subclass")

    def __call__(self, *args, **kwargs):
        previous = state.module_path
        state.module_path = self.path
        capture.module_called(self)
        try:
            if self._forward_pre_hooks:
                for hook in list(self._forward_pre_hooks.values()):
                    changed = hook(self, args)
                    if changed is not None:
                        args = changed if isinstance(changed, tuple) else (changed,)
            try:
                out = self.forward(*args, **kwargs)
            except TypeError as exc:
                if exc.__traceback__.tb_next is not None:  # raised inside forward: not ours
                    raise
                raise _bad_call(self, args, kwargs, exc) from None
            if self._forward_hooks:
                for hook in list(self._forward_hooks.values()):
                    changed = hook(self, args, out)
                    if changed is not None:
                        out = changed
            return out
        finally:
            state.module_path = previous

    def register_forward_pre_hook(self, hook: Callable) -> _Handle:
        """``hook(module, args)`` before forward; returning a value replaces the args."""
        key = id(hook) ^ len(self._forward_pre_hooks)
        self._forward_pre_hooks[key] = hook
        return _Handle(self._forward_pre_hooks, key)

    def register_forward_hook(self, hook: Callable) -> _Handle:
        """``hook(module, args, output)`` after forward; returning a value replaces the output."""
        key = id(hook) ^ len(self._forward_hooks)
        self._forward_hooks[key] = hook
        return _Handle(self._forward_hooks, key)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> _Handle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before :meth:`load_state_dict` reads this module's
        entries (keys starting with ``prefix``), as torch's: it may rename or convert them in
        ``state_dict``; strings it appends to ``error_msgs`` fail the load."""
        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", {})
        key = id(hook) ^ len(hooks)
        hooks[key] = hook
        return _Handle(hooks, key)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False
                                           ) -> _Handle:
        """torch's older form: ``hook(state_dict, prefix, ...)`` unless ``with_module``."""
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self.register_load_state_dict_pre_hook(lambda _module, *args: hook(*args))

    # -- traversal ----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True
                      ) -> Iterator[tuple[str, Module]]:
        """``(path, module)`` for this module and every descendant, depth first."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                               remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, child in self._modules.items():
            if child is not None:
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, table: str, prefix: str, recurse: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for path, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{path}.{name}" if path else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """``(path, parameter)`` pairs, each shared parameter once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant, then on this module (e.g. custom init)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and state ----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active, batch norm updates running stats)."""
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient."""
        from ..autograd import no_grad

        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.zero_()

    def to(self, *args, **kwargs) -> Module:
        """Move parameters and buffers to a device and/or floating dtype, in place
        (parameters keep their identity, so optimizers built before still hold them)."""
        from ..ops.creation import to as convert

        def moved(t: Tensor) -> Tensor:
            kw = dict(kwargs)
            positional = list(args)
            if not t.is_floating_point():  # dtype changes apply to floating tensors only
                positional = [a for a in positional if not _is_dtype(a)]
                kw.pop("dtype", None)
            return convert(t.detach(), *positional, **kw)

        for module in self.modules():
            for p in module._parameters.values():
                if p is not None:
                    new = moved(p)
                    p._data, p._device = new._data, new._device
                    if p.grad is not None:
                        g = moved(p.grad)
                        p.grad = g
            for name, b in module._buffers.items():
                if b is not None:
                    module._buffers[name] = moved(b)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, index: int = 0) -> Module:
        return self.to(f"cuda:{index}")

    def float(self) -> Module:
        from .. import dtypes

        return self.to(dtypes.float32)

    def double(self) -> Module:
        from .. import dtypes

        return self.to(dtypes.float64)

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Every parameter and persistent buffer by dotted name (detached unless keep_vars)."""
        out = OrderedDict()
        for path, module in self.named_modules(prefix=prefix.rstrip(".")):
            for name, p in module._parameters.items():
                if p is not None:
                    out[f"{path}.{name}" if path else name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent:
                    out[f"{path}.{name}" if path else name] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        With ``assign=True`` (PyTorch's), each parameter and buffer takes the state dict
        tensor's storage instead (its dtype too; moved to the parameter's device if needed):
        nothing is copied, and the module shares memory with ``state_dict``. Parameters keep
        their identity and ``requires_grad``.

        Raises:
            StateDictError: with ``strict``, listing missing and unexpected keys; always for
                entries whose shape differs (naming the key and both shapes).
        """
        from ..autograd import no_grad
        from ..ops.creation import as_tensor

        state_dict = self._after_load_pre_hooks(state_dict, strict)
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        misshaped = []
        for key, target in own.items():
            if key in state_dict:
                value = state_dict[key]
                shape = tuple(getattr(value, "shape", ()))
                if shape != tuple(target.shape):
                    misshaped.append(f"{key}: checkpoint {shape} vs model {tuple(target.shape)}")
        if misshaped or (strict and (missing or unexpected)):
            lines = []
            if missing:
                lines.append("missing keys: " + ", ".join(missing))
            if unexpected:
                lines.append("unexpected keys: " + ", ".join(unexpected))
            if misshaped:
                lines.append("shape mismatches: " + "; ".join(misshaped))
            raise StateDictError(
                f"state dict does not fit {type(self).__name__}: " + " | ".join(lines),
                hint="load a state dict saved from the same architecture (same layer names and "
                "sizes), or pass strict=False to load only the keys that match",
            )
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    value = as_tensor(state_dict[key]).to(target.device)
                    if assign:
                        target._data = value._data
                    else:
                        target.copy_(value)
        return IncompatibleKeys(missing, unexpected)

    def _after_load_pre_hooks(self, state_dict, strict: bool):
        """``state_dict`` as the load-state-dict pre-hooks of this module and its descendants
        leave it (a copy; the caller's is not changed)."""
        hooked = [(path, m) for path, m in self.named_modules()
                  if m.__dict__.get("_load_state_dict_pre_hooks")]
        if not hooked:
            return state_dict
        state_dict, missing, unexpected, errors = OrderedDict(state_dict), [], [], []
        for path, module in hooked:
            for hook in list(module._load_state_dict_pre_hooks.values()):
                hook(module, state_dict, f"{path}." if path else "", {}, strict, missing,
                     unexpected, errors)
        if errors:
            raise StateDictError(f"state dict does not fit {type(self).__name__}: "
                                 + " | ".join(errors),
                                 hint="load a state dict saved from the same architecture")
        return state_dict

    # -- pickling (Model.save): parents are weak references, hooks belong to the session ------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update(_fw_parent=None, _fw_path=("", -1), _forward_pre_hooks={},
                     _forward_hooks={}, _load_state_dict_pre_hooks={})
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for child in self._modules.values():
            if child is not None:
                child.__dict__["_fw_parent"] = weakref.ref(self)
        _tree_changed()

    # -- printing -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """One line of this module's settings, shown in its repr (override in layers)."""
        return ""

    def num_parameters(self, trainable_only: bool = False) -> int:
        return sum(p.numel() for p in self.parameters()
                   if p.requires_grad or not trainable_only)

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = list(self._modules.items())
        count = self.num_parameters()
        counted = f"  # {count:,} params" if count and (children or not extra) else ""
        if not children:
            return f"{type(self).__name__}({extra}){counted}"
        lines = [f"{type(self).__name__}({extra}{counted}"]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        lines.append(")")
        return "\n".join(lines)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))


def _is_dtype(value) -> bool:
    from .. import dtypes

    if isinstance(value, dtypes.DType):
        return True
    return isinstance(value, str) and value in dtypes._BY_NAME


