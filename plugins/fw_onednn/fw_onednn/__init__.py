"""fw_onednn: oneDNN kernels for fw's ``cpu`` device (matmul, bmm, linear in float32).

A device plugin's kernels need no import: installing the distribution registers them through
the ``fw.plugins`` entry point. This package adds what a user may want to look at or tune:

- :func:`cache_info` / :func:`cache_clear` / :func:`set_cache_capacity`: the primitive cache;
- :func:`set_min_work`: the smallest product oneDNN takes (smaller ones run faster on fw_cpu);
- :func:`set_min_elements`: the same for the eltwise, softmax and normalisation kernels;
- :func:`version` / :func:`cpu_isa`: the oneDNN library loaded and the ISA it dispatches to;
- :func:`get_num_threads` / :func:`set_num_threads`: oneDNN's OpenMP pool (``fw.set_num_threads``
  sets it together with fw's other pools).
"""

# fw_core first: importing it loads the plugin (fw_onednn.plugin), which imports this package;
# the names below load their modules (and oneDNN) on first use
import fw_core  # noqa: F401, I001
from fw_core.lazy import lazy_api

lazy_api(__name__, {
    "CacheInfo": "cache", "cache_clear": "cache", "cache_info": "cache",
    "set_cache_capacity": "cache", "set_min_work": "kernels", "cpu_isa": "runtime",
    "version": "runtime", "set_min_elements": "sizes", "get_num_threads": "threads",
    "set_num_threads": "threads"})
