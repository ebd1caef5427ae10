"""fw.set_num_threads sets every registered pool; spinning pools never share the cores: all but
the highest-priority one run on one thread while it is loaded."""

import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.errors import ArgumentError
from fw_core.records import ThreadPool


class Pools:
    """A plugin with one spinning pool of high priority and one sleeping pool."""

    def __init__(self):
        self.threads = {"openmp-test": 2, "sleepy-test": 2}

    def _pool(self, name, **kw):
        return ThreadPool(name=name, get=lambda: self.threads[name],
                          set=lambda n: self.threads.__setitem__(name, n), **kw)

    @hookimpl
    def fw_register_thread_pools(self):
        return [self._pool("openmp-test", spins=True, priority=10), self._pool("sleepy-test")]


@pytest.fixture(autouse=True)
def only_fw_cpu():
    """fw_cpu's pools and the test's alone (fw_onednn, when installed, holds OpenBLAS too);
    every pool put back as it was after: other tests compare results computed on one thread."""
    before = {name: entry[0].get() for name, entry in fw.threads._pools.items()}
    wanted = fw.threads._wanted[0]
    fw.plugins.use(["fw_cpu", "fw_testpools"])
    yield
    fw.threads._wanted[0] = wanted
    fw.plugins.use(None)
    for name, count in before.items():
        if name in fw.threads._pools:
            fw.threads._pools[name][0].set(count)


def pool(name):
    return next(p for p in fw.threads.pools() if p["name"] == name)


@pytest.fixture
def pools():
    plugin = Pools()
    fw.plugins.register(plugin, "fw_testpools")
    yield plugin
    fw.plugins.unregister("fw_testpools")


def test_a_spinning_pool_of_higher_priority_holds_openblas_to_one_thread(pools):
    blas = pool("openblas")
    assert blas["threads"] == 1 and "openmp-test (fw_testpools, priority 10)" in blas["held"]
    assert pool("openmp-test")["held"] is None and pool("sleepy-test")["held"] is None
    assert any(e["kind"] == "threads" and e["subject"] == "openblas" and e["choice"] == 1
               for e in fw.scheduler.log())


def test_set_num_threads_sets_the_pools_at_full_strength(pools):
    fw.set_num_threads(3)
    assert pools.threads == {"openmp-test": 3, "sleepy-test": 3}
    assert pool("numba")["threads"] >= 1 and pool("openblas")["threads"] == 1
    assert fw.get_num_threads() == 3


def test_unloading_the_spinning_pool_gives_openblas_its_threads_back():
    fw.set_num_threads(2)
    plugin = Pools()
    fw.plugins.register(plugin, "fw_testpools")
    assert pool("openblas")["threads"] == 1
    fw.plugins.unregister("fw_testpools")
    assert pool("openblas") == {"name": "openblas", "plugin": "fw_cpu", "threads": 2,
                                "spins": True, "held": None}


def test_fw_cpus_pools_follow_set_num_threads():
    from threadpoolctl import threadpool_info

    fw.set_num_threads(1)
    assert {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"} == {1}
    fw.set_num_threads(2)
    assert pool("openblas")["threads"] == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_thread_count_that_is_not_a_positive_integer_is_refused(bad):
    with pytest.raises(ArgumentError, match="positive integer"):
        fw.set_num_threads(bad)
