"""Process-wide switches as PyTorch's: the default dtype, print options, the deterministic
mode, and inference mode with its inference tensors."""

import threading

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import AutogradError


@pytest.fixture
def float64_default():
    fw.set_default_dtype(fw.float64)
    yield
    fw.set_default_dtype(fw.float32)


@pytest.fixture
def printoptions():
    yield fw.set_printoptions
    fw.set_printoptions(profile="default")


def test_default_dtype_drives_factories_and_python_floats(float64_default):
    assert fw.get_default_dtype() is fw.float64
    made = [fw.tensor([1.5]), fw.ones(2), fw.zeros(1), fw.rand(2), fw.randn(2), fw.empty(1),
            fw.arange(0.5, 2.0), fw.linspace(0, 1, 3), fw.full((1,), 2.5), fw.eye(2),
            fw.tensor([1]) * 2.5, fw.exp(fw.tensor([1])), fw.nn.Linear(2, 2).weight]
    assert all(t.dtype is fw.float64 for t in made), [t.dtype for t in made]
    assert fw.tensor([1.5], dtype=fw.float32).dtype is fw.float32
    assert fw.tensor(np.ones(1, np.float32)).dtype is fw.float32  # NumPy keeps its dtype
    assert fw.tensor([1]).float().dtype is fw.float32  # .float() means float32, as torch
    assert repr(fw.tensor([1.5])) == "tensor([1.5])"
    assert repr(fw.tensor([1.5], dtype=fw.float32)) == "tensor([1.5], dtype=fw.float32)"


def test_default_dtype_matches_torch_and_refuses_integers(float64_default):
    torch.set_default_dtype(torch.float64)
    try:
        for make in (lambda lib: lib.tensor([1.5]), lambda lib: lib.tensor([2]) / 3,
                     lambda lib: lib.arange(3) * 0.5):
            assert str(make(fw).dtype).split(".")[-1] == str(make(torch).dtype).split(".")[-1]
    finally:
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        fw.set_default_dtype(fw.int64)


def test_printoptions_change_repr(printoptions):
    x = fw.tensor([1.23456, 2.5])
    assert repr(x) == "tensor([1.2346, 2.5   ])"
    printoptions(precision=2)
    assert repr(x) == "tensor([1.23, 2.5 ])"
    printoptions(sci_mode=True)
    assert repr(x) == "tensor([1.23e+00, 2.50e+00])"
    printoptions(profile="default", threshold=5, edgeitems=2)
    assert repr(fw.arange(10.0)) == "tensor([0., 1., ..., 8., 9.])"
    printoptions(profile="default", sci_mode=False)
    assert repr(fw.tensor([1e-8, 1.0])) == "tensor([0., 1.])"
    printoptions(profile="short")
    assert fw.get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 2,
                                     "linewidth": 80, "sci_mode": None}
    printoptions(profile="full")
    assert "..." not in repr(fw.arange(2000.0))
    printoptions(profile="default", linewidth=30)
    assert max(len(line) for line in repr(fw.arange(12.0)).splitlines()) <= 30
    with pytest.raises(ValueError, match="unknown print profile"):
        printoptions(profile="long")


def test_deterministic_mode_is_recorded():
    assert not fw.are_deterministic_algorithms_enabled()
    fw.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert fw.are_deterministic_algorithms_enabled()
        assert fw.is_deterministic_algorithms_warn_only_enabled()
    finally:
        fw.use_deterministic_algorithms(False)
    assert not fw.are_deterministic_algorithms_enabled()
    assert not fw.is_deterministic_algorithms_warn_only_enabled()


def test_inference_mode_makes_inference_tensors():
    w = fw.ones(2, requires_grad=True)
    with fw.inference_mode():
        assert fw.is_inference_mode_enabled() and not fw.is_grad_enabled()
        x = fw.ones(2)
        y = w * 2
        z = fw.rand(2)
        x.add_(1)  # allowed inside the mode
    assert not fw.is_inference_mode_enabled() and fw.is_grad_enabled()
    assert x.is_inference() and y.is_inference() and z.is_inference()
    assert not y.requires_grad and y.grad_fn is None
    assert x[0].is_inference() and x.detach().is_inference()
    assert not x.clone().is_inference() and not fw.ones(1).is_inference()
    assert not (x * 2).is_inference()


def test_inference_tensors_outside_the_mode_raise_as_torch():
    with fw.inference_mode():
        x = fw.ones(2)
    w = fw.ones(2, requires_grad=True)
    assert (w + x).requires_grad  # add saves nothing: allowed, as torch
    with pytest.raises(AutogradError, match="Inference tensors cannot be saved for backward"):
        w * x
    with pytest.raises(AutogradError, match="Inplace update to inference tensor outside"):
        x.add_(1)
    with pytest.raises(AutogradError, match="Setting requires_grad=True on inference tensor"):
        x.requires_grad_()
    (w * x.clone()).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_inference_mode_forms():
    with fw.inference_mode(False):
        assert not fw.is_inference_mode_enabled() and fw.is_grad_enabled()
        assert not fw.ones(1).is_inference()

    @fw.inference_mode
    def bare():
        return fw.ones(1)

    @fw.inference_mode()
    def called():
        return fw.ones(1)

    assert bare().is_inference() and called().is_inference()
    assert not fw.is_inference_mode_enabled()


def test_inference_mode_belongs_to_its_thread():
    seen = []
    with fw.inference_mode():
        worker = threading.Thread(target=lambda: seen.append(fw.ones(1).is_inference()))
        worker.start()
        worker.join()
    assert seen == [False]


def test_tensor_sizes_and_complexity():
    x = fw.zeros(3, 4, dtype=fw.float64)
    assert x.nbytes == 96 and x.itemsize == 8 and not x.is_complex()
    t = torch.zeros(3, 4, dtype=torch.float64)
    assert (x.nbytes, x.itemsize, x.is_complex()) == (t.nbytes, t.itemsize, t.is_complex())
