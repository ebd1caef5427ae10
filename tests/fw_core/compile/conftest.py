import pytest

import fw_core as fw


@pytest.fixture(autouse=True)
def compile_at_once():
    """Compile on the first call (the default waits for a repeat) and forget the decisions."""
    fw.scheduler.reset()
    fw.scheduler.configure(compile_after=0)
    yield
    fw.scheduler.reset()
