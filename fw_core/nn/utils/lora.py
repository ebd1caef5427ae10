"""LoRA fine-tuning of a whole model, as PEFT's ``get_peft_model`` / ``merge_and_unload``:
wrap the chosen Linear layers in :class:`fw_core.nn.LoRA` and freeze everything else, save
and load only the adapters, and fold them back into plain Linear layers.

>>> model = apply_lora(model, ["q_proj", "v_proj"], r=8, alpha=16)
>>> optimizer = fw.optim.AdamW([p for p in model.parameters() if p.requires_grad])
>>> fw.save(lora_state_dict(model), "adapter.safetensors")
>>> model = merge_lora(model)                      # Linear layers again, adapters folded in
"""

from __future__ import annotations

__all__ = ["apply_lora", "load_lora_state_dict", "lora_state_dict", "merge_lora"]

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable

from ...errors import ArgumentError, ArgumentTypeError, StateDictError
from ..layers.linear import Linear
from ..layers.lora import LoRA
from ..module import Module

#: what ``target_modules`` may be: names, one regular expression, or ``fn(path, module)``
Targets = Iterable[str] | str | Callable[[str, Module], bool]


def apply_lora(model: Module, target_modules: Targets = ("q_proj", "v_proj"), r: int = 8,
               alpha: float = 16, dropout: float = 0.0) -> Module:
    """Replace the Linear layers ``target_modules`` picks by :class:`~fw_core.nn.LoRA`
    adapters around them, in place, and freeze every other parameter. Returns ``model``.

    Args:
        model: any module; its own root is never replaced (wrap a lone Linear with
            ``fw.nn.LoRA`` directly).
        target_modules: which submodules to adapt, by their ``named_modules`` path:
            a list of names, each matching a path equal to it or ending in ``.name``
            (``"q_proj"`` matches ``layers.3.self_attn.q_proj``); a string, a regular
            expression that must match a whole path (as PEFT treats a string); or a
            predicate ``fn(path, module) -> bool``.
        r, alpha, dropout: each adapter's rank, scale numerator and input dropout.

    A module shared under several paths gets one adapter, seen at each of them. Adapters
    the model has already stay trainable; a second call can add adapters elsewhere.

    Raises:
        ArgumentError: a listed name (or the expression, or the predicate) matches no module
            (the message lists the names of the Linear layers the model has); ``r`` < 1 and
            LoRA's other argument errors. Nothing in the model changes then.
        ArgumentTypeError: a matched module is not a Linear, or is a LoRA already.
    """
    match, names = _matcher(target_modules)
    found = [(path, module) for path, module in _paths(model) if match(path, module)]
    _check_targets(model, found, names, target_modules)
    adapters: dict[int, LoRA] = {}  # built first: a bad r raises before the model changes
    for _, module in found:
        if id(module) not in adapters:
            adapters[id(module)] = LoRA(module, r=r, alpha=alpha, dropout=dropout)
    _freeze_all_but_adapters(model)
    for path, module in found:
        _replace(model, path, adapters[id(module)])
    return model


def lora_state_dict(model: Module) -> OrderedDict:
    """Only the adapters' weights, by their paths in ``model`` (``<path>.lora_A.weight``,
    ``<path>.lora_B.weight``, the keys ``model.state_dict()`` gives them), detached: what a
    fine-tune needs to save."""
    out = OrderedDict()
    for path, adapter in _adapters(model):
        for part in ("lora_A", "lora_B"):
            out[f"{path}.{part}.weight" if path else f"{part}.weight"] = \
                adapter._modules[part].weight.detach()
    return out


def load_lora_state_dict(model: Module, state_dict) -> Module:
    """Copy a :func:`lora_state_dict` into ``model``'s adapters (``model`` having had
    :func:`apply_lora` with the same targets and rank). Returns ``model``.

    Raises:
        StateDictError: keys that are not the model's adapter weights, adapters the state
            dict leaves out, or shapes that differ (a different ``r``).
    """
    expected = lora_state_dict(model)
    missing = [k for k in expected if k not in state_dict]
    unexpected = [k for k in state_dict if k not in expected]
    problems = []
    if missing:
        problems.append(f"missing adapter keys: {', '.join(missing)}")
    if unexpected:
        problems.append(f"keys that are no adapter weight of this model: "
                        f"{', '.join(unexpected)}")
    if problems:
        raise StateDictError(" | ".join(problems), op="load_lora_state_dict",
                             hint="apply_lora(model, ...) with the targets the adapters were "
                             "trained with before loading them")
    model.load_state_dict(state_dict, strict=False)
    return model


def merge_lora(model: Module) -> Module:
    """Fold every adapter into its base weight and put the plain Linear back in its place
    (PEFT's ``merge_and_unload``): the result has no LoRA modules, the same outputs (to
    rounding) and a plain Linear's speed. Works in place; returns the model (the base
    Linear itself when ``model`` is a LoRA). Parameters keep their ``requires_grad``:
    ``model.requires_grad_(True)`` to train all of them again."""
    if isinstance(model, LoRA):
        return _unloaded(model)
    for path, module in list(_paths(model)):
        if isinstance(module, LoRA):
            _replace(model, path, _unloaded(module))
    return model


# -- helpers ---------------------------------------------------------------------------------
def _paths(model: Module):
    """``(path, module)`` of every submodule below the root, each shared module at every
    path, never looking inside an adapter (its lora_A / lora_B are Linear layers too)."""
    def walk(module: Module, prefix: str):
        for name, child in module.named_children():
            path = f"{prefix}.{name}" if prefix else name
            yield path, child
            if not isinstance(child, LoRA):
                yield from walk(child, path)
    return walk(model, "")


def _matcher(targets: Targets):
    """``(match(path, module) -> bool, the names to check one by one or None)``."""
    if isinstance(targets, str):
        pattern = re.compile(targets)
        return (lambda path, module: pattern.fullmatch(path) is not None), None
    if callable(targets):
        return (lambda path, module: bool(targets(path, module))), None
    try:
        names = list(targets)
    except TypeError:
        names = None
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ArgumentTypeError(
            f"target_modules must be module names, a regular expression or a predicate, got "
            f"{targets!r}", op="apply_lora",
            hint='pass e.g. target_modules=["q_proj", "v_proj"]')
    return (lambda path, module: any(_names_path(n, path) for n in names)), names


def _names_path(name: str, path: str) -> bool:
    return path == name or path.endswith("." + name)


def _check_targets(model: Module, found: list, names: list | None, targets: Targets) -> None:
    """Raise before anything changes: a target that matches nothing, or a match that is no
    plain Linear."""
    if names is None:
        unmatched = [] if found else [targets]
    else:
        unmatched = [n for n in names if not any(_names_path(n, p) for p, _ in found)]
    if unmatched:
        linear = [p for p, m in _paths(model) if isinstance(m, (Linear, LoRA))]
        short = list(dict.fromkeys(p.rsplit(".", 1)[-1] for p in linear))
        have = (f"its {len(linear)} Linear layers are named {', '.join(short)} (e.g. "
                f"{linear[0]})" if linear else "it has no Linear layer")
        raise ArgumentError(
            f"target_modules {', '.join(map(repr, unmatched))} matched no module of "
            f"{type(model).__name__}: {have}", op="apply_lora",
            hint="name the Linear layers to adapt as they appear in model.named_modules()")
    for path, module in found:
        if isinstance(module, LoRA):
            raise ArgumentTypeError(f"{path} has a LoRA adapter already", op="apply_lora",
                                    module=path, hint="merge_lora(model) before adding new "
                                    "adapters, or train the ones it has")
        if not isinstance(module, Linear):
            raise ArgumentTypeError(
                f"{path} is a module of type {type(module).__name__}, not a Linear",
                op="apply_lora", module=path,
                hint="target only Linear layers: name them more precisely (e.g. "
                "'self_attn.q_proj' rather than 'self_attn')")


def _replace(model: Module, path: str, new: Module) -> None:
    """Put ``new`` at ``path`` (a dotted path below ``model``) in place of what is there."""
    parent = model
    *ancestors, name = path.split(".")
    for part in ancestors:
        parent = parent._modules[part]
    setattr(parent, name, new)


def _unloaded(adapter: LoRA) -> Linear:
    """``adapter``'s base Linear with the update folded in."""
    if not adapter.merged:
        adapter.merge()
    return adapter.base_layer


def _adapters(model: Module):
    """``(path, adapter)`` of every LoRA in ``model`` (the root included), each once."""
    return [(path, m) for path, m in model.named_modules() if isinstance(m, LoRA)]


def _freeze_all_but_adapters(model: Module) -> None:
    """``requires_grad=False`` for every parameter but the adapters' own."""
    keep = {id(p) for _, a in _adapters(model) for p in (a.lora_A.weight, a.lora_B.weight)}
    for p in model.parameters():
        if id(p) not in keep:
            p.requires_grad_(False)
