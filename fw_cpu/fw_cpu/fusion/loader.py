"""Where generated kernels live: source files in a cache folder, imported as modules.

Numba caches compiled machine code (``cache=True``) only for functions defined in a real
file, keyed by that file's path and timestamp. So every generated module is written once to
``$NUMBA_CACHE_DIR/fw_fusion`` (else ``~/.cache/fw/fusion``) under a hash of its source and
never rewritten: a second process imports the same file and loads the machine code instead of
compiling it again.

Threads: Numba's default OpenMP threads busy-wait after a parallel loop and fight OpenBLAS's
threads for the cores (measured on a 2-core machine: a training step went from 2.6 ms to
38 ms). Unless the user chose a layer (``NUMBA_THREADING_LAYER``), fw_cpu selects the
"workqueue" layer, whose idle threads sleep. That layer must not run two parallel loops at
once, so generated kernels take :data:`PARALLEL_LOCK` around their parallel variant.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import sys
import threading

import numba

from ..threads import apply_numba_threads

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
apply_numba_threads()  # a count fw.set_num_threads chose before Numba was imported

#: a kernel takes its ``parallel=True`` variant only from this many elements on. Measured on a
#: busy 2-core machine, a bias add + relu ran 9x slower in parallel at 2**16 elements (324 us vs
#: 37 us) and still 3x slower at 2**20: memory-bound loops rarely pay for threads there.
PARALLEL_MIN = 2**20
PARALLEL_OK = numba.config.NUMBA_NUM_THREADS > 1
PARALLEL_LOCK = threading.Lock()

_modules: dict[str, object] = {}
#: held while a module is written and imported: two threads loading one source at once would
#: otherwise both write the same temp file (one rename then fails) and import it twice
_loading = threading.Lock()


def cache_dir() -> pathlib.Path:
    """The folder that holds generated kernel sources (created on first use)."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    base = pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "fw"
    path = base / "fw_fusion" if root else base / "fusion"
    path.mkdir(parents=True, exist_ok=True)
    return path


def load(source: str):
    """Import the module made of ``source`` (written to the cache folder if new); threads may
    call it at once."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    module = _modules.get(digest)
    if module is not None:
        return module
    with _loading:
        module = _modules.get(digest)
        if module is None:
            module = _modules[digest] = _import(digest, source)
    return module


def _import(digest: str, source: str):
    """Write ``source`` to its cache file unless it is there, and import that file."""
    name = f"fw_fused_{digest}"
    path = cache_dir() / f"{name}.py"
    if not path.exists():  # never rewrite: a new timestamp would void Numba's cache
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
