"""CUDA C for fused groups: elementwise chains, optionally closed by a sum / mean / sum_to.

fw_core's fusion pass forms the groups (see ``fw_core/compile/passes/fuse.py``); this module
only writes their code. A group's elementwise nodes share one *iteration shape*; each input may
broadcast to it (which dimensions it spans is part of ``Group.signature()``, sizes are not), so
one kernel serves every batch size. Every node's result is rounded to its value's dtype, as the
unfused kernels do; reductions accumulate in double.

- elementwise group: one thread per element (grid-stride loop), inputs indexed by their own
  strides (a broadcast dimension contributes nothing to the offset);
- elementwise + reduction: one block per output element, its threads stride over the reduced
  elements, then a shared-memory tree sums the partial sums (deterministic: no atomics).

Why ``cupy.RawKernel`` rather than numba-cuda or ``ElementwiseKernel``/``ReductionKernel``:
the source is plain CUDA C we write ourselves, so the very text that runs on the GPU is what CI
compiles with ``nvcc -arch=sm_90 -cubin`` and what ptxas reports registers and spills for
(:mod:`fw_cuda.nvcc`) on a machine with no GPU; numba-cuda would add a second compiler (and an
NVRTC pin) whose output CI can only run in the slow simulator, and CuPy's Elementwise/Reduction
kernels wrap our expression in generated code we do not see, and fix the reduction shape to
one axis pattern per call. CuPy is imported only when a kernel first runs; it compiles with
NVRTC on first launch and caches the binary on disk itself.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.compile.ir import Value
from fw_core.records import FusionRule, Structure

NAME = "fw_fused"
BLOCK = 256  # threads per block (power of two: the reduction tree halves it)

#: numpy dtype name -> C type (float16 and complex are left to the unfused kernels)
CTYPES = {"float32": "float", "float64": "double", "int8": "signed char", "int16": "short",
          "int32": "int", "int64": "long long", "uint8": "unsigned char", "bool": "bool"}

#: reductions that may close an elementwise group
REDUCTIONS = frozenset(["sum", "mean", "sum_to"])


def ctype(dtype) -> str:
    return CTYPES[np.dtype(dtype).name]


def literal(value, c_type: str) -> str:
    """A Python scalar as C source of type ``c_type`` (``0.5f``, ``(1.0/0.0)``, ``true``)."""
    if c_type == "bool":
        return "true" if value else "false"
    if c_type in ("float", "double"):
        suffix = "f" if c_type == "float" else ""
        value = float(value)
        if math.isnan(value):
            return f"(0.0{suffix} / 0.0{suffix})"
        if math.isinf(value):
            return f"({'-' if value < 0 else ''}1.0{suffix} / 0.0{suffix})"
        return f"{value!r}{suffix}"
    return f"(({c_type}){int(value)}LL)"


def _math(name: str, c_type: str) -> str:
    """The C math function for a type: ``expf`` for float, ``exp`` for double."""
    return name + "f" if c_type == "float" else name


def _call(name):
    return lambda a, attrs, c, t: f"{_math(name, t)}({a[0]})"


def _binary(template):
    return lambda a, attrs, c, t: template.format(a=a[0], b=a[1])


def _gelu(a, attrs, c, t):
    x = a[0]
    if attrs.get("approximate", "none") == "tanh":
        inner = f"({x} + {c(0.044715)} * {x} * {x} * {x}) * {c(math.sqrt(2 / math.pi))}"
        return f"({c(0.5)} * {x} * ({c(1.0)} + {_math('tanh', t)}({inner})))"
    return f"({c(0.5)} * {x} * ({c(1.0)} + {_math('erf', t)}({x} * {c(1 / math.sqrt(2))})))"


def _clamp(a, attrs, c, t):
    text = a[0]
    for key, pick in (("min", ">"), ("max", "<")):  # NaN-propagating, like np.maximum
        if attrs.get(key) is not None:
            bound = c(attrs[key])
            text = f"(({text}) {pick} {bound} || ({text}) != ({text}) ? ({text}) : {bound})"
    return text


#: op name -> fn(argument texts, attrs, literal maker, C type computed in) -> C expression.
#: Valid C and CUDA C++ alike, so the test can evaluate the same text on the host with gcc.
EXPRESSIONS = {
    "add": _binary("({a} + {b})"), "sub": _binary("({a} - {b})"),
    "mul": _binary("({a} * {b})"), "div": _binary("({a} / {b})"),
    "neg": lambda a, attrs, c, t: f"(-{a[0]})",
    "exp": _call("exp"), "log": _call("log"), "tanh": _call("tanh"), "sqrt": _call("sqrt"),
    "erf": _call("erf"), "sin": _call("sin"), "cos": _call("cos"), "abs": _call("fabs"),
    "log1p": _call("log1p"), "expm1": _call("expm1"),
    "rsqrt": lambda a, attrs, c, t: f"({c(1.0)} / {_math('sqrt', t)}({a[0]}))",
    "reciprocal": lambda a, attrs, c, t: f"({c(1.0)} / {a[0]})",
    "square": _binary("({a} * {a})"),
    "sigmoid": lambda a, attrs, c, t: f"({c(1.0)} / ({c(1.0)} + {_math('exp', t)}(-{a[0]})))",
    "silu": lambda a, attrs, c, t: f"({a[0]} / ({c(1.0)} + {_math('exp', t)}(-{a[0]})))",
    "relu": lambda a, attrs, c, t: f"(({a[0]} > {c(0)} || {a[0]} != {a[0]}) ? {a[0]} : {c(0)})",
    "leaky_relu": lambda a, attrs, c, t: (f"({a[0]} > {c(0)} ? {a[0]} : "
                                          f"{a[0]} * {c(attrs['negative_slope'])})"),
    "gelu": _gelu, "clamp": _clamp,
    "pow": lambda a, attrs, c, t: f"{_math('pow', t)}({a[0]}, {a[1]})",
    "maximum": _binary("(({a} > {b} || {a} != {a}) ? {a} : {b})"),
    "minimum": _binary("(({a} < {b} || {a} != {a}) ? {a} : {b})"),
    "eq": _binary("({a} == {b})"), "ne": _binary("({a} != {b})"), "lt": _binary("({a} < {b})"),
    "le": _binary("({a} <= {b})"), "gt": _binary("({a} > {b})"), "ge": _binary("({a} >= {b})"),
    "logical_not": lambda a, attrs, c, t: f"(!{a[0]})",
    "where": lambda a, attrs, c, t: f"({a[0]} ? {a[1]} : {a[2]})",
    "cast": lambda a, attrs, c, t: a[0], "clone": lambda a, attrs, c, t: a[0],
}

#: ops computed only for float dtypes (NumPy's integer rules differ from these formulas)
_INTEGER_OK = frozenset(["add", "sub", "mul", "neg", "square", "maximum", "minimum", "eq", "ne",
                         "lt", "le", "gt", "ge", "logical_not", "where", "cast", "clone",
                         "relu", "clamp"])


def supports(node) -> bool:
    """Whether the generator can compute this node (op known, dtypes handled)."""
    name = node.op.name
    if name not in EXPRESSIONS and name not in REDUCTIONS:
        return False
    dtypes = [v.dtype for v in node.reads] + [node.out.dtype]
    if any(d.name not in CTYPES for d in dtypes):
        return False
    if name not in _INTEGER_OK:
        return all(d.kind == "f" for d in dtypes)
    return True


def compute_dtype(node) -> np.dtype:
    """The dtype an op's Python-scalar operands take (NumPy's weak-scalar rule): its result's,
    or for bool results (comparisons) the first array operand's."""
    if node.out.dtype.kind == "b" and node.reads and node.op.name != "where":
        return node.reads[0].dtype
    return node.out.dtype


def expression(node, args: list[str]) -> str:
    """The C expression computing ``node`` from argument texts (None: a Python scalar there,
    written as a literal of the op's compute dtype)."""
    t = ctype(compute_dtype(node))
    texts = [literal(v, t) if a is None else a for a, v in zip(args, node.inputs)]
    return EXPRESSIONS[node.op.name](texts, node.attrs, lambda v: literal(v, t), t)


# -- layout ---------------------------------------------------------------------------------------
class _Plan:
    """How a group maps onto the kernel: body, reduction, per-input spans, reduced dims."""

    def __init__(self, group, body, reduction, rank, spans, reduced):
        self.group, self.body, self.reduction = group, body, reduction
        self.rank, self.spans, self.reduced = rank, spans, reduced


def _plan(group) -> _Plan | None:
    nodes = group.nodes
    reduction = nodes[-1] if nodes[-1].op.name in REDUCTIONS else None
    body = nodes[:-1] if reduction is not None else list(nodes)
    if not body or not all(n.op.name in EXPRESSIONS and supports(n) for n in body):
        return None
    shape = body[0].out.shape
    rank = len(shape)
    if any(n.out.shape != shape for n in body) or any(len(v.shape) > rank for v in group.inputs):
        return None
    spans = [(False,) * (rank - len(v.shape)) + tuple(d != 1 for d in v.shape)
             for v in group.inputs]
    if any(size != 1 and not any(s[d] for s in spans) for d, size in enumerate(shape)):
        return None  # a dimension no input sizes (an expand): left to the unfused kernels
    reduced = [False] * rank
    if reduction is not None:
        source = reduction.inputs[0]
        reduced = _reduced_dims(reduction, rank)
        if reduced is None or not supports(reduction) or source.__class__ is not Value or \
                source.index not in {n.out.index for n in body}:
            return None
    return _Plan(group, body, reduction, rank, spans, reduced)


def _reduced_dims(node, rank: int) -> list[bool] | None:
    """Per iteration dim, whether the reduction node sums over it (None: not understood)."""
    if node.op.name == "sum_to":
        target = tuple(node.attrs["shape"])
        lead = rank - len(target)
        return None if lead < 0 else [d < lead or target[d - lead] == 1 for d in range(rank)]
    dim = node.attrs.get("dim")
    axes = range(rank) if dim is None else {a % rank for a in
                                            ((dim,) if isinstance(dim, int) else dim)}
    return [d in axes for d in range(rank)]


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


def _body(plan: _Plan, pad: str, flat: str) -> tuple[list[str], dict]:
    """Loads, one typed statement per node, stores of escaping values; -> (lines, names)."""
    group = plan.group
    names, lines = {}, []
    full = list(range(plan.rank))
    for k, v in enumerate(group.inputs):
        dims = [d for d in full if plan.spans[k][d]]
        offset = flat if len(dims) == plan.rank and flat else _horner(dims)
        lines.append(f"{pad}const {ctype(v.dtype)} x{k} = in{k}[{offset}];")
        names[v.index] = f"x{k}"
    outputs = {v.index: m for m, v in enumerate(group.outputs)}
    for n, node in enumerate(plan.body):
        args = [names[v.index] if v.__class__ is Value else None for v in node.inputs]
        t = ctype(node.out.dtype)
        lines.append(f"{pad}const {t} v{n} = ({t})({expression(node, args)});")
        names[node.out.index] = f"v{n}"
        if node.out.index in outputs:
            lines.append(f"{pad}out{outputs[node.out.index]}[{flat or _horner(full)}] = v{n};")
    return lines, names


def source(group) -> str | None:
    """The CUDA C source of ``group``'s kernel (``extern "C"`` :data:`NAME`), or None."""
    plan = _plan(group)
    return None if plan is None else _source(plan)


def _source(plan: _Plan) -> str:
    group = plan.group
    params = [f"const {ctype(v.dtype)}* __restrict__ in{k}" for k, v in enumerate(group.inputs)]
    params += [f"{ctype(v.dtype)}* __restrict__ out{m}" for m, v in enumerate(group.outputs)]
    params += [f"long long d{d}" for d in range(plan.rank)] + ["long long n_out", "long long n_red"]
    lines = [f'extern "C" __global__ void {NAME}({", ".join(params)})', "{"]
    all_dims = list(range(plan.rank))
    if plan.reduction is None:
        broadcast = any(not all(s) for s in plan.spans)
        lines.append("    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
                     "i < n_out; i += (long long)gridDim.x * blockDim.x) {")
        lines += _split("i", all_dims, " " * 8) if broadcast else []
        lines += _body(plan, " " * 8, "i")[0]
        return "\n".join(lines + ["    }", "}", ""])
    kept = [d for d in all_dims if not plan.reduced[d]]
    summed = [d for d in all_dims if plan.reduced[d]]
    m = group.outputs.index(plan.reduction.out)
    t = ctype(plan.reduction.out.dtype)
    body, names = _body(plan, " " * 12, "")
    total = "acc[0] / (double)n_red" if plan.reduction.op.name == "mean" else "acc[0]"
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
              f"        if (threadIdx.x == 0) out{m}[o] = ({t})({total});",
              "        __syncthreads();", "    }", "}", ""]
    return "\n".join(lines)


# -- execution ------------------------------------------------------------------------------------
class CudaKernel:
    """``kernel(*inputs, out=None) -> tuple of output arrays`` running the generated source.

    CuPy is imported, and the source compiled, on the first call only.
    """

    def __init__(self, plan: _Plan):
        self.source = _source(plan)
        self.rank, self.spans, self.reduced = plan.rank, plan.spans, plan.reduced
        self.reduction = plan.reduction
        reduced_out = None if plan.reduction is None else plan.reduction.out
        self.outputs = [(v.dtype, v is reduced_out) for v in plan.group.outputs]
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
        if node is None:
            reduced_shape = None
        elif node.op.name == "sum_to":
            reduced_shape = tuple(node.attrs["shape"])
        elif node.attrs.get("keepdim"):
            reduced_shape = tuple(1 if r else s for s, r in zip(full, self.reduced))
        else:
            reduced_shape = tuple(s for s, r in zip(full, self.reduced) if not r)
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
            usable = buffer is not None and buffer.flags.c_contiguous
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
        plan = _plan(group)
        _cache[key] = None if plan is None else CudaKernel(plan)
    return _cache[key]


_POINTWISE = frozenset([Structure.ELEMENTWISE, Structure.BROADCAST, Structure.NONE])

#: what fw_cuda registers through ``fw_register_fusion_rules``
RULES = [FusionRule(name="cuda.rawkernel_pointwise", device="cuda",
                    structures=_POINTWISE | {Structure.REDUCTION}, generate=generate,
                    supports=supports)]
