"""The op conformance base: every op, every installed device, one set of checks.

An :class:`OpCase` states an op call once: the fw call, a NumPy reference, the inputs to draw,
and (optionally) the same call in PyTorch. The checks then run it on a device and dtype:

- :func:`check_forward` — values against the NumPy reference (contiguous and non-contiguous);
- :func:`check_meta` — the op's meta rule predicts the kernel's shape and dtype;
- :func:`check_grad` — VJPs against central differences in float64;
- :func:`check_double_grad` — VJPs of VJPs (where the op is twice differentiable);
- :func:`check_torch` — values and gradients against PyTorch (differential suite).

A device plugin gets the whole suite by parametrising over :func:`params` with its device name
(see docs/plugins.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

_TOLERANCE = {"float16": (1e-2, 1e-2), "float32": (1e-5, 1e-4), "float64": (1e-10, 1e-7),
              "int8": (0, 0), "int16": (0, 0), "int32": (0, 0), "int64": (0, 0),
              "uint8": (0, 0), "bool": (0, 0)}


@dataclass(frozen=True)
class Input:
    """How to draw one input: a shape and a kind.

    kind: "float" (uniform in [low, high)), "positive" (uniform in [low, high) with low > 0),
    "int" (integers in [low, high)), "index" (int64 in [0, high)), "bool", or "value" (use
    ``value`` as given: a Python scalar or array).
    """

    shape: tuple[int, ...] = ()
    kind: str = "float"
    low: float = -2.0
    high: float = 2.0
    value: object = None
    grad: bool = True

    def draw(self, rng: np.random.Generator, dtype: str) -> object:
        if self.kind == "value":
            return self.value
        if self.kind == "index":
            return rng.integers(0, int(self.high), self.shape).astype(np.int64)
        if self.kind == "int":
            return rng.integers(int(self.low), int(self.high), self.shape).astype(
                dtype if dtype in ("int8", "int16", "int32", "int64", "uint8") else np.int64)
        if self.kind == "bool":
            return rng.random(self.shape) < 0.5
        values = rng.uniform(self.low, self.high, self.shape)
        return values.astype(dtype) if dtype in ("float16", "float32", "float64") else \
            np.round(values).astype(dtype)

    @property
    def differentiable(self) -> bool:
        return self.grad and self.kind in ("float", "positive")


def arg(*shape: int, low: float = -2.0, high: float = 2.0, grad: bool = True) -> Input:
    """A float input of ``shape`` drawn uniformly from [low, high)."""
    return Input(tuple(shape), "float", low, high, grad=grad)


def positive(*shape: int, low: float = 0.5, high: float = 2.0) -> Input:
    """A float input bounded away from 0 (for log, sqrt, division)."""
    return Input(tuple(shape), "positive", low, high)


def index(*shape: int, high: int) -> Input:
    """An int64 index input in [0, high)."""
    return Input(tuple(shape), "index", 0, high, grad=False)


def mask(*shape: int) -> Input:
    """A random bool input."""
    return Input(tuple(shape), "bool", grad=False)


def value(v) -> Input:
    """A fixed value (a Python scalar or array) passed as is."""
    return Input((), "value", value=v, grad=False)


@dataclass(frozen=True)
class OpCase:
    """One call of one op, with its reference.

    Attributes:
        op: the op's name (its contract is ``fw.ops.get(op)``).
        name: a short id for the case ("broadcast", "dim1_keepdim").
        inputs: how to draw each positional input.
        fn: ``fn(fw, *inputs) -> Tensor``: the fw call (attributes written inline).
        reference: ``reference(*numpy_inputs) -> ndarray``: the expected values.
        torch: ``torch(torch_module, *torch_inputs) -> torch.Tensor``, for the differential suite.
        dtypes: dtypes the forward check runs in (gradients always use float64).
        grad: run gradcheck; double_grad: run gradgradcheck (defaults to the op's contract).
        tolerance: (atol, rtol) overrides by dtype name.
    """

    op: str
    name: str
    inputs: Sequence[Input]
    fn: Callable
    reference: Callable | None = None
    torch: Callable | None = None
    dtypes: tuple[str, ...] = ("float32", "float64")
    grad: bool = True
    double_grad: bool | None = None
    tolerance: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}"


def draw(case: OpCase, dtype: str, seed: int = 0) -> list:
    """The case's inputs as NumPy arrays / values, the same in every process (the seed is a
    CRC of the case id and dtype: Python's str hash changes from run to run)."""
    rng = np.random.default_rng(zlib.crc32(f"{case.id}|{dtype}|{seed}".encode()))
    return [spec.draw(rng, dtype) for spec in case.inputs]


def to_fw(fw, values, specs, device, requires_grad=False, noncontiguous=False):
    """Turn drawn values into fw tensors (scalars pass through)."""
    out = []
    for v, spec in zip(values, specs):
        if spec.kind == "value" and not isinstance(v, np.ndarray):
            out.append(v)
            continue
        array = np.asarray(v)
        if noncontiguous and array.ndim >= 2:
            array = np.ascontiguousarray(array.swapaxes(-1, -2)).swapaxes(-1, -2)
        elif noncontiguous and array.ndim == 1 and array.size > 0:
            array = np.repeat(array, 2)[::2]
        t = fw.from_numpy(array) if array.flags["C_CONTIGUOUS"] is False else fw.tensor(array)
        t = t.to(device)
        if requires_grad and spec.differentiable and array.dtype.kind == "f":
            t.requires_grad_(True)
        out.append(t)
    return out


def _host(x):
    return np.asarray(x.__array__()) if hasattr(x, "_data") else np.asarray(x)


def _tolerance(case: OpCase, dtype: str):
    return case.tolerance.get(dtype, _TOLERANCE[dtype])


def check_forward(fw, case: OpCase, device: str, dtype: str, noncontiguous=False) -> None:
    """fw's result equals the NumPy reference (shape, dtype kind and values)."""
    values = draw(case, dtype)
    result = case.fn(fw, *to_fw(fw, values, case.inputs, device, noncontiguous=noncontiguous))
    expected = np.asarray(case.reference(*values))
    got = _host(result)
    assert got.shape == expected.shape, f"{case.id}: shape {got.shape} != {expected.shape}"
    atol, rtol = _tolerance(case, dtype)
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=case.id)
    else:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   atol=atol, rtol=rtol, err_msg=case.id, equal_nan=True)


def check_meta(fw, case: OpCase, device: str, dtype: str) -> None:
    """The op's meta rule, given the inputs' specs and the recorded attributes, predicts the
    kernel's output shape and dtype."""
    from fw_core.ops.meta import spec_of

    values = draw(case, dtype)
    inputs = to_fw(fw, values, case.inputs, device)
    result = case.fn(fw, *inputs)
    if result.op != case.op:
        return  # the call reduced to another op (e.g. a no-op returning its input)
    contract = fw.ops.get(case.op)
    event = _last_event(fw, case, inputs)
    if event is None:
        return
    spec = contract.meta(*(spec_of(t) for t in event.inputs), **event.attrs)
    assert tuple(spec.shape) == tuple(result.shape), \
        f"{case.id}: meta shape {spec.shape} != kernel shape {tuple(result.shape)}"
    assert spec.dtype is result.dtype, \
        f"{case.id}: meta dtype {spec.dtype} != kernel dtype {result.dtype}"


def has_formula(fw, case: OpCase) -> bool:
    return fw.ops.get(case.op).expr is not None


def check_formula(fw, case: OpCase, device: str, dtype: str) -> None:
    """The op's formula (``OpDef.expr``), evaluated by NumPy on the arrays its kernel got,
    equals the kernel's result: what fused loops compute on every device is what the unfused
    kernel does."""
    from fw_core.ops import promotion, scalar

    inputs = to_fw(fw, draw(case, dtype), case.inputs, device)
    event = _last_event(fw, case, inputs)
    if event is None:
        return
    op = event.op
    converted = promotion.kernel_dtypes(op, event.inputs) or [None] * len(event.inputs)
    args = [v if not hasattr(v, "_data") else _host(v) if to is None else _host(v).astype(to)
            for v, to in zip(event.inputs, converted)]
    got = _host(event.output)
    arrays = [a.dtype for a in args if isinstance(a, np.ndarray)]
    expr = scalar.formula(op, event.attrs, len(args))
    want = scalar.evaluate(expr, args, scalar.compute_dtype(arrays, got.dtype))
    want = np.broadcast_to(want, got.shape).astype(got.dtype)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=case.id)
    else:
        atol, rtol = _tolerance(case, dtype)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=f"{case.id}: formula {expr}")


def _last_event(fw, case, inputs):
    """The last run of the case's op in ``case.fn`` on ``inputs`` (via an inspector), or None."""
    from fw_core.records import Inspector

    seen = []
    inspector = Inspector(name="conformance.meta", on_op=lambda e: seen.append(e))
    with fw.inspectors.activated(inspector):
        case.fn(fw, *inputs)
    calls = [e for e in seen if e.op.name == case.op]
    return calls[-1] if calls else None


def check_grad(fw, case: OpCase, device: str) -> None:
    """Analytical (VJP) and numerical Jacobians agree in float64."""
    values = draw(case, "float64")
    inputs = to_fw(fw, values, case.inputs, device, requires_grad=True)
    assert any(getattr(t, "requires_grad", False) for t in inputs), f"{case.id}: nothing to check"
    fw.autograd.gradcheck(lambda *xs: case.fn(fw, *xs), inputs)


def check_double_grad(fw, case: OpCase, device: str) -> None:
    """The VJP is itself differentiable and correct (gradgradcheck in float64)."""
    values = draw(case, "float64")
    inputs = to_fw(fw, values, case.inputs, device, requires_grad=True)
    fw.autograd.gradgradcheck(lambda *xs: case.fn(fw, *xs), inputs)


def wants_double_grad(fw, case: OpCase) -> bool:
    if case.double_grad is not None:
        return case.double_grad
    return case.grad and fw.ops.get(case.op).twice_differentiable


def check_torch(fw, torch, case: OpCase, dtype: str = "float64") -> None:
    """Values and gradients agree with PyTorch on the same inputs."""
    values = draw(case, dtype)
    fw_inputs = to_fw(fw, values, case.inputs, "cpu", requires_grad=case.grad)
    torch_inputs = []
    for v, spec in zip(values, case.inputs):
        if spec.kind == "value" and not isinstance(v, np.ndarray):
            torch_inputs.append(v)
            continue
        t = torch.from_numpy(np.array(v))
        if case.grad and spec.differentiable and t.is_floating_point():
            t.requires_grad_(True)
        torch_inputs.append(t)
    ours = case.fn(fw, *fw_inputs)
    theirs = case.torch(torch, *torch_inputs)
    atol, rtol = _tolerance(case, dtype)
    np.testing.assert_allclose(_host(ours).astype(np.float64),
                               theirs.detach().numpy().astype(np.float64),
                               atol=max(atol, 1e-6), rtol=max(rtol, 1e-5), err_msg=case.id,
                               equal_nan=True)
    if not case.grad or not ours.requires_grad:
        return
    # gradients: float64 to 1e-6/1e-5 (they are sums of products); lower precisions to the
    # same tolerance as their values
    grad_atol, grad_rtol = (1e-6, 1e-5) if dtype == "float64" else (max(atol, 1e-6),
                                                                    max(rtol, 1e-5))
    rng = np.random.default_rng(1)
    cotangent = rng.standard_normal(tuple(ours.shape))
    ours.backward(fw.tensor(cotangent.astype(_host(ours).dtype)))
    theirs.backward(torch.from_numpy(cotangent.astype(theirs.detach().numpy().dtype)))
    for f, t in zip(fw_inputs, torch_inputs):
        if getattr(f, "requires_grad", False):
            np.testing.assert_allclose(_host(f.grad), t.grad.numpy(), atol=grad_atol,
                                       rtol=grad_rtol, err_msg=f"{case.id} gradient")


def check_torch_call(fw, torch, ours: Callable, theirs: Callable, *shapes) -> None:
    """``ours(fw, *xs)`` and ``theirs(torch, *xs)`` agree in values and in gradients for a
    random cotangent (float64) on float inputs of ``shapes``: an ad-hoc :func:`check_torch`."""
    check_torch(fw, torch, OpCase("call", "adhoc", [arg(*s) for s in shapes], ours,
                                  torch=theirs))


def params(cases: Sequence[OpCase], devices: Sequence[str]):
    """(case, device, dtype) triples for pytest parametrisation, with readable ids."""
    import pytest

    return [pytest.param(c, d, t, id=f"{c.id}-{d}-{t}") for c in cases for d in devices
            for t in c.dtypes]
