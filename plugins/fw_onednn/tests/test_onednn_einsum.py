"""Two-operand einsums through fw_onednn: the equations autograd's matmul and linear gradients
and attention use, on views as they arrive, against NumPy (float64) and PyTorch; and the
equations left to fw_cpu."""

import numpy as np
import pytest

import fw_core as fw
from fw_onednn import kernels
from fw_onednn.cache import PRIMITIVES

torch = pytest.importorskip("torch")

#: (equation as written, a shape, b shape)
SERVED = [
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("bhqk,bhkd->bhqd", (2, 2, 3, 5), (2, 2, 5, 4)),
    ("bqhd,bkhd->bhqk", (2, 3, 2, 4), (2, 5, 2, 4)),
    ("ij,jk", (3, 4), (4, 2)),
    ("ij,kj->ki", (3, 4), (5, 4)),  # the output's rows come from b: the operands swap roles
    ("...nm,...km->...nk", (2, 3, 5), (2, 4, 5)),  # matmul's gradient for a
    ("...nk,...nm->...km", (2, 3, 4), (2, 3, 5)),  # matmul's gradient for b
    ("...o,...i->oi", (2, 7, 5), (2, 7, 3)),  # linear's weight gradient
    ("bij,jk->bik", (2, 3, 4), (4, 5)),
    ("abc,acd->abd", (1, 3, 4), (5, 4, 6)),  # a broadcast batch
    ("i,j->ij", (3,), (4,)),
]

REFUSED = [
    ("ij,k->ik", (3, 4), (2,), "summed within one operand"),
    ("ij,bjk->bik", (3, 4), (2, 4, 5), "interleaves"),
    ("bij,bjk->ik", (2, 3, 4), (2, 4, 5), "does not merge"),
    ("ib,jb->ibj", (3, 2), (4, 2), "batch subscript comes after"),
]


def _views(rng, shape):
    yield "contiguous", rng.standard_normal(shape).astype(np.float32)
    if len(shape) >= 2:
        base = rng.standard_normal(shape[:-2] + shape[-1:] + shape[-2:-1]).astype(np.float32)
        yield "last two transposed", np.swapaxes(base, -1, -2)


def _reference(equation, a, b):
    explicit = fw.ops.linalg._normalize(equation, (a.ndim, b.ndim))
    return np.einsum(explicit, a.astype(np.float64), b.astype(np.float64)), explicit


@pytest.mark.parametrize("equation, shape_a, shape_b", SERVED, ids=lambda v: str(v))
def test_a_matrix_product_equation_is_served_on_views(rng, equation, shape_a, shape_b):
    """Contiguous operands are always served; a transposed view is when its subscript groups
    still merge and one matrix dimension keeps unit stride (else fw_cpu computes it)."""
    for na, a in _views(rng, shape_a):
        for nb, b in _views(rng, shape_b):
            expected, explicit = _reference(equation, a, b)
            served = kernels.takes_einsum(a, b, equation=explicit)
            assert served or (na, nb) != ("contiguous", "contiguous")
            assert served or "merge" in PRIMITIVES.latest().reason or \
                "reference code" in PRIMITIVES.latest().reason
            got = fw.einsum(equation, fw.from_numpy(a), fw.from_numpy(b)).numpy()
            theirs = torch.einsum(equation, torch.from_numpy(a), torch.from_numpy(b)).numpy()
            assert got.shape == expected.shape and got.dtype == np.float32
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=f"{na} {nb}")
            np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5, err_msg=f"{na} {nb}")


@pytest.mark.parametrize("equation, shape_a, shape_b, why", REFUSED, ids=lambda v: str(v))
def test_other_equations_go_to_fw_cpu(rng, equation, shape_a, shape_b, why):
    a, b = rng.standard_normal(shape_a, np.float32), rng.standard_normal(shape_b, np.float32)
    expected, explicit = _reference(equation, a, b)
    assert not kernels.takes_einsum(a, b, equation=explicit)
    assert why in PRIMITIVES.latest().reason
    got = fw.einsum(equation, fw.from_numpy(a), fw.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_one_or_three_operands_go_to_fw_cpu(rng):
    a = rng.standard_normal((3, 4), np.float32)
    assert not kernels.takes_einsum(a, equation="ij->ji")
    assert not kernels.takes_einsum(a, a.T, a, equation="ij,jk,kl->il")
    got = fw.einsum("ij,jk,kl->il", *(fw.from_numpy(x) for x in (a, a.T, a))).numpy()
    np.testing.assert_allclose(got, a @ a.T @ a, rtol=1e-5, atol=1e-5)


def test_matmul_and_linear_backward_run_on_onednn(rng):
    """The gradients of matmul and linear are einsums of the output's gradient with the
    operands as they are: each is one primitive over views."""
    a = fw.from_numpy(rng.standard_normal((2, 8, 16), np.float32)).requires_grad_(True)
    b = fw.from_numpy(rng.standard_normal((2, 8, 16), np.float32)).requires_grad_(True)
    w = fw.from_numpy(rng.standard_normal((4, 16), np.float32)).requires_grad_(True)
    scores = fw.matmul(a, b.transpose(-1, -2))
    out = fw.linear(scores.reshape(2, 8, 8) @ a, w)
    (out * out).sum().backward()
    import fw_onednn

    kinds = fw_onednn.cache_info().by_kind
    assert kinds.get("einsum:f32", 0) >= 4 and fw_onednn.cache_info().refusals == 0
