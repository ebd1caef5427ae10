"""A oneDNN primitive ready to run on new arrays, or the reason oneDNN will not serve a layout.

:func:`matmul` asks oneDNN for a matmul primitive over given memory layouts. oneDNN answers with
the implementation it picked; when that is its reference code (``ref:any``: plain C++ loops,
which it picks for zero-size dimensions, zero strides, or rows and columns that both have a
stride) or no implementation at all, the answer is a :class:`Refusal` and fw_cpu serves the
call instead. The caller caches either answer, so each layout is asked about once.
:func:`build` does the same for any primitive kind (eltwise, softmax, normalisations, a matmul
with post-ops), given how to create its primitive descriptor.

A :class:`Primitive` owns its native objects and destroys them when the last reference goes
(a cache eviction while another thread still runs it is therefore safe).
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from dataclasses import dataclass

import numpy as np

from . import capi, execute
from .runtime import ENGINE, STREAM


@dataclass(frozen=True)
class Layout:
    """A tensor as oneDNN sees it: dimensions and strides in elements, and the elements'
    ``dnnl_data_type_t`` (float32 unless said)."""

    dims: tuple[int, ...]
    strides: tuple[int, ...]
    data_type: int = capi.F32


@dataclass(frozen=True)
class Plan:
    """An fw op as one oneDNN matmul: ``dst = src @ weights (+ bias)``.

    Attributes:
        out_shape: the shape fw expects of the result (dst's memory, as fw shapes it).
        weights_first: the op's first array is the weights (an einsum whose output lists the
            second operand's subscripts first).
    """

    src: Layout
    weights: Layout
    bias: Layout | None
    dst: Layout
    out_shape: tuple[int, ...]
    weights_first: bool = False


class Refusal:
    """oneDNN has no fast implementation for these layouts; ``reason`` says what it answered."""

    serves = False
    call = None  # a guard returns it: the call is fw_cpu's
    __slots__ = ("reason", "used")

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Refusal({self.reason!r})"


class Primitive:
    """A compiled oneDNN primitive with one memory object per array argument.

    Attributes:
        impl: the implementation oneDNN chose ("brg:avx512_core", "gemm:jit:f32").
        out_shape: the shape of the array the kernel allocates for the result.
        run: ``run(handles, *arrays) -> status``: the execute path, arrays in the order the
            primitive was built with (:func:`fw_onednn.execute.run`).
        handles: the addresses ``run`` needs.
        launch: ``(run, handles, out_shape)``, what a kernel reads per call, in one tuple.
        call: ``call(*arrays, **attributes) -> result``: the primitive on the op's input arrays,
            its result in a new array (:func:`fw_onednn.execute.call`), what a guard returns
            for the chain to run in place of its kernel.
        used: when the primitive cache last handed it out.
    """

    serves = True
    __slots__ = ("impl", "out_shape", "run", "handles", "launch", "call", "used", "_args",
                 "__weakref__")

    def __init__(self, impl: str, out_shape: tuple[int, ...], primitive: int,
                 memories: list[int], arg_ids: list[int]):
        self.impl = impl
        self.out_shape = out_shape
        args = np.zeros((len(memories), 2), np.uint64)  # dnnl_exec_arg_t: {int arg; void *mem}
        args[:, 0] = arg_ids
        args[:, 1] = memories
        self._args = args
        self.handles = np.array([primitive, STREAM, len(memories), args.ctypes.data, *memories],
                                np.uint64)
        self.run = execute.run
        self.launch = (self.run, self.handles, out_shape)
        self.call = functools.partial(execute.call, self.handles, out_shape)
        # the native objects go with the handles that address them (and the exec-argument
        # array they point at), not with this entry: a call bound to them (self.call) may
        # outlive the entry's eviction from the cache by another thread
        weakref.finalize(self.handles, _destroy, primitive, memories, args)

    def __repr__(self) -> str:
        return f"Primitive({self.impl}, out_shape={self.out_shape})"


def _destroy(primitive: int, memories: list[int], args: np.ndarray) -> None:
    del args  # kept alive until now: the handles pointed at it
    for memory in memories:
        capi.memory_destroy(memory)
    capi.primitive_destroy(primitive)


def _descriptor(layout: Layout) -> tuple[capi.handle, int]:
    """A ``dnnl_memory_desc_t`` for ``layout`` and the status of creating it."""
    md = capi.handle()
    status = capi.memory_desc_create_with_strides(
        ctypes.byref(md), len(layout.dims), capi.Dims(*layout.dims), layout.data_type,
        capi.Dims(*layout.strides))
    return md, status


def matmul_arguments(plan: Plan) -> list[tuple[int, Layout]]:
    """``(DNNL_ARG_*, Layout)`` of a matmul's arrays in the order its kernel passes them: src,
    weights, (bias,) dst, or weights first when ``plan.weights_first``."""
    inputs = [(capi.ARG_SRC, plan.src), (capi.ARG_WEIGHTS, plan.weights)]
    arguments = [*(inputs[::-1] if plan.weights_first else inputs), (capi.ARG_BIAS, plan.bias),
                 (capi.ARG_DST, plan.dst)]
    return [(arg_id, layout) for arg_id, layout in arguments if layout is not None]


def create_matmul(pd, descriptors: dict, attr=None) -> int:
    """``dnnl_matmul_primitive_desc_create`` into ``pd`` over ``descriptors`` ({DNNL_ARG_*:
    memory descriptor}) with the primitive attributes ``attr`` (None: none); the status."""
    return capi.matmul_primitive_desc_create(
        ctypes.byref(pd), ENGINE, descriptors[capi.ARG_SRC], descriptors[capi.ARG_WEIGHTS],
        descriptors.get(capi.ARG_BIAS), descriptors[capi.ARG_DST], attr)


def matmul(plan: Plan) -> Primitive | Refusal:
    """The matmul primitive of ``plan``, or a Refusal; its array arguments are in the order of
    :func:`matmul_arguments`.

    Raises:
        OutOfMemoryError: oneDNN could not allocate while creating the primitive (without an
            op: fw's dispatch names the op that was running).
    """
    return build(matmul_arguments(plan), create_matmul, plan.out_shape, "matmul")


def build(arguments: list[tuple[int, Layout]], create, out_shape: tuple[int, ...],
          what: str) -> Primitive | Refusal:
    """A primitive whose array arguments are ``arguments`` (``(DNNL_ARG_*, Layout)``, in the
    order its kernel passes the arrays), or a Refusal.

    ``create(pd, descriptors) -> dnnl status`` makes its primitive descriptor into the handle
    ``pd`` from ``descriptors`` ({DNNL_ARG_*: memory descriptor}, destroyed after). oneDNN
    refuses when it cannot describe a layout, has no ``what`` ("matmul", "softmax") for them,
    or only its reference code.

    Raises:
        OutOfMemoryError: oneDNN could not allocate while creating the primitive.
    """
    descriptors = []
    try:
        for _, layout in arguments:
            md, status = _descriptor(layout)
            if status != capi.SUCCESS:
                return Refusal(f"oneDNN cannot describe dims {layout.dims} with strides "
                               f"{layout.strides} ({capi.status_name(status)})")
            descriptors.append(md)
        pd = capi.handle()
        status = create(pd, dict(zip((arg_id for arg_id, _ in arguments), descriptors)))
        if status == capi.OUT_OF_MEMORY:
            capi.check(status, None, f"creating oneDNN's {what} primitive descriptor")
        if status != capi.SUCCESS:
            return Refusal(f"oneDNN has no {what} for these shapes and strides "
                           f"({capi.status_name(status)})")
        try:
            impl = _implementation(pd)
            if impl.startswith("ref"):
                return Refusal(f"oneDNN has only its reference code ({impl}) for these shapes "
                               "and strides")
            return _instantiate(pd, impl, out_shape, descriptors,
                                [arg_id for arg_id, _ in arguments])
        finally:
            capi.primitive_desc_destroy(pd)
    finally:
        for md in descriptors:
            capi.memory_desc_destroy(md)


def _instantiate(pd, impl: str, out_shape, descriptors, arg_ids) -> Primitive:
    """The primitive of ``pd`` and a memory object (without data) per descriptor."""
    memories: list[int] = []
    try:
        for md in descriptors:
            memory = capi.handle()
            capi.check(capi.memory_create(ctypes.byref(memory), md, ENGINE, None), None,
                       "dnnl_memory_create")
            memories.append(memory.value)
        primitive = capi.handle()
        capi.check(capi.primitive_create(ctypes.byref(primitive), pd), None,
                   "dnnl_primitive_create")
    except BaseException:
        for memory in memories:
            capi.memory_destroy(memory)
        raise
    return Primitive(impl, out_shape, primitive.value, memories, arg_ids)


def _implementation(pd) -> str:
    name = ctypes.c_char_p()
    capi.primitive_desc_query(pd, capi.QUERY_IMPL_INFO_STR, 0, ctypes.byref(name))
    return (name.value or b"?").decode()
