"""oneDNN RNN primitives for one recurrent layer in one direction, and the reorders around them.

A :class:`Layer` holds, for one cell and one shape (T, B, I, H, direction), what fw_onednn's
recurrent kernels run: the forward primitive (``forward_inference``, or ``forward_training``
together with the backward primitive, whose descriptor needs the forward's as a hint), and the
reorders that move weights between PyTorch's layout and the ones the primitives chose. The
primitives get their weights in the layout oneDNN picks for them ("any"): oneDNN 3.2 has no
``forward_training`` for weights in PyTorch's own (ldgoi) layout, and its backward prefers yet
another one. Every other array is plain: x and y (T, B, features), the states (B, H), the bias
(gates, H).

Each :class:`Executable` is a :class:`~fw_onednn.primitive.Primitive` over the memory
descriptors its primitive descriptor chose, run through the compiled execute path
(:mod:`fw_onednn.execute`, one call per run whatever the number of arguments), with the byte
size of each argument's memory for the buffers a kernel allocates.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from fw_core.errors import KernelError, UnsupportedError

from . import capi, capi_conv, capi_rnn
from .layouts import contiguous
from .primitive import Layout, Refusal, _descriptor, _implementation, _instantiate
from .runtime import ENGINE

_A = capi_rnn



@dataclass(frozen=True)
class Cell:
    """What a recurrent cell is to oneDNN.

    Attributes:
        name: fw's cell ("lstm", "gru", "rnn_tanh", "rnn_relu").
        gates: gates stacked in the weights (LSTM 4, GRU 3, RNN 1).
        bias_gates: rows of oneDNN's bias: GRU's linear-before-reset cell has a fourth, the
            bias of the recurrent candidate term (PyTorch's b_hn).
        cell_state: the cell carries c besides h (LSTM).
        gate_order: oneDNN's gate k is PyTorch's gate ``gate_order[k]`` (None: the same order).
        activation: the vanilla RNN's ``dnnl_alg_kind_t`` (0 for the others).
    """

    name: str
    gates: int
    bias_gates: int
    cell_state: bool = False
    gate_order: tuple[int, ...] | None = None
    activation: int = 0


@dataclass(frozen=True)
class Shape:
    """One layer call: sequence length, batch, input and hidden features, direction."""

    length: int
    batch: int
    features: int
    hidden: int
    reverse: bool


# -- descriptors ------------------------------------------------------------------------------
def _plain(*dims: int):
    md, status = _descriptor(Layout(dims, contiguous(dims)))
    capi.check(status, None, "dnnl_memory_desc_create_with_strides")
    return md


def _any(*dims: int):
    md = capi.handle()
    capi.check(capi_conv.memory_desc_create_with_tag(ctypes.byref(md), len(dims),
                                                     capi.Dims(*dims), capi.F32,
                                                     capi_conv.FORMAT_ANY),
               None, "dnnl_memory_desc_create_with_tag")
    return md


def torch_weights(cell: Cell, rows: int, hidden: int):
    """PyTorch's (gates * H, rows) weight as oneDNN's (1, 1, rows, gates, H) weights: the same
    memory, read through strides (oneDNN's ldgoi)."""
    extent = cell.gates * hidden * rows
    md, status = _descriptor(Layout((1, 1, rows, cell.gates, hidden),
                                    (extent, extent, 1, hidden * rows, rows)))
    capi.check(status, None, "dnnl_memory_desc_create_with_strides")
    return md


def _descriptors(cell: Cell, shape: Shape) -> dict[int, object]:
    """The memory descriptors of a layer's forward arguments, by DNNL_ARG_*: weights "any",
    the rest plain."""
    args = [_A.ARG_SRC_LAYER, _A.ARG_SRC_ITER, _A.ARG_BIAS, _A.ARG_DST_LAYER]
    if cell.cell_state:  # c_n is wanted, and dst_iter_c comes only together with dst_iter
        args += [_A.ARG_SRC_ITER_C, _A.ARG_DST_ITER, _A.ARG_DST_ITER_C]
    mds = {arg: _plain(*_plain_dims(arg, cell, shape)) for arg in args}
    mds[_A.ARG_WEIGHTS_LAYER] = _any(1, 1, shape.features, cell.gates, shape.hidden)
    mds[_A.ARG_WEIGHTS_ITER] = _any(1, 1, shape.hidden, cell.gates, shape.hidden)
    return mds


#: each primitive descriptor's memory arguments, in its C function's order (None: absent)
_FORWARD_ARGS = {
    True: (_A.ARG_SRC_LAYER, _A.ARG_SRC_ITER, _A.ARG_SRC_ITER_C, _A.ARG_WEIGHTS_LAYER,
           _A.ARG_WEIGHTS_ITER, None, None, _A.ARG_BIAS, _A.ARG_DST_LAYER, _A.ARG_DST_ITER,
           _A.ARG_DST_ITER_C),
    False: (_A.ARG_SRC_LAYER, _A.ARG_SRC_ITER, _A.ARG_WEIGHTS_LAYER, _A.ARG_WEIGHTS_ITER,
            _A.ARG_BIAS, _A.ARG_DST_LAYER, None),
}


_WEIGHTS = (_A.ARG_WEIGHTS_LAYER, _A.ARG_WEIGHTS_ITER)


def _diff(arg: int | None) -> int | None:
    """DNNL_ARG_DIFF_* of a forward argument (oneDNN numbers them 128 above)."""
    return None if arg is None else arg + capi_rnn.ARG_DIFF_SRC_LAYER - capi_rnn.ARG_SRC_LAYER


def _create_pd(cell: Cell, prop: int, direction: int, mds: list, hint=None):
    """(primitive descriptor, status) of ``cell``'s forward or backward (``prop``)."""
    pd = capi.handle()
    out, backward = ctypes.byref(pd), prop == capi_rnn.BACKWARD
    flags = capi_rnn.DIFF_WEIGHTS_OVERWRITE if backward else 0
    tail = (flags, hint, None) if backward else (flags, None)
    if cell.name == "lstm":
        create = capi_rnn.lstm_backward_primitive_desc_create if backward else \
            capi_rnn.lstm_forward_primitive_desc_create
        status = create(out, ENGINE, prop, direction, *mds, *tail)
    elif cell.name == "gru":
        create = capi_rnn.lbr_gru_backward_primitive_desc_create if backward else \
            capi_rnn.lbr_gru_forward_primitive_desc_create
        status = create(out, ENGINE, prop, direction, *mds, *tail)
    else:
        create = capi_rnn.vanilla_rnn_backward_primitive_desc_create if backward else \
            capi_rnn.vanilla_rnn_forward_primitive_desc_create
        rest = (flags, 0.0, 0.0, hint, None) if backward else (flags, 0.0, 0.0, None)
        status = create(out, ENGINE, prop, cell.activation, direction, *mds, *rest)
    return pd, status


# -- executables --------------------------------------------------------------------------------
def _chosen(pd, arg: int):
    """The memory descriptor ``pd`` chose for argument ``arg`` (owned by ``pd``)."""
    return capi_conv.primitive_desc_query_md(pd, capi_rnn.QUERY_EXEC_ARG_MD, arg)


class Executable:
    """A primitive run on new arrays each call, with its arguments by DNNL_ARG_*.

    Attributes:
        args: the DNNL_ARG_* it takes.
        sizes: bytes of each argument's memory in the layout the primitive chose, by arg.
        impl: the implementation oneDNN picked.
    """

    __slots__ = ("args", "sizes", "impl", "_primitive")

    def __init__(self, pd, args: tuple[int, ...]):
        mds = [_chosen(pd, arg) for arg in args]
        self.args = args
        self.sizes = {arg: capi_conv.memory_desc_get_size(md) for arg, md in zip(args, mds)}
        self.impl = _implementation(pd)
        self._primitive = _instantiate(pd, self.impl, (), mds, list(args))

    def run(self, arrays: dict[int, np.ndarray]) -> None:
        """Execute on ``arrays`` (one per argument, by DNNL_ARG_*, each C-contiguous in the
        layout the primitive chose).

        Raises:
            FwError: the status of a failed execute, as :func:`fw_onednn.capi.check` says.
        """
        primitive = self._primitive
        status = primitive.run(primitive.handles, *[arrays[arg] for arg in self.args])
        if status:
            capi.check(status, None, "dnnl_primitive_execute")


def _reorder(src, dst) -> Executable:
    """The reorder from memory descriptor ``src`` to ``dst`` (arguments ARG_FROM, ARG_TO)."""
    pd = capi.handle()
    capi.check(capi_conv.reorder_primitive_desc_create(ctypes.byref(pd), src, ENGINE, dst,
                                                       ENGINE, None), None,
               "dnnl_reorder_primitive_desc_create")
    try:
        return Executable(pd, (capi_conv.ARG_FROM, capi_conv.ARG_TO))
    finally:
        capi.primitive_desc_destroy(pd)


# -- a layer ------------------------------------------------------------------------------------
class Layer:
    """What one layer shape needs: its forward primitive, its backward one when training, and
    the weight reorders for each.

    Attributes:
        forward, backward: the primitives (``backward`` None for inference).
        forward_args, backward_args: the DNNL_ARG_* each takes (``run`` gets one array per
            argument).
        to_forward, to_backward: (layer, iter) reorders from PyTorch's weight layout into each
            primitive's; ``from_diff``: (layer, iter) reorders of the backward's weight
            gradients into PyTorch's layout.
        workspace: bytes of the workspace forward_training fills for the backward.
    """

    serves = True
    __slots__ = ("cell", "shape", "forward", "backward", "forward_args", "backward_args",
                 "to_forward", "to_backward", "from_diff", "workspace", "used")

    def __init__(self, cell: Cell, shape: Shape, training: bool):
        self.cell, self.shape = cell, shape
        self.backward = self.to_backward = self.from_diff = None
        self.workspace = 0
        mds = _descriptors(cell, shape)
        direction = capi_rnn.RIGHT2LEFT if shape.reverse else capi_rnn.LEFT2RIGHT
        forward_args = _FORWARD_ARGS[cell.cell_state]
        prop = capi_conv.FORWARD_TRAINING if training else capi_conv.FORWARD_INFERENCE
        torch_layer = torch_weights(cell, shape.features, shape.hidden)
        torch_iter = torch_weights(cell, shape.hidden, shape.hidden)
        created = [*mds.values(), torch_layer, torch_iter]
        pd = None
        try:
            pd, status = _create_pd(cell, prop, direction, [mds.get(a) for a in forward_args])
            capi.check(status, None, f"dnnl_{cell.name} forward primitive_desc_create")
            self.forward_args = tuple(a for a in forward_args if a is not None) + \
                ((capi_conv.ARG_WORKSPACE,) if training else ())
            self.forward = Executable(pd, self.forward_args)
            self.to_forward = self._reorders(pd, torch_layer, torch_iter, into=True)
            if training:
                self.workspace = self.forward.sizes[capi_conv.ARG_WORKSPACE]
                self._build_backward(pd, mds, direction, forward_args, torch_layer,
                                     torch_iter, created)
        finally:
            if pd is not None and pd.value:
                capi.primitive_desc_destroy(pd)
            for md in created:
                capi.memory_desc_destroy(md)

    def _build_backward(self, forward_pd, mds, direction, forward_args, torch_layer,
                        torch_iter, created) -> None:
        shape, cell = self.shape, self.cell
        fresh = {}  # gradients plain like their arrays; the weights and theirs "any" again
        for arg in mds:
            if arg in _WEIGHTS:
                rows = shape.features if arg == capi_rnn.ARG_WEIGHTS_LAYER else shape.hidden
                fresh[arg] = _any(1, 1, rows, cell.gates, shape.hidden)
                fresh[_diff(arg)] = _any(1, 1, rows, cell.gates, shape.hidden)
            else:
                fresh[_diff(arg)] = _plain(*_plain_dims(arg, cell, shape))
        created.extend(fresh.values())
        given = {**mds, **fresh}
        backward_args = forward_args + tuple(_diff(a) for a in forward_args)
        pd, status = _create_pd(cell, capi_rnn.BACKWARD, direction,
                                [given.get(a) for a in backward_args], hint=forward_pd)
        try:
            capi.check(status, None, f"dnnl_{cell.name} backward primitive_desc_create")
            self.backward_args = tuple(a for a in backward_args if a is not None) + \
                (capi_conv.ARG_WORKSPACE,)
            self.backward = Executable(pd, self.backward_args)
            self.to_backward = self._reorders(pd, torch_layer, torch_iter, into=True)
            self.from_diff = self._reorders(pd, torch_layer, torch_iter, into=False)
        finally:
            if pd.value:
                capi.primitive_desc_destroy(pd)

    @staticmethod
    def _reorders(pd, torch_layer, torch_iter, into: bool) -> tuple[Executable, Executable]:
        """(layer, iter) weight reorders between PyTorch's layout and ``pd``'s choice: into the
        primitive's weights, or (``into=False``) out of its weight gradients."""
        if into:
            layer, iter_ = capi_rnn.ARG_WEIGHTS_LAYER, capi_rnn.ARG_WEIGHTS_ITER
            return (_reorder(torch_layer, _chosen(pd, layer)),
                    _reorder(torch_iter, _chosen(pd, iter_)))
        layer, iter_ = capi_rnn.ARG_DIFF_WEIGHTS_LAYER, capi_rnn.ARG_DIFF_WEIGHTS_ITER
        return (_reorder(_chosen(pd, layer), torch_layer),
                _reorder(_chosen(pd, iter_), torch_iter))



def _plain_dims(arg: int, cell: Cell, shape: Shape) -> tuple[int, ...]:
    """The dims of a plain (non-weight) forward argument."""
    t, b, i, h = shape.length, shape.batch, shape.features, shape.hidden
    return {_A.ARG_SRC_LAYER: (t, b, i), _A.ARG_DST_LAYER: (t, b, h),
            _A.ARG_BIAS: (1, 1, cell.bias_gates, h)}.get(arg, (1, 1, b, h))


def build(cell: Cell, shape: Shape, training: bool) -> Layer | Refusal:
    """The :class:`Layer` for ``cell`` at ``shape``, or a Refusal when oneDNN has no
    implementation for it (fw_cpu then serves those calls).

    Raises:
        OutOfMemoryError: oneDNN could not allocate.
    """
    try:
        return Layer(cell, shape, training)
    except (UnsupportedError, KernelError) as err:
        return Refusal(f"oneDNN has no {cell.name} primitive for {shape}: {err.message}")
