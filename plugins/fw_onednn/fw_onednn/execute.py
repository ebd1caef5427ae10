"""The per-call path into oneDNN: point a primitive's memory objects at this call's arrays and
execute it, in one compiled call.

A cached primitive keeps one oneDNN memory object per argument; a call only swaps their data
pointers (``dnnl_memory_set_data_handle``) and runs ``dnnl_primitive_execute``. Measured for a
4×4 float32 matmul on this project's 2-core machine (benchmarks/kernels.py, best of 7):

- ``dnnl_primitive_execute`` alone, from a compiled loop: ~0.4 µs (the kernel itself);
- plain ctypes: ~6.4 µs per call, most of it reading ``a.ctypes.data`` (~1 µs per array) and
  converting the arguments of four foreign calls;
- one Numba ``@njit`` function that calls the ctypes function pointers (chosen): ~0.9 µs, as
  Numba reads the data pointers while unboxing the arrays and calls the C functions directly;
- a C extension or cffi's API mode would need a compiler at install (or per-platform wheels), and
  cffi's ABI mode still pays a conversion per argument as ctypes does.

The compiled functions hold the GIL (Numba's default) while they run: a cached primitive's
memory objects are shared by every thread, and the GIL is what keeps two threads from swapping
the same objects' pointers at once. Numba is imported, and each function compiled, on the first
kernel run (~0.7 s for the first in a process, Numba's import included, then ~0.1 s for each new
combination of array ranks and layouts), never at ``import fw_core``. Their code embeds the C
functions' addresses, so it is not cached on disk.

A primitive's ``handles`` array is ``[primitive, stream, nargs, args, memory_0, memory_1, ...]``:
``args`` is the address of its ``dnnl_exec_arg_t`` array and ``memory_i`` the memory object that
takes the i-th array argument. There is one function per argument count, written out from a
template (:func:`_source`): a single one over ``*arrays`` (``numba.literal_unroll``) compiles
twice as long and costs more per call.
"""

from __future__ import annotations

import functools

from . import capi

_set_data = capi.memory_set_data_handle
_execute = capi.primitive_execute
_compiled: dict[int, object] = {}


def _source(count: int) -> str:
    """The source of ``run(handles, a0, ..., a{count-1})``: each array's data pointer into its
    memory object, then the execute, stopping at the first status that is not success."""
    arrays = [f"a{i}" for i in range(count)]
    lines = [f"def run(handles, {', '.join(arrays)}):",
             "    status = _set_data(handles[4], a0.ctypes.data)"]
    for i in range(1, count):
        lines += ["    if status == 0:",
                  f"        status = _set_data(handles[{4 + i}], a{i}.ctypes.data)"]
    lines += ["    if status == 0:",
              "        status = _execute(handles[0], handles[1], handles[2], handles[3])",
              "    return status"]
    return "\n".join(lines) + "\n"


def runner(count: int):
    """``run(handles, *arrays) -> dnnl status``, compiled, for primitives with ``count`` array
    arguments (a matmul's src, weights, dst: 3; with a bias: 4; an eltwise's src, dst: 2)."""
    run = _compiled.get(count)
    if run is None:
        import numba

        namespace = {"_set_data": _set_data, "_execute": _execute}
        exec(_source(count), namespace)  # noqa: S102 - the source is generated above
        run = _compiled[count] = numba.njit(namespace["run"])
    return run


@functools.cache
def repeat_loop():
    """``loop(handles, n) -> status``: the primitive of ``handles`` (an entry's, or any array
    starting ``[primitive, stream, nargs, args]``) executed ``n`` times from compiled code on the
    arrays it was last bound to, the statuses or-ed together. What a primitive costs with no
    caller around it: the rate fw's benchmarks hold the per-call path and fw's kernels against."""
    import numba

    @numba.njit
    def loop(handles, n):
        status = 0
        for _ in range(n):
            status |= _execute(handles[0], handles[1], handles[2], handles[3])
        return status

    return loop
