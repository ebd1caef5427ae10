"""An fw epilogue as oneDNN post-ops: what a chain of elementwise nodes after a product becomes
in the product's own primitive, and the primitive attributes that carry it.

The epilogue of a ``contraction+epilogue`` group is a chain: each node reads the value the
previous one made (the *accumulator*, first the product) exactly once, and at most one other
operand, a group input or a Python number. Each node becomes one or two post-ops:

- a node whose contract formula (``OpDef.expr``) is one of oneDNN's eltwise algorithms
  (:data:`_ACTIVATIONS`, matched with :func:`fw_core.ops.scalar.match`, so an op is recognised
  by what it computes, not by its name): an eltwise post-op. ``maximum(x, 0)`` is oneDNN's elu
  with alpha 0 there (the same values, NaN kept; a negative input gives -0.0); gelu's erf form
  differs from fw only where the result is not finite, so a kernel using it checks its result
  (:attr:`Recipe.checks_result`);
- a node whose formula is ``a + b``, ``a - b``, ``a * b`` or ``a / b``, with a tensor: a binary
  post-op whose second operand is that tensor, broadcast as fw broadcasts it (``t - acc``: a
  negation, then an add);
- with a number: an eltwise ``linear`` (``alpha * acc + beta``: one exact multiply or add),
  except a division, which is a binary ``div`` by a one-element operand (a multiplication by
  the reciprocal would round differently).

Anything else (a node reading the accumulator twice or not at all, ``div(t, acc)``, a value of
the chain read outside it, another dtype than float32) is not a chain of post-ops:
:func:`recipe` says why and the fusion rule leaves the group to fw_cpu's epilogue.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from fw_core.compile.ir import Value
from fw_core.ops import scalar

from . import capi, capi_eltwise
from .eltwise import Algorithm, overflows_doubled
from .layouts import elements, merge
from .primitive import Layout

F32 = np.dtype(np.float32)
_X, _Y = scalar.arg(0), scalar.arg(1)
#: oneDNN's binary post-ops, as the formulas of the two operands they compute
_BINARY = {"add": (_X + _Y, capi_eltwise.BINARY_ADD), "sub": (_X - _Y, capi_eltwise.BINARY_SUB),
           "mul": (_X * _Y, capi_eltwise.BINARY_MUL), "div": (_X / _Y, capi_eltwise.BINARY_DIV)}
#: relu as a post-op: oneDNN's relu drops NaN, its elu with alpha 0 keeps it
_RELU_KEEPING_NAN = Algorithm(capi_eltwise.ELTWISE_ELU, 0.0)


def _near(value: float, constant: float) -> bool:
    return math.isclose(value, constant, rel_tol=1e-15)


def _sigmoid(v):
    return 1.0 / (1.0 + scalar.exp(-v))


_ALPHA = scalar.hole("alpha")
#: oneDNN's eltwise algorithms, each as the formula of the accumulator ``x`` it computes (holes
#: for its parameters) and the Algorithm for the numbers found there (None: no algorithm). A
#: node whose contract formula matches one is that post-op, whatever the op is called.
_ACTIVATIONS = (
    (scalar.maximum(_X, 0.0), lambda: _RELU_KEEPING_NAN),
    (scalar.where(scalar.gt(_X, 0.0), _X, _X * _ALPHA),
     lambda alpha: _RELU_KEEPING_NAN if alpha == 0 else
     Algorithm(capi_eltwise.ELTWISE_RELU, float(alpha))),
    (scalar.where(scalar.gt(_X, 0.0), _X, scalar.expm1(_X) * _ALPHA),
     lambda alpha: Algorithm(capi_eltwise.ELTWISE_ELU, float(alpha))),
    (_X * 0.5 * scalar.erfc(_X * scalar.hole("c")),
     lambda c: Algorithm(capi_eltwise.ELTWISE_GELU_ERF, refuse=overflows_doubled)
     if _near(c, -1 / math.sqrt(2)) else None),
    (_X * _sigmoid((_X + _X * _X * _X * 0.044715) * scalar.hole("c")),
     lambda c: Algorithm(capi_eltwise.ELTWISE_GELU_TANH)
     if _near(c, 2 * math.sqrt(2 / math.pi)) else None),
    (_sigmoid(_X), lambda: Algorithm(capi_eltwise.ELTWISE_LOGISTIC)),
    (_X / (1.0 + scalar.exp(-_X)), lambda: Algorithm(capi_eltwise.ELTWISE_SWISH, 1.0)),
    (_X * scalar.tanh(scalar.maximum(_X, 0.0) + scalar.log1p(scalar.exp(-scalar.abs(_X)))),
     lambda: Algorithm(capi_eltwise.ELTWISE_MISH)),
    (scalar.sqrt(_X), lambda: Algorithm(capi_eltwise.ELTWISE_SQRT)),
    (scalar.tanh(_X), lambda: Algorithm(capi_eltwise.ELTWISE_TANH)),
)


@dataclass(frozen=True)
class Eltwise:
    """An eltwise post-op: ``alg(alpha, beta)`` on the accumulator."""

    alg: int
    alpha: float
    beta: float


@dataclass(frozen=True)
class Binary:
    """A binary post-op: ``alg(accumulator, operand)``; ``operand`` is the group input's position
    or, for a number, the number itself (a one-element operand)."""

    alg: int
    operand: int | float
    constant: bool = False


@dataclass(frozen=True)
class Recipe:
    """An epilogue as post-ops, in order; ``checks_result``: a post-op may differ from fw on
    non-finite values, so the kernel checks the result is finite (else computes it unfused)."""

    post_ops: tuple[Eltwise | Binary, ...]
    checks_result: bool


def supports(node) -> bool:
    """Whether ``node`` may be a post-op: a float32 activation oneDNN computes as fw defines
    it, or an add / sub / mul / div of float32 values."""
    if any(v.dtype != F32 for v in (*node.reads, node.out)):
        return False
    return _binary_kind(node) is not None or _activation(node) is not None


def _formula(node):
    return scalar.formula(node.op, node.attrs, len(node.inputs))


def _binary_kind(node) -> str | None:
    """Which of oneDNN's binary post-ops ``node``'s formula is, or None."""
    formula = _formula(node) if len(node.inputs) == 2 else None
    return next((kind for kind, (pattern, _) in _BINARY.items()
                 if formula is not None and scalar.match(pattern, formula) is not None), None)


def _activation(node) -> Algorithm | None:
    """oneDNN's eltwise algorithm computing ``node``'s formula, or None."""
    formula = _formula(node) if len(node.inputs) == 1 else None
    if formula is None:
        return None
    for pattern, algorithm in _ACTIVATIONS:
        found = scalar.match(pattern, formula)
        if found is not None:
            return algorithm(**found)
    return None


def recipe(group, inputs: dict[int, int]) -> Recipe | str:
    """The post-ops of ``group``'s epilogue (every node after the head), or why it is not a
    chain of post-ops. ``inputs`` maps a group input's value index to its position."""
    accumulator = group.nodes[0].out
    post_ops: list[Eltwise | Binary] = []
    checks = False
    for node in group.nodes[1:]:
        if not supports(node):
            return f"{node.op.name} is no post-op"
        at = [k for k, v in enumerate(node.inputs) if v.__class__ is Value and
              v.index == accumulator.index]
        if len(at) != 1:
            return f"{node.op.name} reads the value before it {len(at)} times"
        others = [v for k, v in enumerate(node.inputs) if k != at[0]]
        kind = _binary_kind(node)
        if kind is not None:
            made = _binary(kind, at[0], others[0], inputs)
            if isinstance(made, str):
                return made
            post_ops.extend(made)
        else:
            algorithm = _activation(node)
            checks = checks or algorithm.refuse is not None  # the erf gelu: overflow, +inf
            post_ops.append(Eltwise(algorithm.alg, algorithm.alpha, algorithm.beta))
        accumulator = node.out
    if [v.index for v in group.outputs] != [accumulator.index]:
        return "a value inside the epilogue is read outside the group"
    return Recipe(tuple(post_ops), checks)


def _binary(name: str, at: int, other, inputs: dict[int, int]):
    """The post-ops of ``name`` with the accumulator at position ``at`` and ``other`` (a value
    or a number), or why none do it."""
    if other.__class__ is Value:
        if other.index not in inputs:
            return f"{name} reads a value made inside the group"
        operand, constant = inputs[other.index], False
    elif isinstance(other, (int, float)) and not isinstance(other, bool):
        operand, constant = float(other), True
    else:
        return f"{name} of {type(other).__name__}"
    if at == 1 and name == "div":
        return "a division by the product"
    if at == 1 and name == "sub":  # t - acc = (-acc) + t
        negate = Eltwise(capi_eltwise.ELTWISE_LINEAR, -1.0, 0.0)
        if constant:
            return [Eltwise(capi_eltwise.ELTWISE_LINEAR, -1.0, operand)]
        return [negate, Binary(capi_eltwise.BINARY_ADD, operand)]
    if constant and name != "div":
        alpha, beta = {"add": (1.0, operand), "sub": (1.0, -operand), "mul": (operand, 0.0)}[name]
        return [Eltwise(capi_eltwise.ELTWISE_LINEAR, alpha, beta)]
    return [Binary(_BINARY[name][1], operand, constant)]


# -- a binary operand's layout over the product's -----------------------------------------------
def operand_layout(shape, strides, out_shape, dst_dims) -> Layout | None:
    """The Layout of a binary post-op's operand of ``shape`` and byte ``strides`` (which fw
    broadcasts to ``out_shape``) over the dimensions of the primitive's dst, ``dst_dims``: the
    same contiguous memory as ``out_shape``, some dimensions merged (linear's leading ones into
    rows) or of size 1 added. None when oneDNN cannot read it so: the operand spans part of a
    merged group of dimensions, or its strides do not merge."""
    counted = elements(strides)
    if counted is None:
        return None
    lead = len(out_shape) - len(shape)
    dims = [1] * lead + list(shape)
    steps = [0] * lead + list(counted)
    groups = _groups(out_shape, dst_dims)
    if groups is None:
        return None
    result_dims, result_steps = [], []
    for size, group in zip(dst_dims, groups):
        spans = [dims[i] != 1 for i in group]
        if not any(spans):
            result_dims.append(1)
            result_steps.append(None)
            continue
        if not all(spans):
            return None
        merged = merge([dims[i] for i in group], [steps[i] for i in group])
        if merged is None or merged[0] != size:
            return None
        result_dims.append(size)
        result_steps.append(merged[1])
    extent = 1  # elements the dimensions inside span: a broadcast dimension steps past them
    for i in reversed(range(len(result_dims))):
        if result_steps[i] is None:
            result_steps[i] = extent
        extent += (result_dims[i] - 1) * result_steps[i]
    return Layout(tuple(result_dims), tuple(result_steps))


def _groups(out_shape, dst_dims) -> list[list[int]] | None:
    """For each dst dimension, the dimensions of ``out_shape`` (of size > 1) it is made of."""
    wide = [i for i, n in enumerate(out_shape) if n != 1]
    groups, k = [], 0
    for size in dst_dims:
        group = []
        while k < len(wide) and math.prod(out_shape[i] for i in group) < size:
            group.append(wide[k])
            k += 1
        if math.prod(out_shape[i] for i in group) != size:
            return None
        groups.append(group)
    return groups if k == len(wide) else None


# -- primitive attributes --------------------------------------------------------------------------
class Attributes:
    """``dnnl_primitive_attr_t`` holding ``post_ops`` (binary operands described by
    ``operand_descriptors``, in order), for the duration of a ``with`` block."""

    def __init__(self, post_ops, operand_descriptors):
        self.post_ops, self.descriptors = post_ops, list(operand_descriptors)
        self.attr = capi.handle()

    def __enter__(self):
        chain = capi.handle()
        capi.check(capi_eltwise.post_ops_create(ctypes.byref(chain)), None,
                   "dnnl_post_ops_create")
        try:
            descriptors = iter(self.descriptors)
            for op in self.post_ops:
                if isinstance(op, Eltwise):
                    status = capi_eltwise.post_ops_append_eltwise(chain, op.alg, op.alpha,
                                                                  op.beta)
                else:
                    status = capi_eltwise.post_ops_append_binary(chain, op.alg,
                                                                 next(descriptors))
                capi.check(status, None, "appending a oneDNN post-op")
            capi.check(capi_eltwise.primitive_attr_create(ctypes.byref(self.attr)), None,
                       "dnnl_primitive_attr_create")
            capi.check(capi_eltwise.primitive_attr_set_post_ops(self.attr, chain), None,
                       "dnnl_primitive_attr_set_post_ops")
        finally:
            capi_eltwise.post_ops_destroy(chain)
        return self.attr

    def __exit__(self, *exc):
        if self.attr:
            capi_eltwise.primitive_attr_destroy(self.attr)
