"""Reductions beyond the conformance cases: errors, the (values, indices) tuple, dtypes, ties,
zeros in prod, stability and the edges where PyTorch defines a gradient by convention."""

import math

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import DTypeError, FwError, ShapeError, UnsupportedError
from fw_core.ops.reduction import ValuesIndices
from fw_core.records import Structure


def _grad(fn, values):
    x = fw.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    fn(x).backward()
    return x.grad.numpy()


def _torch_grad(fn, values):
    x = torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    fn(x).backward()
    return x.grad.numpy()


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "norm",
                                  "all", "any", "var", "std"])
def test_dim_out_of_range_names_the_op_and_the_shape(name):
    x = fw.zeros(3, 4)
    with pytest.raises(ShapeError) as info:
        getattr(fw, name)(x, dim=2)
    message = str(info.value)
    assert message.startswith(f"{name}: dimension 2 is out of range for a 2-d tensor")
    assert "float32[3, 4]" in message and "[-2, 1]" in message


@pytest.mark.parametrize("call", [lambda x: fw.max(x, -3), lambda x: fw.argmin(x, 2),
                                  lambda x: fw.cumsum(x, 5)])
def test_single_dim_ops_check_their_dim(call):
    with pytest.raises(ShapeError, match="out of range") as info:
        call(fw.zeros(3, 4))
    assert "float32[3, 4]" in str(info.value)


def test_a_repeated_dim_is_an_error():
    with pytest.raises(ShapeError, match="repeats an axis"):
        fw.sum(fw.zeros(2, 3), (1, -1))


def test_a_dim_that_is_not_an_int_is_an_error():
    with pytest.raises(ShapeError, match="dim must be an int or a tuple of ints, got 1.5"):
        fw.sum(fw.zeros(2, 3), 1.5)
    with pytest.raises(ShapeError, match="dim must be a single int") as info:
        fw.argmax(fw.zeros(2, 3), (0, 1))
    assert "amax" in info.value.hint


def test_a_non_tensor_input_is_an_fw_error():
    with pytest.raises(FwError, match="expected a Tensor, got list"):
        fw.sum([1.0, 2.0])


@pytest.mark.parametrize("call", [fw.max, fw.min, fw.amax, fw.argmax, fw.argmin,
                                  lambda x: x.max(), lambda x: fw.norm(x, math.inf)])
def test_max_of_an_empty_tensor_is_a_clear_error(call):
    with pytest.raises(ShapeError, match="of an empty tensor") as info:
        call(fw.zeros(0, 3))
    assert "shape (0, 3)" in str(info.value) and "dim=" in info.value.hint


def test_max_over_an_empty_dim_is_an_error_but_over_another_dim_is_empty():
    x = fw.zeros(0, 3)
    with pytest.raises(ShapeError, match="cannot reduce dimension 0: it has size 0"):
        fw.max(x, 0)
    values, indices = fw.max(x, 1)
    assert values.shape == (0,) and indices.shape == (0,)
    assert fw.amax(x, 1).shape == (0,)


@pytest.mark.parametrize("name", ["mean", "var", "std", "norm"])
def test_ops_that_need_a_float_refuse_integers_with_a_fix(name):
    with pytest.raises(DTypeError, match="expects a floating-point tensor, got int64") as info:
        getattr(fw, name)(fw.tensor([1, 2, 3]))
    assert ".float()" in info.value.hint
    assert "int64[3]" in str(info.value)


def test_mean_of_integers_with_a_float_dtype():
    assert fw.mean(fw.tensor([1, 2]), dtype=fw.float64).item() == 1.5


def test_var_takes_correction_or_unbiased_not_both():
    with pytest.raises(FwError, match="either correction or unbiased"):
        fw.var(fw.ones(3), unbiased=True, correction=1)


def test_norm_names_what_it_does_not_support():
    x = fw.ones(2, 3, 4)
    with pytest.raises(UnsupportedError, match="nuclear norm"):
        fw.norm(x, "nuc")
    with pytest.raises(ShapeError, match="at most two dims"):
        fw.norm(x, "fro", (0, 1, 2))
    with pytest.raises(FwError, match="unknown norm p='max'"):
        fw.norm(x, "max")


def test_cumsum_needs_a_dim():
    with pytest.raises(ShapeError, match="cumsum needs a dim"):
        fw.cumsum(fw.ones(3), None)


# -- the (values, indices) tuple ------------------------------------------------------------------
def test_max_with_dim_returns_a_named_values_indices_tuple():
    x = fw.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
    result = fw.max(x, 1)
    assert isinstance(result, ValuesIndices) and isinstance(result, tuple)
    np.testing.assert_array_equal(result.values.numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(result.indices.numpy(), [1, 0])  # the first among ties
    assert result.indices.dtype is fw.int64
    values, indices = x.min(0, keepdim=True)
    assert values.shape == indices.shape == (1, 3)
    np.testing.assert_array_equal(values.numpy(), [[1.0, 2.0, 5.0]])
    np.testing.assert_array_equal(indices.numpy(), [[0, 1, 0]])


def test_max_without_dim_is_a_0d_tensor_and_with_a_tensor_is_elementwise():
    x = fw.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert x.max().shape == () and x.max().item() == 7.0
    assert fw.min(x).item() == 1.0
    np.testing.assert_array_equal(x.max(fw.tensor([3.0, 3.0])).numpy(), [[3.0, 5.0], [7.0, 3.0]])
    np.testing.assert_array_equal(fw.min(x, fw.tensor(2.0)).numpy(), [[1.0, 2.0], [2.0, 2.0]])


# -- dtypes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, expected", [
    (fw.int32, fw.int64), (fw.uint8, fw.int64), (fw.bool_, fw.int64), (fw.int64, fw.int64),
    (fw.float16, fw.float16), (fw.float64, fw.float64)])
def test_sum_prod_and_cumsum_widen_integers_as_pytorch(dtype, expected):
    x = fw.ones(2, 3, dtype=dtype)
    assert fw.sum(x).dtype is expected
    assert fw.prod(x, 1).dtype is expected
    assert fw.cumsum(x, 0).dtype is expected


def test_result_dtypes_of_the_other_reductions():
    i = fw.tensor([[3, 1], [2, 4]], dtype=fw.int32)
    assert fw.amax(i).dtype is fw.int32 and fw.max(i, 0).values.dtype is fw.int32
    assert fw.argmax(i).dtype is fw.int64 and fw.argmax(i).item() == 3
    assert fw.logsumexp(i, 1).dtype is fw.float32
    assert fw.all(i).dtype is fw.bool_ and fw.any(fw.zeros(2, dtype=fw.uint8)).dtype is fw.uint8
    assert fw.sum(fw.ones(3), dtype=fw.float64).dtype is fw.float64


def test_float16_sums_accumulate_in_float32():
    x = fw.full((4096,), 0.1, dtype=fw.float16)
    assert fw.sum(x).dtype is fw.float16
    assert abs(fw.sum(x).item() - 409.6) < 0.5  # a float16 accumulator stalls at 256
    assert abs(fw.mean(x).item() - 0.1) < 1e-3


# -- gradients where the maths needs a convention --------------------------------------------------
@pytest.mark.parametrize("fw_fn, torch_fn", [
    (lambda x: x.amax(), lambda x: x.amax()),
    (lambda x: x.max(), lambda x: x.max()),
    (lambda x: x.amin(1).sum(), lambda x: x.amin(1).sum()),
    (lambda x: x.max(1).values.sum(), lambda x: x.max(1).values.sum()),
    (lambda x: x.min(0).values.sum(), lambda x: x.min(0).values.sum()),
    (lambda x: fw.norm(x, math.inf), lambda x: torch.norm(x, math.inf)),
])
def test_ties_share_or_route_the_gradient_as_pytorch(fw_fn, torch_fn):
    values = [[3.0, 1.0, 3.0], [-3.0, -3.0, 0.0]]
    np.testing.assert_allclose(_grad(fw_fn, values), _torch_grad(torch_fn, values))


def test_amax_splits_ties_evenly_and_max_dim_picks_the_returned_index():
    np.testing.assert_array_equal(_grad(lambda x: x.amax(), [3.0, 1.0, 3.0]), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(_grad(lambda x: x.max(0).values, [3.0, 1.0, 3.0]),
                                  [1.0, 0.0, 0.0])


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0], [1.5, -2.0, 4.0]],   # one zero in a row
    [[0.0, 0.0, 3.0], [0.0, -2.0, 4.0]],   # two zeros in a row
    [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
])
@pytest.mark.parametrize("dim", [None, 1, 0])
def test_prod_gradient_is_exact_with_zeros(values, dim):
    fw_fn = (lambda x: fw.prod(x)) if dim is None else (lambda x: (fw.prod(x, dim) * 1.5).sum())
    torch_fn = (lambda x: torch.prod(x)) if dim is None else (
        lambda x: (torch.prod(x, dim) * 1.5).sum())
    got = _grad(fw_fn, values)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, _torch_grad(torch_fn, values))


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0], [1.5, -2.0, 4.0]], [[0.0, 0.0, 3.0], [0.0, -2.0, 0.0]],
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
def test_prod_gradcheck_and_double_backward_with_zeros(values):
    x = fw.tensor(values, dtype=fw.float64, requires_grad=True)
    for fn in (lambda t: fw.prod(t, 1), lambda t: fw.prod(t)):
        assert fw.autograd.gradcheck(fn, [x])
        assert fw.autograd.gradgradcheck(fn, [x])


def test_logsumexp_is_stable_and_its_gradient_is_softmax():
    x = fw.tensor([1000.0, 1000.0], requires_grad=True)
    out = fw.logsumexp(x, 0)
    assert out.item() == pytest.approx(1000 + math.log(2))
    out.backward()
    # float32 rounds 1000 + log 2 to ~6e-5, so exp(x - out) is 0.49999 (as in PyTorch)
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.5], rtol=1e-4)
    assert fw.logsumexp(fw.tensor([-math.inf, -math.inf]), 0).item() == -math.inf
    assert fw.logsumexp(fw.tensor([math.inf, 1.0]), 0).item() == math.inf
    assert fw.logsumexp(fw.tensor([-1000.0, -1000.0]), 0).item() == pytest.approx(
        -1000 + math.log(2))


def test_std_of_a_constant_and_norm_of_zero_have_gradient_zero_as_pytorch():
    for fw_fn, torch_fn in ((lambda x: x.std(), lambda x: x.std()),
                            (lambda x: x.std(0).sum(), lambda x: x.std(0).sum()),
                            (lambda x: x.norm(), lambda x: x.norm()),
                            (lambda x: fw.norm(x, 3, 1).sum(), lambda x: torch.norm(x, 3, 1).sum()),
                            (lambda x: fw.norm(x, 0.5), lambda x: torch.norm(x, 0.5))):
        for values in ([[2.0, 2.0], [2.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 1.0],
                                                                             [0.0, -2.0]]):
            got = _grad(fw_fn, values)
            np.testing.assert_allclose(got, _torch_grad(torch_fn, values), err_msg=str(values))


def test_norm_p0_counts_non_zeros_and_has_zero_gradient():
    x = fw.tensor([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]], requires_grad=True)
    out = fw.norm(x, 0, 1)
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 1.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))


def test_var_and_std_double_backward_through_mean():
    x = fw.randn(3, 4, dtype=fw.float64, requires_grad=True)
    assert fw.autograd.gradgradcheck(lambda t: fw.std(t, 1, keepdim=True), [x])
    assert fw.autograd.gradgradcheck(lambda t: fw.var(t, (0, 1), correction=0), [x])


def test_cumsum_gradient_is_the_reversed_cumsum():
    g = _grad(lambda x: (fw.cumsum(x, 0) * fw.tensor([1.0, 2.0, 3.0], dtype=fw.float64)).sum(),
              [5.0, 6.0, 7.0])
    np.testing.assert_array_equal(g, [6.0, 5.0, 3.0])


# -- contracts ------------------------------------------------------------------------------------
def test_structures_and_anchors():
    for name in ("sum", "mean", "prod", "amax", "amin", "max", "min", "var", "std", "logsumexp",
                 "norm", "cumsum"):
        op = fw.ops.get(name)
        assert op.structure is Structure.REDUCTION and op.vjp is not None, name
    for name in ("argmax", "argmin", "all", "any"):
        assert fw.ops.get(name).structure is Structure.REDUCTION and fw.ops.get(name).vjp is None
    assert fw.ops.get("max").anchor.kind == "kink"
    assert fw.ops.get("norm").anchor.kind == "kink"
    assert "product of the others" in fw.ops.get("prod").anchor.says
    assert fw.ops.get("logsumexp").anchor.kind == "temperature"


def test_argmax_output_is_not_differentiable():
    x = fw.randn(3, 4, requires_grad=True)
    assert not fw.argmax(x, 1).requires_grad and not fw.any(x > 0).requires_grad


def test_tensor_methods_are_bound():
    x = fw.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert x.sum().item() == 6.0 and x.mean().item() == 1.5 and x.prod().item() == -24.0
    assert x.amax(0).tolist() == [3.0, 4.0] and x.argmin().item() == 1
    assert x.std(0, correction=0).tolist() == [1.0, 3.0]
    assert x.cumsum(1).tolist() == [[1.0, -1.0], [3.0, 7.0]]
    assert bool(x.any()) and not bool((x > 0).all())
