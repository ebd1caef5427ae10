"""Shared fixtures of fw_cuda's host-side tests: swapping the CUDA runtime seam."""

import pytest

import fw_core as fw
from fw_cuda import device


@pytest.fixture
def seam(monkeypatch):
    """``seam(runtime)``: reload the plugins with ``runtime`` as fw_cuda's CUDA seam; the real
    one is back (and the plugins reloaded) after the test."""

    def use(runtime):
        monkeypatch.setattr(device, "runtime", runtime)
        fw.plugins.load()
        return runtime

    yield use
    monkeypatch.undo()
    fw.plugins.load()
