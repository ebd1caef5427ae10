"""User-defined differentiable functions: ``fw.autograd.Function``, as PyTorch's.

A subclass states a ``forward`` and its ``backward`` as static methods; ``Cls.apply(*args)``
runs the forward with recording off and records one node whose VJP is the subclass's
backward. Written in fw ops, that backward is itself recorded under ``create_graph=True``, so
the function differentiates twice. Both styles PyTorch has are accepted::

    class Cube(fw.autograd.Function):            # forward receives ctx
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad

    class Cube2(fw.autograd.Function):           # torch 2: forward(*args) + setup_context
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

Every output names the subclass (``y.op == "Cube"``, ``y.grad_fn`` is ``<CubeBackward>``).
A function with several tensor outputs gives each its own node leading into the function's
(PyTorch shares one ``grad_fn`` between them; gradients are the same).

Under ``fw.compile`` the ops forward and backward run are traced like any others; a forward
that reads values on the host (``.numpy()``, ``.item()``) is a graph break with that reason,
as anywhere else.
"""

from __future__ import annotations

import inspect

from .. import capture
from .. import dtypes as _dt
from .._state import state
from ..errors import ArgumentTypeError, AutogradError, FwError, UnsupportedError
from ..records import Structure
from .grad_mode import no_grad
from .node import Node, version_of

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` a Function's forward (or ``setup_context``) fills and its backward reads.

    Attributes:
        needs_input_grad: one bool per argument of ``apply``: whether backward must return a
            gradient for it (False for non-tensors and tensors that need none).
        materialize_grads: whether backward receives zeros (rather than None) for outputs no
            gradient reached (see :meth:`set_materialize_grads`).
    """

    def __init__(self, function: type, needs_input_grad: tuple[bool, ...]):
        self._function = function
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._to_save: tuple = ()
        self._non_differentiable: tuple = ()
        self._dirty: tuple = ()
        self._node: Node | None = None

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; read them back as ``ctx.saved_tensors``.

        Saved tensors are checked against in-place changes: modifying one before backward
        raises there, as PyTorch does.
        """
        from ..tensor import Tensor

        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise ArgumentTypeError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is "
                    f"of type {type(t).__name__}", op=_name(self._function),
                    hint="keep other values as attributes: ctx.k = k")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        """What :meth:`save_for_backward` kept (raises once backward freed it, or if one of
        them was modified in place since)."""
        if self._node is None:
            return self._to_save
        return tuple(self._node.inputs)

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs that get no gradient (indices, masks): they do not require grad, and
        backward receives zeros for them."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors) -> None:
        """Inputs the forward modified in place; returned as outputs, they become results of
        this function (a leaf that requires grad may not be modified, as in PyTorch)."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """``False``: backward receives None, not zeros, for outputs no gradient reached."""
        self.materialize_grads = bool(value)


class Function:
    """Base class of user-defined differentiable functions (see the module docstring).

    Subclasses define static ``forward`` and ``backward`` (and optionally ``setup_context``)
    and are used through ``apply``; they are never instantiated.

    ``backward(ctx, *grads)`` receives one gradient per output of forward and returns one per
    argument of ``apply`` (None for non-tensors and inputs that need none; trailing extra
    Nones are accepted). A gradient of the wrong count, or of a shape that does not broadcast
    to its input's, raises an AutogradError naming the function; a broadcast one is summed
    down to the input's shape and cast to its dtype, as PyTorch does.
    """

    _fw_op = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._fw_op = _function_op(cls)
        cls._fw_output_op = _output_op(cls)

    def __init__(self, *args, **kwargs):
        raise UnsupportedError(
            f"{type(self).__name__} is an autograd.Function: its methods are static and it is "
            "not instantiated", op=_name(type(self)),
            hint=f"call {type(self).__name__}.apply(...) instead")

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (fw ops run here are not recorded)."""
        raise UnsupportedError("an autograd.Function subclass must define forward",
                               hint="add @staticmethod def forward(ctx, *inputs)")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output) -> None:
        """torch 2 style: fill ``ctx`` from the inputs and outputs; defining it means forward
        takes no ``ctx``."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs):
        """Gradients with respect to each argument of ``apply``, given the outputs'."""
        raise UnsupportedError("an autograd.Function subclass must define backward to be "
                               "differentiated", hint="add @staticmethod def backward(ctx, g)")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on ``args`` and record it for backward when any input needs it."""
        from ..tensor import Tensor

        if cls is Function:
            raise UnsupportedError("apply is called on a subclass of fw.autograd.Function",
                                   hint="subclass Function with forward and backward")
        setup = cls.setup_context is not Function.setup_context
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        tensor_args = tuple(a if isinstance(a, Tensor) else None for a in args)
        recording = state.grad_enabled and any(t is not None and t.requires_grad
                                               for t in tensor_args)
        ctx = FunctionCtx(cls, tuple(recording and t is not None and t.requires_grad
                                     for t in tensor_args))
        capture.note(f"autograd.Function {cls.__qualname__}: its forward and backward "
                              "are traced as the fw ops they run")
        with no_grad():
            if setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        return _outputs_of(cls, ctx, tensor_args, output, recording)


def once_differentiable(backward):
    """Decorate a Function's backward that is not written in fw ops (or need not be
    differentiated again): it runs with recording off, so its gradients have no graph."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            return backward(ctx, *grads)

    return wrapper


# -- building the outputs and their nodes ---------------------------------------------------------
def _outputs_of(cls, ctx, tensor_args, output, recording):
    """The tensors ``apply`` returns: forward's, each naming ``cls``, linked to its node."""
    from ..tensor import Tensor

    single = isinstance(output, Tensor)
    if not single and not isinstance(output, (tuple, list)):
        return output  # a non-tensor result (a number): nothing to name or record
    outputs = [output] if single else list(output)
    inputs = {id(t) for t in tensor_args if t is not None}
    dirty = {id(t) for t in ctx._dirty}
    if recording:
        for t in ctx._dirty:
            if t.requires_grad and t._node is None:
                raise AutogradError("a leaf tensor that requires grad has been used in an "
                                    "in-place operation (mark_dirty)", op=_name(cls),
                                    hint="modify a clone of it: x.clone()")
    for i, t in enumerate(outputs):
        if isinstance(t, Tensor) and id(t) in inputs and id(t) not in dirty:
            outputs[i] = t.detach()  # an input returned as is: its alias becomes the output
    for t in outputs:
        if isinstance(t, Tensor):
            t._op = cls._fw_op
    if recording:
        _record(cls, ctx, tensor_args, outputs, single)
    if single:
        return outputs[0]
    return type(output)(outputs) if isinstance(output, tuple) else outputs


def _record(cls, ctx, tensor_args, outputs, single) -> None:
    from ..tensor import Tensor

    specs = tuple((t._data.shape, t.dtype, t._device) if isinstance(t, Tensor) else None
                  for t in outputs)
    dtypes = tuple(None if t is None else t.dtype for t in tensor_args)
    node = Node(cls._fw_op, tensor_args, {"ctx": ctx, "outputs": specs, "dtypes": dtypes},
                None, state.module_path)
    saved = ctx._to_save
    node._inputs = saved
    node._versions = tuple(version_of(t) for t in saved)
    ctx._node = node
    ctx._to_save = ()
    excluded = {id(t) for t in ctx._non_differentiable}
    for index, t in enumerate(outputs):
        if not isinstance(t, Tensor) or not _dt.is_float(t._data.dtype) or id(t) in excluded:
            continue
        if single:
            t._node = node
        else:
            t._node = Node.linked(cls._fw_output_op, node,
                                  {"index": index, "count": len(outputs)}, node.module)
        t.requires_grad = True


class _OutputGrads:
    """The gradients reaching a multi-output function, one slot per output (None: none yet);
    the engine adds them as it adds tensors."""

    __slots__ = ("grads",)

    def __init__(self, grads: list):
        self.grads = grads

    def __add__(self, other: _OutputGrads) -> _OutputGrads:
        return _OutputGrads([b if a is None else a if b is None else a + b
                             for a, b in zip(self.grads, other.grads)])


def _output_vjp(node, g):
    """An output's node hands its gradient to the function's, in the output's slot."""
    grads = [None] * node.attrs["count"]
    grads[node.attrs["index"]] = g
    return (_OutputGrads(grads),)


def _function_vjp(node, g):
    """Call the subclass's backward and check what it returns."""
    ctx = node.attrs["ctx"]
    grads = g.grads if g.__class__ is _OutputGrads else [g]
    if ctx.materialize_grads:
        grads = [_zeros(spec) if gi is None and spec is not None else gi
                 for gi, spec in zip(grads, node.attrs["outputs"])]
    result = ctx._function.backward(ctx, *grads)
    return _checked(ctx._function, node, result if isinstance(result, tuple) else (result,))


def _zeros(spec):
    from ..ops.creation import zeros

    shape, dtype, device = spec
    return zeros(shape, dtype=dtype, device=device)


def _checked(cls, node, grads: tuple) -> tuple:
    """``grads`` as one gradient per input: counted, summed down to each input's shape and
    cast to its dtype; an AutogradError naming ``cls`` when they cannot be."""
    from ..ops.broadcast import sum_to
    from ..ops.meta import broadcast_shapes
    from ..tensor import Tensor

    expected = len(node.next)
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        grads = grads[:expected]
    if len(grads) != expected:
        raise AutogradError(
            f"function {_name(cls)}Backward returned an incorrect number of gradients "
            f"(expected {expected}, got {len(grads)})", op=_name(cls),
            hint="return one gradient per argument of apply, None for non-tensors")
    fixed = []
    dtypes = node.attrs["dtypes"]
    for index, (gi, nxt, shape) in enumerate(zip(grads, node.next, node.input_shapes)):
        if gi is None or nxt is None:
            fixed.append(None)
            continue
        if not isinstance(gi, Tensor):
            raise AutogradError(
                f"function {_name(cls)}Backward returned a {type(gi).__name__} as the "
                f"gradient at index {index}", op=_name(cls),
                hint="return a tensor (or None) for each input")
        if gi._data.shape != shape:
            try:
                expandable = broadcast_shapes(shape, gi._data.shape) == tuple(gi._data.shape)
            except FwError:
                expandable = False
            if not expandable:
                raise AutogradError(
                    f"Function {_name(cls)}Backward returned an invalid gradient at index "
                    f"{index} - got {list(gi._data.shape)} but expected shape compatible "
                    f"with {list(shape)}", op=_name(cls),
                    hint="return a gradient of the input's shape (or one that broadcasts "
                    "down to it)")
            gi = sum_to(gi, shape)
        if gi.dtype is not dtypes[index]:
            gi = gi.to(dtypes[index])
        fixed.append(gi)
    return tuple(fixed)


def _name(cls) -> str:
    return cls.__name__


def _no_meta(*args, **kwargs):
    raise UnsupportedError("an autograd.Function has no meta rule: its shapes are known only by "
                           "running its forward", hint="call Cls.apply(...) on tensors")


def _function_op(cls):
    from ..ops import anchors
    from ..ops.registry import define_op

    return define_op(
        cls.__name__, family="function", doc=(cls.__doc__ or "").strip() or
        f"the user-defined autograd.Function {cls.__qualname__}",
        signature=f"{cls.__qualname__}.apply(*args)", meta=_no_meta, vjp=_function_vjp,
        structure=Structure.OPAQUE,
        anchor=anchors.smooth(f"whatever {cls.__qualname__}.backward says"))


def _output_op(cls):
    from ..ops import anchors
    from ..ops.registry import define_op

    return define_op(
        cls.__name__, family="function", doc=f"one output of {cls.__qualname__}",
        signature=f"{cls.__qualname__}.apply(*args)[i]", meta=_no_meta, vjp=_output_vjp,
        structure=Structure.INJECTIVE, anchor=anchors.smooth("identity"))
