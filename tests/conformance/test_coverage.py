"""Every loaded op has conformance cases, and every contract is complete."""

import fw_core as fw
from fw_core.records import Anchor, Structure
from fw_core.testing.cases import ALL

# ops exercised elsewhere, with the test that covers them
COVERED_ELSEWHERE = {
    "to_device": "device transfers: tests/fw_core/test_tensor.py and the plugin tests",
    "adam_update": "Adam/AdamW step for step against torch.optim (tests/fw_core/optim/"
                   "test_adam.py) and fused against generic (tests/fw_cpu/test_fused_optim.py)",
    "sgd_update": "SGD step for step against torch.optim.SGD, momentum, dampening, Nesterov, "
                  "weight decay and maximize (tests/fw_core/optim/test_sgd.py)",
    "rmsprop_update": "RMSprop step for step against torch.optim.RMSprop, centered and with "
                      "momentum (tests/fw_core/optim/test_rmsprop.py)",
    "adagrad_update": "Adagrad step for step against torch.optim.Adagrad "
                      "(tests/fw_core/optim/test_adagrad.py)",
    "adadelta_update": "Adadelta step for step against torch.optim.Adadelta "
                       "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
    "adamax_update": "Adamax step for step against torch.optim.Adamax "
                     "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
    "rprop_update": "Rprop step for step against torch.optim.Rprop "
                    "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
    "asgd_update": "ASGD step for step against torch.optim.ASGD "
                    "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
    "radam_update": "RAdam step for step against torch.optim.RAdam "
                    "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
    "nadam_update": "NAdam step for step against torch.optim.NAdam "
                    "(tests/fw_core/optim/test_optimizers_torch_agreement.py)",
}


def test_every_op_has_a_conformance_case():
    covered = {c.op for c in ALL}
    missing = sorted(set(fw.OPS) - covered - set(COVERED_ELSEWHERE))
    assert not missing, f"ops with no conformance case: {missing}"


def test_every_contract_is_complete():
    for name, op in fw.OPS.items():
        assert op.doc and op.signature.startswith(name.split(".")[-1]) or op.signature, name
        assert isinstance(op.structure, Structure), name
        assert isinstance(op.anchor, Anchor) and op.anchor.says, name
        assert callable(op.meta), name
        assert op.promotion in ("none", "binary") and op.cost in ("normal", "cheap"), name
        assert all(0 <= i for i in op.effects), name
        if op.structure is Structure.NONE:
            assert op.vjp is None or op.family == "sampling", f"{name}: NONE with a vjp"


def test_every_op_has_a_cpu_kernel():
    missing = sorted(n for n, op in fw.OPS.items() if fw.ops.kernel(op, "cpu") is None
                     and n != "to_device")
    assert not missing, f"ops without a cpu kernel: {missing}"
