"""Set-up shared by the debugger's tests."""

from __future__ import annotations

import pytest

import fw_core as fw


@pytest.fixture(autouse=True)
def _no_inspector_left_on():
    """Each test starts and ends with no debugger inspector active."""
    yield
    for name in fw.inspectors.active():
        if name.startswith("fw_debugger."):
            fw.inspectors.deactivate(name)
