"""Random draws (bernoulli, multinomial, poisson, normal's four forms, randint, randperm) and
Tensor's in-place fills: statistics with fixed seeds, reproducibility under fw.manual_seed and
generator=, zero gradients and torch's errors. fw's stream is not torch's (values differ)."""

import math

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import InvalidArgumentError

N = 200_000


def _stats(t):
    values = t.detach().numpy().astype(np.float64)
    return values.mean(), values.var()


def test_bernoulli_mean_dtype_and_zero_gradient():
    fw.manual_seed(1)
    p = fw.full((N,), 0.3, dtype=fw.float64, requires_grad=True)
    draw = fw.bernoulli(p)
    mean, _ = _stats(draw)
    assert abs(mean - 0.3) < 4 * math.sqrt(0.21 / N)
    assert draw.dtype is fw.float64 and set(np.unique(draw.detach().numpy())) <= {0.0, 1.0}
    assert draw.op == "bernoulli" and draw.requires_grad
    draw.sum().backward()
    assert not p.grad.numpy().any()
    assert abs(fw.bernoulli(fw.zeros(N), 0.8).mean().item() - 0.8) < 0.01
    assert abs(fw.rand(N).bernoulli().mean().item() - 0.5) < 0.01


def test_bernoulli_refuses_probabilities_outside_0_1():
    with pytest.raises(InvalidArgumentError) as info:
        fw.bernoulli(fw.tensor([1.5]))
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(NotImplementedError):
        fw.bernoulli(fw.tensor([1, 0]))


def test_normal_four_forms_shapes_statistics_and_gradients():
    fw.manual_seed(2)
    mean = fw.full((N,), 2.0, requires_grad=True)
    std = fw.full((N,), 3.0, requires_grad=True)
    draw = fw.normal(mean, std)
    m, v = _stats(draw)
    assert abs(m - 2.0) < 0.05 and abs(v - 9.0) < 0.15
    draw.sum().backward()
    assert not mean.grad.numpy().any() and not std.grad.numpy().any()  # zeros, as torch
    assert fw.normal(fw.zeros(2, 1), fw.ones(3)).shape == (2, 3)
    assert fw.normal(fw.zeros(4), 2.0).shape == (4,)
    assert fw.normal(0.0, fw.ones(5)).shape == (5,)
    m, v = _stats(fw.normal(-1.0, 0.5, size=(N,)))
    assert abs(m + 1.0) < 0.01 and abs(v - 0.25) < 0.01
    assert fw.normal(0.0, 1.0, size=(2,), dtype=fw.float64).dtype is fw.float64


def test_normal_errors():
    with pytest.raises(InvalidArgumentError, match="std >= 0.0"):
        fw.normal(fw.zeros(2), -1.0)
    with pytest.raises(NotImplementedError, match="size="):
        fw.normal(0.0, 1.0)


def test_poisson_mean_and_variance():
    fw.manual_seed(3)
    rates = fw.full((N,), 4.0, requires_grad=True)
    draw = fw.poisson(rates)
    m, v = _stats(draw)
    assert abs(m - 4.0) < 0.04 and abs(v - 4.0) < 0.1
    assert draw.dtype is fw.float32 and draw.requires_grad
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        fw.poisson(fw.tensor([-1.0]))


def test_multinomial_with_replacement_frequencies():
    fw.manual_seed(4)
    weights = fw.tensor([[1.0, 2.0, 7.0], [0.0, 1.0, 0.0]])
    draws = fw.multinomial(weights, N, replacement=True)
    assert draws.shape == (2, N) and draws.dtype is fw.int64
    counts = np.bincount(draws.numpy()[0], minlength=3) / N
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.005)
    assert (draws.numpy()[1] == 1).all()


def test_multinomial_without_replacement_is_distinct_and_weighted():
    fw.manual_seed(5)
    firsts = []
    for _ in range(2000):
        picks = fw.multinomial(fw.tensor([1.0, 1.0, 8.0, 0.0]), 3).tolist()
        assert len(set(picks)) == 3 and 3 not in picks
        firsts.append(picks[0])
    assert abs(np.mean(np.array(firsts) == 2) - 0.8) < 0.03
    assert fw.multinomial(fw.tensor([1.0, 0.0, 0.0]), 2).tolist()[0] == 0  # as torch: no error


@pytest.mark.parametrize("call, match", [
    (lambda: fw.multinomial(fw.tensor([1.0, 2.0]), 3), "without replacement"),
    (lambda: fw.multinomial(fw.tensor([-1.0, 2.0]), 1), "element < 0"),
    (lambda: fw.multinomial(fw.tensor([0.0, 0.0]), 1), "sum of probabilities <= 0"),
    (lambda: fw.multinomial(fw.ones(2, 2, 2), 1), "1 or 2 dim"),
    (lambda: fw.multinomial(fw.ones(2), 0), "n_sample <= 0"),
])
def test_multinomial_errors_as_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_multinomial_needs_floating_weights():
    with pytest.raises(TypeError, match="floating-point"):
        fw.multinomial(fw.tensor([1, 2]), 1)


def test_randint_forms_and_randperm():
    assert fw.randint(5, (1000,)).numpy().max() <= 4
    values = fw.randint(3, 10, (N,)).numpy()
    assert values.min() == 3 and values.max() == 9 and values.dtype == np.int64
    assert fw.randint(0, 5, (2,), dtype=fw.float32).dtype is fw.float32
    with pytest.raises(TypeError, match="needs a size"):
        fw.randint(5)
    perm = fw.randperm(10, dtype=fw.float32)
    assert perm.dtype is fw.float32 and sorted(perm.tolist()) == list(range(10))


def test_same_seed_same_draws_and_generators_are_independent():
    def draws():
        return [fw.bernoulli(fw.full((50,), 0.5)).tolist(),
                fw.normal(fw.zeros(50), 1.0).tolist(),
                fw.multinomial(fw.ones(10), 5).tolist(), fw.zeros(20).exponential_().tolist()]

    fw.manual_seed(7)
    first = draws()
    fw.manual_seed(7)
    assert draws() == first
    g1, g2 = fw.Generator(11), fw.Generator(11)
    assert fw.poisson(fw.full((30,), 2.0), generator=g1).tolist() == \
        fw.poisson(fw.full((30,), 2.0), generator=g2).tolist()
    assert fw.zeros(30).normal_(generator=g1).tolist() == \
        fw.zeros(30).normal_(generator=g2).tolist()


@pytest.mark.parametrize("fill, mean, var", [
    (lambda x: x.normal_(1.0, 2.0), 1.0, 4.0),
    (lambda x: x.uniform_(-1.0, 3.0), 1.0, 16 / 12),
    (lambda x: x.bernoulli_(0.25), 0.25, 0.1875),
    (lambda x: x.exponential_(2.0), 0.5, 0.25),
    (lambda x: x.geometric_(0.5), 2.0, 2.0),
    (lambda x: x.log_normal_(0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
])
def test_in_place_fills_have_their_distributions(fill, mean, var):
    fw.manual_seed(8)
    x = fw.zeros(N, dtype=fw.float64)
    assert fill(x) is x
    m, v = _stats(x)
    assert abs(m - mean) < 0.02 * max(1.0, abs(mean)) and abs(v - var) < 0.05 * max(1.0, var)


def test_cauchy_median_and_quartiles():
    fw.manual_seed(9)
    values = fw.zeros(N, dtype=fw.float64).cauchy_(2.0, 0.5).numpy()
    q1, q2, q3 = np.percentile(values, [25, 50, 75])
    assert abs(q2 - 2.0) < 0.01 and abs(q3 - q1 - 1.0) < 0.02


def test_random_fills_integers_in_torch_ranges():
    fw.manual_seed(10)
    assert set(fw.zeros(1000).random_(5).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert set(fw.zeros(1000).random_(2, 4).tolist()) == {2.0, 3.0}
    full = fw.zeros(1000).random_().numpy()
    assert full.min() >= 0 and full.max() <= 2 ** 24 and full.max() > 2 ** 23
    ints = fw.zeros(1000, dtype=fw.int32).random_().numpy()
    assert ints.min() >= 0 and ints.max() > 2 ** 30
    with pytest.raises(InvalidArgumentError, match="'from' to be less than 'to'"):
        fw.zeros(2).random_(5, 2)


@pytest.mark.parametrize("fill, match", [
    (lambda x: x.bernoulli_(1.5), "p to be in"), (lambda x: x.geometric_(0.0), r"\(0, 1\)"),
    (lambda x: x.exponential_(-1.0), "lambda > 0.0"), (lambda x: x.uniform_(2.0, 1.0), "from=2"),
    (lambda x: x.cauchy_(0.0, -1.0), "sigma > 0.0"), (lambda x: x.log_normal_(1.0, -1.0), "std"),
])
def test_in_place_fill_errors(fill, match):
    with pytest.raises(RuntimeError, match=match):
        fill(fw.zeros(2))


def test_integer_tensors_refuse_float_fills():
    with pytest.raises(NotImplementedError):
        fw.zeros(2, dtype=fw.int64).normal_()


def test_in_place_fill_of_a_parameter_needs_no_grad():
    w = fw.nn.Parameter(fw.zeros(3))
    with pytest.raises(RuntimeError, match="requires grad"):
        w.normal_()
    with fw.no_grad():
        w.uniform_(1.0, 2.0)
    assert (w.detach().numpy() >= 1.0).all()


def test_new_empty_takes_dtype_and_device_of_its_tensor():
    x = fw.zeros(2, dtype=fw.float64)
    assert x.new_empty(2, 3).shape == (2, 3) and x.new_empty((4,)).dtype is fw.float64
    assert x.new_empty(1, dtype=fw.int32).dtype is fw.int32


def test_a_draw_from_tensor_parameters_is_a_logged_break_under_compile():
    f = fw.compile(lambda p: fw.bernoulli(p) * 2)
    with fw.no_grad():
        for _ in range(4):
            out = f(fw.full((8,), 0.5))
            assert set(out.tolist()) <= {0.0, 2.0}
    assert f.counts["plan_calls"] == 0
    assert "fw.bernoulli (drawn on the host" in f.explain()
