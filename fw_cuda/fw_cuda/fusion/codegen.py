"""CUDA C source for a pointwise group (optionally closed by a reduction) and its launcher.

- elementwise group: one thread per element (grid-stride loop), inputs indexed by their own
  strides (a broadcast dimension contributes nothing to the offset);
- elementwise + reduction: one block per output element, its threads stride over the reduced
  elements, then a shared-memory tree sums the partial sums in double (deterministic: no
  atomics); the total is rounded once to the output dtype (float16 included).

Every node's result is rounded to its value's dtype, as the unfused kernels do (see
:mod:`.render` for float16). :class:`CudaKernel` imports CuPy, and compiles the source
with NVRTC as a ``cupy.RawKernel``, on its first call only.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.compile.ir import Group, Value
from fw_core.compile.layout import PointwiseLayout, pointwise_layout

from . import render as ex

NAME = "fw_fused"
BLOCK = 256  # threads per block (power of two: the reduction tree halves it)


# -- source ---------------------------------------------------------------------------------------
def _horner(dims) -> str:
    """Row-major offset of multi-index ``i<d>`` over ``dims`` (``((i0) * d1 + i1)``)."""
    text = "0"
    for d in dims:
        text = f"i{d}" if text == "0" else f"({text} * d{d} + i{d})"
    return text


def _split(var: str, dims, pad: str) -> list[str]:
    """Lines turning flat index ``var`` into ``i<d>`` for ``dims`` (row-major)."""
    if not dims:
        return []
    lines = [f"{pad}long long rest_{var} = {var};"]
    for d in reversed(dims[1:]):
        lines += [f"{pad}long long i{d} = rest_{var} % d{d};", f"{pad}rest_{var} /= d{d};"]
    return lines + [f"{pad}long long i{dims[0]} = rest_{var};"]


def _layout(group: Group) -> PointwiseLayout | None:
    return pointwise_layout(group, ex.supports)


def _body(group: Group, plan: PointwiseLayout, pad: str, flat: str) -> tuple[list[str], dict]:
    """Loads, one typed statement per node, stores of escaping values; -> (lines, names)."""
    names, lines = {}, []
    full = list(range(plan.rank))
    for k, v in enumerate(group.inputs):
        dims = [d for d in full if plan.spans[k][d]]
        offset = flat if len(dims) == plan.rank and flat else _horner(dims)
        lines.append(f"{pad}const {ex.value_ctype(v.dtype)} x{k} = "
                     f"{ex.load(f'in{k}[{offset}]', v.dtype)};")
        names[v.index] = f"x{k}"
    outputs = {v.index: m for m, v in enumerate(group.outputs)}
    for n, node in enumerate(plan.body):
        args = [names[v.index] if v.__class__ is Value else None for v in node.inputs]
        lines += [pad + line for line in ex.node_statements(node, args, f"v{n}")]
        dtype = node.out.dtype
        names[node.out.index] = f"v{n}"
        if node.out.index in outputs:
            lines.append(f"{pad}out{outputs[node.out.index]}[{flat or _horner(full)}] = "
                         f"{ex.store(f'v{n}', dtype)};")
    return lines, names


def source(group) -> str | None:
    """The CUDA C source of ``group``'s kernel (``extern "C"`` :data:`NAME`), or None."""
    plan = _layout(group)
    return None if plan is None else _source(group, plan)


def _source(group: Group, plan: PointwiseLayout) -> str:
    # no __restrict__: an output may be an input's own buffer (the epilogue writes in place)
    params = [f"const {ex.ctype(v.dtype)}* in{k}" for k, v in enumerate(group.inputs)]
    params += [f"{ex.ctype(v.dtype)}* out{m}" for m, v in enumerate(group.outputs)]
    params += [f"long long d{d}" for d in range(plan.rank)] + ["long long n_out", "long long n_red"]
    dtypes = [v.dtype for v in group.inputs] + [n.out.dtype for n in group.nodes]
    lines = ["#include <cuda_fp16.h>"] if any(ex.is_half(d) for d in dtypes) else []
    lines += [f'extern "C" __global__ void {NAME}({", ".join(params)})', "{"]
    all_dims = list(range(plan.rank))
    if plan.reduction is None:
        broadcast = any(not all(s) for s in plan.spans)
        lines.append("    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
                     "i < n_out; i += (long long)gridDim.x * blockDim.x) {")
        lines += _split("i", all_dims, " " * 8) if broadcast else []
        lines += _body(group, plan, " " * 8, "i")[0]
        return "\n".join(lines + ["    }", "}", ""])
    kept = [d for d in all_dims if not plan.reduced[d]]
    summed = [d for d in all_dims if plan.reduced[d]]
    m = group.outputs.index(plan.reduction.out)
    body, names = _body(group, plan, " " * 12, "")
    total = "acc[0] / (double)n_red" if plan.reduction.op.reduction.mean else "acc[0]"
    lines += [f"    __shared__ double acc[{BLOCK}];",
              "    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {",
              *_split("o", kept, " " * 8), "        double part = 0.0;",
              "        for (long long r = threadIdx.x; r < n_red; r += blockDim.x) {",
              *_split("r", summed, " " * 12), *body,
              f"            part += (double){names[plan.reduction.inputs[0].index]};",
              "        }", "        acc[threadIdx.x] = part;", "        __syncthreads();",
              "        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {",
              "            if (threadIdx.x < s) acc[threadIdx.x] += acc[threadIdx.x + s];",
              "            __syncthreads();", "        }",
              f"        if (threadIdx.x == 0) out{m}[o] = "
              f"{ex.convert(total, plan.reduction.out.dtype, 'double')};",
              "        __syncthreads();", "    }", "}", ""]
    return "\n".join(lines)


# -- execution ------------------------------------------------------------------------------------
class CudaKernel:
    """``kernel(*inputs, out=None) -> tuple of output arrays`` running the generated source.

    An ``out`` buffer may be an input's own array (the epilogue rule writes in place): every
    thread reads its element before it writes it, and no thread reads another's element.
    CuPy is imported, and the source compiled, on the first call only.
    """

    def __init__(self, group: Group, plan: PointwiseLayout):
        self.source = _source(group, plan)
        self.rank, self.spans, self.reduced = plan.rank, plan.spans, plan.reduced
        self.reduction = plan.reduction
        reduced_out = None if plan.reduction is None else plan.reduction.out
        self.outputs = [(v.dtype, v is reduced_out) for v in group.outputs]
        self._compiled = None

    def shapes(self, in_shapes) -> tuple[tuple, list[tuple]]:
        """(iteration shape, output shapes) for inputs of ``in_shapes`` (host logic only)."""
        full = [1] * self.rank
        for shape, spans in zip(in_shapes, self.spans):
            padded = (1,) * (self.rank - len(shape)) + tuple(shape)
            for d in range(self.rank):
                if spans[d]:
                    full[d] = padded[d]
        node = self.reduction
        reduced_shape = None if node is None else \
            node.op.reduction.shape(node.attrs, tuple(full), self.reduced)
        return tuple(full), [reduced_shape if is_reduced else tuple(full)
                             for _, is_reduced in self.outputs]

    def __call__(self, *arrays, out=None):
        import cupy

        if self._compiled is None:
            self._compiled = cupy.RawKernel(self.source, NAME)
        arrays = [cupy.ascontiguousarray(a) for a in arrays]
        full, shapes = self.shapes([a.shape for a in arrays])
        given = out if out is not None else (None,) * len(shapes)
        results = []
        for buffer, shape, (dtype, _) in zip(given, shapes, self.outputs):
            usable = buffer is not None and buffer.flags.c_contiguous and \
                buffer.shape == shape and buffer.dtype == dtype  # else written via a copy
            results.append(buffer if usable else cupy.empty(shape, dtype))
        n_red = math.prod(s for s, r in zip(full, self.reduced) if r)
        n_out = math.prod(s for s, r in zip(full, self.reduced) if not r)
        if n_out:
            scalars = [np.int64(s) for s in full] + [np.int64(n_out), np.int64(n_red)]
            if self.reduction is None:
                grid, block = min(-(-n_out // BLOCK), 1 << 20), BLOCK
            else:  # a block per output element, no wider than the reduced extent needs
                grid = min(n_out, 1 << 20)
                block = min(BLOCK, max(32, 1 << max(n_red - 1, 0).bit_length()))
            self._compiled((grid,), (block,), (*arrays, *results, *scalars))
        for m, buffer in enumerate(given):
            if buffer is not None and buffer is not results[m]:
                buffer[...] = results[m]
                results[m] = buffer
        return tuple(results)


_cache: dict[tuple, CudaKernel | None] = {}


def generate(group) -> CudaKernel | None:
    """A kernel for ``group`` (cached by ``group.signature()``), or None if unsupported."""
    key = group.signature()
    if key not in _cache:
        plan = _layout(group)
        _cache[key] = None if plan is None else CudaKernel(group, plan)
    return _cache[key]
