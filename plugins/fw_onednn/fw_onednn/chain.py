"""fw_onednn's chain fusion rule for ``cpu`` (``onednn.blocked_chain``): consecutive
convolutions, poolings and activations as ONE oneDNN program whose values stay in oneDNN's
blocked layouts between them.

oneDNN's convolutions are fast only in the blocked layouts they choose (channels in blocks of
16 on AVX-512; :mod:`fw_onednn.program`), and its max pooling is ~4x faster on them than on
plain (N, C, H, W) at the cnn's shapes (``benchmarks/conv.py``). Run one op at a time, as fw's
kernels do, every convolution reorders its input into the blocked layout and its result back,
and every pooling runs on the plain layout. fw's fusion pass hands this rule *chains*
(:attr:`fw_core.records.FusionRule.chains`): runs of nodes each reading the previous one's
result, here ``conv2d``, ``max_pool2d`` / ``avg_pool2d`` and the eltwise activations of
:mod:`fw_onednn.eltwise`. The kernel runs the chain's primitives on blocked values kept in the
per-thread scratch buffer, each activation in place on its input's buffer, and reorders only at
the chain's boundaries: the chain's input in (when the first convolution wants another layout),
and each value the graph reads outside the chain out, into a plain array, right after the
primitive that made it (a training step's backward pass reads the convolutions' results, the
activations' and the poolings'; an inference reads only the last). The weights are reordered
per call, as in eager mode: the kernel sees only their arrays, which an optimizer updates in
place, so a reorder kept across calls could be stale.

fw caches the kernel by the group's signature, so it serves any sizes: each call looks its
shapes and strides up in the primitive cache (a miss builds the program, ~1 ms per primitive).
The call runs the chain's nodes one by one through fw's kernels instead (each served by
fw_onednn's guarded kernel or fw_cpu's) where oneDNN has no JIT primitive for a member, cannot
describe an operand's strides, or an input (the activation, a weight, a bias) holds a NaN or an
infinity: oneDNN's relu and max pooling differ from fw's on those, and inside the chain no guard
sees the values. What the input check cannot see is a float32 overflow inside the chain (a
convolution summing to infinity), where oneDNN's activations and poolings may then differ from
fw's. fw's scheduler times the chain against its nodes' own kernels on the traced arrays and
keeps it only where it is faster (``fw.compile.explain()`` shows both times). Results match
fw_cpu's to float32 rounding, as the chain's single kernels do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fw_core.compile.ir import Value

from . import capi, capi_conv, capi_eltwise, conv, eltwise, pooling, spatial
from .cache import PRIMITIVES
from .catalog import BLOCKED_CHAIN
from .layouts import contiguous, elements
from .primitive import Refusal
from .program import Builder

F32 = np.dtype(np.float32)
NAME = BLOCKED_CHAIN.name
KIND = "chain:f32"  # the primitive cache's kind of a chain's program
_lookup, _add, _empty, _finite = PRIMITIVES.lookup, PRIMITIVES.add, np.empty, math.isfinite
_POOLS = {"max_pool2d": lambda attrs: capi_conv.POOLING_MAX,
          "avg_pool2d": lambda attrs: pooling._average(attrs["count_include_pad"])}
#: an eltwise op joins only if oneDNN differs from fw at most on NaN and infinities, which the
#: chain's input check rules out (gelu's erf form also overflows from 2**127)
_EXACT_ON_FINITE = (None, eltwise.has_nan, eltwise.not_finite)


@dataclass(frozen=True)
class Member:
    """One node of a chain as its primitive takes it.

    Attributes:
        op: the fw op ("conv2d", "max_pool2d", "relu").
        attrs: the node's attributes.
        operands: positions in the group's inputs of the node's other arrays (a convolution's
            weight and bias; None for a missing bias).
        output: the value's position in the group's outputs, or None when only the next member
            reads it.
    """

    op: str
    attrs: dict
    operands: tuple
    output: int | None


class Held(NamedTuple):
    """A chain's value as the program holds it: its layout ``md``, the ``memory`` object, its
    ``dims``, and whether that memory is the ``caller``'s array (never written)."""

    md: object
    memory: int
    dims: tuple
    caller: bool


def supports(node) -> bool:
    """Whether a chain can take ``node``: a batched float32 conv2d, a max or average pooling
    oneDNN can count as fw does, or an eltwise activation oneDNN computes as fw on finite
    values."""
    name = node.op.name
    if node.out.dtype != F32 or any(v.dtype != F32 for v in node.reads) or \
            (len(node.out.shape) != 4 and name in ("conv2d", *_POOLS)):
        return False
    if name == "conv2d":
        return node.inputs[1].__class__ is Value and len(node.inputs[1].shape) == 4
    if name == "avg_pool2d":
        return node.attrs["divisor_override"] is None
    if name == "max_pool2d":
        return True
    spec = eltwise.BY_OP.get(name)
    algorithm = spec and spec.spec.algorithm(**node.attrs)
    return bool(algorithm) and algorithm.refuse in _EXACT_ON_FINITE


def generate(group):
    """A :class:`ChainKernel` for a chain holding a convolution or a pooling, or None (a chain
    of activations is the pointwise rules' job; a member reading another member's value other
    than as its input cannot be laid out as one chain)."""
    nodes = group.nodes
    if not any(n.op.name == "conv2d" or n.op.name in _POOLS for n in nodes):
        return None
    where = {v.index: k for k, v in enumerate(group.inputs)}
    outputs = {v.index: m for m, v in enumerate(group.outputs)}
    members = []
    for node in nodes:
        arrays = [v for v in node.inputs[1:] if v is not None]
        if any(v.__class__ is not Value or v.index not in where for v in arrays):
            return None
        operands = tuple(None if v is None else where[v.index] for v in node.inputs[1:])
        members.append(Member(node.op.name, dict(node.attrs), operands,
                              outputs.get(node.out.index)))
    unfused = group.unfused("cpu")
    if unfused is None:
        return None
    return ChainKernel(group.signature(), where[nodes[0].inputs[0].index], members,
                       len(group.outputs), unfused)


class ChainKernel:
    """``kernel(*inputs, out=None) -> outputs``: a chain's primitives in one oneDNN program.

    Attributes a reader may look at: ``members`` (:class:`Member` records, in order) and
    ``source`` (the position of the chain's input among the group's inputs).
    """

    def __init__(self, signature, source: int, members: list[Member], outputs: int, nodes):
        self.key, self.source, self.members, self.outputs = signature, source, members, outputs
        self._nodes = nodes  # for the calls oneDNN does not take: Group.unfused("cpu")

    def __call__(self, *arrays, out=None):
        if not all(_finite(a.sum()) for a in arrays):  # float32: the signature says so
            return self.unfused(arrays)
        layout = tuple((a.shape, a.strides) for a in arrays)
        entry = _lookup((KIND, self.key, layout)) or _add((KIND, self.key, layout), build,
                                                           self, layout)
        if not entry.serves:
            return self.unfused(arrays)
        results = []
        for m, shape in enumerate(entry.out_shape):
            given = None if out is None else out[m]
            results.append(given if given is not None and given.shape == shape and
                           given.dtype is F32 and given.flags.c_contiguous else
                           _empty(shape, F32))
        entry(*arrays, *results)
        return tuple(results)

    def unfused(self, arrays) -> tuple:
        """The chain's nodes one by one through fw's kernels (what the chain replaces)."""
        return tuple(self._nodes(*arrays))


# -- building: the program of a chain for one call's layouts, or a Refusal ---------------------
def build(kernel: ChainKernel, layout):
    """The program of ``kernel``'s chain on arrays of these ``(shape, byte strides)``: operands
    are the group's inputs, then its outputs (plain, C-contiguous)."""
    shape, strides = layout[kernel.source]
    x = spatial.batched(shape, strides, 4) if len(shape) == 4 else None
    if x is None:
        return Refusal("the chain's input is not a batched array oneDNN can describe")
    first_output = len(layout)  # the outputs' operands follow the inputs'
    with Builder() as b:
        steps, impls, out_shapes = [], [], [None] * kernel.outputs
        md = b.plain(*x)
        if md is None:
            return Refusal("oneDNN cannot describe the chain's input")
        value = Held(md, b.operand(kernel.source, md), x[0], True)
        for member in kernel.members:
            value = _MEMBERS[_family(member.op)](b, member, value, layout, steps)
            if isinstance(value, Refusal):
                return value
            impls.append(b.impl)
            if member.output is not None:
                plain = b.plain(value.dims, contiguous(value.dims))
                if plain is None or not b.reorder(
                        value.md, value.memory, plain,
                        b.operand(first_output + member.output, plain), steps,
                        f"{member.op} out"):
                    return Refusal("oneDNN has no reorder into a plain result")
                out_shapes[member.output] = value.dims
        b.impl = " > ".join(impls)
        return b.finish(steps, tuple(out_shapes))


def _family(op: str) -> str:
    return "conv" if op == "conv2d" else "pool" if op in _POOLS else "eltwise"


def _take(b, pd, query: int, value, steps, name: str):
    """The memory a primitive of ``pd`` reads ``value`` from: its own, or a scratch copy in the
    layout the primitive chose (a reorder before it); None when oneDNN has no reorder."""
    wanted = capi_conv.primitive_desc_query_md(pd, query, 0)
    if capi_conv.memory_desc_equal(value.md, wanted):
        return value.memory
    copy = b.buffer(wanted)
    return copy if b.reorder(value.md, value.memory, wanted, copy, steps, name) else None


def _result(b, pd, query: int):
    """``(md, memory)`` of a result in the layout the primitive of ``pd`` chose, in scratch."""
    md = capi_conv.primitive_desc_query_md(pd, query, 0)
    return md, b.buffer(md)


def _conv(b, member: Member, value, layout, steps):
    """A convolution forward on the chain's value, the weight reordered per call, the bias read
    as it is."""
    a = member.attrs
    w_at, bias_at = (*member.operands, None)[:2]
    w = spatial.batched(*layout[w_at], 4)
    bias = None if bias_at is None else elements(layout[bias_at][1])
    plan = conv._forward_plan(value.dims, layout[w_at][0], None if bias_at is None else
                              layout[bias_at][0], a["stride"], a["padding"], a["dilation"],
                              a["groups"])
    if w is None or isinstance(plan, str) or bias_at is not None and bias is None:
        return Refusal(plan if isinstance(plan, str) else "an operand's strides do not fit")
    given = b.plain(*conv._conv_weights(*w, a["groups"]))
    bias_md = None if bias_at is None else b.plain(plan.dst[1:2], bias)
    chosen = (b.chosen(value.dims), b.chosen(plan.weights), b.chosen(plan.dst))
    if given is None or None in chosen or bias_at is not None and bias_md is None:
        return Refusal("oneDNN cannot describe these layouts")
    pd = b.primitive_desc(capi_conv.convolution_forward_primitive_desc_create,
                          capi_conv.FORWARD_TRAINING, capi_conv.CONVOLUTION_DIRECT, chosen[0],
                          chosen[1], bias_md, chosen[2], *plan.steps(), None)
    refusal = b.unserved(pd, "convolution")
    if refusal:
        return refusal
    src = _take(b, pd, capi_conv.QUERY_SRC_MD, value, steps, "src")
    weights = _take(b, pd, capi_conv.QUERY_WEIGHTS_MD,
                    Held(given, b.operand(w_at, given), plan.weights, True), steps, "weights")
    if src is None or weights is None:
        return Refusal("oneDNN has no reorder between these layouts")
    md, dst = _result(b, pd, capi_conv.QUERY_DST_MD)
    args = [(capi.ARG_SRC, src), (capi.ARG_WEIGHTS, weights), (capi.ARG_DST, dst)]
    if bias_at is not None:
        args.append((capi.ARG_BIAS, b.operand(bias_at, bias_md)))
    b.execute(pd, args, steps)
    return Held(md, dst, plan.dst, False)


def _pool(b, member: Member, value, layout, steps):
    """A max or average pooling forward on the chain's value, in the value's layout."""
    a = member.attrs
    dilation = a.get("dilation", (1, 1))
    window = pooling._window(value.dims[2:], a["kernel_size"], a["stride"], a["padding"],
                             dilation, a["ceil_mode"])
    if window is None:
        return Refusal("the window does not fit")
    out, pad_r = window
    algorithm = _POOLS[member.op](a)
    if pooling._overhang_counted(algorithm, a["padding"], pad_r):
        return Refusal(pooling._OVERHANG)
    dims = (*value.dims[:2], *out)
    chosen = b.chosen(dims)
    pd = chosen and b.primitive_desc(
        capi_conv.pooling_forward_primitive_desc_create, capi_conv.FORWARD_INFERENCE,
        algorithm, value.md, chosen,
        *pooling._steps(a["kernel_size"], a["stride"], a["padding"], dilation, pad_r), None)
    refusal = b.unserved(pd, "pooling")
    if refusal:
        return refusal
    md, dst = _result(b, pd, capi_conv.QUERY_DST_MD)
    b.execute(pd, [(capi.ARG_SRC, value.memory), (capi.ARG_DST, dst)], steps)
    return Held(md, dst, dims, False)


def _eltwise(b, member: Member, value, layout, steps):
    """An activation on the chain's value, in place (into scratch when the value is the
    chain's input, which is the caller's array)."""
    algorithm = eltwise.BY_OP[member.op].spec.algorithm(**member.attrs)
    pd = b.primitive_desc(capi_eltwise.eltwise_forward_primitive_desc_create,
                          capi_eltwise.FORWARD_INFERENCE, algorithm.alg, value.md, value.md,
                          algorithm.alpha, algorithm.beta, None)
    refusal = b.unserved(pd, "eltwise")
    if refusal:
        return refusal
    dst = b.buffer(value.md) if value.caller else value.memory
    b.execute(pd, [(capi.ARG_SRC, value.memory), (capi.ARG_DST, dst)], steps)
    return value._replace(memory=dst, caller=False)


_MEMBERS = {"conv": _conv, "pool": _pool, "eltwise": _eltwise}
