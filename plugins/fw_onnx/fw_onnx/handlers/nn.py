"""ONNX's products, convolutions, pooling, normalisations, softmax and reductions."""

from __future__ import annotations

import fw_core as fw

from .node import ints

F = fw.nn.functional


def matmul(node, a, b):
    return fw.matmul(a, b)


def gemm(node, a, b, c=None):
    a = a.T if node.get("transA", 0) else a
    b = b.T if node.get("transB", 0) else b
    out = fw.matmul(a, b) * node.get("alpha", 1.0)
    return out if c is None else out + c * node.get("beta", 1.0)


def global_pool(reduce):
    def handler(node, x):
        return reduce(x, dim=tuple(range(2, x.ndim)), keepdim=True)

    return handler


def batch_norm(node, x, scale, bias, mean, var, *_):
    return F.batch_norm(x, mean, var, scale, bias, training=False,
                        eps=node.get("epsilon", 1e-5))


def layer_norm(node, x, scale, bias=None):
    """Y, and the optional Mean and InvStdDev (over the normalised axes, kept)."""
    axis = node.get("axis", -1) % x.ndim
    eps = node.get("epsilon", 1e-5)
    dims = tuple(range(axis, x.ndim))
    mean = x.mean(dim=dims, keepdim=True)
    centred = x - mean
    inv_std = 1 / fw.sqrt((centred * centred).mean(dim=dims, keepdim=True) + eps)
    y = centred * inv_std * scale
    return (y if bias is None else y + bias), mean, inv_std


def rms_norm(node, x, scale):
    axis = node.get("axis", -1) % x.ndim
    dims = tuple(range(axis, x.ndim))
    mean_square = (x * x).mean(dim=dims, keepdim=True)
    return x / fw.sqrt(mean_square + node.get("epsilon", 1e-5)) * scale


def group_norm(node, x, scale, bias):
    groups, eps = node.get("num_groups"), node.get("epsilon", 1e-5)
    grouped = x.reshape(x.shape[0], groups, -1)
    mean = grouped.mean(dim=2, keepdim=True)
    centred = grouped - mean
    var = (centred * centred).mean(dim=2, keepdim=True)
    y = (centred / fw.sqrt(var + eps)).reshape(*x.shape)
    per = (1, -1) + (1,) * (x.ndim - 2)
    return y * scale.reshape(*per) + bias.reshape(*per)


def lp_normalization(node, x):
    axis, p = node.get("axis", -1), node.get("p", 2)
    norm = fw.abs(x).sum(dim=axis, keepdim=True) if p == 1 else \
        fw.sqrt((x * x).sum(dim=axis, keepdim=True))
    return fw.where(norm == 0, fw.zeros_like(x), x / norm)


def mean_variance_normalization(node, x):
    dims = tuple(node.get("axes", [0, 2, 3]))
    mean = x.mean(dim=dims, keepdim=True)
    centred = x - mean
    return centred / fw.sqrt((centred * centred).mean(dim=dims, keepdim=True) + 1e-9)


def lrn(node, x):
    return F.local_response_norm(x, node.get("size"), alpha=node.get("alpha", 1e-4),
                                 beta=node.get("beta", 0.75), k=node.get("bias", 1.0))


def depth_to_space(node, x):
    n, c, h, w = x.shape
    b = node.get("blocksize")
    if node.get("mode", "DCR") == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(node, x):
    n, c, h, w = x.shape
    b = node.get("blocksize")
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def instance_norm(node, x, scale, bias):
    return F.instance_norm(x, weight=scale, bias=bias, eps=node.get("epsilon", 1e-5))


def _softmax(fn):
    def handler(node, x):
        return fn(x, dim=node.get("axis", -1))

    return handler


def _reduce(fn):
    def handler(node, x, axes=None):
        dims = ints(axes) if axes is not None else node.get("axes")
        keep = bool(node.get("keepdims", 1))
        if not dims:
            if node.get("noop_with_empty_axes", 0):
                return x
            dims = list(range(x.ndim))
        return fn(x, tuple(d % x.ndim for d in dims), keep)

    return handler


def _sum(x, dims, keep):
    return x.sum(dim=dims, keepdim=keep) if x.ndim else x


def _mean(x, dims, keep):
    return x.mean(dim=dims, keepdim=keep) if x.ndim else x


def _max(x, dims, keep):
    return x.amax(dim=dims, keepdim=keep) if x.ndim else x


def _min(x, dims, keep):
    return x.amin(dim=dims, keepdim=keep) if x.ndim else x


def _prod(x, dims, keep):
    for d in sorted(dims, reverse=True):
        x = x.prod(dim=d, keepdim=keep)
    return x


def _l1(x, dims, keep):
    return _sum(fw.abs(x), dims, keep)


def _l2(x, dims, keep):
    return fw.sqrt(_sum(x * x, dims, keep))


def _log_sum(x, dims, keep):
    return fw.log(_sum(x, dims, keep))


def _log_sum_exp(x, dims, keep):
    return fw.logsumexp(x, dim=dims, keepdim=keep)


def _sum_square(x, dims, keep):
    return _sum(x * x, dims, keep)


def arg(fn):
    def handler(node, x):
        axis, keep = node.get("axis", 0), bool(node.get("keepdims", 1))
        if node.get("select_last_index", 0):
            flipped = fw.flip(x, (axis,))
            return x.shape[axis] - 1 - fn(flipped, dim=axis, keepdim=keep)
        return fn(x, dim=axis, keepdim=keep)

    return handler


def _scan(method: str, identity: float):
    """CumSum / CumProd along an axis, optionally reversed and exclusive (each element the
    scan of those before it: the scan shifted by one, ``identity`` first)."""

    def handler(node, x, axis):
        axis = ints(axis)[0] % x.ndim
        reverse = node.get("reverse", 0)
        if reverse:
            x = fw.flip(x, (axis,))
        out = getattr(x, method)(axis).to(x.dtype)
        if node.get("exclusive", 0):
            first = fw.full_like(x.narrow(axis, 0, 1), identity)
            out = fw.cat([first, out.narrow(axis, 0, x.shape[axis] - 1)], dim=axis)
        return fw.flip(out, (axis,)) if reverse else out

    return handler


def topk(node, x, k):
    values, indices = fw.topk(x, ints(k)[0], dim=node.get("axis", -1),
                              largest=bool(node.get("largest", 1)),
                              sorted=bool(node.get("sorted", 1)))
    return values, indices


def einsum(node, *xs):
    return fw.einsum(node.get("equation"), *xs)


HANDLERS = {
    "MatMul": matmul, "Gemm": gemm,
    "GlobalAveragePool": global_pool(fw.mean),
    "GlobalMaxPool": global_pool(fw.amax), "BatchNormalization": batch_norm,
    "LayerNormalization": layer_norm, "InstanceNormalization": instance_norm,
    "RMSNormalization": rms_norm, "GroupNormalization": group_norm,
    "LpNormalization": lp_normalization, "MeanVarianceNormalization": mean_variance_normalization,
    "LRN": lrn, "DepthToSpace": depth_to_space, "SpaceToDepth": space_to_depth,
    "Softmax": _softmax(fw.softmax), "LogSoftmax": _softmax(fw.log_softmax),
    "ReduceSum": _reduce(_sum), "ReduceMean": _reduce(_mean), "ReduceMax": _reduce(_max),
    "ReduceMin": _reduce(_min), "ReduceProd": _reduce(_prod), "ReduceL1": _reduce(_l1),
    "ReduceL2": _reduce(_l2), "ReduceLogSum": _reduce(_log_sum),
    "ReduceLogSumExp": _reduce(_log_sum_exp), "ReduceSumSquare": _reduce(_sum_square),
    "ArgMax": arg(fw.argmax), "ArgMin": arg(fw.argmin), "CumSum": _scan("cumsum", 0),
    "CumProd": _scan("cumprod", 1), "TopK": topk, "Einsum": einsum,
}
