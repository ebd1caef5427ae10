"""The plugin's rows and records: kernels above fw_cpu's, the library and ISA in `fw plugins`,
oneDNN's thread pool holding OpenBLAS to one thread, and nothing compiled at import."""

import subprocess
import sys

import pytest

import fw_core as fw
import fw_onednn
from fw_onednn import plugin, runtime, threads


def test_the_kernels_are_guarded_and_above_fw_cpus():
    specs = plugin.fw_register_kernels()
    ops = [s.op for s in specs]
    assert {"matmul", "bmm", "linear", "einsum", "conv2d", "max_pool2d"} <= set(ops)
    assert len(ops) == len(set(ops))  # one kernel per op
    assert all(s.device == "cpu" and s.priority == 10 and s.guard is not None and s.takes
               for s in specs)


def test_fw_plugins_names_the_version_and_the_isa():
    fw.ones(1)  # the first cpu tensor loads the library
    info = fw.plugins.require("fw_onednn")
    (note,) = [n for n in info.notes if n.startswith("oneDNN")]
    assert note.startswith(f"oneDNN {fw_onednn.version()} (")
    assert f"dispatching to {fw_onednn.cpu_isa()}" in note and "OpenMP threads" in note
    assert fw_onednn.version().startswith("3.2.")
    assert fw_onednn.cpu_isa() in runtime.capi.CPU_ISA_NAMES.values()


def test_set_num_threads_sets_onednns_openmp_pool():
    before = fw_onednn.get_num_threads()
    try:
        fw_onednn.set_num_threads(1)
        assert fw_onednn.get_num_threads() == 1
    finally:
        threads.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_set_num_threads_refuses_what_is_no_positive_integer(bad):
    with pytest.raises(fw.errors.ArgumentError, match="positive integer"):
        fw_onednn.set_num_threads(bad)


def test_the_pool_keeps_the_cores_and_openblas_runs_on_one_thread():
    pools = {p["name"]: p for p in fw.threads.pools()}
    assert pools["onednn-openmp"]["spins"] and pools["onednn-openmp"]["held"] is None
    assert pools["openblas"]["threads"] == 1
    assert "onednn-openmp" in pools["openblas"]["held"]


def test_importing_fw_onednn_before_fw_core_loads_the_plugin():
    code = ("import fw_onednn, fw_core\n"
            "print([i.state for i in fw_core.plugins.info() if i.name == 'fw_onednn'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['loaded']"


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def _library_mapped() -> str:
    return "any('libdnnl' in line for line in open('/proc/self/maps'))"


def test_import_fw_core_loads_no_onednn_until_the_first_cpu_tensor():
    """``import fw_core`` registers the kernels without loading libdnnl.so (24 MiB resident)
    or the modules calling it; the first cpu tensor loads them, and the notes then name the
    version."""
    out = _run("import sys, fw_core as fw\n"
               f"print({_library_mapped()}, 'fw_onednn.capi' in sys.modules)\n"
               "print(fw.plugins.require('fw_onednn').notes[-1])\n"
               "fw.ones(1)\n"
               f"print({_library_mapped()}, 'fw_onednn.capi' in sys.modules)\n"
               "print(fw.plugins.require('fw_onednn').notes[-1])")
    before, note_before, after, note_after = out.splitlines()
    assert before == "False False" and after == "True True"
    assert "loaded with the first cpu tensor" in note_before
    assert note_after.startswith("oneDNN 3.2.")


def test_the_fw_plugins_command_names_the_loaded_version_and_isa():
    """`fw plugins` makes a cpu device first, so its table shows the library it loads."""
    out = _run("from fw_core import cli\n"
               "cli.main(['plugins'])")
    assert f"dispatching to {fw_onednn.cpu_isa()}" in " ".join(out.split())
    assert "loaded with the first cpu tensor" not in out


def test_importing_fw_with_the_plugin_loads_no_numba():
    """Numba (~0.4 s) is imported when the first primitive is built, not with oneDNN's
    modules."""
    out = _run("import sys, fw_core as fw, fw_onednn\n"
               "fw.ones(1)\n"
               "assert fw_onednn.kernels.F32 is not None\n"
               "print('numba' in sys.modules)")
    assert out == "False"


def test_a_library_failing_to_load_at_the_first_tensor_leaves_every_call_to_fw_cpu():
    out = _run("import warnings, fw_core as fw\n"
               "from fw_onednn import library\n"
               "def broken():\n"
               "    raise fw.errors.PluginError('libgomp.so.1: cannot open', hint='install it')\n"
               "library.load = broken\n"
               "with warnings.catch_warnings(record=True) as caught:\n"
               "    warnings.simplefilter('always')\n"
               "    a = fw.ones(64, 64)\n"
               "    print((a @ a).numpy()[0, 0], len(caught))\n"
               "[info] = [i for i in fw.plugins.info() if i.name == 'fw_onednn']\n"
               "print(info.state, '|', info.reason, '|', info.fix)\n"
               "print(fw.plugins.serving('matmul', 'cpu', (a.numpy(), a.numpy()), {})[0])")
    product, state, owner = out.splitlines()
    assert product == "64.0 1"
    assert state == "failed | cannot load oneDNN: libgomp.so.1: cannot open | install it"
    assert owner == "fw_cpu"


def test_a_forked_child_runs_onednn_on_one_thread_instead_of_hanging():
    """libgomp's pool does not survive fork: the child's first 2-thread region would wait
    forever for the parent's threads."""
    code = """if True:
        import os, numpy as np, fw_core as fw, fw_onednn
        fw.set_num_threads(2)
        a = fw.tensor(np.ones((256, 256), np.float32))
        a @ a
        pid = os.fork()
        if pid == 0:
            fw.set_num_threads(2)
            ok = float((a @ a).numpy()[0, 0]) == 256.0 and fw_onednn.get_num_threads() == 1
            os._exit(0 if ok else 3)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), fw_onednn.get_num_threads())
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.split() == ["0", "2"]


def test_the_catalog_names_what_each_module_serves():
    import importlib

    from fw_onednn import catalog

    for name, ops in catalog.MODULES.items():
        module = importlib.import_module(f"fw_onednn.{name}")
        assert {op: takes for op, _, _, takes in module.KERNELS} == ops
