"""The CPU's fusion rules: the records fw_cpu registers through ``fw_register_fusion_rules``.

- ``cpu.numba_pointwise``: a chain of elementwise / broadcasting ops, optionally closed by a
  sum / mean / sum_to, as one Numba loop (:mod:`.codegen`).
- ``cpu.blas_epilogue``: a matmul / linear / conv followed by elementwise ops: the existing
  BLAS-backed kernel computes the product, then one generated loop applies the epilogue, in
  place on the product's buffer when nothing else reads it.
"""

from __future__ import annotations

from fw_core.compile.ir import Group, Value
from fw_core.records import FusionRule, Structure

from . import expressions

CONTRACTIONS = frozenset(["matmul", "linear", "bmm", "conv1d", "conv2d"])
_POINTWISE = frozenset([Structure.ELEMENTWISE, Structure.BROADCAST, Structure.NONE])


def rules() -> list[FusionRule]:
    return [
        FusionRule(name="cpu.numba_pointwise", device="cpu",
                   structures=_POINTWISE | {Structure.REDUCTION},
                   generate=_generate_pointwise, supports=expressions.supports),
        FusionRule(name="cpu.blas_epilogue", device="cpu",
                   structures=_POINTWISE | {Structure.CONTRACTION},
                   generate=_generate_epilogue, priority=1, supports=_supports_epilogue),
    ]


def _generate_pointwise(group):
    from . import codegen  # imports Numba: only when a kernel is needed

    return codegen.generate(group)


def _supports_epilogue(node) -> bool:
    if node.op.name in CONTRACTIONS:
        return "cpu" in node.op.kernels
    return node.op.name not in expressions.REDUCTIONS and expressions.supports(node)


def _generate_epilogue(group):
    from . import codegen

    head, epilogue = group.nodes[0], group.nodes[1:]
    if head.op.name not in CONTRACTIONS or not epilogue or "cpu" not in head.op.kernels:
        return None
    product = head.out
    read = {v.index for n in epilogue for v in n.reads}
    extra = [v for v in group.inputs if v.index in read]
    results = [v for v in group.outputs if v is not product]
    sub = Group(epilogue, [product, *extra], results)
    loop = codegen.generate(sub)
    if loop is None:
        return None
    where = {v.index: k for k, v in enumerate(group.inputs)}
    return _EpilogueKernel(
        contract=head.op.kernels["cpu"], attrs=dict(head.attrs), loop=loop,
        head_args=[(where[v.index], None) if v.__class__ is Value else (None, v)
                   for v in head.inputs],
        extra=[where[v.index] for v in extra],
        product_at=next((m for m, v in enumerate(group.outputs) if v is product), None),
        result_at=[group.outputs.index(v) for v in results],
        in_place=results[0].shape == product.shape and results[0].dtype == product.dtype
        and product not in group.outputs)


class _EpilogueKernel:
    """``kernel(*inputs, out=None)``: the product by the op's own kernel, then the epilogue."""

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
