"""The per-call path into oneDNN: point a primitive's memory objects at this call's arrays and
execute it, in one C call (``fw_onednn._native``, built with the wheel).

A cached primitive keeps one oneDNN memory object per argument; a call only swaps their data
pointers (``dnnl_memory_set_data_handle``) and runs ``dnnl_primitive_execute``. Measured for a
4×4 float32 matmul on this project's 2-core machine (benchmarks/kernels.py, best of 7):

- ``dnnl_primitive_execute`` alone, from a C loop: ~0.4 µs (the kernel itself);
- plain ctypes: ~6.3 µs per call, most of it reading ``a.ctypes.data`` (~1 µs per array) and
  converting the arguments of four foreign calls;
- a Numba ``@njit`` function calling the ctypes function pointers: ~0.9 µs, ~0.45 µs of it in
  Numba's dispatcher typing and unboxing each array; its first call in a process also compiled
  for ~0.7 s (Numba's import included), then ~0.1 s per new combination of array ranks;
- the C extension (chosen): ~0.5 µs, and nothing to compile at run time. It needs a C compiler
  when the wheel is built from source (Python's and NumPy's headers, no oneDNN headers), which
  fw's fresh-install check does on a new machine.

The extension is not linked against libdnnl: this module hands it the addresses of the two
functions from the library :mod:`fw_onednn.capi` loaded, once at import.

A primitive's ``handles`` array is ``[primitive, stream, nargs, args, memory_0, memory_1, ...]``
(uint64): ``args`` is the address of its ``dnnl_exec_arg_t`` array and ``memory_i`` the memory
object that takes the i-th array argument. The functions hold the GIL while they run: a cached
primitive's memory objects are shared by every thread, and the GIL keeps two threads from
swapping the same objects' pointers at once.
"""

from __future__ import annotations

import ctypes

from . import _native, capi


def _address(function) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value


def _raise_status(status: int) -> None:
    capi.check(status, None, "dnnl_primitive_execute")


_native.bind(_address(capi.memory_set_data_handle), _address(capi.primitive_execute),
             _raise_status)

#: ``call(handles, out_shape, *arrays, **attributes) -> array``: the primitive's float32 result
#: in a new C-contiguous array of ``out_shape``, the arrays bound to its memory objects in order
#: (None, an absent optional input such as a bias, skipped) and the result to the next; the
#: keywords, attributes built into the primitive, are ignored. A failed execute raises the
#: FwError :func:`fw_onednn.capi.check` gives.
call = _native.call

#: ``run(handles, *arrays) -> dnnl status``: each array's data pointer into its memory object
#: (None skipped), then the execute, stopping at the first status that is not success
run = _native.run

#: ``run_program(handles, scratch, *arrays) -> dnnl status``: a :class:`fw_onednn.program.Program`'s
#: bindings and primitives (that module describes its handles)
run_program = _native.run_program

#: ``repeat(handles, n) -> status``: the primitive of ``handles`` (an entry's, or any array
#: starting ``[primitive, stream, nargs, args]``) executed ``n`` times on the arrays it was last
#: bound to, the statuses or-ed together: what a primitive costs with no caller around it, the
#: rate fw's benchmarks hold the per-call path and fw's kernels against
repeat = _native.repeat
