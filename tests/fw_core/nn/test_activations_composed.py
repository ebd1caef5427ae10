"""The activations fw composes from its ops, against torch 2.13: values and gradients (float64)
away from their corners, the module forms, and the errors for bad settings."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError

torch = pytest.importorskip("torch")

CASES = [  # (functional name, args after the input, module name, module args)
    ("hardsigmoid", (), "Hardsigmoid", ()),
    ("hardswish", (), "Hardswish", ()),
    ("softsign", (), "Softsign", ()),
    ("celu", (0.7,), "CELU", (0.7,)),
    ("selu", (), "SELU", ()),
    ("logsigmoid", (), "LogSigmoid", ()),
    ("tanhshrink", (), "Tanhshrink", ()),
    ("softshrink", (0.3,), "Softshrink", (0.3,)),
    ("hardshrink", (0.3,), "Hardshrink", (0.3,)),
    ("threshold", (0.2, -1.5), "Threshold", (0.2, -1.5)),
    ("glu", (1,), "GLU", (1,)),
    ("normalize", (2.0, 1), None, ()),
]


# torch's own backward of these rounds a constant to float32 (1/6, 1/alpha) even in float64:
# fw's exact float64 gradient differs from it by ~1e-7 relative
FLOAT32_CONSTANT_IN_TORCH = {"hardsigmoid", "hardswish", "celu"}


def _inputs():
    values = np.random.default_rng(0).uniform(-5, 5, (4, 6))
    corners = [-3.0, 3.0, -0.3, 0.3, 0.2, 0.0]  # where some of them switch
    keep = np.min([np.abs(values - c) for c in corners], axis=0) > 1e-3
    return np.where(keep, values, values + 0.01)


@pytest.mark.parametrize("name, args, module, module_args", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, args, module, module_args):
    values = _inputs()
    ours = fw.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    out = getattr(fw.nn.functional, name)(ours, *args)
    expected = getattr(torch.nn.functional, name)(theirs, *args)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    (grad,) = fw.autograd.grad((out * fw.tensor(weights)).sum(), [ours])
    (expected_grad,) = torch.autograd.grad((expected * torch.tensor(weights)).sum(), [theirs])
    rtol = 1e-6 if name in FLOAT32_CONSTANT_IN_TORCH else 1e-10
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=rtol, atol=1e-12)
    if module is not None:
        layer = getattr(fw.nn, module)(*module_args)
        np.testing.assert_allclose(layer(fw.tensor(values)).numpy(),
                                   getattr(torch.nn, module)(*module_args)(
                                       torch.tensor(values)).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("slopes", [1, 3])
def test_prelu_learns_its_slopes_as_torch_does(slopes):
    values = np.random.default_rng(2).standard_normal((2, 3, 4))
    ours, theirs = fw.nn.PReLU(slopes, init=0.1).double(), torch.nn.PReLU(slopes, init=0.1).double()
    out, expected = ours(fw.tensor(values)), theirs(torch.tensor(values))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert ours.num_parameters() == slopes and repr(ours) == f"PReLU(num_parameters={slopes})"


def test_bad_settings_are_refused():
    x = fw.ones(2, 3)
    with pytest.raises(ArgumentError, match="the size of dim 1 must be even, got 3"):
        fw.nn.functional.glu(x, 1)
    with pytest.raises(ArgumentError, match="lambd must be at least 0"):
        fw.nn.functional.softshrink(x, -0.5)
    with pytest.raises(ArgumentError, match="alpha must not be 0"):
        fw.nn.functional.celu(x, 0.0)
    with pytest.raises(ArgumentError, match="weight has 2 slopes for 3 channels"):
        fw.nn.functional.prelu(x, fw.ones(2))
