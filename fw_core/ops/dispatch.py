"""The eager per-op path: kernel from the frozen table, wrap, record, notify. Nothing else.

The meta rule is consulted when a kernel fails, to turn the failure into an error that names
the op, the module and the shapes; the conformance suite checks that every meta rule agrees with
its kernels, so tracing and memory planning can rely on the meta rule alone.
"""

from __future__ import annotations

import warnings

from .._state import state
from ..autograd.grad_mode import INFERENCE
from ..autograd.node import Node
from ..dtypes import FLOAT_KINDS, bfloat16
from ..errors import (
    ArgumentTypeError,
    DeviceError,
    DTypeError,
    FwError,
    KernelError,
    UnsupportedError,
)
from ..tensor import Tensor
from .allocation import out_of_memory
from .meta import describe, located, spec_of
from .promotion import binary, float_input, with_scalar
from .registry import kernel as kernel_of

_wrap = Tensor._wrap
_EMPTY: dict = {}
_SCALAR_TYPES = (int, float, bool)


def apply(op, inputs: tuple, attrs: dict = _EMPTY) -> Tensor:
    """Run ``op`` on a tuple of tensors (all on one device) with keyword attributes."""
    try:
        first = inputs[0]
        device = first._device
        count = len(inputs)
        if count == 1:
            arrays = (first._data,)
        elif count == 2:  # unrolled: the common binary case (matmul, linear without bias, ...)
            second = inputs[1]
            if second._device is not device:
                raise mixed_devices(op, inputs)
            arrays = (first._data, second._data)
        else:
            for t in inputs:
                if t._device is not device:
                    raise mixed_devices(op, inputs)
            arrays = [t._data for t in inputs]
    except AttributeError:
        raise not_a_tensor(op, next((t for t in inputs if not isinstance(t, Tensor)),
                                    inputs[0]), inputs) from None
    if op.float_result:
        arrays = [a if a.dtype.kind in FLOAT_KINDS else a.astype(float_input(a.dtype))
                  for a in arrays]
    try:
        kernel = device.kernels[op]
    except KeyError:
        kernel = missing_kernel(op, device)
    try:
        out = kernel(*arrays, **attrs) if attrs else kernel(*arrays)
    except FwError as err:
        raise located(err, op.name, inputs) from None
    except Exception as exc:
        raise explain_failure(op, inputs, attrs, exc) from exc
    return finish(op, inputs, attrs, out, device)


def finish(op, inputs: tuple, attrs: dict, out, device) -> Tensor:
    """Wrap a kernel's raw result; record it for backward if needed; tell active inspectors."""
    if out.__class__ is not device.array_type:
        out = device.xp.asarray(out)
    switches = state.__dict__  # this thread's switches in one per-thread lookup
    module = switches["module_path"]
    result = _wrap(out, device, op, module)
    if switches["grad_enabled"]:
        if op.vjp is not None:
            for t in inputs:
                if t.__class__ not in _SCALAR_TYPES and t.requires_grad:
                    if out.dtype.kind in FLOAT_KINDS:
                        result._node = Node(op, inputs, attrs, result, module)
                        result.requires_grad = True
                    break
    elif switches["inference_mode"]:
        result._vc = INFERENCE
    if switches["observed"]:
        from ..inspectors import notify_op

        notify_op(op, inputs, attrs, result)
    return result


def apply_unary(op, x) -> Tensor:
    """``apply`` for one tensor and no attributes (the hot elementwise case)."""
    try:
        data = x._data
    except AttributeError:
        raise not_a_tensor(op, x) from None
    device = x._device
    if op.float_result and data.dtype.kind not in FLOAT_KINDS:
        data = data.astype(float_input(data.dtype))
    try:
        kernel = device.kernels[op]
    except KeyError:
        kernel = missing_kernel(op, device)
    try:
        out = kernel(data)
    except FwError as err:
        raise located(err, op.name, (x,)) from None
    except Exception as exc:
        raise explain_failure(op, (x,), _EMPTY, exc) from exc
    return finish(op, (x,), _EMPTY, out, device)


def apply_binary(op, a, b) -> Tensor:
    """``apply`` for two operands, one of which may be a Python scalar (kept as a weak scalar,
    so ``float32_tensor * 2.0`` stays float32)."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return _binary_tensors(op, a, b)
        return _binary_scalar(op, a, b, a, _as_scalar(op, b, a), False)
    if isinstance(b, Tensor):
        return _binary_scalar(op, b, a, _as_scalar(op, a, b), b, True)
    raise not_a_tensor(op, a)


def _binary_tensors(op, a, b):
    device = a._device
    if b._device is not device:
        raise mixed_devices(op, (a, b))
    ad = a._data
    bd = b._data
    if ad.dtype is not bd.dtype or op.float_result and ad.dtype.kind not in FLOAT_KINDS:
        common = binary(ad.dtype, bd.dtype, op.float_result)
        ad = ad.astype(common, copy=False)
        bd = bd.astype(common, copy=False)
    try:
        kernel = device.kernels[op]
    except KeyError:
        kernel = missing_kernel(op, device)
    try:
        out = kernel(ad, bd)
    except FwError as err:
        raise located(err, op.name, (a, b)) from None
    except Exception as exc:
        raise explain_failure(op, (a, b), _EMPTY, exc) from exc
    return finish(op, (a, b), _EMPTY, out, device)


def _binary_scalar(op, tensor, scalar, left, right, scalar_first):
    data = tensor._data
    if data.dtype.kind not in FLOAT_KINDS:
        wanted = with_scalar(data.dtype, scalar, op.float_result)
        if wanted != data.dtype:
            data = data.astype(wanted)
    device = tensor._device
    try:
        kernel = device.kernels[op]
    except KeyError:
        kernel = missing_kernel(op, device)
    try:
        try:
            out = kernel(scalar, data) if scalar_first else kernel(data, scalar)
        except OverflowError:
            # an int scalar outside a small integer dtype's range: PyTorch wraps it into the
            # dtype (int8 * 1000 multiplies by -24); NumPy refuses it
            scalar = device.xp.asarray(scalar, dtype=device.xp.int64).astype(data.dtype)
            out = kernel(scalar, data) if scalar_first else kernel(data, scalar)
    except FwError as err:
        raise located(err, op.name, (left, right)) from None
    except Exception as exc:
        raise explain_failure(op, (left, right), _EMPTY, exc) from exc
    return finish(op, (left, right), _EMPTY, out, device)


def _as_scalar(op, value, other):
    """A Python scalar from ``value``; NumPy arrays become tensors of ``other``'s device."""
    if value.__class__ in _SCALAR_TYPES:
        return value
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "ndim", 1) == 0:
        return item()
    raise not_a_tensor(op, value)


# -- the slow side: errors and fallbacks ----------------------------------------------------------
_reported_fallbacks: set = set()
_fallbacks: dict = {}  # (op, device) -> the CPU fallback built for it


def forget_fallbacks() -> None:
    """Drop the CPU fallbacks built so far (a plugin load may bring the missing kernels)."""
    _fallbacks.clear()


class FallbackWarning(UserWarning):
    """An op ran on the CPU because its device has no kernel for it (reported once per op)."""


def missing_kernel(op, device):
    """A CPU fallback (with transfers, reported once) or an UnsupportedError with a fix.

    Fallbacks live in a table of their own, so the frozen dispatch table is never written
    after a load."""
    from .. import plugins

    known = _fallbacks.get((op, device))
    if known is not None:
        return known
    cpu_kernel = kernel_of(op, "cpu")
    if cpu_kernel is None or device.type == "cpu":
        raise UnsupportedError(
            f"no kernel for {op.name} on device {device.type!r}",
            op=op.name, module=state.module_path or None,
            hint=plugins.missing_kernel_hint(op.name, device.type),
        )
    to_numpy = device.spec.to_numpy
    back = device.spec.from_numpy

    def fallback(*arrays, **attrs):
        if (op.name, device.type) not in _reported_fallbacks:
            _reported_fallbacks.add((op.name, device.type))
            warnings.warn(f"{op.name} has no kernel on {device.type}; running it on the CPU "
                          "with transfers (reported once)", FallbackWarning, stacklevel=4)
        host = [to_numpy(a) if a.__class__ is device.array_type else a for a in arrays]
        return back(cpu_kernel(*host, **attrs), device.index)

    plugins.note_dispatch(op.name, device.type, "cpu fallback (no kernel on this device)")
    _fallbacks[(op, device)] = fallback
    return fallback


def check_tensors(op, *values, allow_none: bool = False) -> None:
    """Raise the not-a-tensor error for the first value that is not a Tensor (None passes
    with ``allow_none``: an absent optional input such as a bias)."""
    for v in values:
        if not isinstance(v, Tensor) and not (allow_none and v is None):
            raise not_a_tensor(op, v)


def not_a_tensor(op, value, inputs=None) -> ArgumentTypeError:
    """The error for a value that is not a Tensor where ``op`` (an op or a layer's name)
    needs one; ``inputs`` is everything that arrived, when more than ``value``."""
    return ArgumentTypeError(
        f"expected a Tensor, got {type(value).__name__}",
        op=op if isinstance(op, str) else op.name, module=state.module_path or None,
        inputs=describe((value,) if inputs is None else inputs),
        hint="wrap the value with fw.tensor(...) first",
    )


def mixed_devices(op, inputs) -> DeviceError:
    devices = sorted({str(t._device) for t in inputs if isinstance(t, Tensor)})
    return DeviceError(
        f"inputs are on different devices ({', '.join(devices)})",
        op=op.name, module=state.module_path or None, inputs=describe(inputs),
        hint="move them to one device first, e.g. x.to(y.device)",
    )


def explain_failure(op, inputs, attrs, exc) -> FwError:
    """Turn a kernel's exception into the meta rule's error, or a KernelError if the meta rule
    accepts the inputs (then the kernel is at fault)."""
    module = state.module_path or None
    meta_note = ""
    try:
        out = op.meta(*(spec_of(t) for t in inputs), **attrs)
    except FwError as err:
        return located(err, op.name, inputs)
    except Exception as meta_exc:  # a broken meta rule: say so next to the kernel's error
        meta_note = f" (the meta rule failed too: {type(meta_exc).__name__}: {meta_exc})"
    else:
        if isinstance(exc, MemoryError):  # valid inputs, but the result does not fit
            return out_of_memory(op.name, out, _device_of(inputs), describe(inputs))
    from .. import plugins

    if any(isinstance(t, Tensor) and t._data.dtype == bfloat16.numpy for t in inputs):
        return DTypeError(  # a kernel written before bfloat16, which NumPy's loops lack
            f"the kernel has no bfloat16 path ({type(exc).__name__}: {exc}){meta_note}",
            op=op.name, module=module, inputs=describe(inputs),
            hint="compute this op in float32: pass x.float() and round the result back with "
            f".bfloat16() (kernel of plugin {plugins.kernel_owner(op.name, inputs)})")
    return KernelError(
        f"kernel failed: {type(exc).__name__}: {exc}{meta_note}",
        op=op.name, module=module, inputs=describe(inputs),
        hint=f"this looks like a bug in plugin {plugins.kernel_owner(op.name, inputs)}; "
        "report it with the shapes above",
    )


def _device_of(inputs):
    return next(t._device for t in inputs if isinstance(t, Tensor))
