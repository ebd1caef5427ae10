"""Modules, losses, optimizers and metrics as data: registered names and constructor arguments.

A module's *config* is the name of its class, the arguments its constructor was called with
(recorded by ``Module.__new__``), and the *changes* made to it since: children replaced, added
or removed, tensors re-created with another shape or dtype, frozen, or tied, and public
attributes set to other values. A fresh module built from the arguments is compared with the
live one to find the changes, so the config rebuilds exactly the module that was saved (as
Keras' ``get_config``/``from_config``, without asking every layer to write one).

Names resolve through :mod:`.names` only: nothing named in a config is ever imported.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import dtypes as _dt
from ..errors import CheckpointError
from ..nn.module import CONSUMED
from ..tensor import Tensor
from .names import Resolver, name_of

MAX_DEPTH = 100
_FRESH_CACHE = 64
_fresh: dict[tuple, _Snapshot] = {}


# -- modules -------------------------------------------------------------------------------------
@dataclass
class _Snapshot:
    """What a module tree looks like, as far as a config can tell: compared fresh vs live."""

    base: str
    tensors: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)  # name -> _comparable(value)
    children: dict = field(default_factory=dict)


_INTERNAL = {"training"}


class Encoder:
    """Writes the config of modules and of the values their constructors took."""

    def __init__(self):
        #: every class and function named so far, so fresh builds find unregistered ones too
        self.seen: dict[str, object] = {}

    def root(self, m) -> dict:
        """The config of a model's module, with the tensors it shares between names."""
        config = self.module(m)
        ties = _ties(m)
        return {**config, "ties": ties} if ties else config

    def module(self, m, depth: int = 0) -> dict:
        """The full config of ``m``: what rebuilds it, with every change since construction."""
        base = self.base(m, depth)
        changes = self._changes(m, self._fresh(base, m), depth)
        return {**base, "changes": changes} if changes else base

    def name(self, obj, what: str) -> str:
        name = name_of(obj, what)
        self.seen[name] = obj
        return name

    def _fresh(self, base: dict, live) -> _Snapshot:
        """What the constructor builds from ``base``, cached (a constructor is deterministic
        up to its random initial values, and building one leaves the random state as it was)."""
        from ..autograd import no_grad
        from ..random import get_rng_state, set_rng_state

        key = _key(base)
        snapshot = _fresh.get((key, type(live)))
        if snapshot is not None:
            return snapshot
        state = get_rng_state()
        try:
            with no_grad():
                module = build(base, Resolver(self.seen))
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(
                f"cannot save {type(live).__name__}: building it again from its constructor "
                f"arguments failed ({type(exc).__name__}: {exc})",
                hint="make the constructor work with the arguments it was given, or give the "
                "class get_config()/from_config()") from exc
        finally:
            set_rng_state(state)
        snapshot = _snapshot(module, self, key)
        if len(_fresh) >= _FRESH_CACHE:
            _fresh.pop(next(iter(_fresh)))
        _fresh[(key, type(live))] = snapshot
        return snapshot

    def base(self, m, depth: int) -> dict:
        """Class and constructor arguments of ``m`` (``get_config()`` when the class has one)."""
        cls = type(m)
        config = {"class": self.name(cls, f"module {cls.__name__}")}
        if hasattr(m, "get_config"):
            settings = m.get_config()
            if not (isinstance(settings, Mapping) and all(isinstance(k, str) for k in settings)):
                raise CheckpointError(f"{cls.__name__}.get_config() returned a "
                                      f"{type(settings).__name__}",
                                      hint="return a dict of constructor arguments by name")
            config["config"] = {k: self.value(v, m, f"get_config()[{k!r}]", depth + 1)
                                for k, v in settings.items()}
            return config
        args, kwargs = m.__dict__.get("_fw_init", ((), {}))
        args, kwargs = _named(cls, args, kwargs)
        if args:
            config["args"] = [self.value(a, m, f"argument {i}", depth + 1)
                              for i, a in enumerate(args)]
        if kwargs:
            config["kwargs"] = {k: self.value(v, m, f"argument {k}", depth + 1)
                                for k, v in kwargs.items()}
        return config

    def value(self, v, owner, what: str, depth: int):
        """A constructor argument or attribute as JSON."""
        from ..nn import Module

        if depth > MAX_DEPTH:
            raise CheckpointError(f"cannot save {type(owner).__name__}: its {what} nests more "
                                  f"than {MAX_DEPTH} levels deep (or contains itself)",
                                  hint="give the class a get_config() returning plain values")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, Module):
            return self.module(v, depth + 1)
        if isinstance(v, (list, tuple)):
            items = [self.value(x, owner, what, depth + 1) for x in v]
            return items if isinstance(v, list) else {"__tuple__": items}
        if isinstance(v, Mapping) and all(isinstance(k, str) for k in v):
            return {"__dict__": [[k, self.value(x, owner, what, depth + 1)]
                                 for k, x in v.items()]}
        if isinstance(v, _dt.DType):
            return {"__dtype__": v.name}
        if v is CONSUMED:
            raise CheckpointError(
                f"cannot save {type(owner).__name__}: its {what} was an iterator (a generator, "
                "say), which its constructor used up", hint="pass a list instead, or give the "
                "class a get_config() returning its arguments")
        if isinstance(v, Tensor) and _is_own_tensor(owner, v):
            return {"__tensor__": {"shape": list(v.shape), "dtype": v.dtype.name}}
        if hasattr(v, "item") and getattr(v, "shape", None) == () and not isinstance(v, Tensor):
            return v.item()  # NumPy scalars
        if isinstance(v, type) or inspect.isfunction(v):
            return {"__object__": self.name(v, f"{what} of {type(owner).__name__}")}
        raise CheckpointError(
            f"cannot save {type(owner).__name__}: its {what} is a {type(v).__name__}, which a "
            "model folder cannot hold", hint="pass numbers, strings, dtypes, modules, classes, "
            "functions or lists/dicts of them to the constructor, or give the class a "
            "get_config() returning such values (and from_config() if cls(**config) is not "
            "how it is built)")

    def _changes(self, live, fresh: _Snapshot, depth: int) -> dict:
        changes: dict = {}
        replace, inside = {}, {}
        for name, child in live._modules.items():
            before = fresh.children.get(name)
            if child is None:
                if before is not None:
                    replace[name] = None
                continue
            child_base = self.base(child, depth + 1)
            if before is None or before.base != _key(child_base):
                replace[name] = self.module(child, depth + 1)
            else:
                sub = self._changes(child, before, depth + 1)
                if sub:
                    inside[name] = sub
        removed = [name for name in fresh.children if name not in live._modules]
        tensors = _tensors(live)
        retyped = {name: desc for name, desc in tensors.items()
                   if fresh.tensors.get(name) != desc}
        retyped.update({name: None for name in fresh.tensors if name not in tensors})
        attributes = {}
        for name, value in _attributes(live).items():
            if fresh.attributes.get(name, _ABSENT) == _comparable(value):
                continue
            attributes[name] = self.value(value, live, f"attribute {name!r}", depth + 1)
        for key, value in (("remove", removed), ("replace", replace), ("tensors", retyped),
                           ("attributes", attributes), ("inside", inside)):
            if value:
                changes[key] = value
        return changes


def _named(cls, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """Arguments by parameter name where the signature allows it, without ``device`` (a model
    folder is loaded on the CPU and moved with ``.to``)."""
    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return list(args), dict(kwargs)
    positional, named = [], {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(value)
        elif name != "device":
            named[name] = value
    return positional, named


def _is_own_tensor(owner, t: Tensor) -> bool:
    """Whether ``t`` became one of ``owner``'s tensors (``Embedding(_weight=...)``): its values
    are in the state dict, so the config records only its shape and dtype."""
    data = t._data
    return any(p is not None and p._data is data for p in (*owner._parameters.values(),
                                                           *owner._buffers.values()))


def _tensors(m) -> dict:
    out = {}
    for name, p in m._parameters.items():
        out[name] = {"kind": "parameter", "shape": list(p.shape), "dtype": p.dtype.name,
                     "requires_grad": bool(p.requires_grad)} if p is not None else \
            {"kind": "parameter"}
    for name, b in m._buffers.items():
        desc = {"kind": "buffer", "persistent": name not in m._non_persistent}
        if b is not None:
            desc.update(shape=list(b.shape), dtype=b.dtype.name)
        out[name] = desc
    return out


def _attributes(m) -> dict:
    """Public plain attributes (private ones are derived state, rebuilt by the constructor)."""
    return {k: v for k, v in vars(m).items() if not k.startswith("_") and k not in _INTERNAL}


_ABSENT = object()


def _comparable(v):
    """An attribute's value in a form that compares by content and holds no large object."""
    if v is None or isinstance(v, (bool, int, float, str, _dt.DType)):
        return (type(v), v)
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(_comparable(x) for x in v))
    if inspect.isfunction(v) or isinstance(v, type):
        return ("object", v)
    if isinstance(v, Tensor):
        return ("tensor", tuple(v.shape), v.dtype.name)
    return ("made by the constructor", type(v))


def _ties(m) -> list[list[str]]:
    """Groups of state-dict names that share one tensor."""
    groups: dict[int, list[str]] = {}
    for key, t in m.state_dict(keep_vars=True).items():
        groups.setdefault(id(t), []).append(key)
    return [g for g in groups.values() if len(g) > 1]


def _key(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


def _snapshot(m, encoder: Encoder, key: str | None = None) -> _Snapshot:
    children = {name: _snapshot(child, encoder) for name, child in m._modules.items()
                if child is not None}
    return _Snapshot(key or _key(encoder.base(m, 1)), _tensors(m),
                     {k: _comparable(v) for k, v in _attributes(m).items()}, children)


# -- rebuilding ----------------------------------------------------------------------------------
def build(config, resolver: Resolver, depth: int = 0):
    """The module a config describes (parameters freshly initialised: load the state dict
    next), with the ties of a root config applied.

    Raises:
        CheckpointError: the config is malformed, names what ``resolver`` cannot find, or its
            constructor refuses the arguments.
    """
    from ..nn import Module

    decode = _Decoder(resolver)
    if not isinstance(config, dict) or "class" not in config:
        raise _damaged(f"a module config is a {type(config).__name__}, not a dict with 'class'")
    cls = resolver.find(config["class"], "module class", Module)
    try:
        if "config" in config:
            settings = decode.mapping(config["config"], depth)
            module = cls.from_config(settings) if hasattr(cls, "from_config") else cls(**settings)
        else:
            module = cls(*decode.items(config.get("args", []), "args", depth),
                         **decode.mapping(config.get("kwargs", {}), depth))
    except CheckpointError:
        raise
    except Exception as exc:
        raise CheckpointError(f"rebuilding {config['class']} from the checkpoint's arguments "
                              f"failed: {type(exc).__name__}: {exc}",
                              hint="the model folder does not fit this version of the class: "
                              "load it where it was saved, or save it again") from exc
    _apply(module, config.get("changes", {}), decode, depth)
    for group in config.get("ties", []) if depth == 0 else ():
        _tie(module, group)
    return module


_CHANGE_KEYS = {"remove", "replace", "tensors", "attributes", "inside"}


def _apply(module, changes, decode: _Decoder, depth: int) -> None:
    if not isinstance(changes, dict) or not changes.keys() <= _CHANGE_KEYS:
        raise _damaged(f"the changes of a {type(module).__name__} are malformed")
    for name in decode.items(changes.get("remove", []), "remove", depth):
        if not isinstance(name, str) or name not in module._modules:
            raise _damaged(f"it removes child {name!r}, which {type(module).__name__} lacks")
        delattr(module, name)
    for name, child in decode.mapping(changes.get("replace", {}), depth, raw=True).items():
        module.add_module(name, None if child is None else build(child, decode.resolver,
                                                                 depth + 1))
    for name, desc in decode.mapping(changes.get("tensors", {}), depth, raw=True).items():
        _set_tensor(module, name, desc)
    for name, value in decode.mapping(changes.get("attributes", {}), depth).items():
        declared = getattr(type(module), name, None)
        if name.startswith("_") or callable(declared) or isinstance(declared, property):
            raise _damaged(f"it sets {name!r} of {type(module).__name__}, which is not a plain "
                           "public attribute")
        setattr(module, name, value)
    for name, sub in decode.mapping(changes.get("inside", {}), depth, raw=True).items():
        child = module._modules.get(name)
        if child is None:
            raise _damaged(f"it changes child {name!r}, which {type(module).__name__} lacks")
        _apply(child, sub, decode, depth + 1)


def _set_tensor(module, name: str, desc) -> None:
    """Re-create one parameter or buffer slot as described, in its place (zeros: the values
    come from the state dict next)."""
    from ..nn import Parameter

    if desc is None:
        module._parameters.pop(name, None)
        module._buffers.pop(name, None)
        return
    if not isinstance(desc, dict):
        raise _damaged(f"tensor {name!r} is described by a {type(desc).__name__}")
    tensor = _zeros(desc) if "shape" in desc else None
    if desc.get("kind") == "parameter":
        module._buffers.pop(name, None)
        module._parameters[name] = None if tensor is None else Parameter(
            tensor, requires_grad=desc.get("requires_grad", True) is True)
    elif desc.get("kind") == "buffer":
        module._parameters.pop(name, None)
        module.register_buffer(name, tensor, persistent=desc.get("persistent", True) is True)
    else:
        raise _damaged(f"tensor {name!r} has kind {desc.get('kind')!r}")


def _zeros(desc: dict):
    from ..ops.creation import zeros

    shape = desc.get("shape")
    if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool)
                                            and 0 <= d < 2**62 for d in shape)):
        raise _damaged(f"a tensor has shape {shape!r}")
    return zeros(*shape, dtype=_dtype(desc.get("dtype")))


def _dtype(name):
    if not isinstance(name, str) or name not in {d.name for d in _dt.ALL}:
        raise _damaged(f"unknown dtype {name!r}")
    return _dt.from_name(name)


def _tie(root, group) -> None:
    if not (isinstance(group, list) and len(group) > 1
            and all(isinstance(k, str) for k in group)):
        raise _damaged("a group of tied tensors is malformed")
    state = root.state_dict(keep_vars=True)
    missing = [k for k in group if k not in state]
    if missing:
        raise _damaged(f"it ties {', '.join(missing)}, which the module lacks")
    shared = state[group[0]]
    for key in group[1:]:
        path, _, name = key.rpartition(".")
        owner = root
        for part in path.split(".") if path else ():
            owner = owner._modules[part]
        table = owner._parameters if name in owner._parameters else owner._buffers
        table[name] = shared


def _damaged(what: str) -> CheckpointError:
    return CheckpointError(f"the model's architecture in the checkpoint is damaged ({what})",
                           hint="restore the folder from a backup, or save the model again")


class _Decoder:
    """Turns JSON written by :class:`Encoder` back into values."""

    def __init__(self, resolver: Resolver):
        self.resolver = resolver

    def value(self, v, depth: int):
        if depth > MAX_DEPTH:
            raise _damaged(f"it nests more than {MAX_DEPTH} levels deep")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return self.items(v, "a list", depth)
        if not isinstance(v, dict):
            raise _damaged(f"a value of type {type(v).__name__}")
        if "class" in v:
            return build(v, self.resolver, depth + 1)
        if len(v) != 1:
            raise _damaged(f"an unknown entry {sorted(v)!r}")
        ((tag, inner),) = v.items()
        if tag == "__tuple__":
            return tuple(self.items(inner, tag, depth))
        if tag == "__dict__":
            if not (isinstance(inner, list) and all(isinstance(p, list) and len(p) == 2
                                                    and isinstance(p[0], str) for p in inner)):
                raise _damaged("a dict entry is not a [name, value] pair")
            return {k: self.value(x, depth + 1) for k, x in inner}
        if tag == "__dtype__":
            return _dtype(inner)
        if tag == "__tensor__" and isinstance(inner, dict):
            return _zeros(inner)
        if tag == "__object__":
            return self.resolver.find(inner, "argument")
        raise _damaged(f"an unknown entry {tag!r}")

    def items(self, v, what: str, depth: int) -> list:
        if not isinstance(v, list):
            raise _damaged(f"{what} is not a list")
        return [self.value(x, depth + 1) for x in v]

    def mapping(self, v, depth: int, raw: bool = False) -> dict:
        if not (isinstance(v, dict) and all(isinstance(k, str) for k in v)):
            raise _damaged("a map of names is malformed")
        return dict(v) if raw else {k: self.value(x, depth + 1) for k, x in v.items()}
