"""fw's shipped conformance cases for the ops fw_onednn serves, run with it loaded: forward in
float32 (contiguous and non-contiguous, where oneDNN takes the calls) and the PyTorch
differential in float32 and float64 (values and gradients). tests/conformance runs every op this
way too whenever fw_onednn is installed; this file runs these even when it is only registered."""

import pytest

import fw_core as fw
import fw_onednn
from fw_core.testing import conformance as cf
from fw_core.testing.cases import linalg

SERVED = {"matmul", "bmm", "linear", "einsum"}
CASES = [c for c in linalg.CASES if c.op in SERVED]
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_forward(case):
    cf.check_forward(fw, case, "cpu", "float32")
    cf.check_forward(fw, case, "cpu", "float32", noncontiguous=True)
    cf.check_meta(fw, case, "cpu", "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [c for c in CASES if c.torch], ids=lambda c: c.id)
def test_matches_torch(case, dtype):
    cf.check_torch(fw, torch, case, dtype)


def test_onednn_served_the_float32_cases():
    for case in CASES:
        cf.check_forward(fw, case, "cpu", "float32")
    info = fw_onednn.cache_info()
    assert info.size - info.refusals >= 10  # the empty cases are the refusals
