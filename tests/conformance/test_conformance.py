"""Every op case on every loaded device: forward, meta rule, gradcheck, double backward."""

import pytest

import fw_core as fw
from fw_core.testing import conformance as cf
from fw_core.testing.cases import ALL

DEVICES = fw.available_devices()


@pytest.mark.parametrize("case, device, dtype", cf.params(ALL, DEVICES))
def test_forward(case, device, dtype):
    cf.check_forward(fw, case, device, dtype)


@pytest.mark.parametrize("case, device, dtype", cf.params(ALL, DEVICES))
def test_meta_rule_matches_kernel(case, device, dtype):
    cf.check_meta(fw, case, device, dtype)


@pytest.mark.parametrize("case, device, dtype",
                         cf.params([c for c in ALL if cf.has_formula(fw, c)], DEVICES))
def test_formula_matches_kernel(case, device, dtype):
    cf.check_formula(fw, case, device, dtype)


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_forward_noncontiguous(case):
    cf.check_forward(fw, case, "cpu", case.dtypes[0], noncontiguous=True)


@pytest.mark.parametrize("case", [c for c in ALL if c.grad], ids=lambda c: c.id)
@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(case, device):
    cf.check_grad(fw, case, device)


@pytest.mark.parametrize("case", [c for c in ALL if cf.wants_double_grad(fw, c)],
                         ids=lambda c: c.id)
@pytest.mark.parametrize("device", DEVICES)
def test_double_backward(case, device):
    cf.check_double_grad(fw, case, device)
