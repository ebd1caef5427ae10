"""fw_cpu's heap settings: a block freed and allocated again (a training step's activations)
is reused instead of faulted in afresh, and the user's own choice is left alone."""

import os
import subprocess
import sys

import pytest

#: ten "steps", each holding eight 4 MiB arrays at once, then freeing them; print the page
#: faults of the last nine
_CHURN = """
import resource, numpy as np, fw_core as fw
fw.ones(1)
def step():
    return [np.ones(1 << 20, np.float32) for _ in range(8)]
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(9):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(fw.plugins.require("fw_cpu").notes[-1])
"""


def _churn(**env) -> tuple[int, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    environ.pop("FW_CPU_HEAP", None)
    out = subprocess.run([sys.executable, "-c", _CHURN], env={**environ, **env},
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return int(out[0]), out[1]


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap")


def test_a_freed_block_is_reused_without_page_faults():
    faults, note = _churn()
    pages = 9 * (32 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert faults < pages // 20, (faults, pages)
    assert note.startswith("heap: blocks up to 32 MiB reuse freed memory")


def test_fw_cpu_heap_system_keeps_glibcs_defaults():
    faults, note = _churn(FW_CPU_HEAP="system")
    pages = 9 * (32 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert faults > pages // 4, (faults, pages)  # the freed top of the heap went back to the system
    assert note == "heap: glibc's defaults (FW_CPU_HEAP=system)"


def test_the_users_own_malloc_settings_win():
    _, note = _churn(MALLOC_TRIM_THRESHOLD_="1000000")
    assert note == "heap: as MALLOC_TRIM_THRESHOLD_ sets it"
