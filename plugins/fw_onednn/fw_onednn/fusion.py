"""fw_onednn's fusion rule for ``cpu``: a product and its elementwise epilogue as ONE oneDNN
primitive with post-ops (``onednn.post_ops``).

fw's fusion pass forms ``contraction+epilogue`` groups (a matmul / linear / bmm followed by
elementwise nodes on its result: bias, activation, residual, scale). fw_cpu's
``cpu.blas_epilogue`` runs the product through its kernel and the epilogue as a Numba loop over
the product (:mod:`fw_core.compile.epilogue`); this rule, tried first, puts the epilogue into
the product's primitive instead, as post-ops (:mod:`fw_onednn.postops`): the product is never
written to memory and read back. The rule declines (``generate`` returns None, and
``cpu.blas_epilogue`` is asked next) a group whose epilogue is not a chain of post-ops, or
whose intermediate values are read outside it (a training step's activation keeps its input
for the backward pass: oneDNN cannot hand out a value from inside its post-op chain).

The kernel serves any sizes, as fw caches generated kernels by a group's signature: each call
looks its shapes and strides up in the primitive cache (built on a miss, ~1 ms). Where oneDNN
has no JIT primitive for them (a stride pattern, a broadcast its post-ops cannot read), or
where the result is not finite after a post-op that differs from fw on non-finite values
(gelu's erf form), the call runs the group's nodes one by one through fw's kernels (each
served by fw_onednn's guarded kernel or fw_cpu's), so results are fw's. fw's scheduler times
the fused kernel against those unfused kernels on the traced arrays and keeps it only where it
is faster, logging the decision.

A head is a :class:`Head` in :data:`HEADS`, keyed by the op it computes: a convolution joins by
adding its planner, argument order and descriptor call there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fw_core.compile.ir import Value

from . import capi, capi_eltwise, layouts, postops, primitive
from .cache import PRIMITIVES
from .catalog import POST_OPS

F32 = np.dtype(np.float32)
NAME = POST_OPS.name
_lookup, _add = PRIMITIVES.lookup, PRIMITIVES.add


@dataclass(frozen=True)
class Head:
    """A product oneDNN computes with post-ops.

    Attributes:
        plan: ``fn(*arrays) -> plan | str``: the primitive's layouts for the head's arrays (in
            the op's order), with ``dst`` (a Layout) and ``out_shape``; or why oneDNN cannot.
        arguments: ``fn(plan) -> [(DNNL_ARG_*, Layout)]``: the head's arrays, then dst.
        create: ``fn(pd, descriptors, attr) -> dnnl status``: its primitive descriptor.
    """

    plan: Callable
    arguments: Callable
    create: Callable


def _plan_linear(x, weight, bias=None):
    return layouts.linear(x.shape, x.strides, weight.shape, weight.strides,
                          None if bias is None else bias.shape,
                          None if bias is None else bias.strides)


def _plan_product(a, b):
    return layouts.matmul(a.shape, a.strides, b.shape, b.strides)


_MATMUL = (primitive.matmul_arguments, primitive.create_matmul)
#: op name -> how oneDNN computes it with post-ops
HEADS = {"linear": Head(_plan_linear, *_MATMUL), "matmul": Head(_plan_product, *_MATMUL),
         "bmm": Head(_plan_product, *_MATMUL)}


def supports(node) -> bool:
    """Whether ``node`` may be in a group of this rule: a float32 head of :data:`HEADS`, or a
    node :func:`fw_onednn.postops.supports`."""
    if node.op.name in HEADS:
        return all(v.dtype == F32 for v in (*node.reads, node.out))
    return postops.supports(node)


def generate(group) -> FusedKernel | None:
    """The kernel of a head + post-ops group, or None when it is not one (the next rule is
    asked)."""
    head = group.nodes[0]
    spec = HEADS.get(head.op.name)
    if spec is None or len(group.nodes) < 2 or \
            any(v.__class__ is not Value for v in head.inputs):
        return None
    where = {v.index: k for k, v in enumerate(group.inputs)}
    made = postops.recipe(group, where)
    unfused = group.unfused("cpu")
    if isinstance(made, str) or unfused is None:
        return None
    return FusedKernel(group, spec, made, [where[v.index] for v in head.inputs], unfused)


class FusedKernel:
    """``kernel(*inputs, out=None) -> (result,)``: a group's product and epilogue in one oneDNN
    primitive, or the group's nodes one by one where oneDNN cannot (see the module docstring).

    Attributes a reader may look at: ``kind`` (the primitive cache's name for it,
    "linear+gelu:f32"), ``recipe`` (the post-ops) and ``unfused`` (the group's nodes one by
    one through fw's kernels: ``Group.unfused``).
    """

    def __init__(self, group, head: Head, recipe: postops.Recipe, head_at: list[int], unfused):
        self.head, self.recipe, self.head_at = head, recipe, head_at
        self.kind = "+".join(n.op.name for n in group.nodes) + ":f32"
        binary = [op for op in recipe.post_ops if isinstance(op, postops.Binary)]
        #: per binary post-op: (its index among the post-ops, group input or constant array)
        self.operands = [(recipe.post_ops.index(op),
                          np.full(1, op.operand, F32) if op.constant else op.operand)
                         for op in binary]
        self.unfused = unfused
        self.__qualname__ = self.__name__ = f"onednn_fused[{self.kind}]"

    def __call__(self, *arrays, out=None):
        head = [arrays[k] for k in self.head_at]
        operands = [array if array.__class__ is np.ndarray else arrays[array]
                    for _, array in self.operands]
        key = (self.kind, self.recipe, *((a.shape, a.strides) for a in arrays))
        entry = _lookup(key) or _add(key, self.build, head, operands)
        buffer = None if out is None else out[0]
        if not entry.serves:
            return (self.run_unfused(arrays, buffer),)
        run, handles, shape = entry.launch
        result = buffer if buffer is not None and buffer.flags.c_contiguous else \
            np.empty(shape, F32)
        status = run(handles, *head, result, *operands)
        if status:
            capi.check(status, None, "dnnl_primitive_execute")
        if self.recipe.checks_result and not result.max() < math.inf:
            return (self.run_unfused(arrays, buffer),)
        if buffer is not None and result is not buffer:
            buffer[...] = result
            result = buffer
        return (result,)

    def build(self, head, operands):
        """The primitive for these arrays (head's, then the binary post-ops' operands), or a
        Refusal."""
        plan = self.head.plan(*head)
        if isinstance(plan, str):
            return primitive.Refusal(plan)
        arguments = self.head.arguments(plan)
        for (index, _), array in zip(self.operands, operands):
            layout = postops.operand_layout(array.shape, array.strides, plan.out_shape,
                                            plan.dst.dims)
            if layout is None:
                return primitive.Refusal(f"a post-op operand of shape {array.shape} and strides "
                                         f"{array.strides} is no view over the product's "
                                         f"dimensions {plan.dst.dims}")
            arguments.append((capi_eltwise.arg_post_op(index, capi_eltwise.ARG_SRC_1), layout))
        binary_args = [arg for arg, _ in arguments[len(arguments) - len(operands):]]

        def create(pd, descriptors):
            with postops.Attributes(self.recipe.post_ops,
                                    [descriptors[arg] for arg in binary_args]) as attr:
                return self.head.create(pd, descriptors, attr)

        return primitive.build(arguments, create, plan.out_shape, f"{self.kind} primitive")

    def run_unfused(self, arrays, buffer=None):
        """The group's result through each node's own fw kernel (written into ``buffer``
        when given)."""
        [result] = self.unfused(*arrays)  # the recipe's group has one output: the last node's
        if buffer is not None:
            buffer[...] = result
            return buffer
        return result
