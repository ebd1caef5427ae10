"""Optimizer: the base every optimizer shares (parameter groups, state, state dicts).

A subclass declares its hyperparameters (``defaults``), checks them (``_check``), makes each
parameter's state (``_init_state``) and names its update op with the state and scalars it takes
(``update_op``, ``update_state``, ``_scalars``, ``_step_scalars``), or writes ``_update`` whole
(SGD, whose buffer appears at its first step); this class does the rest. Updates write the
parameters' raw arrays in place (``out=``), so a parameter keeps its identity, its storage
and every reference to it, and each element is read and written as few times as possible. The
state (``exp_avg``, ``momentum_buffer``, ...) is held in fw tensors, so ``state_dict()`` holds
tensors that ``fw.save`` can write.
"""

from __future__ import annotations

import numbers
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import capture
from .. import dtypes as _dt
from .._state import state as _grad_state
from ..autograd import enable_grad
from ..device import get as _get_device
from ..errors import (
    ArgumentError,
    ArgumentTypeError,
    DeviceError,
    DTypeError,
    FwError,
    ShapeError,
    StateDictError,
)
from ..memory import track as _track
from ..ops.meta import describe, located
from ..tensor import Tensor
from ..tensor_methods import assign_, bump_version

_wrap = Tensor._wrap


class Optimizer:
    """Base class of all optimizers: parameter groups, per-parameter state, state dicts.

    Args:
        params: an iterable of tensors (leaves; usually ``model.parameters()``), of
            ``(name, tensor)`` pairs (``model.named_parameters()``), or of dicts, each a
            parameter group ``{"params": [...], "lr": 0.1, ...}`` whose options override
            ``defaults``.
        defaults: the hyperparameters, used where a group does not set them.

    Attributes:
        param_groups: list of dicts, each with ``"params"`` and every hyperparameter. A
            learning-rate scheduler changes ``group["lr"]`` here.
        state: per-parameter state, ``state[param] -> dict`` (e.g. ``{"step", "exp_avg"}``).

    Raises:
        ArgumentError: an empty parameter list, a parameter in two groups, a bad hyperparameter.
        FwError: something that is not a tensor, or a non-leaf tensor, given as a parameter.
    """

    # state entries that are scalars kept as float32 CPU tensors (see step_state), restored as
    # such by load_state_dict
    _scalar_state: tuple[str, ...] = ("step",)
    #: the update op (fw_core.ops.optim) the default :meth:`_update` runs per parameter, and
    #: the state keys it takes after the parameter and gradient, in order
    update_op: str = ""
    update_state: tuple[str, ...] = ()

    def __init__(self, params: Iterable, defaults: dict[str, Any]):
        name = type(self).__name__
        if isinstance(params, Tensor) or not isinstance(params, Iterable):
            raise ArgumentTypeError(
                "expects an iterable of tensors or dicts, got "
                + ("one Tensor" if isinstance(params, Tensor) else type(params).__name__),
                op=name, inputs=describe(params=params), hint="wrap it in a list: [t]")
        if isinstance(params, (set, frozenset)):
            raise _set_of_parameters(name, params)
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._step_calls = 0
        groups = list(params)
        if not groups:
            raise ArgumentError(
                "got an empty parameter list", op=name, inputs=describe(params=groups),
                hint="pass model.parameters() of a model that has parameters, or a non-empty "
                "list of tensors created with requires_grad=True",
            )
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- what a subclass provides ---------------------------------------------------------------
    def _check(self, group: dict[str, Any]) -> None:
        """Raise ArgumentError for a hyperparameter of ``group`` this optimizer cannot use."""

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict) -> None:
        """Fill the empty ``state`` of parameter ``p`` before its first update."""

    def _scalars(self, group: dict[str, Any]) -> dict[str, Any]:
        """The attributes of :attr:`update_op` that every parameter of ``group`` shares."""
        raise NotImplementedError(f"{type(self).__name__} declares no update op scalars")

    def _state_keys(self, group: dict[str, Any]) -> tuple[str | None, ...]:
        """The state keys :attr:`update_op` takes for ``group``; None where this group keeps
        no such state (``max_exp_avg_sq`` without amsgrad). By default :attr:`update_state`."""
        return self.update_state

    def _step_scalars(self, step: float, state: dict, group: dict[str, Any]) -> dict[str, Any]:
        """The attributes of :attr:`update_op` that move with parameter's step counter (just
        advanced to ``step``); by default the step itself."""
        return {"step": step}

    def _update(self, group: dict[str, Any]) -> None:
        """Update the parameters of one group that have a gradient (grad mode is off): by
        default, advance each one's step counter and run :attr:`update_op` on it."""
        scalars = self._scalars(group)
        keys = self._state_keys(group)
        for p, g, state in self._with_grad(group):
            step = advance(state["step"])
            arrays = (p._data, g, *(None if k is None else state[k]._data for k in keys))
            run_update(self.update_op, p, arrays,
                       {**scalars, **self._step_scalars(step, state, group)})

    # -- the public API -------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; parameters whose ``.grad`` is None are
        skipped (their state does not advance).

        Args:
            closure: optional function that clears the gradients, recomputes the loss, calls
                ``backward()`` and returns the loss; it runs with gradients on.

        Returns:
            The closure's loss, or None.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        capture.optimizer_step(f"{type(self).__name__}.step()", self._update_all, self)
        return loss

    def _update_all(self) -> None:
        previous = _grad_state.grad_enabled
        _grad_state.grad_enabled = False
        try:
            for group in self.param_groups:
                self._update(group)
        finally:
            _grad_state.grad_enabled = previous
        self._step_calls += 1

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: set it to None (the default: frees the memory, and
        the next backward writes a fresh one) or, with ``set_to_none=False``, fill it with 0."""
        capture.host_effect(f"{type(self).__name__}.zero_grad()",
                            lambda: self._zero_grad(set_to_none),
                            clears_grads_of=[p for g in self.param_groups for p in g["params"]]
                            if set_to_none else ())

    def _zero_grad(self, set_to_none: bool) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad.detach_()
                    assign_(grad, 0)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, with its own hyperparameters (the others from
        ``defaults``): e.g. unfreeze a layer during fine-tuning.

        >>> opt.add_param_group({"params": head.parameters(), "lr": 1e-3})
        """
        try:
            self.param_groups.append(self._new_group(param_group))
        except FwError as err:
            raise located(err, type(self).__name__, param_group=param_group) from None

    def _new_group(self, param_group) -> dict[str, Any]:
        """``param_group`` checked and completed from ``defaults`` (not yet added)."""
        if not isinstance(param_group, dict):
            raise ArgumentTypeError(f"a parameter group must be a dict, got "
                                    f"{type(param_group).__name__}",
                                    hint='write {"params": [...], "lr": ...}')
        if "params" not in param_group:
            raise ArgumentError("a parameter group needs a 'params' entry",
                                hint='write {"params": [...], "lr": ...}')
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise _set_of_parameters(type(self).__name__, params)
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:
            if len(names) != len(params):
                raise ArgumentError("some parameters are given with names and some without",
                                    hint="pass all as (name, tensor) pairs or all as tensors")
            params = [p[1] for p in params]
            group["param_names"] = names
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise ArgumentTypeError(f"parameter {i} of the group is a {type(p).__name__}, "
                                        "not a Tensor", inputs=describe(params),
                                        hint="pass model.parameters() or a list of tensors")
            if p._node is not None:
                raise ArgumentError(
                    f"parameter {i} (shape {tuple(p.shape)}) is not a leaf tensor: it was "
                    f"computed by {p.op}, so updating it would not change what it came from",
                    inputs=describe(params),
                    hint="optimize the leaf tensors it was computed from, or detach it: "
                    "p = x.detach().requires_grad_()",
                )
        if len({id(p) for p in params}) != len(params):
            raise ArgumentError("a parameter group lists the same parameter twice",
                                inputs=describe(params),
                                hint="remove the duplicates (each would be updated twice)")
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ArgumentError("some parameters appear in more than one parameter group",
                                inputs=describe(params),
                                hint="give each parameter to one group only")
        named = "param_names" in group
        if self.param_groups and named != ("param_names" in self.param_groups[0]):
            raise ArgumentError("all parameter groups must be given with names or all without",
                                hint="use named_parameters() everywhere, or parameters()")
        group["params"] = params
        self._check(group)
        return group

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are numbered in group order; the parameters themselves are not included (a
        model's state dict holds them). The state tensors are the live ones, as in PyTorch:
        save the dict (``fw.save``) or ``copy.deepcopy`` it to keep a snapshot.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        packed_state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": packed_state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from :meth:`state_dict`: hyperparameters per group and per-parameter
        state (copied, and cast to each parameter's dtype and device).

        Raises:
            StateDictError: the dict is not an optimizer state dict, its groups do not match
                this optimizer's in number or size, it lacks hyperparameters this optimizer
                needs (a state dict of another optimizer class), or a state tensor's shape
                differs from its parameter's.
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            raise StateDictError(f"{name}.load_state_dict expects a dict with 'state' and "
                                 "'param_groups'",
                                 hint="pass what optimizer.state_dict() returned (a model's "
                                 "state dict goes to model.load_state_dict)")
        saved = state_dict["param_groups"]
        if not isinstance(saved, (list, tuple)) or not all(
                isinstance(g, dict) and "params" in g for g in saved):
            raise StateDictError("the state dict's 'param_groups' must be a list of dicts, each "
                                 "with 'params'", hint="pass what optimizer.state_dict() "
                                 "returned, unmodified")
        if len(saved) != len(self.param_groups):
            raise StateDictError(
                f"the state dict has {len(saved)} parameter group(s), this {name} has "
                f"{len(self.param_groups)}",
                hint="build the optimizer with the same parameter groups as the one saved",
            )
        for i, (group, saved_group) in enumerate(zip(self.param_groups, saved)):
            if len(group["params"]) != len(saved_group["params"]):
                raise StateDictError(
                    f"parameter group {i} has {len(group['params'])} parameters here but "
                    f"{len(saved_group['params'])} in the state dict",
                    hint="build the model and optimizer exactly as when the state was saved",
                )
            missing = sorted(k for k in self.defaults
                             if k not in saved_group and k not in IMPLEMENTATION_FLAGS)
            if missing:
                raise StateDictError(
                    f"parameter group {i} of the state dict lacks {', '.join(missing)}, which "
                    f"{name} needs: it was probably saved by another optimizer class",
                    hint=f"load it into the optimizer class that saved it, not {name}",
                )
        id_map = {}
        for group, saved_group in zip(self.param_groups, saved):
            id_map.update(zip(saved_group["params"], group["params"]))
        new_state: defaultdict[Tensor, dict] = defaultdict(dict)
        for key, values in state_dict["state"].items():
            param = id_map.get(key)
            if param is None:
                raise StateDictError(f"the state dict has state for parameter {key!r}, which "
                                     "no parameter group lists",
                                     hint="the state dict is corrupt or was edited; re-save it")
            new_state[param] = {k: _restore(v, param, key, k, self._scalar_state)
                                for k, v in values.items()}
        groups = []
        for group, saved_group in zip(self.param_groups, saved):
            restored = {k: v for k, v in saved_group.items() if k != "params"}
            restored["params"] = group["params"]
            for flag in IMPLEMENTATION_FLAGS:
                if flag in self.defaults:
                    restored.setdefault(flag, self.defaults[flag])
            if "param_names" in group and "param_names" not in restored:
                restored["param_names"] = group["param_names"]
            self._check(restored)
            groups.append(restored)
        self.state = new_state
        self.param_groups = groups

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {group[k]}" for k in sorted(group) if k != "params")
        return "\n".join(lines) + "\n)"

    # -- helpers for subclasses -----------------------------------------------------------------
    def _with_grad(self, group: dict[str, Any]) -> list[tuple[Tensor, Any, dict]]:
        """``(param, raw gradient, state)`` for each parameter of ``group`` that has a gradient,
        checked to match the parameter's shape, dtype and device; new state is initialised."""
        out = []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            g = grad._data
            data = p._data
            if g.shape != data.shape or g.dtype != data.dtype or grad._device is not p._device:
                raise _grad_mismatch(self, p, grad)
            state = self.state[p]
            if not state:
                self._init_state(p, group, state)
            out.append((p, g, state))
        return out

    def __getstate__(self):
        """What pickling keeps: the options, the per-parameter state and the step count."""
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups, "_step_calls": self._step_calls}


# -- state tensors --------------------------------------------------------------------------------
def zeros_state(p: Tensor, fill: float = 0.0) -> Tensor:
    """A state tensor shaped like ``p`` on its device, filled with ``fill``."""
    data = p._device.xp.full(p._data.shape, fill, dtype=p._data.dtype)
    return _track(_wrap(data, p._device), "optimizer_state")


def copy_state(p: Tensor, array) -> Tensor:
    """A state tensor holding a copy of the raw ``array`` (on ``p``'s device)."""
    return _track(_wrap(p._device.xp.array(array, copy=True), p._device), "optimizer_state")


def step_state(value: float = 0.0) -> Tensor:
    """A step counter (or another per-parameter scalar PyTorch keeps as a tensor: NAdam's
    ``mu_product``, ASGD's ``eta`` and ``mu``): a float32 0-d tensor on the CPU, as PyTorch
    keeps it, so reading it never waits for an accelerator and it rounds as there."""
    return _wrap(np.full((), value, dtype=np.float32), _get_device("cpu"))


def advance(step: Tensor) -> float:
    """Add 1 to a step counter in place; return its new value."""
    data = step._data
    data += 1
    return float(data)


def _update_kernel(p: Tensor, op_name: str):
    """The device's kernel for an optimizer update op (fw_core.ops.optim) for parameter ``p``:
    the fused one where its plugin has it, a CPU fallback (reported once) otherwise."""
    from ..ops.dispatch import missing_kernel
    from ..ops.registry import OPS

    op = OPS[op_name]
    device = p._device
    return device.kernels.get(op) or missing_kernel(op, device)


def run_update(op_name: str, p: Tensor, arrays: tuple, attrs: dict) -> None:
    """Run update op ``op_name`` (fw_core.ops.optim) on parameter ``p``'s raw arrays, in place,
    and mark ``p`` modified; active inspectors see it as the op it is. While a compiled step
    replays, the call is only handed to :func:`fw_core.capture.update`: the plan runs it."""
    if _grad_state.update_calls is not None and capture.update(op_name, p, arrays, attrs):
        bump_version(p)
        return
    _update_kernel(p, op_name)(*arrays, **attrs)
    bump_version(p)
    if _grad_state.inspectors:
        from ..inspectors import notify_op
        from ..ops.registry import OPS

        device = p._device
        tensors = tuple(None if a is None else Tensor._wrap(a, device) for a in arrays)
        notify_op(OPS[op_name], tensors, attrs, p)


# Flags torch.optim optimizers take that choose an implementation, not a result: a for-loop
# or multi-tensor kernels (foreach), one fused kernel (fused), CUDA-graph-safe state
# (capturable), autograd through the step (differentiable). fw's updates are in-place kernels
# whose results do not depend on these, so the optimizers take the ones their PyTorch
# namesakes take, record them in their groups (as PyTorch does, so state dicts look alike) and
# ignore them. A state dict without them (saved before fw took them) still loads.
IMPLEMENTATION_FLAGS = ("foreach", "fused", "capturable", "differentiable")


def implementation_flags(foreach, differentiable: bool, **more) -> dict[str, Any]:
    """The implementation flags an optimizer takes, as entries of its defaults: ``foreach``,
    ``differentiable`` and ``more`` (``capturable``, ``fused``) where PyTorch has them."""
    return {"foreach": foreach, "differentiable": differentiable, **more}


def _restore(value, param: Tensor, index, key, scalars=("step",)):
    """A copy of one saved state value, cast to the parameter's dtype and device; the
    ``scalars`` keys become float32 CPU counters (:func:`step_state`) whatever they arrive as."""
    if key in scalars and isinstance(value, (Tensor, numbers.Real)):
        return step_state(float(value))
    if isinstance(value, Tensor):
        if value.ndim and tuple(value.shape) != tuple(param.shape):
            raise StateDictError(
                f"state {key!r} of parameter {index} has shape {tuple(value.shape)}, but the "
                f"parameter has shape {tuple(param.shape)}",
                hint="the model changed since the state was saved; build it as it was, or "
                "start the optimizer fresh",
            )
        if value._device is not param._device:
            value = value.to(param._device)
        data = value._data
        if param.is_floating_point() and _dt.is_float(data.dtype):
            data = data.astype(param._data.dtype)
        return _wrap(param._device.xp.array(data, copy=True), param._device)
    if isinstance(value, dict):
        return {k: _restore(v, param, index, k, scalars) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_restore(v, param, index, key, scalars) for v in value)
    return value


def _grad_mismatch(optimizer, p: Tensor, grad: Tensor) -> FwError:
    what = f"{type(optimizer).__name__}.step"
    if grad._device is not p._device:
        return DeviceError(f"a parameter on {p.device} has its gradient on {grad.device}",
                           op=what, hint="move the gradient: p.grad = p.grad.to(p.device)")
    if grad._data.dtype != p._data.dtype:
        return DTypeError(f"a {p.dtype.name} parameter has a {grad.dtype.name} gradient",
                          op=what, hint="cast the gradient: p.grad = p.grad.to(p.dtype)")
    return ShapeError(f"a parameter of shape {tuple(p.shape)} has a gradient of shape "
                      f"{tuple(grad.shape)}", op=what,
                      hint="a gradient must have its parameter's shape; check code that "
                      "assigns p.grad")


def _set_of_parameters(owner: str, params) -> ArgumentError:
    return ArgumentError(
        "parameters given as a set: a set's order changes between runs, so saved optimizer "
        "state would be matched to the wrong parameters", op=owner,
        inputs=describe(params=list(params)), hint="pass a list (or model.parameters())")


# -- hyperparameter checks ------------------------------------------------------------------------
def check_number(optimizer, group: dict, name: str, low: float | None = 0.0,
                 high: float | None = None, high_open: bool = True, hint: str = "") -> None:
    """Raise ArgumentError unless ``group[name]`` is a real number in [low, high) (or
    [low, high] with ``high_open=False``); None bounds are unchecked."""
    value = group[name]
    owner = type(optimizer).__name__
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"{name} must be a number, got {type(value).__name__}", op=owner,
                            inputs=describe(**{name: value}),
                            hint=f"pass a Python float ({name}=float(t) for a one-element "
                            "tensor t)")
    ok = low is None or value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        low_text = "" if low is None else f"{low} <= "
        high_text = "" if high is None else (" < " if high_open else " <= ") + f"{high}"
        raise ArgumentError(f"invalid {name}={value!r}: expected {low_text}{name}{high_text}",
                            op=owner, inputs=describe(**{name: value}),
                            hint=hint or f"pass {low_text}{name}{high_text}")


def check_pair(optimizer, group: dict, name: str, low: float | None, high: float | None,
               example: str, hint: str) -> tuple[float, float]:
    """Raise ArgumentError unless ``group[name]`` is a pair of numbers each in [low, high);
    return it. ``example`` is a valid value, e.g. ``"(0.9, 0.999)"``."""
    pair = group[name]
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ArgumentError(f"{name} must be a pair, got {pair!r}", op=type(optimizer).__name__,
                            inputs=describe(**{name: pair}), hint=f"e.g. {name}={example}")
    for i, value in enumerate(pair):
        check_number(optimizer, {f"{name}[{i}]": value}, f"{name}[{i}]", low=low, high=high,
                     hint=hint)
    return pair


def check_betas(optimizer, group: dict) -> None:
    """Raise ArgumentError unless ``group["betas"]`` is a pair of decay rates in [0, 1)."""
    check_pair(optimizer, group, "betas", 0.0, 1.0, "(0.9, 0.999)",
               "each beta is in [0, 1), e.g. betas=(0.9, 0.999); 1 would never forget the first "
               "gradient")


def moment_scalars(group: dict, decoupled: bool = True) -> dict[str, Any]:
    """The update scalars of the Adam family (Adam, Adamax, NAdam, RAdam) from ``group``:
    ``lr``, ``beta1``/``beta2`` (its ``betas``), ``eps``, ``weight_decay``, ``maximize`` and,
    with ``decoupled``, whether the decay is decoupled (``decoupled_weight_decay``)."""
    beta1, beta2 = group["betas"]
    scalars = {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "eps": group["eps"],
               "weight_decay": group["weight_decay"], "maximize": group["maximize"]}
    if decoupled:
        scalars["decoupled"] = group["decoupled_weight_decay"]
    return scalars


def check_moment_options(optimizer, group: dict, typical_lr: str) -> None:
    """The checks of the Adam family (Adam, Adamax, NAdam, RAdam): ``lr``, ``eps`` and
    ``weight_decay`` >= 0 and ``betas`` a pair in [0, 1), as PyTorch refuses them."""
    check_number(optimizer, group, "lr", hint=f"a learning rate is >= 0, typically {typical_lr}")
    check_number(optimizer, group, "eps", hint="eps is a small positive number, e.g. 1e-8")
    check_number(optimizer, group, "weight_decay", hint="weight decay is >= 0, e.g. 1e-2")
    check_betas(optimizer, group)
