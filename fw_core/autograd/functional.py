"""Higher-level differentiation of a function, as ``torch.autograd.functional``.

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` take a function of tensors and
the point to differentiate at, and return plain tensors. ``inputs`` (and ``v``) are a tensor or
a tuple of tensors, and results mirror them (and the function's outputs) as PyTorch's do.

All are built on reverse mode (:func:`fw_core.autograd.grad`): a Jacobian takes one backward
per output element, and a forward-mode product (``jvp``, ``hvp``) is the transpose of a
vector-Jacobian product, computed by differentiating that product with respect to its vector
(the "double-vjp" trick PyTorch uses too). ``vectorize`` is accepted and changes nothing (the
rows are computed one by one either way); ``strategy="forward-mode"`` gives the same values.
Without ``create_graph`` the results are detached; with it they can be differentiated again.
"""

from __future__ import annotations

from ..errors import ArgumentError, ArgumentTypeError, AutogradError, ShapeError, UnsupportedError
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# -- arguments and results ------------------------------------------------------------------------
def _as_tuple(value, what: str, fn_name: str) -> tuple[bool, tuple]:
    """(whether ``value`` was a tuple, its tensors as a tuple); a TypeError for non-tensors."""
    from ..tensor import Tensor

    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            raise ArgumentTypeError(
                f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the value at index {i} has type {type(item).__name__}.",
                op=f"autograd.functional.{fn_name}",
                hint="wrap numbers with fw.tensor(...)")
    return is_tuple, items


def _result(is_tuple: bool, items):
    return tuple(items) if is_tuple else items[0]


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs to differentiate with respect to: kept in the caller's graph when
    ``create_graph`` needs it, else detached copies that require grad."""
    prepared = []
    for t in inputs:
        if create_graph and t.requires_grad:
            prepared.append(t.view_as(t))
        else:
            prepared.append(t.detach().requires_grad_(True))
    return tuple(prepared)


def _finish(tensors, create_graph: bool):
    """Detach results unless the caller asked to differentiate them again."""
    if create_graph:
        return tuple(tensors)
    return tuple(None if t is None else t.detach() for t in tensors)


def _check_v(v: tuple, other: tuple, fn_name: str) -> None:
    if len(v) != len(other):
        raise ShapeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                         f"{len(v)}.", op=f"autograd.functional.{fn_name}",
                         hint="give one vector per tensor")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            raise ShapeError(f"Entry {i} in v has invalid size: should be {list(b.shape)} but "
                             f"got {list(a.shape)}.", op=f"autograd.functional.{fn_name}",
                             hint="v must have the shape of what it multiplies")


def _default_v(v, against: tuple, fn_name: str, what: str) -> tuple:
    """``v`` as a tuple of tensors, or ones when ``against`` is one single-element tensor."""
    from ..ops.creation import ones_like

    if v is not None:
        return _as_tuple(v, "v", fn_name)[1]
    if len(against) == 1 and against[0].numel() == 1:
        return (ones_like(against[0]),)
    raise AutogradError(f"The vector v can only be None if {what} a single Tensor with a "
                        "single element.", op=f"autograd.functional.{fn_name}",
                        hint="pass v of the right shape")


def _grads(outputs: tuple, inputs: tuple, grad_outputs, create_graph: bool, strict: bool,
           fn_name: str, zeros: bool = True) -> list:
    """d(outputs)/d(inputs) seeded with ``grad_outputs``; zeros (or, ``strict``, an error)
    for inputs the outputs do not depend on."""
    from ..ops.creation import zeros_like

    if strict:
        for i, o in enumerate(outputs):
            if not o.requires_grad:
                raise AutogradError(
                    f"Output {i} of the user-provided function does not require gradients. The "
                    "outputs must be computed in a differentiable manner from the input when "
                    "running in strict mode.", op=f"autograd.functional.{fn_name}",
                    hint="pass strict=False to get zeros for it")
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if live:
        found = _grad([o for o, _ in live], list(inputs), [g for _, g in live],
                      retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        found = (None,) * len(inputs)
    result = []
    for i, (g, t) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise AutogradError(
                    f"The output of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode.", op=f"autograd.functional.{fn_name}",
                    hint="pass strict=False to get zeros for it")
            g = zeros_like(t) if zeros else None
        result.append(g)
    return result


def _call(func, inputs: tuple, fn_name: str) -> tuple[bool, tuple]:
    with enable_grad():
        out = func(*inputs)
    return _as_tuple(out, "outputs of the user-provided function", fn_name)


# -- the functions --------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` has the outputs' shapes (it may be None for one single-element output); the product
    has the inputs'. Inputs the output does not depend on get zeros (``strict``: an error).
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepare(inputs, create_graph)
    outputs_tuple, outputs = _call(func, inputs, "vjp")
    v = _default_v(v, outputs, "vjp", "the user-provided function returns")
    _check_v(v, outputs, "vjp")
    grads = _grads(outputs, inputs, v, create_graph, strict, "vjp")
    return (_result(outputs_tuple, _finish(outputs, create_graph)),
            _result(inputs_tuple, _finish(grads, create_graph)))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``.

    ``v`` has the inputs' shapes (it may be None for one single-element input); the product
    has the outputs'. Computed as the transpose of a vjp (see the module docstring).
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    v = _default_v(v, inputs, "jvp", "the input to the user-provided function is")
    _check_v(v, inputs, "jvp")
    inputs = _prepare(inputs, create_graph)
    outputs_tuple, outputs = _call(func, inputs, "jvp")
    products = _forward_product(outputs, inputs, v, create_graph, strict, "jvp")
    return (_result(outputs_tuple, _finish(outputs, create_graph)),
            _result(outputs_tuple, _finish(products, create_graph)))


def _forward_product(outputs, inputs, v, create_graph, strict, fn_name) -> list:
    """J v for J = d(outputs)/d(inputs): u -> u^T J is linear, so J v = d(u^T J v)/du."""
    from ..ops.creation import zeros_like

    with enable_grad():
        dummies = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        vjps = _grads(outputs, inputs, dummies, True, strict, fn_name, zeros=False)
        pairs = [(g, w) for g, w in zip(vjps, v) if g is not None and g.requires_grad]
        if pairs:
            found = _grad([g for g, _ in pairs], list(dummies), [w for _, w in pairs],
                          retain_graph=True, create_graph=create_graph, allow_unused=True)
        else:
            found = (None,) * len(dummies)
    products = []
    for i, (p, o) in enumerate(zip(found, outputs)):
        if p is None:
            if strict:
                raise AutogradError(
                    f"The output {i} of the user-provided function is independent of the "
                    "inputs. This is not allowed in strict mode.",
                    op=f"autograd.functional.{fn_name}", hint="pass strict=False")
            p = zeros_like(o)
        products.append(p)
    return products


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape
    ``outputs[i].shape + inputs[j].shape``.

    A tensor for one input and one output; a tuple over inputs (or outputs) when that side is
    a tuple; a tuple (per output) of tuples (per input) when both are.

    Raises:
        ValueError: for an unknown ``strategy``, or ``"forward-mode"`` without
            ``vectorize=True`` (as PyTorch).
    """
    _check_strategy(strategy, vectorize, create_graph, strict, "jacobian")
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepare(inputs, create_graph)
    outputs_tuple, outputs = _call(func, inputs, "jacobian")
    rows = [jacobian_blocks(out, inputs, create_graph, strict) for out in outputs]
    rows = [_result(inputs_tuple, row) for row in rows]
    return _result(outputs_tuple, rows)


def jacobian_blocks(out, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """d(out)/d(each input), of shapes ``out.shape + input.shape``: one backward per element
    of ``out`` (zeros, or with ``strict`` an error, for inputs ``out`` does not use)."""
    import numpy as np

    from ..ops.creation import tensor, zeros
    from ..ops.shape import stack

    n = out.numel()
    columns: list[list] = [[] for _ in inputs]
    for k in range(n):
        onehot = np.zeros(n, dtype=out.dtype.numpy)
        onehot[k] = 1
        seed = tensor(onehot.reshape(out.shape), device=out.device)
        for j, g in enumerate(_grads((out,), inputs, (seed,), create_graph, strict,
                                     "jacobian")):
            columns[j].append(g)
    result = []
    for t, rows in zip(inputs, columns):
        if rows:
            block = stack(rows).reshape(tuple(out.shape) + tuple(t.shape))
        else:
            block = zeros(tuple(out.shape) + tuple(t.shape), dtype=t.dtype, device=t.device)
        result.append(block if create_graph else block.detach())
    return tuple(result)


def _check_strategy(strategy: str, vectorize: bool, create_graph: bool, strict: bool,
                    fn_name: str) -> None:
    """PyTorch's refusals of option combinations (fw computes every combination it accepts
    the same way, in reverse mode)."""
    op = f"autograd.functional.{fn_name}"
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ArgumentError('Expected strategy to be either "forward-mode" or "reverse-mode".',
                            op=op, hint=f"got strategy={strategy!r}")
    if strategy == "forward-mode" and create_graph:
        raise UnsupportedError('`create_graph=True` and `strategy="forward-mode"` are not '
                               "supported together (yet).", op=op,
                               hint='set create_graph=False or strategy="reverse-mode"')
    if strategy == "forward-mode" and strict:
        raise AutogradError('`strict=True` and `strategy="forward-mode"` are not supported '
                            "together (yet).", op=op,
                            hint='set strict=False or strategy="reverse-mode"')
    if strategy == "forward-mode" and not vectorize:
        raise UnsupportedError("Computing Jacobian using forward-AD or forward-over-reverse "
                               "Hessian is only implemented for `vectorize=True`.", op=op,
                               hint="pass vectorize=True or use the default reverse mode")
    if vectorize and strict:
        raise AutogradError("`strict=True` and `vectorized=True` are not supported together.",
                            op=op, hint="set strict=False or vectorize=False")


def _scalar_output(func, fn_name: str):
    """``func`` checked to return one single-element tensor."""
    from ..tensor import Tensor

    def checked(*inputs):
        out = func(*inputs)
        is_tuple, outs = (True, out) if isinstance(out, (tuple, list)) else (False, (out,))
        if is_tuple and len(outs) != 1 or not isinstance(outs[0], Tensor):
            raise ArgumentError(f"The function given to {fn_name} should return a single "
                                "Tensor", op=f"autograd.functional.{fn_name}",
                                hint="return the scalar loss")
        if outs[0].numel() != 1:
            raise ArgumentError(
                f"The Tensor returned by the function given to {fn_name} should contain a "
                f"single element", op=f"autograd.functional.{fn_name}",
                hint="reduce the output, e.g. .sum()")
        return outs[0].reshape(())

    return checked


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: ``H[i][j]`` of shape
    ``inputs[i].shape + inputs[j].shape`` (a tensor for one input, else tuples of tuples)."""
    _check_strategy(outer_jacobian_strategy, vectorize, create_graph, strict, "hessian")
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    scalar = _scalar_output(func, "hessian")

    def gradient(*xs):
        with enable_grad():
            out = scalar(*xs)
        return _result(inputs_tuple, _grads((out,), xs, (_ones(out),), True, strict,
                                            "hessian"))

    return jacobian(gradient, _result(inputs_tuple, inputs), create_graph=create_graph,
                    strict=strict)


def _ones(t):
    from ..ops.creation import ones_like

    return ones_like(t)


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar ``func``: the vector-Hessian product."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp", transposed=False)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar ``func``: the Hessian-vector product (equal to
    :func:`vhp` for twice continuously differentiable functions, whose Hessian is
    symmetric; computed through the double-vjp trick as PyTorch does)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp", transposed=True)


def _hessian_product(func, inputs, v, create_graph, strict, fn_name, transposed):
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    v = _default_v(v, inputs, fn_name, "the input to the user-provided function is")
    _check_v(v, inputs, fn_name)
    inputs = _prepare(inputs, create_graph)
    with enable_grad():
        out = _scalar_output(func, fn_name)(*inputs)
        jac = tuple(_grads((out,), inputs, (_ones(out),), True, strict, fn_name))
        if transposed:
            product = _forward_product(jac, inputs, v, create_graph, strict, fn_name)
        else:
            product = _grads(jac, inputs, v, create_graph, strict, fn_name)
    return (_finish((out,), create_graph)[0],
            _result(inputs_tuple, _finish(product, create_graph)))
