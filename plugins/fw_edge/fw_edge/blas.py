"""NumPy's BLAS thread count, read and set through the library's own functions (ctypes), so
that a plan of few-row matrix products can run them on one thread.

Why: OpenBLAS splits a product of ``rows x in`` by ``in x out`` across its threads once
``rows * in * out`` passes 2^18, even at 16 rows (a short sequence at batch 1). Each product
then waits for every thread, and on a machine whose cores are busy with other work that wait is
for a descheduled thread: MiniLM at sequence 16 ran 2x to 35x slower with OpenBLAS's two
threads than with one on this project's shared 2-core machine as its load varied (benchmarks/
edge.py's model, runs interleaved in one process), and 1.2-1.3x faster while the other core
was idle. :func:`prefers_one_thread` picks the plans where that choice arises (few rows, and a
product OpenBLAS would thread); :class:`fw_edge.thread_choice.ThreadChoice` makes it call by
call; :func:`one_thread` wraps a run in ``set(1)`` ... ``set(previous)`` (about 1 µs).

NumPy's wheels bundle OpenBLAS (``numpy.libs/`` on Linux and Windows, ``numpy/.dylibs/`` on
macOS) exporting ``scipy_openblas_{get,set}_num_threads64_``; a NumPy built on a system OpenBLAS
exports ``openblas_{get,set}_num_threads`` from a library found in ``/proc/self/maps``. With
another BLAS (Accelerate, MKL) :func:`controls` is None and plans run as NumPy has them. The
count is the process's: while a one-thread call runs, NumPy products on other threads run on
one thread too.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading
from pathlib import Path

import numpy as np

#: (get, set) symbol pairs, in the order they are looked for
_SYMBOLS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
            ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
            ("openblas_get_num_threads", "openblas_set_num_threads"))
#: ops whose kernels are matrix products, with their sizes as :func:`_products` reads
PRODUCTS = frozenset({"linear", "matmul", "bmm", "lstm_layer", "gru_layer", "rnn_layer"})
#: other ops whose kernels call BLAS on sizes :func:`prefers_one_thread` does not judge
OTHER_BLAS = frozenset({"conv1d", "conv2d"})
#: the most rows (of one product) for which a plan may run on one thread
FEW_ROWS = 32
#: OpenBLAS runs a GEMM of at most this many multiply-adds on one thread by itself
#: (``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``), and a GEMV of fewer than
#: ``GEMV_THREADED`` matrix entries
THREADED = 1 << 18
GEMV_THREADED = 2304 * 4
_looked = False
_controls: tuple | None = None
#: one-thread calls running now, and the count the first of them found (restored by the last)
_lock = threading.Lock()
_depth = 0
_saved = 1


def controls() -> tuple | None:
    """``(get, set)``: the thread-count functions of the BLAS NumPy uses, or None where it is
    not an OpenBLAS this module finds. Looked up once."""
    global _looked, _controls
    if not _looked:
        _looked = True
        _controls = _lookup()
    return _controls


def _lookup() -> tuple | None:
    for path in _libraries():
        try:
            library = ctypes.CDLL(str(path))
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            get, set_ = getattr(library, get_name, None), getattr(library, set_name, None)
            if get is not None and set_ is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                return get, set_
    return None


def _libraries():
    """Paths of OpenBLAS libraries NumPy has loaded: its bundled ones, then (Linux) any
    OpenBLAS mapped into the process."""
    package = Path(np.__file__).parent
    for folder in (package.parent / "numpy.libs", package / ".dylibs"):
        if folder.is_dir():
            yield from sorted(folder.glob("*openblas*"))
    if sys.platform.startswith("linux"):
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return
        seen = set()
        for line in maps.splitlines():
            path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
            if "openblas" in Path(path).name and path not in seen:
                seen.add(path)
                yield Path(path)


def prefers_one_thread(nodes, shapes) -> bool:
    """Whether a plan may run better on one BLAS thread: its matrix products (``PRODUCTS``) all
    have at most ``FEW_ROWS`` rows, one of them is large enough that OpenBLAS would thread it,
    and no other BLAS-calling op is in the plan. ``shapes``: value id -> resolved shape."""
    threaded = False
    for node in nodes:
        if node.op in OTHER_BLAS:
            return False
        if node.op in PRODUCTS:
            for rows, inner, cols in _products(node, shapes):
                if rows > FEW_ROWS:
                    return False
                threaded = threaded or (inner * cols >= GEMV_THREADED if rows == 1 else
                                        rows * inner * cols > THREADED)
    return threaded


def _products(node, shapes) -> list[tuple[int, int, int]]:
    """(rows, inner, columns) of the node's products: a linear's rows are every leading entry
    of ``x``; a matmul's or bmm's, the second-last axis of ``a`` (one matrix of a batch, as
    BLAS sees it); a recurrent layer over (T, B, F) inputs with hidden size H has its input
    projection (T * B, F, H) and a (B, H, H) product per step (columns counted as H, one
    gate's share: a lower bound)."""
    a = shapes[node.inputs[0]]
    if node.op == "linear":
        b = shapes[node.inputs[1]]
        out_in = node.attrs.get("weight_layout", "out_in") == "out_in"
        return [(math.prod(a[:-1]), a[-1], b[0] if out_in else b[-1])]
    if node.op in ("matmul", "bmm"):
        b = shapes[node.inputs[1]]
        return [(a[-2] if len(a) >= 2 else 1, a[-1], b[-1] if len(b) >= 2 else 1)]
    hidden = shapes[node.outputs[0]][-1]
    return [(math.prod(a[:-1]), a[-1], hidden), (math.prod(a[1:-1]), hidden, hidden)]


def one_thread(run, get, set_):
    """``run`` (``run(args)``) called with one BLAS thread. Calls overlapping in time (other
    threads' programs, or a program called inside another's run) share one setting: the first
    to start saves the count and sets 1, the last to end restores it."""
    def single(args):
        _enter(get, set_)
        try:
            return run(args)
        finally:
            _leave(set_)
    return single


def _enter(get, set_) -> None:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = get()
            if _saved != 1:
                set_(1)
        _depth += 1


def _leave(set_) -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0 and _saved != 1:
            set_(_saved)
