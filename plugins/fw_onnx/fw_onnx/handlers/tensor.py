"""ONNX ops that make, reshape, pick or join tensors. Axes and shapes that ONNX passes as
inputs (opset 13 and later) or as attributes (earlier) are both read."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import host, ints


def _axes(node, given=None, key: str = "axes"):
    """The axes of an op from its input ``given`` or its attribute (None when neither)."""
    if given is not None:
        return ints(given)
    value = node.get(key)
    return None if value is None else [int(a) for a in value]


def constant(node):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key == "value":
                return fw.tensor(np.array(value))
            dtype = np.float32 if "float" in key else np.int64
            return fw.tensor(np.array(value, dtype))
    raise fw.errors.UnsupportedError("a Constant without a numeric value", op="Constant",
                                     hint="use value, value_float(s) or value_int(s)")


def constant_of_shape(node, shape):
    """fw.full, so that a trace records a creation op whose shape may follow the inputs."""
    value = node.get("value")
    value = np.zeros(1, np.float32) if value is None else value
    fill = value.reshape(-1)[0]
    return fw.full(ints(shape), fill.item(), dtype=fw.dtypes.from_numpy(value.dtype))


def shape(node, x):
    sizes = list(x.shape)
    start, end = node.get("start", 0), node.get("end", len(sizes))
    return fw.tensor(np.array(sizes[start:end], np.int64))


def reshape(node, x, target):
    target = ints(target)
    if not node.get("allowzero", 0):
        target = [x.shape[i] if t == 0 else t for i, t in enumerate(target)]
    return x.reshape(target)


def flatten(node, x):
    axis = node.get("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(lead, int(np.prod(x.shape[axis:], dtype=np.int64)))


def transpose(node, x):
    perm = node.get("perm") or list(range(x.ndim))[::-1]
    return x.permute(*perm)


def squeeze(node, x, given=None):
    axes = _axes(node, given)
    if axes is None:
        axes = [i for i, n in enumerate(x.shape) if n == 1]
    return x.reshape([n for i, n in enumerate(x.shape) if i not in {a % x.ndim for a in axes}])


def unsqueeze(node, x, given=None):
    axes = sorted(a % (x.ndim + len(_axes(node, given))) for a in _axes(node, given))
    sizes = list(x.shape)
    for a in axes:
        sizes.insert(a, 1)
    return x.reshape(sizes)


def concat(node, *xs):
    return fw.cat([x for x in xs if x is not None], dim=node.get("axis"))


def split(node, x, given=None):
    axis = node.get("axis", 0)
    sizes = _axes(node, given, "split")
    if sizes is None:
        parts = node.get("num_outputs") or len(node.outputs)
        length = x.shape[axis]
        each = -(-length // parts)
        sizes = [min(each, length - k * each) for k in range(parts)]
    return tuple(fw.split(x, sizes, dim=axis))


def slice_(node, x, starts=None, ends=None, axes=None, steps=None):
    starts = ints(starts) if starts is not None else list(node.get("starts"))
    ends = ints(ends) if ends is not None else list(node.get("ends"))
    axes = ints(axes) if axes is not None else list(node.get("axes", range(len(starts))))
    steps = ints(steps) if steps is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        n = x.shape[axis]
        start, end = _clip(start, n, step, True), _clip(end, n, step, False)
        if step > 0:
            index[axis] = slice(start, max(end, start), step)
        else:
            index[axis] = slice(start, end if end >= 0 else None, step)
    if any(s.step is not None and s.step < 0 for s in index):
        return _negative_slice(x, index)
    return x[tuple(index)]


def _clip(value: int, n: int, step: int, is_start: bool) -> int:
    """ONNX's clamping of a Slice bound into the axis."""
    if value < 0:
        value += n
    if step > 0:
        return min(max(value, 0), n)
    return min(max(value, -1), n - 1)


def _negative_slice(x, index):
    """Negative steps (which fw's indexing does not take, as PyTorch's does not): flip, then
    slice forward."""
    for axis, s in enumerate(index):
        if s.step is not None and s.step < 0:
            n = x.shape[axis]
            x = fw.flip(x, (axis,))
            start = n - 1 - s.start
            stop = n if s.stop is None else n - 1 - s.stop
            index[axis] = slice(start, max(stop, start), -s.step)
    return x[tuple(index)]


def _wrapped(indices, size: int):
    """Indices with negative ones counted from the end, as fw ops (the indices may be data,
    such as token ids, which a trace must not read on the host)."""
    indices = indices.to(fw.int64)
    return fw.where(indices < 0, indices + size, indices)


def gather(node, x, indices):
    axis = node.get("axis", 0) % x.ndim
    picks = _wrapped(indices, x.shape[axis])
    if axis == 0 and x.ndim == 2 and x.is_floating_point():  # a table lookup
        return fw.nn.functional.embedding(picks, x)
    return x[(slice(None),) * axis + (picks,)]


def gather_elements(node, x, indices):
    axis = node.get("axis", 0) % x.ndim
    return fw.gather(x, axis, _wrapped(indices, x.shape[axis]))


def expand(node, x, target):
    target = ints(target)
    rank = max(len(target), x.ndim)
    sizes = [1] * (rank - x.ndim) + list(x.shape)
    target = [1] * (rank - len(target)) + target
    return x.reshape(sizes).expand(*[max(a, b) if a == 1 or b == 1 else b
                                     for a, b in zip(sizes, target)])


def tile(node, x, repeats):
    return x.repeat(*ints(repeats))


def pad(node, x, pads=None, value=None, axes=None):
    pads = ints(pads) if pads is not None else list(node.get("pads"))
    mode = node.get("mode", "constant")
    axes = ints(axes) if axes is not None else list(range(x.ndim))
    half = len(pads) // 2
    widths = [(0, 0)] * x.ndim
    for k, axis in enumerate(axes):
        widths[axis % x.ndim] = (pads[k], pads[k + half])
    torch_pad = [w for lo_hi in reversed(widths) for w in lo_hi]
    fill = 0.0 if value is None else host(value).reshape(-1)[0].item()
    modes = {"constant": "constant", "reflect": "reflect", "edge": "replicate",
             "wrap": "circular"}
    if mode == "constant":
        return fw.nn.functional.pad(x, torch_pad, value=fill)
    return fw.nn.functional.pad(x, torch_pad, mode=modes[mode])


def range_(node, start, limit, delta):
    """fw.arange, so that a trace records a creation op whose bounds may follow the inputs."""
    s, e, d = (host(v).reshape(-1)[0].item() for v in (start, limit, delta))
    return fw.arange(s, e, d, dtype=fw.dtypes.from_numpy(host(start).dtype))


def trilu(node, x, k=None):
    shift = 0 if k is None else ints(k)[0]
    return fw.triu(x, shift) if node.get("upper", 1) else fw.tril(x, shift)


def size(node, x):
    return fw.tensor(np.array(x.numel(), np.int64))


def dropout(node, x, ratio=None, training=None):
    mask = fw.ones(*x.shape, dtype=fw.bool)
    return x, mask


HANDLERS = {"Constant": constant, "ConstantOfShape": constant_of_shape, "Shape": shape,
            "Size": size, "Reshape": reshape, "Flatten": flatten, "Transpose": transpose,
            "Squeeze": squeeze, "Unsqueeze": unsqueeze, "Concat": concat, "Split": split,
            "Slice": slice_, "Gather": gather, "GatherElements": gather_elements,
            "Expand": expand, "Tile": tile, "Pad": pad, "Range": range_, "Trilu": trilu,
            "Dropout": dropout}
