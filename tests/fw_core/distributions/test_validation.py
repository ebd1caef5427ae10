"""Argument validation as torch's validate_args: bad parameters and out-of-support values raise
an fw ArgumentError (a ValueError, as torch raises) naming the distribution, the argument and
what arrived; validate_args=False skips the checks."""

import math

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import ArgumentError, FwError, ShapeError

D = fw.distributions
T = fw.tensor

BAD_PARAMETERS = [
    ("Normal", "scale", "-1", lambda D, T: D.Normal(0.0, T([1.0, -1.0]))),
    ("Normal", "loc", "nan", lambda D, T: D.Normal(T([math.nan]), 1.0)),
    ("Uniform", "low", "2", lambda D, T: D.Uniform(2.0, 1.0)),
    ("Bernoulli", "probs", "1.5", lambda D, T: D.Bernoulli(probs=T([0.5, 1.5]))),
    ("Categorical", "probs", "-0.", lambda D, T: D.Categorical(probs=T([0.5, -0.1]))),
    ("Gamma", "concentration", "0", lambda D, T: D.Gamma(T([0.0, 1.0]), 1.0)),
    ("Gamma", "rate", "-2", lambda D, T: D.Gamma(1.0, -2.0)),
    ("Beta", "concentration0", "-1", lambda D, T: D.Beta(1.0, -1.0)),
    ("Dirichlet", "concentration", "0", lambda D, T: D.Dirichlet(T([1.0, 0.0]))),
    ("MultivariateNormal", "covariance_matrix", "2",
     lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), T([[1.0, 2.0], [2.0, 1.0]]))),
    ("MultivariateNormal", "scale_tril", "-1",
     lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), scale_tril=T([[1.0, 0.0], [0.5, -1.0]]))),
    ("MultivariateNormal", "precision_matrix", "3",
     lambda D, T: D.MultivariateNormal(T([0.0, 0.0]),
                                       precision_matrix=T([[1.0, 3.0], [0.0, 1.0]]))),
]


@pytest.mark.parametrize("dist, argument, shown, build", BAD_PARAMETERS,
                         ids=[f"{d}-{a}" for d, a, _, _ in BAD_PARAMETERS])
def test_bad_parameter_names_distribution_argument_and_value(dist, argument, shown, build):
    with pytest.raises(ArgumentError) as caught:
        build(D, T)
    message = str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, FwError)
    assert message.startswith(f"{dist}: parameter {argument} must be")
    assert shown in message.split("got", 1)[1]


@pytest.mark.parametrize("dist, argument, shown, build", BAD_PARAMETERS,
                         ids=[f"{d}-{a}" for d, a, _, _ in BAD_PARAMETERS])
def test_torch_also_refuses_these_parameters(dist, argument, shown, build):
    """The same parameters through torch.distributions raise ValueError too: fw refuses what
    torch refuses, no more."""
    with pytest.raises(ValueError):
        build(torch.distributions, torch.tensor)


OUT_OF_SUPPORT = [
    ("Normal", lambda: D.Normal(0.0, 1.0), math.nan),
    ("Uniform", lambda: D.Uniform(0.0, 1.0), 1.5),
    ("Bernoulli", lambda: D.Bernoulli(probs=T(0.3)), 0.5),
    ("Categorical", lambda: D.Categorical(probs=T([0.5, 0.5])), 2),
    ("Gamma", lambda: D.Gamma(2.0, 1.0), -0.5),
    ("Beta", lambda: D.Beta(2.0, 2.0), 1.25),
    ("Dirichlet", lambda: D.Dirichlet(T([1.0, 1.0])), [0.7, 0.7]),
]


@pytest.mark.parametrize("dist, build, value", OUT_OF_SUPPORT, ids=[c[0] for c in OUT_OF_SUPPORT])
def test_value_outside_the_support_is_refused(dist, build, value):
    with pytest.raises(ArgumentError) as caught:
        build().log_prob(T(value))
    assert str(caught.value).startswith(f"{dist}: value must be")
    assert str(np.ravel(value)[0])[:3] in str(caught.value).split("got", 1)[1]


@pytest.mark.parametrize("dist, build, value", OUT_OF_SUPPORT[1:3],
                         ids=[c[0] for c in OUT_OF_SUPPORT[1:3]])
def test_validate_args_false_skips_the_checks_as_torch(dist, build, value):
    ours = type(build())  # the class; rebuilt without validation
    args = {"Uniform": (0.0, 1.0), "Bernoulli": (T(0.3),)}[dist]
    got = ours(*args, validate_args=False).log_prob(T(value)).item()
    theirs = getattr(torch.distributions, dist)(
        *[torch.tensor(a.item()) if isinstance(a, fw.Tensor) else a for a in args],
        validate_args=False).log_prob(torch.tensor(value)).item()
    assert got == pytest.approx(theirs)


def test_invalid_parameters_pass_with_validation_off():
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0


def test_default_validation_can_be_switched_off():
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Gamma(-1.0, 1.0).concentration.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ArgumentError):
        D.Gamma(-1.0, 1.0)


def test_value_that_does_not_broadcast_is_a_shape_error():
    with pytest.raises(ShapeError, match=r"Normal.log_prob: value of shape \(2,\)"):
        D.Normal(fw.zeros(3), 1.0).log_prob(fw.zeros(2))
    with pytest.raises(ShapeError, match="event shape"):
        D.Dirichlet(fw.ones(3)).log_prob(fw.ones(2) / 2)


@pytest.mark.parametrize("dist", ["Bernoulli", "Categorical"])
def test_probs_and_logits_exactly_one(dist):
    cls = getattr(D, dist)
    with pytest.raises(ArgumentError, match="either probs or logits"):
        cls(probs=T([0.5, 0.5]), logits=T([0.0, 0.0]))
    with pytest.raises(ArgumentError, match="either probs or logits"):
        cls()


def test_multivariate_normal_takes_exactly_one_matrix_of_matching_size():
    eye = fw.eye(2)
    with pytest.raises(ArgumentError, match="exactly one of"):
        D.MultivariateNormal(fw.zeros(2), covariance_matrix=eye, scale_tril=eye)
    with pytest.raises(ArgumentError, match=r"got loc \(3,\) and covariance_matrix \(2, 2\)"):
        D.MultivariateNormal(fw.zeros(3), covariance_matrix=eye)


def test_missing_rsample_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="Bernoulli has no reparameterised sample"):
        D.Bernoulli(probs=T(0.5)).rsample()
