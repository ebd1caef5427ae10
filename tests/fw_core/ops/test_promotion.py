"""The dtypes a kernel sees: eager dispatch and the compile tracer's cast nodes agree for every
op that promotes, every dtype pair and weak Python scalars (fw_core.ops.promotion)."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import dtypes as _dt
from fw_core.compile.trace import trace
from fw_core.device import registry
from fw_core.ops import dispatch
from fw_core.ops.registry import OPS

fw.tensor([0.0])  # loads the plugins, so OPS holds every op

_BINARY = sorted((op for op in OPS.values() if op.promotion == "binary"), key=lambda o: o.name)
_FLOAT_RESULT = sorted((op for op in OPS.values() if op.float_result and op.promotion == "none"),
                       key=lambda o: o.name)
_OPERANDS = list(_dt.ALL) + ["int scalar", "float scalar", "bool scalar"]
_SCALARS = {"int scalar": 3, "float scalar": 0.5, "bool scalar": True}


def _operand(kind):
    if isinstance(kind, str):
        return _SCALARS[kind]
    return fw.tensor(np.ones(2, dtype=kind.numpy))


def _kernel_and_traced_dtypes(monkeypatch, op, call, inputs):
    seen = []

    def spy(*arrays, **attrs):
        seen.append([getattr(a, "dtype", None) for a in arrays])
        return next(a for a in arrays if hasattr(a, "dtype"))

    monkeypatch.setitem(registry.kernels["cpu"], op, spy)
    call(*inputs)
    tracer, _ = trace(call, tuple(inputs))
    node = next(s for s in reversed(tracer.graph.steps) if getattr(s, "op", None) is op)
    traced = [getattr(v, "dtype", None) for v in node.inputs]
    return seen[0], seen[1], traced


def _assert_same(eager, replayed, traced, inputs):
    assert eager == replayed
    for i, (kernel, cast) in enumerate(zip(eager, traced)):
        if isinstance(inputs[i], fw.Tensor):
            assert kernel == cast, f"input {i}: the kernel saw {kernel}, the trace casts to {cast}"


@pytest.mark.parametrize("op", _BINARY, ids=lambda o: o.name)
def test_binary_promotion_traces_the_casts_dispatch_does(monkeypatch, op):
    for left in _OPERANDS:
        for right in _OPERANDS:
            if isinstance(left, str) and isinstance(right, str):
                continue
            inputs = [_operand(left), _operand(right)]
            eager, replayed, traced = _kernel_and_traced_dtypes(
                monkeypatch, op, lambda a, b: dispatch.apply_binary(op, a, b), inputs)
            _assert_same(eager, replayed, traced, inputs)
            tensors = [t for t in inputs if isinstance(t, fw.Tensor)]
            if len(tensors) == 2:  # one dtype for both, float where the op's result is
                assert eager[0] == eager[1]
                assert not op.float_result or _dt.is_float(eager[0])


@pytest.mark.parametrize("op", _FLOAT_RESULT, ids=lambda o: o.name)
def test_float_result_inputs_are_traced_as_dispatch_converts_them(monkeypatch, op):
    for dtype in _dt.ALL:
        inputs = [_operand(dtype)]
        eager, replayed, traced = _kernel_and_traced_dtypes(
            monkeypatch, op, lambda x: dispatch.apply(op, (x,)), inputs)
        _assert_same(eager, replayed, traced, inputs)
        assert _dt.is_float(eager[0])
        assert eager[0] == (inputs[0]._data.dtype if inputs[0].is_floating_point()
                            else _dt.default_float.numpy)


def test_meta_promotion_is_the_kernels_dtype():
    from fw_core.ops.meta import promote
    from fw_core.ops.promotion import binary, with_scalar
    from fw_core.records import TensorSpec

    for a in _dt.ALL:
        for b in _dt.ALL:
            spec = promote(TensorSpec((2,), a), TensorSpec((2,), b))
            assert spec.numpy == binary(a.numpy, b.numpy, False)
        for scalar in _SCALARS.values():
            assert promote(TensorSpec((2,), a), scalar).numpy == with_scalar(a.numpy, scalar, False)
    assert promote(TensorSpec((2,), _dt.int8), 2, float_result=True) is _dt.default_float
