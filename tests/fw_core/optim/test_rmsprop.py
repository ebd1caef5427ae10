"""RMSprop equals torch.optim.RMSprop step for step, for every option combination."""

import numpy as np
import pytest

from .reference import RMSPROP_CONFIGS, assert_matches_torch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("config", list(RMSPROP_CONFIGS))
def test_rmsprop_matches_torch(config, dtype):
    assert_matches_torch("RMSprop", RMSPROP_CONFIGS[config], dtype)
