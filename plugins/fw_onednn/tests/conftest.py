"""Shared fixtures of fw_onednn's tests: the plugin loaded (installed or registered in this
process), every product sent to oneDNN with a fresh primitive cache, and fw_cpu's own kernels
as the reference."""

import os
import pathlib

# one BLAS thread per pytest worker (as tests/conftest.py does): set before NumPy is imported
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_CACHE_DIR",
                      str(pathlib.Path(__file__).resolve().parents[3] / ".numba_cache"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.special  # noqa: E402

import fw_core as fw  # noqa: E402
import fw_onednn  # noqa: E402
from fw_cpu.kernels import linalg  # noqa: E402
from fw_onednn import kernels, plugin  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def onednn_loaded():
    """fw_onednn takes part in dispatch: the installed plugin, or this checkout's registered in
    process when it is not installed (the tests then run the same either way)."""
    loaded = any(i.name == plugin.NAME and i.state == "loaded" for i in fw.plugins.info())
    if not loaded:
        fw.plugins.register(plugin, plugin.NAME)
    assert fw.plugins.require(plugin.NAME).state == "loaded"
    yield
    if not loaded:
        fw.plugins.unregister(plugin.NAME)


@pytest.fixture(autouse=True)
def every_product():
    """oneDNN takes every product, eltwise, softmax and normalisation it has a JIT kernel for,
    however small (the tests' shapes are), with an empty cache; the default policies are back
    after the test."""
    fw.manual_seed(0)
    fw_onednn.set_min_work(0, matrix_vector=True)
    fw_onednn.set_min_elements(0)
    yield
    fw_onednn.set_min_work(kernels.DEFAULT_MIN_WORK)
    fw_onednn.set_min_elements(None)


@pytest.fixture(scope="session")
def cpu_kernels():
    """fw_cpu's linalg kernels, called directly: the reference fw_onednn must match."""
    return linalg.kernels(np, scipy.special)


@pytest.fixture(scope="session")
def fw_cpu_kernels():
    """fw_cpu's kernel for each op on ``cpu`` (its guarded Numba loops above the generic
    kernels, chained as the dispatch table chains them), called directly: what fw runs when
    fw_onednn refuses a call."""
    import fw_cpu.plugin
    from fw_core import kernel_chain

    chains: dict = {}
    for spec in fw_cpu.plugin.fw_register_kernels():
        chains.setdefault(spec.op, []).append((spec, "fw_cpu"))
    return {op: kernel_chain.compose(sorted(chain, key=lambda e: -e[0].priority))
            for op, chain in chains.items()}


@pytest.fixture
def rng():
    return np.random.default_rng(0)
