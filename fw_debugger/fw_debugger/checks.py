"""Checks for user-defined ops: gradients against finite differences, and the declared Jacobian
structure against the measured Jacobian.

``gradcheck``/``gradgradcheck`` delegate to :mod:`fw_core.autograd.gradcheck` (central
differences, float64, PyTorch's tolerances) and name the op in their errors.
``check_structure`` builds the op's Jacobian from VJPs of one-hot cotangents (one backward per
output element, so keep the inputs small) and says whether it has the shape the op's
``structure`` promises: fusion, the compiler and the explanations all trust that declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import fw_core as fw
from fw_core.autograd.gradcheck import analytical_jacobian, numerical_jacobian
from fw_core.errors import AutogradError, FwError
from fw_core.ops.dispatch import apply
from fw_core.records import OpDef, Structure

__all__ = ["GradcheckError", "StructureCheck", "check_structure", "gradcheck", "gradgradcheck"]

_ONE_TOL = 1e-6  # an injective entry must be 1 within this (float64 Jacobians)
_ZERO_TOL = 1e-12  # below this an entry counts as zero


class GradcheckError(AutogradError):
    """An op's VJP disagrees with finite differences, or its Jacobian with its structure."""


def _resolve(fn, attrs: dict):
    """``(callable, name)`` for an op name, an OpDef or a plain function of tensors."""
    if isinstance(fn, str):
        fn = fw.ops.get(fn)
    if isinstance(fn, OpDef):
        op = fn
        return (lambda *xs: apply(op, tuple(xs), attrs)), op.name
    if attrs:
        raise FwError("attributes are only accepted with an op name or OpDef",
                      hint="bind them in your function: lambda x: my_op(x, k=2)")
    return fn, getattr(fn, "__name__", repr(fn))


def _float64(inputs) -> list:
    """Floating inputs as float64 leaves requiring grad; the others (indices, masks) unchanged."""
    inputs = [inputs] if isinstance(inputs, fw.Tensor) else list(inputs)
    out = []
    for t in inputs:
        if isinstance(t, fw.Tensor) and t.dtype.is_floating_point:
            t = t.detach().to(fw.float64).requires_grad_()
        out.append(t)
    return out


def _delegate(check, fn, inputs, attrs, options) -> bool:
    call, name = _resolve(fn, attrs)
    try:
        return check(call, _float64(inputs), **options)
    except AutogradError as exc:
        raise GradcheckError(exc.message, op=name, hint=exc.hint) from exc


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **attrs) -> bool:
    """Check ``fn``'s VJP against central differences, in float64.

    ``fn`` is an op name (``"cube"``), an OpDef, or a function of tensors; ``attrs`` are the
    op's attributes when an op is given. Floating inputs are converted to float64 leaves.
    Raises :class:`GradcheckError` naming the op and the worst entry, or returns False with
    ``raise_exception=False``.
    """
    return _delegate(fw.autograd.gradcheck, fn, inputs, attrs,
                     {"eps": eps, "atol": atol, "rtol": rtol, "raise_exception": raise_exception})


def gradgradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **attrs) -> bool:
    """gradcheck of the first derivative: the VJP itself is differentiable (double backward)."""
    return _delegate(fw.autograd.gradgradcheck, fn, inputs, attrs,
                     {"eps": eps, "atol": atol, "rtol": rtol, "raise_exception": raise_exception})


@dataclass
class StructureCheck:
    """The verdict of :func:`check_structure`.

    Attributes:
        op: the op's name.
        declared: the structure the op declares.
        ok: whether the measured Jacobian fits it.
        message: what was found ("diagonal as declared", or the contradicting entry).
        entry: ``(input index, output element, input element, value)`` of the first
            contradicting entry (flat indices), or None.
        density: fraction of nonzero Jacobian entries, over all differentiable inputs.
        jacobians: the measured Jacobians, one ``(outputs, input elements)`` array per input
            (None for inputs that are not differentiable).
    """

    op: str
    declared: Structure
    ok: bool
    message: str
    entry: tuple | None = None
    density: float = 0.0
    jacobians: list = field(default_factory=list, repr=False)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "CONTRADICTS its declaration"
        return (f"{self.op}: declared {self.declared.value}, {verdict}: {self.message} "
                f"(density {self.density:.3f})")


def _aligned(in_shape, out_shape) -> np.ndarray | None:
    """For each output element, the flat index of the input element broadcasting puts there."""
    try:
        index = np.arange(int(np.prod(in_shape))).reshape(in_shape)
        return np.broadcast_to(index, out_shape).ravel()
    except ValueError:
        return None


def _first_nonzero(mask: np.ndarray):
    rows, cols = np.nonzero(mask)
    return (int(rows[0]), int(cols[0])) if rows.size else None


def _check_aligned(jacobians, shapes, out_shape, kind):
    """ELEMENTWISE / BROADCAST: output j depends only on the aligned element of each input."""
    for i, (jac, shape) in enumerate(zip(jacobians, shapes)):
        if jac is None:
            continue
        if kind is Structure.ELEMENTWISE and tuple(shape) != tuple(out_shape) and \
                int(np.prod(shape)) != 1:
            return False, (f"input {i} has shape {tuple(shape)} but the output {tuple(out_shape)}:"
                           " an elementwise op keeps the shape (declare BROADCAST)"), None
        aligned = _aligned(shape, out_shape)
        if aligned is None:
            return False, f"input {i} of shape {tuple(shape)} does not broadcast to the " \
                          f"output {tuple(out_shape)}", None
        outside = np.abs(jac) > _ZERO_TOL
        outside[np.arange(jac.shape[0]), aligned] = False
        hit = _first_nonzero(outside)
        if hit is not None:
            j, k = hit
            return False, (f"output element {j} depends on element {k} of input {i} "
                           f"(d out/d in = {jac[j, k]:.4g}); {kind.value} allows only element "
                           f"{aligned[j]}"), (i, j, k, float(jac[j, k]))
    word = "diagonal" if kind is Structure.ELEMENTWISE else "diagonal after broadcasting"
    return True, f"{word}, as declared", None


def _check_injective(jacobians):
    """INJECTIVE: every output row holds at most one nonzero, and it is exactly 1."""
    used = [(i, j) for i, j in enumerate(jacobians) if j is not None]
    if not used:
        return True, "no differentiable input", None
    stacked = np.concatenate([j for _, j in used], axis=1)
    owners = np.concatenate([np.full(j.shape[1], i) for i, j in used])
    starts = np.concatenate([np.arange(j.shape[1]) for _, j in used])
    nonzero = np.abs(stacked) > _ZERO_TOL
    many = np.nonzero(nonzero.sum(axis=1) > 1)[0]
    if many.size:
        j = int(many[0])
        cols = np.nonzero(nonzero[j])[0]
        k = int(cols[1])
        return False, (f"output element {j} depends on {cols.size} input elements (an injective "
                       "op copies exactly one)"), (int(owners[k]), j, int(starts[k]),
                                                   float(stacked[j, k]))
    wrong = nonzero & (np.abs(stacked - 1) > _ONE_TOL)
    hit = _first_nonzero(wrong)
    if hit is not None:
        j, k = hit
        return False, (f"output element {j} = {stacked[j, k]:.4g} x input element; an injective "
                       "op copies it unchanged (derivative 1)"), (int(owners[k]), j,
                                                                  int(starts[k]),
                                                                  float(stacked[j, k]))
    return True, "each output copies at most one input element, as declared", None


def check_structure(op_or_name, *inputs, method: str = "vjp", **attrs) -> StructureCheck:
    """Measure an op's Jacobian at ``inputs`` and compare it with its declared structure.

    Args:
        op_or_name: an OpDef or a registered op's name.
        inputs: small tensors (one backward per output element); floating ones are converted
            to float64 leaves.
        method: "vjp" (VJPs of one-hot cotangents: checks the op's declared gradient) or
            "numerical" (central differences of the kernel: checks what it computes).
        attrs: the op's attributes, as its kernel takes them (``shape=(3, 2)`` for reshape).

    ELEMENTWISE must be diagonal (same shapes), BROADCAST diagonal after broadcasting,
    INJECTIVE one entry equal to 1 per row at most; REDUCTION, CONTRACTION and OPAQUE are
    accepted (the density is reported); an op without a VJP must give no gradient.
    """
    op = fw.ops.get(op_or_name) if isinstance(op_or_name, str) else op_or_name
    call, name = _resolve(op, attrs)
    xs = _float64(inputs)
    out = call(*xs)
    if op.vjp is None:
        ok = not out.requires_grad
        return StructureCheck(name, op.structure, ok, "no gradient, as declared" if ok else
                              "the output carries a gradient although the op has no VJP")
    if not out.requires_grad:
        return StructureCheck(name, op.structure, False, "the output carries no gradient "
                              "although the op has a VJP (declare vjp=None)")
    if method == "vjp":
        jacobians = analytical_jacobian(call, xs)
    elif method == "numerical":
        jacobians = numerical_jacobian(call, xs)
    else:
        raise FwError(f"unknown method {method!r}", op=name, hint="use 'vjp' or 'numerical'")
    used = [j for j in jacobians if j is not None]
    density = float(np.mean(np.concatenate([np.abs(j).ravel() > _ZERO_TOL for j in used]))) \
        if used else 0.0
    shapes = [tuple(x.shape) if isinstance(x, fw.Tensor) else () for x in xs]
    if op.structure in (Structure.ELEMENTWISE, Structure.BROADCAST):
        ok, message, entry = _check_aligned(jacobians, shapes, tuple(out.shape), op.structure)
    elif op.structure is Structure.INJECTIVE:
        ok, message, entry = _check_injective(jacobians)
    else:
        ok, message, entry = True, f"{op.structure.value}: any dependence is allowed", None
    return StructureCheck(name, op.structure, ok, message, entry, density, jacobians)
