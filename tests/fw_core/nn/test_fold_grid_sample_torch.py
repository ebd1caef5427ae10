"""F.fold / F.unfold, nn.Fold / nn.Unfold, F.affine_grid and F.grid_sample against torch:
values and gradients in float64 (1e-10) and float32 (1e-5), every mode, padding_mode and
align_corners, and the errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import fw_core as fw
import fw_core.nn.functional as F
from fw_core.errors import FwError, UnsupportedError

ARGS = [(3, 1, 0, 1), ((2, 3), (2, 1), (1, 2), (2, 1)), (2, 2, 1, 3), (1, 1, 0, 2)]
TOL = {np.float64: 1e-10, np.float32: 1e-5}


def _pair(a, dtype, rng=None):
    return (torch.tensor(a.astype(dtype), requires_grad=True),
            fw.tensor(a.astype(dtype), requires_grad=True))


def _compare(tout, fout, tins, fins, dtype, rng):
    tol = TOL[dtype]
    np.testing.assert_allclose(fout.detach().numpy(), tout.detach().numpy(), atol=tol, rtol=tol)
    go = rng.random(tuple(tout.shape)).astype(dtype)
    tout.backward(torch.tensor(go))
    fout.backward(fw.tensor(go))
    for t, f in zip(tins, fins):
        fg = np.zeros(tuple(t.shape), dtype) if f.grad is None else f.grad.numpy()
        np.testing.assert_allclose(fg, t.grad.numpy(), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("args", ARGS)
@pytest.mark.parametrize("batched", [True, False])
def test_unfold_fold(dtype, args, batched):
    rng = np.random.default_rng(0)
    shape = (2, 3, 7, 8) if batched else (3, 7, 8)
    t, f = _pair(rng.random(shape), dtype)
    tout = TF.unfold(t, *args)
    _compare(tout, F.unfold(f, *args), [t], [f], dtype, rng)
    t, f = _pair(rng.random(tuple(tout.shape)), dtype)
    _compare(TF.fold(t, (7, 8), *args), F.fold(f, (7, 8), *args), [t], [f], dtype, rng)


def test_modules():
    rng = np.random.default_rng(1)
    a = rng.random((2, 2, 5, 6))
    cols = fw.nn.Unfold(2, padding=1, stride=2)(fw.tensor(a))
    tcols = torch.nn.Unfold(2, padding=1, stride=2)(torch.tensor(a))
    np.testing.assert_allclose(cols.numpy(), tcols.numpy())
    img = fw.nn.Fold((5, 6), 2, padding=1, stride=2)(cols)
    np.testing.assert_allclose(img.numpy(),
                               torch.nn.Fold((5, 6), 2, padding=1, stride=2)(tcols).numpy())
    assert repr(fw.nn.Fold((5, 6), 2)) == repr(torch.nn.Fold((5, 6), 2))
    assert repr(fw.nn.Unfold(3)) == repr(torch.nn.Unfold(3))


@pytest.mark.parametrize("call", [
    lambda m, x: m.unfold(x(2, 3, 3, 3), 5),                 # no blocks
    lambda m, x: m.unfold(x(2, 3), 2),                       # 2-d input
    lambda m, x: m.unfold(x(1, 1, 4, 4), 0),                 # kernel 0
    lambda m, x: m.unfold(x(1, 1, 4, 4), 2, stride=0),
    lambda m, x: m.fold(x(1, 5, 9), (4, 4), 2),              # rows not divisible
    lambda m, x: m.fold(x(1, 4, 8), (4, 4), 2),              # wrong L
    lambda m, x: m.fold(x(1, 2, 3, 4), (4, 4), 2),           # 4-d input
])
def test_fold_errors(call):
    with pytest.raises((RuntimeError, IndexError)):  # torch: IndexError for a 2-d input
        call(TF, lambda *s: torch.zeros(s))
    with pytest.raises(RuntimeError) as err:
        call(F, lambda *s: fw.zeros(*s))
    assert isinstance(err.value, FwError) and err.value.hint


MODES = [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3), ("nearest", 3)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode,d", MODES)
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(dtype, mode, d, padding_mode, align_corners):
    rng = np.random.default_rng(2)
    shape, gshape = ((2, 3, 5, 6), (2, 4, 7, 2)) if d == 2 else ((2, 3, 4, 5, 6), (2, 3, 4, 5, 3))
    ti, fi = _pair(rng.random(shape), dtype)
    tg, fg = _pair(rng.uniform(-1.6, 1.6, gshape), dtype)
    tout = TF.grid_sample(ti, tg, mode, padding_mode, align_corners)
    fout = F.grid_sample(fi, fg, mode, padding_mode, align_corners)
    _compare(tout, fout, [ti, tg], [fi, fg], dtype, rng)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(dtype, d, align_corners):
    rng = np.random.default_rng(3)
    size = (2, 3, 4, 5) if d == 2 else (2, 3, 4, 5, 6)
    t, f = _pair(rng.random((2, d, d + 1)), dtype)
    _compare(TF.affine_grid(t, size, align_corners), F.affine_grid(f, size, align_corners),
             [t], [f], dtype, rng)


def test_affine_then_sample_gradient_to_theta():
    rng = np.random.default_rng(4)
    a, th = rng.random((1, 2, 6, 6)), rng.random((1, 2, 3))
    tt, ft = _pair(th, np.float64)
    tout = TF.grid_sample(torch.tensor(a), TF.affine_grid(tt, (1, 2, 4, 4), False),
                          align_corners=False)
    with pytest.warns(UserWarning):
        fout = F.grid_sample(fw.tensor(a), F.affine_grid(ft, (1, 2, 4, 4), False))
    _compare(tout, fout, [tt], [ft], np.float64, rng)


def test_align_corners_default_warns():
    with pytest.warns(UserWarning):
        F.affine_grid(fw.zeros(1, 2, 3), (1, 1, 2, 2))


@pytest.mark.parametrize("call,exc", [
    (lambda m, x: m.grid_sample(x(1, 1, 3, 3), x(1, 2, 2, 2), mode="area",
                                align_corners=False), ValueError),
    (lambda m, x: m.grid_sample(x(1, 1, 3, 3), x(1, 2, 2, 2), padding_mode="wrap",
                                align_corners=False), ValueError),
    (lambda m, x: m.grid_sample(x(1, 1, 3, 3), x(1, 2, 2, 3), align_corners=False),
     RuntimeError),
    (lambda m, x: m.grid_sample(x(1, 1, 3, 3), x(2, 2, 2, 2), align_corners=False),
     RuntimeError),
    (lambda m, x: m.grid_sample(x(1, 1, 3, 3), x(1, 2, 2, 2, 2), align_corners=False),
     RuntimeError),
    (lambda m, x: m.grid_sample(x(1, 1, 3), x(1, 2, 2), align_corners=False), RuntimeError),
    (lambda m, x: m.affine_grid(x(1, 3, 3), (1, 1, 2, 2), False), ValueError),
    (lambda m, x: m.affine_grid(x(1, 2, 3), (1, 1, 2), False), NotImplementedError),
    (lambda m, x: m.affine_grid(x(1, 3, 4), (1, 1, 2, 2), False), ValueError),
])
def test_grid_errors(call, exc):
    with pytest.raises(exc):
        call(TF, lambda *s: torch.zeros(s))
    with pytest.raises(exc) as err:
        call(F, lambda *s: fw.zeros(*s))
    assert isinstance(err.value, FwError) and err.value.hint


def test_bicubic_5d_unsupported():
    with pytest.raises(UnsupportedError):
        F.grid_sample(fw.zeros(1, 1, 2, 2, 2), fw.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)


def test_affine_grid_theta_dtype():
    with pytest.raises(ValueError):
        TF.affine_grid(torch.zeros(1, 2, 3, dtype=torch.int64), (1, 1, 2, 2), False)
