"""Cases for the resampling ops of every mode and dimensionality (the 2-d nearest and bilinear
ones also in :mod:`fw_core.testing.cases.conv`), against per-axis float64 references built from
the definitions: the sample point of each output position, and the source weights around it."""

import math

import numpy as np

from fw_core.testing.cases.conv import _tup, adjoint_ref
from fw_core.testing.conformance import OpCase, arg, value

_OPS = {"nearest": "upsample_nearest{}d", "nearest-exact": "upsample_nearest_exact{}d",
        "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
        "trilinear": "upsample_trilinear3d", "bicubic": "upsample_bicubic2d"}


def _cubic(t, a=-0.75):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a if t < 2 else 0.0


def _matrix(mode, size, out, align_corners, scale):
    """(out, size) float64 weights of one axis."""
    matrix = np.zeros((out, size))
    step = 1 / scale if scale else size / out
    for i in range(out):
        if mode in ("nearest", "nearest-exact"):
            src = (i + 0.5) * step if mode == "nearest-exact" else i * step
            matrix[i, min(int(math.floor(np.float32(src))), size - 1)] = 1.0
            continue
        if align_corners:
            src = i * (size - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = (i + 0.5) * step - 0.5
        if mode == "bicubic":
            first = math.floor(src)
            for k in range(-1, 3):
                matrix[i, min(max(first + k, 0), size - 1)] += _cubic(src - (first + k))
            continue
        src = max(src, 0.0)
        first = min(int(math.floor(src)), size - 1)
        matrix[i, first] += 1 - (src - first)
        matrix[i, min(first + 1, size - 1)] += src - first
    return matrix


def resample_ref(x, mode, size, align_corners=False, scales=None):
    n = x.ndim - 2
    scales = scales or (None,) * n
    result = x.astype(np.float64)
    for axis, (length, out, scale) in enumerate(zip(x.shape[2:], size, scales)):
        matrix = _matrix(mode, length, out, align_corners, scale)
        result = np.moveaxis(np.tensordot(result, matrix, axes=([2 + axis], [1])), -1, 2 + axis)
    return result.astype(x.dtype)


def _case(mode, name, shape, size=None, scale_factor=None, dtypes=("float32", "float64"), **kw):
    n = len(shape) - 2
    out = _tup(size, n) if size is not None else tuple(
        math.floor(length * f) for length, f in zip(shape[2:], _tup(scale_factor, n)))
    scales = None if scale_factor is None or kw.get("recompute_scale_factor") else tuple(
        float(f) for f in _tup(scale_factor, n))
    call = {"size": size, "scale_factor": scale_factor, "mode": mode, **kw}
    return OpCase(_OPS[mode].format(n), name, [arg(*shape)],
                  lambda fw, x: fw.interpolate(x, **call),
                  lambda x: resample_ref(x, mode, out, kw.get("align_corners", False), scales),
                  torch=lambda torch, x: torch.nn.functional.interpolate(x, **call),
                  dtypes=dtypes)


def _adjoint(mode, name, g_shape, input_shape, **kw):
    n = len(input_shape) - 2
    size = g_shape[2:]
    op = _OPS[mode].format(n) + "_backward"
    attrs = {"size": size, "scales": (None,) * n, "input_size": input_shape[2:]}
    if "nearest" not in mode:
        attrs["align_corners"] = kw.get("align_corners", False)

    def torch_call(torch, g):
        x = torch.zeros(input_shape, dtype=g.dtype, requires_grad=True)
        out = torch.nn.functional.interpolate(x, size=size, mode=mode, **kw)
        return torch.autograd.grad(out, x, g, create_graph=True)[0]

    return OpCase(op, name, [arg(*g_shape)],
                  lambda fw, g: fw.ops.apply(fw.ops.get(op), (g,), attrs),
                  adjoint_ref(lambda x: resample_ref(x, mode, size, kw.get("align_corners",
                                                                            False)),
                              input_shape), torch=torch_call)


def _uint8(mode, name, shape, size):
    """uint8 input: nearest modes copy exactly; bilinear is PyTorch's fixed point, within 1 of
    the rounded float result (tests/fw_core/ops/test_resample.py compares it exactly)."""
    data = np.random.default_rng(len(name)).integers(0, 256, shape).astype(np.uint8)
    reference = lambda x: np.round(resample_ref(x.astype(np.float64), mode, size))  # noqa: E731
    return OpCase(_OPS[mode].format(len(shape) - 2), name, [value(data)],
                  lambda fw, x: fw.interpolate(fw.tensor(x), size=size, mode=mode), reference,
                  torch=lambda torch, x: torch.nn.functional.interpolate(x, size=size, mode=mode),
                  dtypes=("uint8",), grad=False, tolerance={"uint8": (1.0, 0.0)})


CASES = [
    _case("nearest", "upsample", (2, 3, 5), size=9),
    _case("nearest", "downsample_scale", (2, 2, 9), scale_factor=0.6),
    _case("nearest", "3d", (1, 2, 3, 2, 4), size=(5, 3, 2)),
    _case("nearest-exact", "1d", (2, 3, 9), size=13),
    _case("nearest-exact", "2d_scale", (2, 2, 4, 5), scale_factor=(1.5, 0.7)),
    _case("nearest-exact", "3d", (1, 2, 5, 2, 8), size=(3, 6, 4)),
    _case("linear", "upsample", (2, 3, 5), size=11),
    _case("linear", "align_corners_scale", (2, 2, 7), scale_factor=0.6, align_corners=True),
    _case("bilinear", "recompute_scale_factor", (1, 2, 4, 3), scale_factor=(1.7, 2.5),
          recompute_scale_factor=True),
    _case("trilinear", "mixed", (1, 2, 5, 2, 8), size=(3, 6, 4)),
    _case("trilinear", "align_corners", (1, 1, 3, 4, 2), size=(5, 3, 4), align_corners=True),
    _case("bicubic", "upsample", (2, 2, 4, 5), size=(7, 9)),
    _case("bicubic", "downsample_align_corners", (1, 2, 7, 6), size=(4, 3), align_corners=True),
    _case("bicubic", "scale", (1, 2, 4, 5), scale_factor=1.5),
    _uint8("nearest", "uint8", (2, 3, 8, 9), (5, 13)),
    _uint8("nearest-exact", "uint8", (2, 3, 8, 9), (5, 13)),
    _uint8("bilinear", "uint8", (2, 3, 12, 9), (5, 13)),
    _adjoint("nearest", "1d", (1, 2, 7), (1, 2, 3)),
    _adjoint("nearest", "3d", (1, 1, 3, 4, 2), (1, 1, 2, 3, 3)),
    _adjoint("nearest-exact", "1d", (1, 2, 7), (1, 2, 4)),
    _adjoint("nearest-exact", "2d", (1, 2, 5, 3), (1, 2, 3, 4)),
    _adjoint("nearest-exact", "3d", (1, 1, 3, 4, 2), (1, 1, 2, 3, 3)),
    _adjoint("linear", "align_corners", (1, 2, 7), (1, 2, 4), align_corners=True),
    _adjoint("trilinear", "plain", (1, 1, 3, 4, 2), (1, 1, 2, 3, 3)),
    _adjoint("bicubic", "plain", (1, 2, 5, 3), (1, 2, 3, 4)),
]
