"""Adagrad equals torch.optim.Adagrad step for step, for every option combination."""

import numpy as np
import pytest

from .reference import ADAGRAD_CONFIGS, assert_matches_torch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("config", list(ADAGRAD_CONFIGS))
def test_adagrad_matches_torch(config, dtype):
    assert_matches_torch("Adagrad", ADAGRAD_CONFIGS[config], dtype)


def test_adagrad_state_exists_before_the_first_step_as_in_torch():
    import fw_core as fw
    import fw_core.optim as optim

    p = fw.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    state = opt.state_dict()["state"][0]
    assert float(state["step"]) == 0.0 and state["sum"].tolist() == [0.25, 0.25]
