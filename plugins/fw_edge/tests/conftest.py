"""Shared fixtures: a place for program files, and the test-side writer on the path."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fwm_writer import Builder  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def run(tmp_path):
    """``run(builder)``: the loaded program of a Builder, saved under tmp_path."""
    import fw_edge

    counter = iter(range(10**6))

    def load(builder: Builder, **kwargs):
        return fw_edge.load(builder.save(tmp_path / f"p{next(counter)}.fwm"), **kwargs)
    return load


@pytest.fixture
def one(run):
    """``one(op, arrays, out_shape, out_dtype, weights=(), **attrs)``: the result of a one-node
    program on ``arrays``."""
    from fwm_writer import call_inputs, single_node

    def compute(op, arrays, out_shape, out_dtype="float32", weights=(), **attrs):
        prog = run(single_node(op, arrays, out_shape, out_dtype, weights, **attrs))
        return prog(*call_inputs(arrays, weights))
    return compute
