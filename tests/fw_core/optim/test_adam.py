"""Adam and AdamW equal torch.optim.Adam / AdamW step for step, for every option combination."""

import numpy as np
import pytest

from .reference import ADAM_CONFIGS, ADAMW_CONFIGS, assert_matches_torch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("config", list(ADAM_CONFIGS))
def test_adam_matches_torch(config, dtype):
    assert_matches_torch("Adam", ADAM_CONFIGS[config], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("config", list(ADAMW_CONFIGS))
def test_adamw_matches_torch(config, dtype):
    assert_matches_torch("AdamW", ADAMW_CONFIGS[config], dtype)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_param_groups_match_torch(name):
    groups = [([0, 3], {"lr": 0.02, "betas": (0.5, 0.9)}), ([1, 2, 4], {"weight_decay": 0.2})]
    assert_matches_torch(name, {"lr": 0.01}, np.float64, groups=groups)
