"""Integer division and remainder by zero raise, as in PyTorch; float division gives inf/NaN."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import DivisionByZeroError


@pytest.mark.parametrize("call", [
    lambda: fw.tensor([5, 3]) // fw.tensor([0, 1]),
    lambda: fw.tensor([5, 3]) // 0,
    lambda: 7 // fw.tensor([2, 0]),
    lambda: fw.floor_divide(fw.tensor([5], dtype=fw.int32), fw.tensor([0], dtype=fw.int32)),
    lambda: fw.tensor([5, 3]) % fw.tensor([1, 0]),
    lambda: fw.remainder(fw.tensor([7], dtype=fw.uint8), 0),
], ids=["tensor // tensor", "tensor // 0", "7 // tensor", "int32", "tensor % tensor", "uint8 % 0"])
def test_integer_division_by_zero_raises(call):
    # NumPy returns 0 here without a word; PyTorch raises "ZeroDivisionError"
    with pytest.raises(DivisionByZeroError) as info:
        call()
    err = info.value
    assert isinstance(err, ZeroDivisionError) and isinstance(err, RuntimeError)
    text = str(err)
    assert text.split(":")[0] in ("floor_divide", "remainder")
    assert "integer division by zero" in text and "int" in err.inputs and err.hint


def test_torch_raises_for_the_same_inputs():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.tensor([5, 3]) // torch.tensor([0, 1])


def test_float_division_by_zero_and_nonzero_integers_are_unchanged():
    np.testing.assert_array_equal((fw.tensor([5.0, -3.0]) // fw.tensor([0.0, 0.0])).numpy(),
                                  [np.inf, -np.inf])
    assert np.isnan((fw.tensor([5.0]) % 0.0).numpy()).all()
    np.testing.assert_array_equal((fw.tensor([-7, 7]) // fw.tensor([2, -2])).numpy(), [-4, -4])
    np.testing.assert_array_equal((fw.tensor([-7, 7]) % 3).numpy(), [2, 1])
    assert (fw.tensor([6]) // fw.tensor([3])).dtype == fw.int64
