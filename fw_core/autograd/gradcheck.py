"""Numerical checks of VJPs: ``gradcheck`` and ``gradgradcheck`` (finite differences, float64)."""

from __future__ import annotations

import numpy as np

from ..errors import AutogradError


def _inputs(inputs):
    from ..tensor import Tensor

    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _outputs(out):
    from ..tensor import Tensor

    return (out,) if isinstance(out, Tensor) else tuple(out)


def numerical_jacobian(fn, inputs, eps: float = 1e-6):
    """d(flattened outputs)/d(flattened input) per differentiable input, by central differences."""
    inputs = _inputs(inputs)
    jacobians = []
    for t in inputs:
        if not getattr(t, "requires_grad", False):
            jacobians.append(None)
            continue
        flat = t._data.reshape(-1)  # a view: perturbs t in place
        host_cols = []
        for i in range(flat.size):
            original = flat[i].item()
            flat[i] = original + eps
            plus = [np.array(o.__array__(), dtype=np.float64).ravel()
                    for o in _outputs(fn(*inputs))]
            flat[i] = original - eps
            minus = [np.array(o.__array__(), dtype=np.float64).ravel()
                     for o in _outputs(fn(*inputs))]
            flat[i] = original
            host_cols.append(np.concatenate([(p - m) / (2 * eps)
                                             for p, m in zip(plus, minus)]))
        n_out = sum(o.numel() for o in _outputs(fn(*inputs)))
        jacobians.append(np.stack(host_cols, axis=1) if host_cols
                         else np.zeros((n_out, 0)))
    return jacobians


def analytical_jacobian(fn, inputs, create_graph=False):
    """The same Jacobians assembled from VJPs (one backward per output element)."""
    from ..ops.creation import zeros_like
    from .engine import grad

    inputs = _inputs(inputs)
    wanted = [t for t in inputs if getattr(t, "requires_grad", False)]
    n_out = sum(o.numel() for o in _outputs(fn(*inputs)))
    rows = {id(t): np.zeros((n_out, t.numel())) for t in wanted}
    offset = 0
    for out in _outputs(fn(*inputs)):
        if not out.requires_grad:
            offset += out.numel()
            continue
        for j in range(out.numel()):
            seed = zeros_like(out)
            seed._data.reshape(-1)[j] = 1
            grads = grad(out, wanted, seed, retain_graph=True, allow_unused=True,
                         create_graph=create_graph)
            for t, g in zip(wanted, grads):
                if g is not None:
                    rows[id(t)][offset + j] = np.asarray(g.__array__(), dtype=np.float64).ravel()
        offset += out.numel()
    return [rows.get(id(t)) if getattr(t, "requires_grad", False) else None for t in inputs]


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare the VJP-built Jacobian of ``fn`` at ``inputs`` with central differences.

    Use float64 inputs with ``requires_grad=True`` (tolerances are PyTorch's gradcheck defaults).
    Raises an AutogradError naming the input and the worst entry, or returns False when
    ``raise_exception=False``.
    """
    inputs = _inputs(inputs)
    for t in inputs:
        if getattr(t, "requires_grad", False) and t._data.dtype != np.float64:
            raise AutogradError(f"gradcheck needs float64 inputs, got {t.dtype.name}",
                                hint="convert with .double() first; float32 differences are too "
                                "noisy for these tolerances")
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    for index, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        if not np.allclose(a, n, atol=atol, rtol=rtol):
            worst = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
            if not raise_exception:
                return False
            raise AutogradError(
                f"Jacobian mismatch for input {index}: analytical {a[worst]:.6g} vs numerical "
                f"{n[worst]:.6g} at (output {worst[0]}, element {worst[1]})",
                hint="the op's vjp is wrong for these inputs (or the function is not smooth "
                "there: move inputs away from kinks)",
            )
    return True


def gradgradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, seed: int = 0) -> bool:
    """gradcheck of the first derivative: checks that VJPs are themselves differentiable.

    Differentiates ``x -> grad(fn(x), x, v)`` for a fixed random cotangent ``v``.
    """
    from ..ops.creation import tensor
    from .engine import grad

    inputs = _inputs(inputs)
    wanted = [t for t in inputs if getattr(t, "requires_grad", False)]
    rng = np.random.default_rng(seed)
    cotangents = [tensor(rng.standard_normal(o.shape), dtype="float64", device=o.device)
                  for o in _outputs(fn(*inputs))]

    def first_derivative(*xs):
        outs = [o for o in _outputs(fn(*xs))]
        pairs = [(o, v) for o, v in zip(outs, cotangents) if o.requires_grad]
        used = [x for x in xs if getattr(x, "requires_grad", False)]
        grads = grad([o for o, _ in pairs], used, [v for _, v in pairs], create_graph=True,
                     allow_unused=True)
        return tuple(g for g in grads if g is not None and g.requires_grad)

    if not wanted or not first_derivative(*inputs):
        return True
    return gradcheck(first_derivative, inputs, eps, atol, rtol, raise_exception)
