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
