"""Contraction + elementwise epilogue groups, the same on every device.

The fusion pass (:mod:`.passes.fuse`) forms ``contraction+epilogue`` groups: a matmul /
linear / bmm / conv node (the *head*) followed by elementwise nodes on its result (bias add,
activation, residual). A device does not write GEMMs or convolutions of its own for them:

- the head runs through the op's own kernel for the device (BLAS on the CPU, cuBLAS through
  CuPy on CUDA), which is faster than any loop a generator would write;
- the rest of the group becomes an *epilogue subgroup* whose first input is the product, and
  the device's pointwise generator writes one loop / kernel for it;
- when nothing outside reads the product and the first result has its shape and dtype, the
  epilogue writes that result into the product's buffer (each element is read before it is
  overwritten, by the same thread, so the in-place loop is safe on every device).

:func:`rule` makes the device's :class:`~fw_core.records.FusionRule` from its pointwise
generator; fw_cpu (``cpu.blas_epilogue``) and fw_cuda (``cuda.cublas_epilogue``) both use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..ops.registry import kernel as kernel_of
from ..records import FusionRule, Structure
from .ir import Group, Node, Value

_STRUCTURES = frozenset([Structure.ELEMENTWISE, Structure.BROADCAST, Structure.CONTRACTION])


def rule(name: str, device: str, generate_loop: Callable,
         supports_pointwise: Callable) -> FusionRule:
    """The epilogue rule of ``device``: priority 1, so it is tried before the pointwise rule.

    ``generate_loop(group) -> kernel | None`` is the device's pointwise generator (its kernel
    takes ``out=`` buffers); ``supports_pointwise(node)`` what that generator computes. An
    epilogue leaves reductions out (the product is reduced by the unfused kernels instead).
    """
    return FusionRule(name=name, device=device, structures=_STRUCTURES, priority=1,
                      generate=partial(generate, device=device, generate_loop=generate_loop),
                      supports=partial(supports, device=device,
                                       supports_pointwise=supports_pointwise))


def heads(node: Node, device: str) -> bool:
    """Whether ``node`` may head an epilogue group on ``device``: a product of two or more
    tensors (a contraction: matmul, linear, conv, einsum) with a kernel there. A contraction
    of one tensor (a resampling) is left out: its kernel may return a view of its input."""
    return node.op.structure is Structure.CONTRACTION and \
        sum(v.__class__ is Value for v in node.inputs) >= 2 and \
        kernel_of(node.op, device) is not None


def supports(node: Node, device: str, supports_pointwise: Callable) -> bool:
    """Whether ``node`` may be in an epilogue group on ``device``: a contraction that
    :func:`heads` one, or an elementwise node the pointwise generator computes."""
    if node.op.structure is Structure.CONTRACTION:
        return heads(node, device)
    return node.op.reduction is None and supports_pointwise(node)


@dataclass
class Split:
    """A group cut into its head and its epilogue subgroup.

    ``epilogue``'s inputs are the product followed by ``extra`` (the group inputs the epilogue
    reads); its outputs are the group's outputs other than the product (``results``).
    """

    head: Node
    epilogue: Group
    extra: list[Value]
    results: list[Value]


def split(group: Group, device: str) -> Split | None:
    """Cut ``group`` into head + epilogue, or None when it is not a contraction (with a
    ``device`` kernel) followed by at least one node."""
    head, nodes = group.nodes[0], group.nodes[1:]
    if not nodes or not heads(head, device):
        return None
    product = head.out
    read = {v.index for n in nodes for v in n.reads}
    extra = [v for v in group.inputs if v.index in read]
    results = [v for v in group.outputs if v is not product]
    return Split(head, Group(nodes, [product, *extra], results), extra, results)


def generate(group: Group, device: str, generate_loop: Callable) -> EpilogueKernel | None:
    """The kernel of an epilogue group, or None (not such a group, or the loop generator
    declines the epilogue)."""
    parts = split(group, device)
    if parts is None:
        return None
    loop = generate_loop(parts.epilogue)
    if loop is None:
        return None
    product, first = parts.head.out, parts.results[0]
    where = {v.index: k for k, v in enumerate(group.inputs)}
    return EpilogueKernel(
        contract=kernel_of(parts.head.op, device), attrs=dict(parts.head.attrs), loop=loop,
        head_args=[(where[v.index], None) if v.__class__ is Value else (None, v)
                   for v in parts.head.inputs],
        extra=[where[v.index] for v in parts.extra],
        product_at=next((m for m, v in enumerate(group.outputs) if v is product), None),
        result_at=[group.outputs.index(v) for v in parts.results],
        in_place=first.shape == product.shape and first.dtype == product.dtype
        and product not in group.outputs)


class EpilogueKernel:
    """``kernel(*inputs, out=None)``: the product by the op's own kernel, then the epilogue.

    Attributes a reader may look at: ``contract`` (the head op's device kernel), ``loop`` (the
    generated epilogue kernel) and ``in_place`` (whether the first result reuses the product's
    buffer). Arrays only need ``flags.c_contiguous`` and ``a[...] = b``: NumPy and CuPy alike.
    """

    def __init__(self, contract, attrs, loop, head_args, extra, product_at, result_at,
                 in_place):
        self.contract, self.attrs, self.loop = contract, attrs, loop
        self.head_args, self.extra = head_args, extra
        self.product_at, self.result_at, self.in_place = product_at, result_at, in_place
        self.count = len(result_at) + (product_at is not None)

    def __call__(self, *arrays, out=None):
        product = self.contract(*[arrays[k] if k is not None else scalar
                                  for k, scalar in self.head_args], **self.attrs)
        given = out if out is not None else (None,) * self.count
        buffers = [given[m] for m in self.result_at]
        if self.in_place and buffers[0] is None and product.flags.c_contiguous:
            buffers[0] = product  # nothing else reads the product: reuse its memory
        results = self.loop(product, *[arrays[k] for k in self.extra], out=tuple(buffers))
        final = [None] * self.count
        for m, array in zip(self.result_at, results):
            final[m] = array
        if self.product_at is not None:
            buffer = given[self.product_at]
            if buffer is not None:
                buffer[...] = product
                product = buffer
            final[self.product_at] = product
        return tuple(final)
