"""SGD equals torch.optim.SGD step for step, for every option combination."""

import numpy as np
import pytest

from .reference import SGD_CONFIGS, assert_matches_torch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("config", list(SGD_CONFIGS))
def test_sgd_matches_torch(config, dtype):
    assert_matches_torch("SGD", SGD_CONFIGS[config], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sgd_param_groups_match_torch(dtype):
    groups = [([0, 1], {"lr": 0.2}), ([2, 3, 4], {"momentum": 0.5, "weight_decay": 0.1})]
    assert_matches_torch("SGD", {"lr": 0.05, "momentum": 0.9}, dtype, groups=groups)


def test_the_update_is_an_op_inspectors_see():
    import fw_core as fw
    from fw_core.records import Inspector

    w = fw.tensor([1.0, 2.0], requires_grad=True)
    opt = fw.optim.SGD([w], lr=0.5, momentum=0.9)
    (w * w).sum().backward()
    seen = []
    with fw.inspectors.activated(Inspector(name="test.updates", on_op=seen.append)):
        opt.step()
    update = next(e for e in seen if e.op.name == "sgd_update")
    assert update.output is w and update.attrs["first"] and update.op.effects == {0, 2}
    assert w.tolist() == [0.0, 0.0]  # w - 0.5 * 2w
    assert ("sgd_update", "cpu") in {(r["op"], r["device"]) for r in fw.plugins.dispatch_table()}
