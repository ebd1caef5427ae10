"""Every op case against PyTorch 2.13 on the CPU: values, and gradients for a random cotangent."""

import pytest

import fw_core as fw
from fw_core.testing import conformance as cf
from fw_core.testing.cases import ALL

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


def _pairs():
    """Each case in float64 (where gradients are compared) and in its own dtypes."""
    for case in ALL:
        if case.torch is None:
            continue
        dtypes = [d for d in case.dtypes if d != "float16"]  # torch's CPU half ops differ
        if case.grad and "float64" not in dtypes:
            dtypes.append("float64")
        for dtype in dtypes:
            yield pytest.param(case, dtype, id=f"{case.id}-{dtype}")


@pytest.mark.parametrize("case, dtype", list(_pairs()))
def test_matches_torch(case, dtype):
    cf.check_torch(fw, torch, case, dtype)


def test_every_op_has_a_torch_differential_case():
    """Ops that torch has an equivalent for are compared; the rest are listed with a reason."""
    without_torch_equivalent = {
        "to_device": "only one device here; device transfers are tested directly",
        "index_backward": "getitem's VJP (torch's is internal); gradgradcheck of getitem covers it",
        "pad_backward": "pad's VJP (torch's is internal); gradgradcheck of pad covers it",
        "adam_update": "an in-place update: tests/fw_core/optim/test_adam.py compares it with "
                       "torch.optim.Adam/AdamW step for step",
        "sgd_update": "an in-place update: tests/fw_core/optim/test_sgd.py compares it with "
                      "torch.optim.SGD step for step",
        "rmsprop_update": "an in-place update: tests/fw_core/optim/test_rmsprop.py compares it "
                          "with torch.optim.RMSprop step for step",
        "adagrad_update": "an in-place update: tests/fw_core/optim/test_adagrad.py compares it "
                          "with torch.optim.Adagrad step for step",
        "adadelta_update": "an in-place update, compared with torch.optim.Adadelta step for "
                           "step in tests/fw_core/optim/test_optimizers_torch_agreement.py",
        "adamax_update": "an in-place update, compared with torch.optim.Adamax step for step "
                         "in tests/fw_core/optim/test_optimizers_torch_agreement.py",
        "rprop_update": "an in-place update, compared with torch.optim.Rprop step for step "
                        "in tests/fw_core/optim/test_optimizers_torch_agreement.py",
        "asgd_update": "an in-place update, compared with torch.optim.ASGD step for step "
                        "in tests/fw_core/optim/test_optimizers_torch_agreement.py",
        "radam_update": "an in-place update, compared with torch.optim.RAdam step for step "
                        "in tests/fw_core/optim/test_optimizers_torch_agreement.py",
        "nadam_update": "an in-place update, compared with torch.optim.NAdam step for step "
                        "in tests/fw_core/optim/test_optimizers_torch_agreement.py",
    }
    covered = {c.op for c in ALL if c.torch is not None}
    missing = sorted(set(fw.OPS) - covered - set(without_torch_equivalent))
    assert not missing, f"ops with no torch differential case: {missing}"
