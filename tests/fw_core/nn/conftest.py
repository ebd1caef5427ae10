"""Seed PyTorch too, so comparisons with randomly initialised torch layers are reproducible."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed_torch():
    torch.manual_seed(0)
    yield
