"""Tensor: a device array plus what autograd and provenance need.

Ops and methods live in :mod:`fw_core.ops`; :mod:`fw_core.tensor_methods` binds them here.
"""

from __future__ import annotations

import numpy as np

from . import capture
from . import dtypes as _dt
from ._state import state
from .device import Device
from .errors import AutogradError, FwError, UnsupportedError

_new = object.__new__
#: NumPy ufunc name -> the Tensor operator that implements it (for ``ndarray + tensor``)
_NUMPY_OPERATORS = {
    "add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "true_divide": "__truediv__",
    "power": "__pow__", "matmul": "__matmul__", "equal": "__eq__", "not_equal": "__ne__",
    "less": "__lt__", "less_equal": "__le__", "greater": "__gt__", "greater_equal": "__ge__",
}


class Tensor:
    """An n-dimensional array on a device, with autograd and provenance.

    Create tensors with :func:`fw.tensor`, :func:`fw.zeros`, ... rather than this class.
    ``t.op`` names the op that produced it and ``t.module`` the module path whose forward was
    running, whether or not gradients were recorded.
    """

    __slots__ = ("_data", "_device", "requires_grad", "grad", "_node", "_vc", "_hooks",
                 "_op", "_module", "__weakref__")


    @staticmethod
    def _wrap(data, device: Device, op=None, module: str = "") -> Tensor:
        """Wrap a raw device array (the per-op path; no checks)."""
        t = _new(Tensor)
        t._data = data
        t._device = device
        t.requires_grad = False
        t.grad = None
        t._node = None
        t._vc = None
        t._hooks = None
        t._op = op
        t._module = module
        return t

    def __getattr__(self, name: str):
        """Only for names Tensor lacks (Python calls it after the normal look-up failed): a
        MissingNameError naming fw's equivalent of a PyTorch method, or saying there is none.
        Private names and the class's own (an unset slot) stay a plain AttributeError."""
        if name.startswith("_") or hasattr(Tensor, name):
            raise AttributeError(f"'Tensor' object has no attribute {name!r}")
        from .names import missing

        raise missing("Tensor", name)

    # -- what a tensor is ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    def size(self, dim: int | None = None):
        """The shape, or the length of dimension ``dim``."""
        return self._data.shape if dim is None else self._data.shape[dim]

    @property
    def dtype(self) -> _dt.DType:
        return _dt.BY_NUMPY[self._data.dtype]

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (as ``element_size()``)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take: ``numel() * itemsize``."""
        return int(self._data.size) * self._data.itemsize

    def is_complex(self) -> bool:
        """False: fw has no complex dtypes."""
        return False

    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``fw.inference_mode()`` (or is a view of one)."""
        from .autograd.grad_mode import INFERENCE

        return self._vc is INFERENCE

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        """The recorded node that produced this tensor (None for leaves and untracked results)."""
        return self._node

    @property
    def op(self) -> str | None:
        """Name of the op that produced this tensor (None for tensors made from data)."""
        return None if self._op is None else self._op.name

    @property
    def module(self) -> str:
        """Path of the module whose forward produced this tensor ("" outside any module)."""
        return self._module

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one (a method, as in PyTorch)."""
        return self._data.dtype.kind in _dt.FLOAT_KINDS

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage but detached from autograd."""
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._device = value._device

    @property
    def _version(self) -> int:
        return 0 if self._vc is None else self._vc[0]

    # -- leaving fw ---------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory on the CPU, like PyTorch)."""
        if self.requires_grad and state.grad_enabled:
            raise AutogradError(
                "can't call numpy() on a tensor that requires grad",
                hint="use t.detach().numpy()",
            )
        capture.host_read(self, ".numpy()")
        return np.asarray(self._device.spec.to_numpy(self._data))

    def __array__(self, dtype=None, copy=None):
        capture.host_read(self, "np.asarray(t)")
        values = np.asarray(self._device.spec.to_numpy(self._data))
        return values if dtype is None else values.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs meeting a tensor: ``array + tensor`` is fw's op and gives a tensor;
        other ufuncs (``np.exp(t)``) compute on the values and return NumPy arrays."""
        operator = _NUMPY_OPERATORS.get(ufunc.__name__)
        if method == "__call__" and not kwargs and operator and len(inputs) == 2:
            from .ops.creation import as_tensor

            a, b = (x if isinstance(x, Tensor) else as_tensor(np.asarray(x), device=self._device)
                    for x in inputs)
            return getattr(a, operator)(b)
        values = [np.asarray(x.__array__()) if isinstance(x, Tensor) else x for x in inputs]
        return getattr(ufunc, method)(*values, **kwargs)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise FwError(
                f"item() needs a tensor with one element, got shape {tuple(self.shape)}",
                hint="reduce first (t.sum().item()) or use t.tolist()",
            )
        capture.host_read(self, ".item()")
        return self._device.spec.to_numpy(self._data).reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists."""
        capture.host_read(self, ".tolist()")
        return np.asarray(self._device.spec.to_numpy(self._data)).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub":
            raise FwError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise FwError(
                f"the truth value of a tensor with {self._data.size} elements is ambiguous",
                hint="use t.any() or t.all()",
            )
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise FwError("len() of a 0-d tensor", hint="use t.item() or t.numel()")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise FwError("iteration over a 0-d tensor", hint="use t.item()")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from .printing import format_values

        body = format_values(np.asarray(self.__array__()), "tensor(")
        extras = []
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self._data.dtype not in (_dt.default_float.numpy, np.int64, np.bool_):
            extras.append(f"dtype={self.dtype!r}")
        if self._node is not None:
            extras.append(f"grad_fn={self._node!r}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # -- autograd -----------------------------------------------------------------------------
    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of every leaf it depends on.

        Args:
            gradient: d(something)/d(self); defaults to 1 for a one-element tensor.
            retain_graph: keep the graph's saved values for another backward.
            create_graph: record the backward pass, so gradients can be differentiated again.
            inputs: accumulate only into these leaves.
        """
        from .autograd.engine import backward

        backward(self, None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs)

    def detach(self) -> Tensor:
        """The same values, cut from the graph (shares storage)."""
        t = Tensor._wrap(self._data, self._device, self._op, self._module)
        if self._vc is None:
            self._vc = [0]
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph, in place."""
        self._node = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Ask autograd to track this leaf (or stop tracking it)."""
        if self._node is not None and not requires_grad:
            raise AutogradError(
                "requires_grad_(False) on a non-leaf tensor",
                hint="use t = t.detach() to cut a result from the graph",
            )
        if requires_grad and self.is_inference() and not state.inference_mode:
            raise AutogradError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed", hint="make a clone to get a normal tensor: t = t.clone()")
        if requires_grad and self._data.dtype.kind not in _dt.FLOAT_KINDS:
            raise UnsupportedError(
                f"only floating-point tensors can require gradients, got {self.dtype.name}",
                hint="convert first: t = t.float()",
            )
        self.requires_grad = requires_grad
        return self

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a non-None return
        replaces the gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise AutogradError("cannot register a hook on a tensor that doesn't require grad",
                                hint="call requires_grad_() first")
        if self._node is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self._node.hooks is None:
                self._node.hooks = []
            hooks = self._node.hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` once per backward pass, after the pass's last gradient for this
        leaf has been accumulated into ``.grad`` (see
        :func:`fw.autograd.register_post_accumulate_grad_hook`). Returns a handle with
        ``remove()``."""
        from .autograd.engine import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
        if self._node is None:
            return
        import weakref

        ref = weakref.ref(self)

        def keep(grad):
            me = ref()
            if me is not None:
                me.grad = grad if me.grad is None else me.grad + grad

        self.register_hook(keep)

    # -- devices and dtypes -------------------------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """``t.to("cuda")``, ``t.to(fw.float64)``, ``t.to(other_tensor)`` or
        ``t.to(device=..., dtype=...)``: a tensor on that device and dtype (self if unchanged)."""
        from .ops.creation import to as _to

        return _to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    # -- copying and pickling (leaves only: a graph is not data) -------------------------------
    def __deepcopy__(self, memo) -> Tensor:
        if self._node is not None:
            raise AutogradError("only leaf tensors can be deep-copied",
                                hint="deep-copy t.detach() (or t.clone().detach())")
        t = Tensor._wrap(self._data.copy(), self._device, self._op, self._module)
        t.__class__ = self.__class__
        t.requires_grad = self.requires_grad
        memo[id(self)] = t
        if self.grad is not None:
            t.grad = self.grad.__deepcopy__(memo)
        return t

    def __reduce_ex__(self, protocol):
        values = np.array(self._device.spec.to_numpy(self._data))
        return (_rebuild, (type(self), values, str(self._device), self.requires_grad))

    def cuda(self, index: int = 0) -> Tensor:
        return self.to(f"cuda:{index}")


def _rebuild(cls, values, device, requires_grad) -> Tensor:
    from .ops.creation import tensor

    t = tensor(values, device=device)
    t.__class__ = cls
    if requires_grad:
        t.requires_grad_(True)
    return t


class _HookHandle:
    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
