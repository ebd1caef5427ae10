"""Shared machinery of the CUDA fusion tests: a graph builder over the CPU kernels, the groups
whose sources are compiled and run on the host, and the host run of a generated kernel."""

from __future__ import annotations

import host_cuda
import numpy as np

import fw_core as fw
from fw_core.compile.ir import Group, Node, Value


class Builder:
    """Builds a graph by running each op's CPU kernel on sample arrays (for shapes, dtypes and
    the reference results)."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []
        self.arrays: dict[int, np.ndarray] = {}
        self.count = 0

    def _value(self, array, source, payload=None) -> Value:
        v = Value(self.count, array.shape, array.dtype, source, payload)
        self.count += 1
        self.arrays[v.index] = array
        return v

    def input(self, shape, dtype="float32", low=-2.0, high=2.0) -> Value:
        if np.dtype(dtype) == np.bool_:
            array = self.rng.random(shape) > 0.5
        else:
            array = self.rng.uniform(low, high, shape).astype(dtype)
        v = self._value(np.asarray(array), "input", len(self.inputs))
        self.inputs.append(v)
        return v

    def op(self, name, *args, **attrs) -> Value:
        op = fw.ops.get(name)
        raw = [self.arrays[a.index] if isinstance(a, Value) else a for a in args]
        out = self._value(np.asarray(fw.ops.kernel(op, "cpu")(*raw, **attrs)), "node")
        node = Node(op, tuple(args), attrs, out, "test", "forward")
        out.producer = node
        self.nodes.append(node)
        return out

    def group(self, *outputs: Value) -> Group:
        return Group(list(self.nodes), list(self.inputs), list(outputs))


def host_run(tmp_path, kernel, group: Group, arrays: list[np.ndarray],
             threads: int = 1) -> list[np.ndarray]:
    """Run ``kernel``'s source (a CudaKernel of ``group``) on the host as one block of
    ``threads`` threads; return its outputs."""
    full, shapes = kernel.shapes([a.shape for a in arrays])
    n_red = int(np.prod([s for s, r in zip(full, kernel.reduced) if r]))
    n_out = int(np.prod([s for s, r in zip(full, kernel.reduced) if not r]))
    outputs = [(v.dtype, shape) for v, shape in zip(group.outputs, shapes)]
    scalars = [f"{s}LL" for s in full] + [f"{n_out}LL", f"{n_red}LL"]
    return host_cuda.run(tmp_path, kernel.source, "fw_fused", arrays, outputs,
                         scalars, threads=threads)


def tolerance(dtype, exact_half: bool = False) -> dict:
    """assert_allclose tolerances: float16 within a few half ulps (the CPU kernels of gelu,
    erf... round their intermediates to half, the fused kernel once), else float rounding."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return {"rtol": 0, "atol": 0} if exact_half else {"rtol": 4e-3, "atol": 2e-3}
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


# -- float32 / float64 groups ---------------------------------------------------------------------
def _gelu_chain(b):
    x, w = b.input((4, 33)), b.input((33,))
    return b.group(b.op("gelu", b.op("add", x, w), approximate="none"))


def _softmaxish(b):
    x = b.input((5, 7), "float64")
    e = b.op("exp", b.op("sub", x, 0.5))
    return b.group(e, b.op("sum", e, dim=(1,), keepdim=True))


def _mean_rows(b):
    x, y = b.input((6, 9)), b.input((6, 1))
    return b.group(b.op("mean", b.op("mul", b.op("tanh", x), y), dim=(1,), keepdim=False))


def _bias_grad(b):
    g, m = b.input((3, 4, 8)), b.input((3, 4, 8), "bool")
    return b.group(b.op("sum_to", b.op("where", m, g, 0.0), shape=(8,)))


def _full_sum(b):
    x = b.input((300,), low=0.1, high=3.0)
    return b.group(b.op("sum", b.op("rsqrt", b.op("sqrt", x)), dim=None, keepdim=False))


def _activations(b):
    x = b.input((2, 3, 5))
    b.arrays[x.index][0, 1, :2] = (np.nan, np.inf)  # maximum / minimum / relu propagate NaN
    s = b.op("sigmoid", x)
    r = b.op("relu", b.op("neg", x))
    t = b.op("gelu", x, approximate="tanh")
    m = b.op("maximum", b.op("minimum", s, r), t)
    high, low = b.op("maximum", x, 0.25), b.op("minimum", 0.25, x)  # one operand NaN
    return b.group(m, b.op("div", b.op("erf", m), 3.0), high, low, r)


def _compare_cast(b):
    x, y = b.input((4, 6)), b.input((4, 6))
    c = b.op("gt", x, y)
    d = b.op("lt", x, 0.25)
    e = b.op("eq", c, d)
    f = b.op("cast", e, dtype=np.dtype("float32"))
    return b.group(b.op("where", c, b.op("pow", b.op("add", f, 2.0), 2.5), b.op("log", y)))


# -- float16 groups -------------------------------------------------------------------------------
def _half_activation_chain(b):
    """An activation chain with a bias broadcast: (x + w) -> gelu -> silu -> * 0.1 -> tanh."""
    x, w = b.input((4, 33), "float16"), b.input((33,), "float16")
    g = b.op("gelu", b.op("add", x, w), approximate="none")
    s = b.op("mul", b.op("silu", g), 0.1)
    return b.group(g, b.op("tanh", b.op("sigmoid", s)))


def _half_arith(b):
    """Ops NumPy computes in float and rounds once: the fused kernel must agree bit for bit,
    which it does only if every intermediate is rounded to half (and 0.1 to half first)."""
    x, w = b.input((6, 17), "float16", -60.0, 60.0), b.input((17,), "float16", -3.0, 3.0)
    p = b.op("mul", b.op("add", x, w), 0.1)
    q = b.op("div", b.op("sub", p, w), 3.0)
    r = b.op("maximum", b.op("relu", q), b.op("mul", x, 0.01))
    return b.group(p, b.op("where", b.op("gt", q, 0.5), r, b.op("square", q)))


def _half_rowsum(b):
    x = b.input((6, 40), "float16")
    e = b.op("exp", b.op("mul", x, 0.5))
    return b.group(b.op("sum", e, dim=(1,), keepdim=False))


def _half_mean(b):
    x, y = b.input((3, 5, 12), "float16"), b.input((12,), "float16")
    return b.group(b.op("mean", b.op("mul", x, y), dim=(0, 2), keepdim=True))


def _half_casts(b):
    """float16 <-> float32 / float64 / int32 casts, and half arithmetic between them."""
    x, y = b.input((5, 8), "float16", -4.0, 4.0), b.input((5, 8), "float32", -70000.0, 70000.0)
    d, i = b.input((5, 8), "float64", -3.0, 3.0), b.input((5, 8), "int32", -70000, 70000)
    wide = b.op("add", b.op("cast", x, dtype=np.dtype("float32")), y)  # f16 -> f32
    narrow = b.op("cast", wide, dtype=np.dtype("float16"))  # f32 -> f16, overflows to inf
    from_double = b.op("cast", d, dtype=np.dtype("float16"))
    from_int = b.op("cast", i, dtype=np.dtype("float16"))
    to_int = b.op("cast", b.op("mul", x, 100.0), dtype=np.dtype("int32"))
    to_double = b.op("cast", x, dtype=np.dtype("float64"))
    return b.group(narrow, from_double, from_int, to_int, to_double,
                   b.op("add", from_double, from_int))


#: name -> builder of a group; every one compiles with nvcc and runs on the host
GROUPS = {"gelu_bias": _gelu_chain, "exp_rowsum_f64": _softmaxish, "tanh_mul_mean": _mean_rows,
          "where_sum_to": _bias_grad, "rsqrt_full_sum": _full_sum,
          "activations": _activations, "compare_cast_pow": _compare_cast,
          "half_activation_chain": _half_activation_chain, "half_arith": _half_arith,
          "half_rowsum": _half_rowsum, "half_mean": _half_mean, "half_casts": _half_casts}

#: groups whose every node NumPy computes with one rounding: compared bit for bit
EXACT = frozenset(["half_arith", "half_casts"])


def build(name: str):
    b = Builder()
    return b, GROUPS[name](b)
