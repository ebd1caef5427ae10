"""Set-up shared by fw_viz's tests: quiet, fast matplotlib; a seed; the artifacts folder."""

from __future__ import annotations

import os
import pathlib
import tempfile

# before matplotlib is imported anywhere: its font cache goes to a throwaway folder, Agg draws
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="fw_viz_mpl_"))
os.environ.setdefault("MPLBACKEND", "Agg")
REPO = pathlib.Path(__file__).resolve().parents[2]
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / ".numba_cache"))

import pytest  # noqa: E402

import fw_core as fw  # noqa: E402


@pytest.fixture(autouse=True)
def _seed_and_no_inspector_left_on():
    """A fixed seed per test; each test ends with no fw_viz inspector active."""
    fw.manual_seed(0)
    yield
    for name in fw.inspectors.active():
        if name.startswith("fw_viz."):
            fw.inspectors.deactivate(name)


@pytest.fixture
def artifacts() -> pathlib.Path:
    """``<repo>/test-artifacts/fw_viz``: pictures tests keep for people to look at."""
    folder = REPO / "test-artifacts" / "fw_viz"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def example_transformer():
    """The CharTransformer of examples/char_transformer.py, small: 3 layers, width 32."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "char_transformer", REPO / "examples" / "char_transformer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fw.manual_seed(0)
    return module.CharTransformer(vocab=20, block=8, width=32, heads=2, layers=3)


@pytest.fixture(scope="session")
def transformer_graph():
    """The example transformer's graph, forward and backward (hundreds of ops)."""
    from fw_viz import capture

    model = example_transformer()
    return capture(model, fw.randint(0, 20, (2, 8)), backward=True)
