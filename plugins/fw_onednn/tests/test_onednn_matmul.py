"""matmul and bmm through fw_onednn: fw's rank and broadcasting rules in every memory layout,
against fw_cpu's kernel (float64 reference) and PyTorch, and which calls oneDNN takes."""

import itertools

import numpy as np
import pytest
from onednn_views import servable, views

import fw_core as fw
from fw_onednn import kernels

torch = pytest.importorskip("torch")

#: (a, b) shapes: fw's matmul rules (the conformance cases' and more)
PAIRS = [
    ((4,), (4,)), ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 4), (4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
    ((1, 1), (1, 1)), ((1, 7), (7, 1)), ((5, 1), (1, 6)), ((64, 33), (33, 17)),
    ((2, 2, 5, 8), (2, 2, 8, 3)), ((1, 5, 8), (3, 8, 2)), ((3, 1, 5, 8), (1, 4, 8, 2)),
    ((2, 3, 4), (1, 1, 4, 5)), ((16, 4, 64, 32), (16, 4, 32, 64)),
]


def _cases(rng):
    for sa, sb in PAIRS:
        for (na, a), (nb, b) in itertools.product(views(rng, sa).items(),
                                                  views(rng, sb).items()):
            yield f"{sa}:{na} @ {sb}:{nb}", a, b, servable(na, sa) and servable(nb, sb)


def test_matmul_matches_fw_cpu_and_torch_in_every_layout(rng, cpu_kernels):
    served = 0
    for name, a, b, fast in _cases(rng):
        got = fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy()
        reference = cpu_kernels["matmul"](a.astype(np.float64), b.astype(np.float64))
        theirs = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        assert got.dtype == np.float32 and got.shape == np.shape(reference), name
        np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5, err_msg=name)
        assert (kernels.takes_matmul(a, b) is not None) == fast, name
        served += fast
    assert served > 200


def test_bmm_is_served_for_equal_batches(rng, cpu_kernels):
    for (na, a), (nb, b) in itertools.product(views(rng, (3, 5, 8)).items(),
                                              views(rng, (3, 8, 4)).items()):
        got = fw.bmm(fw.from_numpy(a), fw.from_numpy(b)).numpy()
        np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{na} @ {nb}")
        served = servable(na, a.shape) and servable(nb, b.shape)
        assert (kernels.takes_bmm(a, b) is not None) == served


def test_bmm_leaves_broadcast_batches_to_fw_cpu_which_refuses_them(rng):
    a, b = rng.standard_normal((1, 3, 4), np.float32), rng.standard_normal((2, 4, 5), np.float32)
    assert not kernels.takes_bmm(a, b)
    with pytest.raises(fw.errors.ShapeError, match="batch sizes differ"):
        fw.bmm(fw.from_numpy(a), fw.from_numpy(b))


def test_a_broadcast_view_batch_is_read_in_place(rng):
    """A batch dimension of stride 0 (np.broadcast_to, the gradient of a sum) is oneDNN's
    size-1 broadcast; a matrix dimension of stride 0 is refused."""
    a = np.broadcast_to(rng.standard_normal((1, 3, 4), np.float32), (5, 3, 4))
    b = rng.standard_normal((5, 4, 2), np.float32)
    assert kernels.takes_matmul(a, b)
    np.testing.assert_allclose(fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy(),
                               np.matmul(a, b), rtol=1e-5, atol=1e-5)
    ones = np.broadcast_to(np.float32(1), (3, 4))
    assert not kernels.takes_matmul(ones, b[0])
    np.testing.assert_allclose(fw.matmul(fw.from_numpy(ones), fw.from_numpy(b[0])).numpy(),
                               ones @ b[0], rtol=1e-6)


@pytest.mark.parametrize("shape_a, shape_b", [((0, 4), (4, 3)), ((3, 0), (0, 2)),
                                              ((2, 0, 4), (2, 4, 3)), ((0,), (0,))])
def test_zero_size_operands_go_to_fw_cpu(shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    assert not kernels.takes_matmul(a, b)
    got = fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, np.matmul(a, b))


def test_the_operator_and_a_dot_product(rng):
    a, b = rng.standard_normal(6, np.float32), rng.standard_normal(6, np.float32)
    assert kernels.takes_matmul(a, b)
    dot = fw.from_numpy(a) @ fw.from_numpy(b)
    assert dot.shape == () and dot.dtype is fw.float32
    np.testing.assert_allclose(dot.item(), float(a @ b), rtol=1e-5)


def test_wrong_shapes_raise_fws_error_from_fw_cpu(rng):
    a, b = rng.standard_normal((3, 4), np.float32), rng.standard_normal((5, 6), np.float32)
    assert not kernels.takes_matmul(a, b)
    with pytest.raises(fw.errors.ShapeError, match=r"cannot multiply shapes \(3, 4\) and \(5, 6\)"):
        fw.matmul(fw.from_numpy(a), fw.from_numpy(b))
