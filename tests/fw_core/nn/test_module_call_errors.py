"""Calling a module with arguments its forward does not take says so, naming the module."""

import pytest

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ArgumentTypeError


class Broken(nn.Module):
    def forward(self, x):
        return len(x, 2)  # a TypeError inside forward: the user's bug, left as it is


@pytest.mark.parametrize("call,arrived", [
    (lambda m: m(fw.ones(1, 2), fw.ones(1, 2)), "float32[1, 2] on cpu, float32[1, 2] on cpu"),
    (lambda m: m(), "no arguments"),
    (lambda m: m(fw.ones(1, 2), y=1), "float32[1, 2] on cpu, y=1")],
    ids=["two inputs", "none", "unknown keyword"])
def test_wrong_arguments_name_the_layer_its_forward_and_what_arrived(call, arrived):
    model = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(TypeError) as info:
        call(model[0])
    err = info.value
    assert isinstance(err, ArgumentTypeError)
    assert str(err).startswith("Linear: called with arguments its forward(x) does not take")
    assert err.module == "0" and err.inputs == arrived
    assert err.hint == "call the module as its forward is defined: Linear(...)(x)"


def test_a_python_list_is_refused_with_the_layer_named():
    with pytest.raises(ArgumentTypeError, match="^Linear: expected a Tensor, got list"):
        nn.Linear(2, 2)([1.0, 2.0])
    with pytest.raises(ArgumentTypeError, match="^Conv2d: expected a Tensor, got list"):
        nn.Conv2d(1, 1, 3)([[1.0]])


def test_a_type_error_inside_forward_is_not_rewritten():
    with pytest.raises(TypeError, match="len") as info:
        Broken()(fw.ones(2))
    assert not isinstance(info.value, ArgumentTypeError)
