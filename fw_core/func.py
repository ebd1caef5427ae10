"""Function transforms with ``torch.func``'s signatures: ``grad``, ``grad_and_value``, ``vjp``,
``jacrev``, ``jacfwd``, ``hessian`` and ``vmap``.

They are built on fw's tape (:mod:`fw_core.autograd`), not on functorch's transform levels:
``grad`` differentiates by running the function with recording on, and records its own
backward when an argument already takes part in an outer graph, so ``grad(grad(f))`` and
``jacrev(grad(f))`` nest. ``jacfwd`` gives the same values as ``jacrev`` (both reverse mode),
and ``vmap`` calls the function once per batch entry and stacks the results.

Arguments may be tensors or (nested) tuples, lists and dicts of tensors; results mirror them.
"""

from __future__ import annotations

import functools

from ._state import state
from .autograd.engine import grad as _autograd_grad
from .autograd.functional import jacobian_blocks
from .autograd.grad_mode import enable_grad
from .errors import ArgumentError, ArgumentTypeError, AutogradError
from .pytree import flatten, unflatten
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "vjp", "vmap"]


# -- differentiable copies of the arguments -------------------------------------------------------
def _differentiable(arg):
    """(``arg`` with each tensor ready to differentiate, its tensors, whether an outer graph
    already holds one of them). A tensor that requires grad is aliased so the outer graph still
    reaches it; any other is detached and made to require grad."""
    leaves: list = []
    structure = flatten(arg, leaves)
    outer = state.grad_enabled and any(t.requires_grad for t in leaves)
    fresh = [t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)
             for t in leaves]
    return unflatten(structure, iter(fresh)), fresh, structure, outer


def _argnums(argnums, count: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or not all(isinstance(n, int) for n in nums):
        raise ArgumentTypeError(f"{fn}: argnums must be an int or a non-empty tuple of ints, "
                                f"got {argnums!r}", op=f"func.{fn}",
                                hint="e.g. argnums=0 or argnums=(0, 1)")
    for n in nums:
        if not -count <= n < count:
            raise ArgumentError(f"{fn}: Got argnums={n}, but only {count} positional inputs",
                                op=f"func.{fn}", hint="count positional arguments from 0")
    return tuple(n % count for n in nums)


def _split_aux(out, has_aux: bool, fn: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise ArgumentError(f"{fn}(f)(*args): output of function f should be a tuple: (output, "
                            "aux) if has_aux is True", op=f"func.{fn}",
                            hint="return (value, aux)")
    return out[0], out[1]


def _plain(obj, keep_graph: bool):
    """Detach the tensors of ``obj`` unless an outer graph needs them."""
    if keep_graph:
        return obj
    leaves: list = []
    structure = flatten(obj, leaves)
    return unflatten(structure, iter(t.detach() for t in leaves))


def _gradients_of(outputs: list, seeds: list, wrt: list, keep_graph: bool) -> list:
    """d(outputs)/d(wrt) seeded with ``seeds``; zeros for tensors the outputs do not use."""
    from .ops.creation import zeros_like

    live = [(o, s) for o, s in zip(outputs, seeds) if o.requires_grad]
    found = _autograd_grad([o for o, _ in live], wrt, [s for _, s in live],
                           retain_graph=True, create_graph=keep_graph, allow_unused=True) \
        if live else (None,) * len(wrt)
    return [zeros_like(t) if g is None else g for g, t in zip(found, wrt)]


# -- grad -----------------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``func`` turned into a function returning ``(gradient, value)``; with ``has_aux``,
    ``func`` returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``.

    ``func`` must return a single-element tensor; the gradient is taken with respect to the
    positional arguments ``argnums`` (a tuple of gradients for a tuple of argnums).
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), "grad_and_value")
        args = list(args)
        prepared = {}
        keep_graph = False
        for n in nums:
            args[n], fresh, structure, outer = _differentiable(args[n])
            prepared[n] = (fresh, structure)
            keep_graph = keep_graph or outer
        with enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor) or out.numel() != 1:
                what = type(out).__name__ if not isinstance(out, Tensor) else \
                    f"tensor with {out.ndim} dims"
                raise AutogradError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got {what}. Maybe you wanted to use the vjp or jacrev APIs instead?",
                    op="func.grad", hint="reduce the output, e.g. .sum()")
            wrt = [t for n in nums for t in prepared[n][0]]
            grads = iter(_gradients_of([out], [_ones(out)], wrt, keep_graph))
        per_arg = [unflatten(prepared[n][1], grads) for n in nums]
        gradient = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _plain(out, keep_graph)
        if has_aux:
            return gradient, (value, _plain(aux, keep_graph))
        return gradient, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """``func`` turned into a function returning its gradient (``(gradient, aux)`` with
    ``has_aux``); see :func:`grad_and_value`.

    >>> fw.func.grad(lambda x: (x ** 2).sum())(fw.tensor([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def _ones(t):
    from .ops.creation import ones_like

    return ones_like(t)


# -- vjp and Jacobians ----------------------------------------------------------------------------
def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns the tuple of
    vector-Jacobian products, one per primal (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    prepared = [_differentiable(p) for p in primals]
    keep_graph = any(p[3] for p in prepared)
    with enable_grad():
        out, aux = _split_aux(func(*(p[0] for p in prepared)), has_aux, "vjp")
    out_leaves: list = []
    flatten(out, out_leaves)

    def vjp_fn(cotangents):
        seeds: list = []
        flatten(cotangents, seeds)
        if len(seeds) != len(out_leaves):
            raise ArgumentError("vjp_fn: expected cotangents with the structure of the "
                                "output", op="func.vjp", hint="one cotangent per output")
        for s, o in zip(seeds, out_leaves):
            if tuple(s.shape) != tuple(o.shape):
                raise ArgumentError(f"vjp_fn: Mismatch in shape: the cotangent has shape "
                                    f"{list(s.shape)} but the output has {list(o.shape)}",
                                    op="func.vjp", hint="pass cotangents of the outputs' shapes")
        with enable_grad():
            wrt = [t for p in prepared for t in p[1]]
            grads = iter(_gradients_of(out_leaves, seeds, wrt, keep_graph))
        return tuple(unflatten(p[2], grads) for p in prepared)

    value = _plain(out, keep_graph)
    return (value, vjp_fn, _plain(aux, keep_graph)) if has_aux else (value, vjp_fn)


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """``func`` turned into a function returning its Jacobian with respect to ``argnums``:
    for each output tensor, a tensor of shape ``output.shape + argument.shape`` (a tuple over
    argnums when argnums is a tuple). One backward per output element."""
    return _jacobian_transform(func, argnums, has_aux, "jacrev")


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """Same as :func:`jacrev` (the values are equal; fw computes both in reverse mode)."""
    _check_randomness(randomness, "jacfwd")
    return _jacobian_transform(func, argnums, has_aux, "jacfwd")


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func, argnums), argnums)``, as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)


def _jacobian_transform(func, argnums, has_aux: bool, name: str):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), name)
        args = list(args)
        prepared = {}
        keep_graph = False
        for n in nums:
            args[n], fresh, structure, outer = _differentiable(args[n])
            prepared[n] = (fresh, structure)
            keep_graph = keep_graph or outer
        with enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, name)
        out_leaves: list = []
        out_structure = flatten(out, out_leaves)
        wrt = tuple(t for n in nums for t in prepared[n][0])
        blocks = []
        for o in out_leaves:
            with enable_grad():
                grads = iter(jacobian_blocks(o, wrt, keep_graph, False))
            per_arg = [unflatten(prepared[n][1], grads) for n in nums]
            blocks.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        jac = unflatten(out_structure, iter(blocks))
        return (jac, _plain(aux, keep_graph)) if has_aux else jac

    return wrapper


def _check_randomness(randomness: str, fn: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise ArgumentError(f"{fn}: Only allowed values for randomness are 'error', "
                            f"'different', or 'same'. Got {randomness}", op=f"func.{fn}",
                            hint="use randomness='different' to draw per batch entry")


# -- vmap -----------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over a batch dimension of its arguments, as ``torch.func.vmap``.

    ``in_dims``: an int (every argument's tensors are batched along that dimension) or a tuple
    with one entry per positional argument, an int or None (not batched), which applies to all
    tensors of a nested argument. ``out_dims``: where the batch dimension goes in each output
    (an int, or a tuple per output). This vmap calls ``func`` once per batch entry and stacks
    the results, so it is correct for any ``func`` but costs a loop; random ops inside draw
    anew for each entry (``randomness="different"``). ``chunk_size`` is accepted and ignored.

    Raises:
        ValueError: when no argument is batched, batched sizes differ, or an output is not a
            tensor; TypeError for an ``in_dims`` that is neither an int nor a tuple.
    """
    _check_randomness(randomness, "vmap")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = _in_dims(in_dims, len(args))
        flat = []  # per argument: (structure, leaves, dim)
        sizes = []
        for arg, dim in zip(args, dims):
            leaves: list = []
            structure = flatten(arg, leaves)
            if dim is not None:
                for t in leaves:
                    d = _dim(dim, t.ndim, "in_dims")
                    sizes.append(t.shape[d])
            flat.append((structure, leaves, dim))
        if not sizes:
            raise ArgumentError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>): at "
                                "least one input must be a Tensor to vmap over", op="func.vmap",
                                hint="batch at least one tensor argument")
        if len(set(sizes)) != 1:
            raise ArgumentError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>): "
                                "Expected all tensors to have the same size in the mapped "
                                f"dimension, got sizes {sizes} for the mapped dimension",
                                op="func.vmap", hint="batch tensors of one batch size")
        results = []
        for b in range(sizes[0]):
            call_args = []
            for structure, leaves, dim in flat:
                picked = leaves if dim is None else \
                    [t.select(_dim(dim, t.ndim, "in_dims"), b) for t in leaves]
                call_args.append(unflatten(structure, iter(picked)))
            results.append(func(*call_args, **kwargs))
        return _stacked(results, out_dims, func)

    return wrapper


def _in_dims(in_dims, count: int) -> tuple:
    if isinstance(in_dims, int):
        return (in_dims,) * count
    if not isinstance(in_dims, (tuple, list)):
        raise ArgumentTypeError("vmap: expected `in_dims` to be int or a tuple matching the "
                                f"structure of inputs, got: {type(in_dims).__name__}",
                                op="func.vmap", hint="e.g. in_dims=0 or in_dims=(0, None)")
    dims = tuple(in_dims)
    if len(dims) != count:
        raise ArgumentError(f"vmap: in_dims is not compatible with the structure of `inputs`: "
                            f"in_dims has {len(dims)} elements but there are {count} "
                            "positional inputs", op="func.vmap",
                            hint="give one in_dims entry per positional argument")
    return dims


def _dim(dim: int, ndim: int, what: str) -> int:
    if not -ndim <= dim < ndim or ndim == 0:
        raise ArgumentError(f"vmap: {what}={dim} is out of bounds for a tensor of {ndim} "
                            "dimensions", op="func.vmap",
                            hint="pick a dimension the tensor has (or None to not batch it)")
    return dim % ndim


def _stacked(results: list, out_dims, func):
    from .ops.shape import stack

    structures = []
    per_sample = []
    for r in results:
        leaves: list = []
        structures.append(flatten(r, leaves))
        per_sample.append(leaves)
    consts = _constants(structures[0])
    if consts:
        raise ArgumentError(f"vmap: {_name(func)} must only return Tensors, got type "
                            f"{type(consts[0]).__name__}", op="func.vmap",
                            hint="return tensors (wrap numbers with fw.tensor)")
    count = len(per_sample[0])
    dims = (out_dims,) * count if out_dims is None or isinstance(out_dims, int) \
        else tuple(out_dims)
    if len(dims) != count:
        raise ArgumentError(f"vmap: out_dims has {len(dims)} entries for {count} outputs",
                            op="func.vmap", hint="give one out_dims entry per output")
    outputs = []
    for i, dim in enumerate(dims):
        column = [leaves[i] for leaves in per_sample]
        if dim is None:
            outputs.append(column[0])
        else:
            outputs.append(stack(column, dim=_dim(dim, column[0].ndim + 1, "out_dims")))
    return unflatten(structures[0], iter(outputs))


def _constants(structure) -> list:
    kind = structure[0]
    if kind == "tensor":
        return []
    if kind == "const":
        return [structure[1]]
    items = [s for _, s in structure[1]] if kind is dict else structure[1]
    return [c for s in items for c in _constants(s)]


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)
