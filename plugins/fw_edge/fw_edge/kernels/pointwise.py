"""``pointwise``: an elementwise formula (docs/fwm_format.md) run as a sequence of in-place
ufunc calls.

Inputs of another dtype are cast to the compute dtype first, into working arrays; each step
then writes into a working array (a step's array is reused once the step's value is dead), the
last step straight into the output when its dtype is the output's, else into a working array
that is rounded into the output at the end. Comparisons and predicates give bool arrays;
numbers take the compute dtype.

An output of several cache blocks (:mod:`.blocks`) is computed block by block, the blocks
split between threads, so that a long chain (GELU) keeps its working arrays in cache: the
working arrays are then a block's size, one set per thread, and the inputs are read through
views broadcast to the output's shape. Each element is computed by the same calls either way.

A float32 formula that is an exact GELU (:func:`.gelu.matches`, read from its steps) runs
:func:`.gelu.gelu` instead: float32 throughout, accurate to GELU's needs rather than to
erfc's, in one pass over the whole output.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..errors import EdgeError
from ..kernel_api import Kernel, Writes
from . import blocks
from . import erf as _erf
from . import gelu as _gelu


def _where(c, a, b, out):
    """``where(c, a, b)`` into ``out``, which aliases neither ``a`` nor ``c``; a condition
    cast to the compute dtype (a bool input of a float formula) holds where it is non-zero."""
    np.copyto(out, b, casting="unsafe")
    np.copyto(out, a, where=c if c.dtype == np.bool_ else c != 0, casting="unsafe")


#: primitive -> (function taking its operands and ``out=``, whether its value is a bool)
PRIMITIVES = {
    "add": (np.add, False), "sub": (np.subtract, False), "mul": (np.multiply, False),
    "div": (np.true_divide, False), "pow": (np.power, False), "neg": (np.negative, False),
    "abs": (np.absolute, False), "sign": (np.sign, False), "maximum": (np.maximum, False),
    "minimum": (np.minimum, False), "exp": (np.exp, False), "log": (np.log, False),
    "log1p": (np.log1p, False), "expm1": (np.expm1, False), "tanh": (np.tanh, False),
    "sin": (np.sin, False), "cos": (np.cos, False), "sqrt": (np.sqrt, False),
    "floor": (np.floor, False), "ceil": (np.ceil, False),
    "erf": (_erf.erf, False), "erfc": (_erf.erfc, False),
    "eq": (np.equal, True), "ne": (np.not_equal, True), "lt": (np.less, True),
    "le": (np.less_equal, True), "gt": (np.greater, True), "ge": (np.greater_equal, True),
    "logical_and": (np.logical_and, True), "logical_or": (np.logical_or, True),
    "logical_not": (np.logical_not, True), "isnan": (np.isnan, True),
    "isinf": (np.isinf, True),
}
#: primitives that are many passes over their operand themselves (cache blocks pay for one)
_LONG = {"erf", "erfc"}
_ARITY = {"where": 3, "neg": 1, "abs": 1, "sign": 1, "exp": 1, "log": 1, "log1p": 1,
          "expm1": 1, "tanh": 1, "sin": 1, "cos": 1, "sqrt": 1, "floor": 1, "ceil": 1,
          "erf": 1, "erfc": 1, "logical_not": 1, "isnan": 1, "isinf": 1}


def _formula(spec):
    """The formula's steps and result, checked: ``[(name, operands)], result``."""
    formula = spec.attrs.get("formula")
    try:
        steps = [(s[0], tuple(tuple(o) for o in s[1:])) for s in formula["steps"]]
        result = tuple(formula["result"])
        for j, (name, operands) in enumerate(steps):
            if name != "where" and name not in PRIMITIVES or len(operands) != _ARITY.get(name, 2):
                raise ValueError(f"step {j} applies {name!r} to {len(operands)} operand(s)")
            for operand in operands:
                _check_operand(operand, len(spec.inputs), j)
        _check_operand(result, len(spec.inputs), len(steps))
    except (KeyError, TypeError, ValueError) as exc:
        raise EdgeError(f"{spec.where}: its formula {formula!r} is malformed ({exc}); export "
                        "the model again") from None
    return steps, result


def _check_operand(operand, n_args: int, n_steps: int) -> None:
    """An operand names an input, a number or one of the first ``n_steps`` steps."""
    kind, value = operand
    if not (kind == "arg" and 0 <= value < n_args or kind == "const" and
            isinstance(value, (bool, int, float)) or kind == "step" and 0 <= value < n_steps):
        raise ValueError(f"operand {list(operand)} is not an input, a number or an earlier step")


class _Registers:
    """Working arrays of one shape for the steps, reused once a value is dead."""

    def __init__(self, spec, shape):
        self.spec, self.shape, self.free = spec, shape, {}

    def take(self, dtype, avoid=()):
        pool = self.free.setdefault(dtype, [])
        for i, array in enumerate(pool):
            if not any(array is a for a in avoid):
                return pool.pop(i)
        return self.spec.scratch(self.shape, dtype)

    def give(self, array):
        self.free.setdefault(array.dtype, []).append(array)


def pointwise(spec):
    """The formula as bound ufunc calls, block by block for a large output:
    ``fn(out, *inputs)``."""
    steps, result = _formula(spec)
    compute, shape = np.dtype(spec.attrs["compute"]), spec.out.shape
    if not steps:
        return Writes(_copy_of(result, compute))
    gelu = _runs_gelu(spec, compute) and _gelu.matches(steps, result)
    if gelu:
        def build(block):
            return _gelu_chain(spec, block)
    else:
        def build(block):
            return _chain(spec, steps, result, compute, block)
    # the GELU kernel's float32 passes are few and cheap: over the whole output in one thread
    # (MiniLM at sequence 128: 332 us a node, against 464 in cache-sized blocks on two
    # threads, and 437 in two halves: the second core is busy with OpenBLAS's spinning threads)
    keys = [(Ellipsis,)] if gelu else blocks.cut(shape)
    if len(keys) == 1 or len(steps) == 1 and steps[0][0] not in _LONG:  # one pass: no gain
        return Writes(build(None))
    dummy = np.broadcast_to(np.empty((), np.uint8), shape)  # gives each block's shape
    work = []  # per thread: (key, the chain planned for that block's shape) of its blocks
    for part in blocks.parts(keys):
        chains: dict = {}
        for key in part:
            size = dummy[key].shape
            if size not in chains:
                chains[size] = build(size)
        work.append([(key, chains[dummy[key].shape]) for key in part])
    whole = [a.shape == shape for a in spec.inputs]

    def run(out, *xs):
        xs = [x if w else np.broadcast_to(x, shape) for x, w in zip(xs, whole)]
        blocks.run_parts([partial(_run_blocks, pairs, out, xs) for pairs in work])
    return Writes(run)


def _run_blocks(pairs, out, xs) -> None:
    for key, chain in pairs:
        chain(out[key], *[x[key] for x in xs])


def _runs_gelu(spec, compute) -> bool:
    """Whether the node's dtypes are those :mod:`.gelu`'s kernel runs: float32 throughout, one
    input of the output's shape."""
    f32 = np.dtype(np.float32)
    return (compute == f32 and spec.out.dtype == f32 and len(spec.inputs) == 1
            and spec.inputs[0].dtype == f32 and spec.inputs[0].shape == spec.out.shape)


def _gelu_chain(spec, block):
    """``fn(out, x)``: :func:`.gelu.gelu` with working arrays of the output's shape, or of
    shape ``block``."""
    shape = spec.out.shape if block is None else block
    work = tuple(spec.scratch(shape, np.float32) for _ in range(_gelu.WORK))
    kernel = _gelu.gelu
    return lambda out, x: kernel(x, out, work)


def _chain(spec, steps, result, compute, block):
    """``fn(out, *inputs)`` computing the formula with working arrays of the output's shape,
    or of shape ``block`` for inputs and output of that shape (views of one block)."""
    out = spec.out
    slots: list = [None] * len(spec.inputs)  # per call: the (cast) inputs; then the steps
    casts = []
    for i, a in enumerate(spec.inputs):
        if a.dtype != compute:
            casts.append((i, spec.scratch(a.shape if block is None else block, compute)))
    last_use = {}
    for j, (_, operands) in enumerate(steps):
        for kind, value in operands:
            if kind == "step":
                last_use[value] = j
    if result[0] == "step":
        last_use[result[1]] = len(steps)  # the result lives to the end
    shape = out.shape if block is None else block
    registers = _Registers(spec, shape)
    work = None  # erf's float64 working arrays, shared by the formula's erf steps
    dtypes, arrays, calls = [], [], []
    for j, (name, operands) in enumerate(steps):
        args = [_operand(o, compute, len(spec.inputs)) for o in operands]
        boolean = PRIMITIVES[name][1] if name != "where" else all(
            d == np.bool_ for d in (_dtype_of(o, compute, dtypes) for o in operands[1:]))
        dtype = np.dtype(np.bool_) if boolean else compute
        final = j == len(steps) - 1 and result == ("step", j) and dtype == out.dtype
        if not final:
            avoid = [arrays[v] for k, v in operands if k == "step"] if name == "where" else ()
            target = registers.take(dtype, avoid)
        else:
            target = None  # the output, given per call
        dtypes.append(dtype)
        arrays.append(target)
        for kind, value in operands:
            if kind == "step" and last_use[value] == j and arrays[value] is not None:
                registers.give(arrays[value])
        fn = _where if name == "where" else PRIMITIVES[name][0]
        if name in _LONG and _erf.narrow(compute):
            work = work or tuple(spec.scratch(shape, np.float64) for _ in range(_erf.WORK))
            fn = partial(fn, work=work)
        calls.append((fn, args, len(spec.inputs) + j, target))
    slots.extend(arrays)
    return _program(calls, casts, slots, result, len(spec.inputs), out.dtype)


def _operand(o, compute, n_args):
    """An operand as a slot index (inputs and steps) or a number of the compute dtype."""
    kind, value = o
    if kind == "const":
        return compute.type(value)
    return value if kind == "arg" else n_args + value


def _dtype_of(o, compute, dtypes):
    kind, value = o
    return dtypes[value] if kind == "step" else compute


def _program(calls, casts, slots, result, n_args, out_dtype):
    """``fn(out, *inputs)`` running ``calls`` over ``slots``."""
    last_slot = calls[-1][2]
    writes_out = slots[last_slot] is None
    if not writes_out:
        result_slot = n_args + result[1] if result[0] == "step" else result[1]
    ops = [(fn, args, slot) for fn, args, slot, _ in calls]
    single = len(ops) == 1 and not casts and writes_out
    if single and all(type(a) is int for a in ops[0][1]) and len(ops[0][1]) <= 2:
        fn, args, _ = ops[0]
        if len(args) == 1:
            return lambda out, x: fn(x, out=out)
        i, k = args
        return lambda out, *xs: fn(xs[i], xs[k], out=out)
    if single and len(ops[0][1]) == 2:  # one binary step with a number: relu, x * 0.5
        fn, (a, b), _ = ops[0]
        if type(a) is int:
            return lambda out, *xs: fn(xs[a], b, out=out)
        return lambda out, *xs: fn(a, xs[b], out=out)

    def run(out, *xs):
        slots[:n_args] = xs
        for i, array in casts:
            np.copyto(array, xs[i], casting="unsafe")
            slots[i] = array
        slots[last_slot] = out if writes_out else slots[last_slot]
        for fn, args, slot in ops:
            fn(*[slots[a] if type(a) is int else a for a in args], out=slots[slot])
        if not writes_out:
            np.copyto(out, slots[result_slot], casting="unsafe")
    return run


def _copy_of(result, compute):
    """The formula without steps: an input or a number, rounded into the output."""
    kind, value = result
    if kind == "const":
        number = compute.type(value)
        return lambda out, *xs: out.fill(number)
    return lambda out, *xs: np.copyto(out, xs[value], casting="unsafe")


KERNELS = [Kernel("pointwise", pointwise)]
