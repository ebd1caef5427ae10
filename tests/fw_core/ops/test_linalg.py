"""Linear algebra ops: error messages, the einsum notation, dtypes, and agreement with PyTorch."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, FwError, ShapeError
from fw_core.testing import conformance as cf

torch = pytest.importorskip("torch")


def _matches_torch(ours, theirs, *shapes):
    cf.check_torch_call(fw, torch, ours, theirs, *shapes)


# -- matmul ---------------------------------------------------------------------------------------
def test_matmul_mismatch_names_both_shapes_the_inner_dims_and_a_fix():
    with pytest.raises(ShapeError) as info:
        fw.ones(2, 3) @ fw.ones(4, 5)
    text = str(info.value)
    assert "matmul" in text and "(2, 3)" in text and "(4, 5)" in text
    assert "3 vs 4" in text and "fix:" in text and "transpose" in text


def test_matmul_mismatch_of_vectors_names_both_shapes():
    with pytest.raises(ShapeError) as info:
        fw.matmul(fw.ones(3), fw.ones(4))
    assert "(3,)" in str(info.value) and "(4,)" in str(info.value)
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4,\).*3 vs 4"):
        fw.matmul(fw.ones(2, 3), fw.ones(4))


def test_matmul_batch_dimensions_that_do_not_broadcast():
    with pytest.raises(ShapeError, match=r"batch dimensions of shapes \(2, 3, 4\) and \(3, 4, 5\)"):
        fw.ones(2, 3, 4) @ fw.ones(3, 4, 5)


def test_matmul_refuses_0d_operands():
    with pytest.raises(ShapeError, match="at least 1 dimension"):
        fw.matmul(fw.tensor(2.0), fw.ones(3))


def test_matmul_needs_one_non_bool_dtype():
    with pytest.raises(DTypeError, match="float32, float64") as info:
        fw.ones(2, 2) @ fw.ones(2, 2, dtype=fw.float64)
    assert "to(" in info.value.hint
    with pytest.raises(DTypeError, match="bool"):
        fw.ones(2, 2, dtype=fw.bool_) @ fw.ones(2, 2, dtype=fw.bool_)


def test_matmul_of_integers_is_exact_and_stays_integer():
    a = fw.tensor([[1, 2], [3, 4]])
    out = a @ a
    assert out.dtype is fw.int64
    assert out.tolist() == [[7, 10], [15, 22]]


def test_float16_is_accumulated_in_float32_and_returned_as_float16():
    a = fw.full((1, 4096), 0.1, dtype=fw.float16)
    out = a @ fw.ones(4096, 1, dtype=fw.float16)
    assert out.dtype is fw.float16
    assert abs(out.item() - 409.6) < 0.5  # a float16 accumulator would stall near 256


def test_matmul_rejects_non_tensors_with_a_hint():
    with pytest.raises(FwError, match="expected a Tensor") as info:
        fw.matmul([[1.0]], fw.ones(1, 1))
    assert "fw.tensor" in info.value.hint


def test_operator_and_methods_are_bound():
    a, b = fw.ones(2, 3), fw.ones(3, 4)
    assert (a @ b).shape == (2, 4)
    assert a.matmul(b).shape == (2, 4)
    assert fw.ones(2, 2, 3).bmm(fw.ones(2, 3, 1)).shape == (2, 2, 1)
    assert fw.ones(3).outer(fw.ones(2)).shape == (3, 2)
    mixed = np.ones((2, 3), np.float32) @ b  # NumPy hands the product to fw
    assert isinstance(mixed, fw.Tensor) and mixed.op == "matmul" and mixed.shape == (2, 4)


@pytest.mark.parametrize("a, b", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                                  ((2, 1, 2, 3), (4, 3, 2)), ((5, 2, 3), (3, 4)),
                                  ((3,), (4, 3, 2)), ((1, 2, 3), (3,))])
def test_matmul_values_and_gradients_match_torch(a, b):
    _matches_torch(lambda fw, x, y: x @ y, lambda torch, x, y: x @ y, a, b)


def test_matmul_is_differentiable_three_times():
    x = fw.tensor([1.5, -0.5], dtype=fw.float64, requires_grad=True)
    m = fw.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=fw.float64)
    y = x @ m @ x * (x @ x)  # quartic in x
    (g,) = fw.autograd.grad(y, x, create_graph=True)
    (h,) = fw.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = fw.autograd.grad(h.sum(), x)
    tx = torch.tensor([1.5, -0.5], dtype=torch.float64, requires_grad=True)
    tm = torch.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=torch.float64)
    ty = tx @ tm @ tx * (tx @ tx)
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), tx, create_graph=True)
    (tt,) = torch.autograd.grad(th.sum(), tx)
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-12)


# -- bmm ------------------------------------------------------------------------------------------
def test_bmm_needs_3d_operands_of_one_batch():
    with pytest.raises(ShapeError, match="3-d") as info:
        fw.bmm(fw.ones(2, 3), fw.ones(3, 4))
    assert "matmul" in info.value.hint
    with pytest.raises(ShapeError, match="batch sizes differ: 2 vs 1"):
        fw.bmm(fw.ones(2, 3, 4), fw.ones(1, 4, 5))
    with pytest.raises(ShapeError, match="4 vs 5"):
        fw.bmm(fw.ones(2, 3, 4), fw.ones(2, 5, 6))


# -- einsum ---------------------------------------------------------------------------------------
EQUATIONS = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("bqhd,bkhd->bhqk", [(2, 4, 3, 5), (2, 6, 3, 5)]),
    ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij,...jk", [(3, 4), (2, 4, 5)]),
    ("i...j->j...i", [(2, 3, 4, 5)]),
    ("...i,...i->...", [(3, 4), (2, 3, 4)]),
    ("...d,...d->", [(2, 3), (3,)]),
    ("aB,Bc->ca", [(2, 3), (3, 4)]),
    ("ba,ca", [(2, 3), (4, 3)]),
    ("ij,ij->", [(3, 1), (3, 4)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    ("ijk->", [(2, 3, 4)]),
    ("ij,k->", [(2, 3), (4,)]),
    ("b i j , b j k -> b i k", [(2, 3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_values_and_gradients_match_torch(equation, shapes):
    _matches_torch(lambda fw, *xs: fw.einsum(equation, *xs),
                   lambda torch, *xs: torch.einsum(equation, *xs), *shapes)


def test_einsum_takes_operands_as_a_list():
    a, b = fw.ones(2, 3), fw.ones(3, 4)
    assert fw.einsum("ij,jk->ik", [a, b]).tolist() == (a @ b).tolist()


def test_einsum_records_a_normalised_equation():
    out = fw.einsum("...ij,...jk", fw.ones(2, 3, 4, requires_grad=True), fw.ones(4, 5))
    equation = out.grad_fn.attrs["equation"]
    assert "..." not in equation and "->" in equation
    assert fw.ops.get("einsum").meta(
        *(fw.ops.meta.spec_of(t) for t in (fw.ones(2, 3, 4), fw.ones(4, 5))),
        equation=equation).shape == (2, 3, 5)


@pytest.mark.parametrize("equation, shapes, error, words", [
    ("ij,jk->ik", [(2, 3)], ShapeError, "2 operand term(s) for 1 operand(s)"),
    ("ijk->i", [(2, 3)], ShapeError, "does not fit an operand with 2"),
    ("ij,jk->ik", [(2, 3), (4, 5)], ShapeError, "subscript 'j' has size 3 in operand 0 (2, 3)"),
    ("ij->ik", [(2, 3)], ShapeError, "output subscript 'k' is in no operand"),
    ("ij->ii", [(2, 3)], ShapeError, "appears twice"),
    ("i1->i", [(2, 3)], ShapeError, "invalid subscript"),
    ("i....j->i", [(2, 3)], ShapeError, "stray '.'"),
    ("ij->...ij", [(2, 3)], ShapeError, "no operand does"),
    ("ii->i", [(2, 3)], ShapeError, "subscript 'i' is repeated for operand 0 but the sizes"),
    ("ii,i->i", [(3, 1), (3,)], ShapeError, "subscript 'i' is repeated for operand 0"),
])
def test_einsum_errors_name_the_problem(equation, shapes, error, words):
    with pytest.raises(error) as info:
        fw.einsum(equation, *(fw.ones(*s) for s in shapes))
    assert words in str(info.value)
    assert info.value.hint


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("iij->j", [(3, 3, 4)]), ("iij", [(3, 3, 4)]),
    ("iji->j", [(3, 2, 3)]), ("iii->", [(2, 2, 2)]), ("...ii->...i", [(4, 3, 3)]),
    ("ii,ij->j", [(3, 3), (3, 4)]), ("ij,kk->ijk", [(2, 3), (4, 4)]),
    ("bii,bij->bj", [(2, 3, 3), (2, 3, 4)]),
], ids=str)
def test_einsum_repeated_subscripts_take_diagonals_as_torch(equation, shapes):
    """A subscript repeated within an operand takes its diagonal (a trace where the output
    drops it): values and gradients as torch's, and the gradient a correct derivative."""
    cf.check_torch_call(fw, torch, lambda lib, *xs: lib.einsum(equation, *xs),
                        lambda lib, *xs: lib.einsum(equation, *xs), *shapes)
    rng = np.random.default_rng(0)
    inputs = [fw.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert fw.autograd.gradgradcheck(lambda *xs: fw.einsum(equation, *xs), inputs)


def test_einsum_needs_one_dtype():
    with pytest.raises(DTypeError):
        fw.einsum("i,i->", fw.ones(2), fw.ones(2, dtype=fw.float64))


# -- outer and linear -----------------------------------------------------------------------------
def test_outer_promotes_dtypes_and_needs_vectors():
    out = fw.outer(fw.tensor([1, 2]), fw.tensor([0.5, 1.0, 2.0]))
    assert out.dtype is fw.float32 and out.tolist() == [[0.5, 1, 2], [1, 2, 4]]
    with pytest.raises(ShapeError, match="two 1-d tensors"):
        fw.outer(fw.ones(2, 2), fw.ones(2))


def test_linear_is_one_op_with_one_graph_node():
    x = fw.ones(4, 3, requires_grad=True)
    out = fw.linear(x, fw.ones(2, 3, requires_grad=True), fw.ones(2, requires_grad=True))
    assert out.op == "linear" and out.grad_fn.op.name == "linear"
    assert out.grad_fn.next[0] is x


def test_linear_feature_mismatch_says_which_features_and_how_to_fix():
    with pytest.raises(ShapeError) as info:
        fw.linear(fw.ones(8, 5), fw.ones(4, 3))
    text = str(info.value)
    assert "x has 5 features" in text and "in_features = 3" in text
    assert "(out_features, in_features)" in info.value.hint


def test_linear_weight_and_bias_shapes():
    with pytest.raises(ShapeError, match="weight must be 2-d"):
        fw.linear(fw.ones(2, 3), fw.ones(3))
    with pytest.raises(ShapeError, match=r"bias must have shape \(4,\)"):
        fw.linear(fw.ones(2, 3), fw.ones(4, 3), fw.ones(3))
    with pytest.raises(ShapeError, match=r"bias must have shape \(4,\)"):
        fw.linear(fw.ones(2, 3), fw.ones(4, 3), fw.ones(1))


@pytest.mark.parametrize("x, bias", [((5, 3), True), ((2, 4, 3), True), ((3,), False),
                                     ((2, 1, 2, 3), False)])
def test_linear_values_and_gradients_match_torch(x, bias):
    shapes = [x, (4, 3)] + ([(4,)] if bias else [])
    _matches_torch(lambda fw, *xs: fw.linear(*xs),
                   lambda torch, *xs: torch.nn.functional.linear(*xs), *shapes)
