"""A oneDNN primitive run on fw's plain arrays in the layouts oneDNN chose for it: the reorders
into those layouts, the primitive, the reorders back, executed in one compiled call.

oneDNN's convolutions are fast only in the blocked layouts they choose for themselves
(``FORMAT_ANY``: channels in blocks of 16 on AVX-512), while fw's arrays are plain (N, C, H, W),
possibly strided. In eager mode each call therefore reorders its operands into the chosen
layouts and its result back, as PyTorch does for dense tensors; an operand whose layout oneDNN
chose as it is (the one-channel input of a first layer, a pooling's plain input) is used in
place. The blocked copies live in one scratch buffer, each at a 64-byte aligned offset: a
buffer per thread, kept and grown to the largest a program of that thread has needed. Allocating
it per call would cost more than the convolution: the allocator hands the megabytes back to the
system when the call frees them, and the next call faults every page in again (3.4 ms for the
cnn's first convolution, whose primitive takes 0.3 ms).

A :class:`Builder` turns descriptors into a :class:`Program`: one memory object per distinct
buffer, bound to this call's arrays by :func:`fw_onednn.execute.run_program`, and the
primitives in the order they run: one primitive between its reorders
(:meth:`Builder.assemble`), or several that pass blocked values to each other in the scratch
buffer (:meth:`Builder.execute`, :meth:`Builder.finish`; :mod:`fw_onednn.chain`). Like
:class:`~fw_onednn.primitive.Primitive`, a Program owns its native objects and destroys them
when the last reference goes; a Builder that does not finish destroys what it created.

The call holds the GIL, as every :mod:`fw_onednn.execute` call does, for the same reason: the
memory objects of a cached program are shared by every thread.
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

from . import capi, capi_conv, execute
from .primitive import Refusal, _implementation
from .runtime import ENGINE, STREAM

_SCRATCH = 0xFFFF  # the source index of the scratch buffer in a binding (operands: 0, 1, ...)
_ALIGN = 64  # blocked copies start at multiples of it, from the scratch's first boundary
_NONE = np.empty(0, np.uint8)  # no scratch yet
_arena = threading.local()  # .buffer: this thread's scratch buffer
_run = execute.run_program


def _scratch(size: int) -> np.ndarray:
    """This thread's scratch buffer, at least ``size`` bytes long."""
    buffer = getattr(_arena, "buffer", _NONE)
    if buffer.size < size:
        buffer = _arena.buffer = np.empty(size, np.uint8)
    return buffer


class Program:
    """Reorders and primitives over a call's arrays, ready to run.

    Attributes:
        impl: the implementation oneDNN chose for the primitive ("jit:avx512_core").
        out_shape: the shape of the array the kernel allocates for the result.
        reorders: the operands copied into (or out of) oneDNN's layout per call ("src",
            "weights", "dst").
        scratch: bytes of scratch a call needs (blocked copies).
        used: when the primitive cache last handed it out.
    """

    serves = True
    __slots__ = ("impl", "out_shape", "reorders", "scratch", "used", "_handles", "_args",
                 "__weakref__")

    def __init__(self, impl: str, out_shape: tuple[int, ...], reorders: tuple[str, ...],
                 scratch: int, bindings: list[tuple[int, int, int]],
                 steps: list[tuple[int, np.ndarray]], memories: list[int]):
        self.impl, self.out_shape, self.reorders = impl, out_shape, reorders
        self.scratch = scratch + _ALIGN if scratch else 0
        self._args = [args for _, args in steps]  # dnnl_exec_arg_t arrays the handles point at
        handles = [STREAM, len(bindings), len(steps)]
        for binding in bindings:
            handles.extend(binding)
        for primitive, args in steps:
            handles.extend((primitive, len(args), args.ctypes.data))
        self._handles = np.array(handles, np.uint64)
        weakref.finalize(self, _destroy, [p for p, _ in steps], memories)

    def __call__(self, *arrays) -> None:
        """Run on this call's arrays (inputs, then the results the kernel allocated), in the
        order the program was built with."""
        status = _run(self._handles, _scratch(self.scratch), *arrays)
        if status:
            capi.check(status, None, "dnnl_primitive_execute")

    def __repr__(self) -> str:
        moved = ", ".join(self.reorders) or "none"
        return f"Program({self.impl}, out_shape={self.out_shape}, reorders: {moved})"


def _destroy(primitives: list[int], memories: list[int]) -> None:
    for primitive in primitives:
        capi.primitive_destroy(primitive)
    for memory in memories:
        capi.memory_destroy(memory)


class Builder:
    """Collects a program's buffers and primitives; used as a context manager, it destroys the
    descriptors it made on exit, and the memory objects and primitives too unless
    :meth:`assemble` handed them to a Program.

    The descriptor methods return None when oneDNN cannot describe or serve what was asked (the
    caller then caches a Refusal); an allocation failure raises OutOfMemoryError.
    """

    def __init__(self):
        self._mds: list[capi.handle] = []
        self._pds: list[capi.handle] = []
        self._memories: list[int] = []
        self._primitives: list[int] = []
        self._bindings: list[tuple[int, int, int]] = []
        self._before: list[tuple[int, np.ndarray]] = []
        self._after: list[tuple[int, np.ndarray]] = []
        self._reorders: list[str] = []
        self._scratch = 0
        self._finished = False
        #: the implementation of the last primitive descriptor made ("jit:avx512_core")
        self.impl = "?"

    def __enter__(self) -> Builder:
        return self

    def __exit__(self, *exc) -> None:
        for md in self._mds:
            capi.memory_desc_destroy(md)
        for pd in self._pds:
            capi.primitive_desc_destroy(pd)
        if not self._finished:
            _destroy(self._primitives, self._memories)

    # -- descriptors -----------------------------------------------------------------------------
    def plain(self, dims, strides, dtype: int = capi.F32):
        """A descriptor of ``dims`` with these element strides, or None."""
        md = capi.handle()
        status = capi.memory_desc_create_with_strides(
            ctypes.byref(md), len(dims), capi.Dims(*dims), dtype, capi.Dims(*strides))
        return self._kept(md, self._mds, status)

    def chosen(self, dims):
        """A float32 descriptor of ``dims`` whose layout the primitive chooses, or None."""
        md = capi.handle()
        status = capi_conv.memory_desc_create_with_tag(
            ctypes.byref(md), len(dims), capi.Dims(*dims), capi.F32, capi_conv.FORMAT_ANY)
        return self._kept(md, self._mds, status)

    def primitive_desc(self, create, *args):
        """``create(&pd, ENGINE, *args)``'s primitive descriptor, or None when oneDNN has no
        implementation for it; sets :attr:`impl`."""
        pd = capi.handle()
        pd = self._kept(pd, self._pds, create(ctypes.byref(pd), ENGINE, *args))
        if pd is not None:
            self.impl = _implementation(pd)
        return pd

    def unserved(self, pd, what: str) -> Refusal | None:
        """Why fw_cpu serves the call instead of the primitive of ``pd`` (oneDNN has no
        implementation, or only its reference loops), or None."""
        if pd is None:
            return Refusal(f"oneDNN has no {what} for these shapes and attributes")
        if any(part.startswith("ref") for part in self.impl.split("+")):
            return Refusal(f"oneDNN has only its reference code ({self.impl}) for this {what}")
        return None

    @staticmethod
    def _kept(descriptor, kept: list, status: int):
        if status == capi.OUT_OF_MEMORY:
            capi.check(status, None, "creating a oneDNN descriptor")
        if status != capi.SUCCESS:
            return None
        kept.append(descriptor)
        return descriptor

    # -- buffers ---------------------------------------------------------------------------------
    def operand(self, index: int, md) -> int:
        """A memory object of layout ``md`` on the call's ``index``-th array."""
        return self._memory(md, index, 0)

    def buffer(self, md) -> int:
        """A memory object of layout ``md`` in the call's scratch buffer."""
        offset = self._scratch
        self._scratch += -(-capi_conv.memory_desc_get_size(md) // _ALIGN) * _ALIGN
        return self._memory(md, _SCRATCH, offset)

    def _memory(self, md, source: int, offset: int) -> int:
        memory = capi.handle()
        capi.check(capi.memory_create(ctypes.byref(memory), md, ENGINE, None), None,
                   "dnnl_memory_create")
        self._memories.append(memory.value)
        self._bindings.append((memory.value, source, offset))
        return memory.value

    def _source(self, index: int, given, pd, query: int, name: str) -> int | None:
        """The memory the primitive of ``pd`` reads an input from: the call's ``index``-th
        array when its layout ``given`` is the one oneDNN chose (``query``), else a scratch
        copy that a reorder fills before the primitive runs; None if no reorder exists."""
        wanted = capi_conv.primitive_desc_query_md(pd, query, 0)
        array = self.operand(index, given)
        if capi_conv.memory_desc_equal(given, wanted):
            return array
        copy = self.buffer(wanted)
        return copy if self.reorder(given, array, wanted, copy, self._before, name) else None

    def _target(self, index: int, given, pd, query: int, name: str) -> int | None:
        """The memory the primitive of ``pd`` writes a result to: the call's ``index``-th array
        when its layout ``given`` is the one oneDNN chose, else a scratch buffer that a reorder
        copies into the array after the primitive ran; None if no reorder exists."""
        produced = capi_conv.primitive_desc_query_md(pd, query, 0)
        array = self.operand(index, given)
        if capi_conv.memory_desc_equal(given, produced):
            return array
        result = self.buffer(produced)
        return result if self.reorder(produced, result, given, array, self._after, name) \
            else None

    def assemble(self, pd, inputs, output, out_shape: tuple[int, ...],
                 extra=()) -> Program | None:
        """The program of the primitive of ``pd``. Each of ``inputs`` and the ``output`` is
        ``(DNNL_ARG_*, index of the call's array, its layout, the query of the layout oneDNN
        chose, name)``, read or written in place or through a reorder (a query of None: in
        place, as given); ``extra`` are further ``(DNNL_ARG_*, memory)`` arguments;
        ``out_shape`` is the shape of the result the kernel allocates. None when oneDNN has no
        reorder for a layout."""
        args = []
        for arg, index, given, query, name in inputs:
            memory = self.operand(index, given) if query is None else \
                self._source(index, given, pd, query, name)
            args.append((arg, memory))
        arg, index, given, query, name = output
        args.append((arg, self._target(index, given, pd, query, name)))
        if any(memory is None for _, memory in args):
            return None
        steps = list(self._before)
        self.execute(pd, [*args, *extra], steps)
        return self.finish([*steps, *self._after], out_shape)

    def execute(self, pd, args, steps: list) -> None:
        """Append to ``steps`` the primitive of ``pd`` on ``args`` (``(DNNL_ARG_*, memory)``
        pairs)."""
        steps.append((self._instantiate(pd), np.array(args, np.uint64)))

    def finish(self, steps: list, out_shape: tuple[int, ...]) -> Program:
        """The program that runs ``steps`` (primitives and reorders, in order) over the memory
        objects made so far; it owns them from now on."""
        program = Program(self.impl, out_shape, tuple(self._reorders), self._scratch,
                          self._bindings, steps, self._memories)
        self._finished = True
        return program

    def reorder(self, src_md, src, dst_md, dst, steps: list, name: str) -> bool:
        """Append to ``steps`` a reorder of memory ``src`` (layout ``src_md``) into ``dst``
        (``dst_md``), named ``name`` in the program's :attr:`~Program.reorders`; False when
        oneDNN has none."""
        pd = capi.handle()
        status = capi_conv.reorder_primitive_desc_create(ctypes.byref(pd), src_md, ENGINE,
                                                         dst_md, ENGINE, None)
        if self._kept(pd, self._pds, status) is None:
            return False
        args = [(capi_conv.ARG_FROM, src), (capi_conv.ARG_TO, dst)]
        steps.append((self._instantiate(pd), np.array(args, np.uint64)))
        self._reorders.append(name)
        return True

    def _instantiate(self, pd) -> int:
        primitive = capi.handle()
        capi.check(capi.primitive_create(ctypes.byref(primitive), pd), None,
                   "dnnl_primitive_create")
        self._primitives.append(primitive.value)
        return primitive.value
