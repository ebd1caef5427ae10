"""Loading libdnnl.so from the wheel, and oneDNN statuses as fw errors."""

import ctypes
import functools
import importlib.metadata
import pathlib

import numpy as np
import pytest

import fw_core as fw
from fw_onednn import capi, execute, library
from fw_onednn.cache import PRIMITIVES


def test_the_library_is_the_wheels():
    path = library.find()
    assert path.name.startswith("libdnnl.so.3") and path.is_file()
    assert path == pathlib.Path(capi.lib._name).resolve()


def test_a_missing_wheel_says_what_to_install(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(fw.errors.PluginError, match="onednn-cpu-gomp is missing") as caught:
        library.find()
    assert "pip install onednn-cpu-gomp==2023.2.0" in str(caught.value)


def test_a_missing_openmp_runtime_says_what_to_install(monkeypatch):
    def no_gomp(path):
        raise OSError("libgomp.so.1: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(ctypes, "CDLL", no_gomp)
    with pytest.raises(fw.errors.PluginError, match="libgomp") as caught:
        library.load()
    assert "apt-get install libgomp1" in str(caught.value)


@pytest.mark.parametrize("status, error", [
    (1, fw.errors.OutOfMemoryError), (3, fw.errors.UnsupportedError),
    (2, fw.errors.KernelError), (5, fw.errors.KernelError)])
def test_a_failed_call_is_an_fw_error_naming_op_call_and_status(status, error):
    with pytest.raises(error) as caught:
        capi.check(status, "matmul", "dnnl_primitive_execute")
    text = str(caught.value)
    assert text.startswith("matmul: oneDNN's dnnl_primitive_execute failed")
    assert f"{capi.status_name(status)} (dnnl status {status})" in text


def test_success_raises_nothing():
    capi.check(0, "matmul", "dnnl_primitive_execute")


@pytest.mark.parametrize("op, call", [
    ("matmul", lambda a, b: fw.matmul(a, b)),
    ("einsum", lambda a, b: fw.einsum("ij,jk->ik", a, b)),
])
def test_a_failed_execute_names_the_op_that_ran_and_its_inputs(rng, op, call):
    a = fw.from_numpy(rng.standard_normal((3, 4), np.float32))
    b = fw.from_numpy(rng.standard_normal((4, 5), np.float32))
    call(a, b)
    (entry,) = PRIMITIVES._entries.values()
    handles = entry.handles.copy()
    handles[2] = 0  # no arguments: oneDNN refuses the execute with invalid_arguments
    entry.call = functools.partial(execute.call, handles, entry.out_shape)
    with pytest.raises(fw.errors.KernelError) as caught:
        call(a, b)
    text = str(caught.value)
    assert text.startswith(f"{op}: oneDNN's dnnl_primitive_execute failed: invalid_arguments")
    assert "float32[3, 4] on cpu, float32[4, 5] on cpu" in text
    assert "FW_DISABLE_PLUGINS=fw_onednn" in text


def test_repeat_executes_the_primitive_on_the_arrays_it_was_last_bound_to(rng):
    a, b = (rng.standard_normal((3, 4), np.float32), rng.standard_normal((4, 5), np.float32))
    out = fw.ops.kernel("matmul", "cpu")(a, b)
    (entry,) = PRIMITIVES._entries.values()
    out[...] = 0.0
    assert execute.repeat(entry.handles, 3) == 0
    np.testing.assert_allclose(out, a @ b, rtol=1e-6, atol=1e-6)


def test_the_native_calls_refuse_what_is_not_a_primitive_call(rng):
    a = rng.standard_normal((3, 4), np.float32)
    fw.ops.kernel("matmul", "cpu")(a, a.T.copy())
    (entry,) = PRIMITIVES._entries.values()
    with pytest.raises(TypeError, match="argument 1 is list, not an ndarray"):
        execute.run(entry.handles, a, [1.0])
    with pytest.raises(TypeError, match="1-d contiguous uint64"):
        execute.run(entry.handles.astype(np.int64), a)
    with pytest.raises(ValueError, match="hold 2 entries, this call needs 4"):
        execute.call(entry.handles[:2], (3, 3), a, a)
    with pytest.raises(ValueError, match="more arrays than the primitive has arguments"):
        execute.call(entry.handles, (3, 3), a, a, a)
    with pytest.raises(ValueError, match="cut short"):
        execute.run_program(np.array([0, 5, 5], np.uint64), np.empty(0, np.uint8))
