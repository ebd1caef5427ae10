"""The cuda kernel table: every core op has a kernel, and it is fw_cpu's xp code on CuPy."""

import pathlib
import re

import cupy
import cupyx.scipy.special
import numpy as np
import pytest
import scipy.special
from cuda_seams import HAS_GPU

import fw_core as fw
from fw_core.ops import registry
from fw_cpu.kernels import all_kernels
from fw_cuda.kernels import cuda_kernels

#: handled by fw_core itself on every device (a copy between devices), no kernel
NO_KERNEL = {"to_device"}


def test_every_core_op_has_a_cuda_kernel_from_fw_cuda():
    missing = [name for name, op in registry.OPS.items()
               if name not in NO_KERNEL and fw.ops.kernel(op, "cuda") is None]
    assert missing == []
    owners = {row["plugin"] for row in fw.plugins.dispatch_table() if row["device"] == "cuda"}
    assert owners == {"fw_cuda"}


def test_table_is_fw_cpus_xp_generic_table():
    assert set(cuda_kernels()) == set(all_kernels(np, scipy.special))


def test_kernels_are_bound_to_cupy_not_numpy():
    # CuPy refuses a host array (TypeError with a GPU; without one it fails first asking for a
    # device, CUDARuntimeError): a kernel bound to NumPy would quietly compute on the CPU
    with pytest.raises((TypeError, RuntimeError)):
        cuda_kernels()["exp"](np.ones(3, dtype=np.float32))


def _attributes(prefix: str) -> set[str]:
    """Every ``<prefix>.name[.name...]`` fw_cpu's xp-generic kernels use."""
    import fw_cpu.kernels

    found = set()
    for path in pathlib.Path(fw_cpu.kernels.__file__).parent.glob("*.py"):
        found |= set(re.findall(rf"\b{prefix}\.([A-Za-z_][\w.]*)", path.read_text()))
    return found


def _lookup(module, dotted: str) -> bool:
    for part in dotted.split("."):
        if not hasattr(module, part):
            return False
        module = getattr(module, part)
    return True


def test_every_namespace_function_the_kernels_call_exists_in_cupy():
    # without a GPU no kernel can run; this catches a NumPy-only call (one CuPy lacks) before a
    # GPU does, for every function, constant and ufunc method (``xp.add.at``) the kernels name
    used = _attributes("xp")
    assert len(used) > 50 and "matmul" in used
    assert [name for name in sorted(used) if not _lookup(cupy, name)] == []
    special = _attributes("special")
    assert special and [n for n in special if not _lookup(cupyx.scipy.special, n)] == []


@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA device")
@pytest.mark.parametrize("op", ["matmul", "softmax", "conv2d", "layer_norm"])
def test_gpu_kernel_matches_cpu(op):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 8), dtype=np.float32)
    w = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
    run = {
        "matmul": lambda d: fw.tensor(x[0, 0]).to(d) @ fw.tensor(x[1, 0]).to(d),
        "softmax": lambda d: fw.softmax(fw.tensor(x).to(d), dim=-1),
        "conv2d": lambda d: fw.conv2d(fw.tensor(x).to(d), fw.tensor(w).to(d), padding=1),
        "layer_norm": lambda d: fw.layer_norm(fw.tensor(x).to(d), (8,)),
    }[op]
    np.testing.assert_allclose(run("cuda").numpy(), run("cpu").numpy(), rtol=1e-4, atol=1e-5)
