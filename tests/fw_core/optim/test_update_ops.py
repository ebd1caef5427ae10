"""Each optimizer's per-parameter update is an op: inspectors see it, with its effects."""

import pytest

import fw_core as fw
from fw_core.records import Inspector

UPDATES = {"SGD": "sgd_update", "Adam": "adam_update", "AdamW": "adam_update",
           "RMSprop": "rmsprop_update", "Adagrad": "adagrad_update",
           "Adadelta": "adadelta_update", "Adamax": "adamax_update", "NAdam": "nadam_update",
           "RAdam": "radam_update", "ASGD": "asgd_update", "Rprop": "rprop_update"}


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_the_update_of_every_parameter_is_its_op(name):
    weights = [fw.tensor([1.0, -2.0], requires_grad=True), fw.tensor([[0.5]], requires_grad=True)]
    opt = getattr(fw.optim, name)(weights, lr=0.1)
    sum((w * w).sum() for w in weights).backward()
    before = [w.tolist() for w in weights]
    seen = []
    with fw.inspectors.activated(Inspector(name="test.updates", on_op=seen.append)):
        opt.step()
    updates = [e for e in seen if e.op.family == "optim"]
    assert [e.op.name for e in updates] == [UPDATES[name]] * 2
    assert all(e.output is w for e, w in zip(updates, weights)) and 0 in updates[0].op.effects
    assert [w.tolist() for w in weights] != before  # the op really updated them
