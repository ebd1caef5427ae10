"""Reduction op cases: every op over dim None / int / negative / tuple, keepdim, 0-d and
size-0 / size-1 dimensions, and the integer and bool dtypes each op accepts.

References compute in float64 (float16 results are compared within its tolerance).
"""

import numpy as np
from scipy import special

from fw_core.testing.conformance import Input, OpCase, arg, mask, positive

_FLOATS = ("float32", "float64", "float16")
_INTS = ("int64", "int32", "float64")  # an int input draws int64 for a float dtype name: the
# float64 entry lets the torch differential suite (float32/float64 only) compare integer inputs


def ints(*shape):
    """An integer input in [-4, 4) (int32 or int64 as the case's dtype says)."""
    return Input(tuple(shape), "int", -4, 4, grad=False)


def _axis(x, dim):
    """NumPy's axis for a PyTorch dim (a 0-d tensor's only dim is itself)."""
    return None if x.ndim == 0 or dim is None else dim


def _wide(x):
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def _torch_call(name, x, kw, fill_dim):
    """torch's ``name(x, **kw)``; ``fill_dim``: spell dim=None as every dim (torch's sum needs
    a dim for keepdim, logsumexp always)."""
    import torch

    if fill_dim and "dim" not in kw:
        kw = {**kw, "dim": tuple(range(x.ndim))}
    if name == "prod" and isinstance(kw.get("dim"), tuple):  # torch's prod takes one dim
        out = x
        for d in kw["dim"]:
            out = out.prod(d, keepdim=True)
        return out if kw.get("keepdim") else out.squeeze(kw["dim"])
    return getattr(torch, name)(x, **kw)


# (name, shape, keyword arguments): the dims every reduction is checked over
_DIMS = [
    ("all", (3, 4), {}),
    ("dim1", (3, 4), {"dim": 1}),
    ("dim_negative", (2, 3, 4), {"dim": -2}),
    ("dim_tuple", (2, 3, 4), {"dim": (0, 2)}),
    ("dim_tuple_negative", (2, 3, 4), {"dim": (-1, 0)}),
    ("keepdim", (2, 3, 4), {"dim": 1, "keepdim": True}),
    ("all_keepdim", (3, 4), {"keepdim": True}),
    ("scalar", (), {}),
    ("scalar_dim0", (), {"dim": 0}),
    ("size1_dim", (3, 1, 2), {"dim": 1}),
    ("empty_other_dim", (0, 3), {"dim": 1}),
    ("vector", (5,), {"dim": 0}),
]
_ONE_DIM = [c for c in _DIMS if not isinstance(c[2].get("dim"), tuple)]
_WITH_DIM = [c for c in _ONE_DIM if "dim" in c[2]]


def _cases(op, reference, *, variants=_DIMS, inp=arg, dtypes=_FLOATS, extra=None,
           fill_dim=True, **kw):
    """One case per dims variant; the first also runs in ``dtypes``, the others in float32/64.

    reference(x, axis, keepdims) computes the expected values with NumPy.
    """
    extra = extra or {}
    cases = []
    for i, (name, shape, dims) in enumerate(variants):
        args = {**dims, **extra}
        cases.append(OpCase(
            op, name, [inp(*shape)],
            lambda fw, x, _a=args: getattr(fw, op)(x, **_a),
            lambda x, _d=dims: reference(_wide(x), _axis(x, _d.get("dim")),
                                         _d.get("keepdim", False)),
            torch=lambda torch, x, _a=args: _torch_call(op, x, _a, fill_dim),
            dtypes=dtypes if i == 0 else ("float32", "float64"), **kw))
    return cases


def _np(fn, **fixed):
    return lambda x, axis, keepdims: fn(x, axis=axis, keepdims=keepdims, **fixed)


def _logsumexp(x, axis, keepdims):
    return special.logsumexp(x, axis=axis, keepdims=keepdims)


def _norm(p):
    def reference(x, axis, keepdims):
        a = np.abs(x)
        if p == np.inf:
            return a.max(axis=axis, keepdims=keepdims)
        if p == -np.inf:
            return a.min(axis=axis, keepdims=keepdims)
        if p == 0:
            return (a != 0).sum(axis=axis, keepdims=keepdims).astype(x.dtype)
        return (a ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)

    return reference


def _cumsum(x, dim):
    return np.cumsum(x, axis=dim) if x.ndim else x


def _values_indices(op, reduce, arg_reduce):
    """max(x, dim) / min(x, dim): the values (op) and the indices (argmax/argmin) checked apart."""
    cases = []
    for name, shape, dims in _WITH_DIM:
        dim, keepdim = dims["dim"], dims.get("keepdim", False)
        for field, ref, case_op in (("values", reduce, op), ("indices", arg_reduce, "arg" + op)):
            cases.append(OpCase(
                case_op, f"{op}_{field}_{name}", [arg(*shape)],
                lambda fw, x, _d=dim, _k=keepdim, _f=field: getattr(
                    getattr(fw, op)(x, _d, _k), _f),
                lambda x, _d=dim, _k=keepdim, _r=ref: np.asarray(_r(
                    x, axis=_axis(x, _d), keepdims=_k)),
                torch=lambda torch, x, _d=dim, _k=keepdim, _f=field: getattr(
                    getattr(torch, op)(x, _d, _k), _f),
                grad=field == "values"))
    return cases


def _spread_cases(op):
    call = {"var": np.var, "std": np.std}[op]
    return [
        OpCase(op, "correction0", [arg(3, 4)], lambda fw, x: getattr(fw, op)(x, 1, correction=0),
               lambda x: call(_wide(x), 1, ddof=0),
               torch=lambda torch, x: getattr(torch, op)(x, 1, correction=0)),
        OpCase(op, "correction2_tuple", [arg(2, 3, 4)],
               lambda fw, x: getattr(fw, op)(x, (0, 2), correction=2),
               lambda x: call(_wide(x), (0, 2), ddof=2),
               torch=lambda torch, x: getattr(torch, op)(x, (0, 2), correction=2)),
        OpCase(op, "unbiased_false", [arg(3, 4)],
               lambda fw, x: getattr(fw, op)(x, 0, unbiased=False, keepdim=True),
               lambda x: call(_wide(x), 0, ddof=0, keepdims=True),
               torch=lambda torch, x: getattr(torch, op)(x, 0, unbiased=False, keepdim=True)),
        OpCase(op, "legacy_unbiased_positional", [arg(3, 4)],
               lambda fw, x: getattr(x, op)(False), lambda x: call(_wide(x), ddof=0),
               torch=lambda torch, x: getattr(x, op)(False)),
        OpCase(op, "single_element_is_nan", [arg(1, 3)], lambda fw, x: getattr(fw, op)(x, 0),
               lambda x: np.full((3,), np.nan),
               torch=lambda torch, x: getattr(torch, op)(x, 0), grad=False),
        OpCase(op, "too_few_is_inf", [arg(2, 3)],
               lambda fw, x: getattr(fw, op)(x, 0, correction=3),
               lambda x: np.full((3,), np.inf),
               torch=lambda torch, x: getattr(torch, op)(x, 0, correction=3), grad=False),
    ]


_NONEMPTY = [c for c in _DIMS if c[0] != "empty_other_dim"]
_VAR_DIMS = [c for c in _DIMS if c[0] not in ("scalar", "scalar_dim0", "size1_dim")]

CASES = [
    # -- sum, mean, prod ---------------------------------------------------------------------------
    *_cases("sum", _np(np.sum)),
    OpCase("sum", "int_widens", [ints(3, 4)], lambda fw, x: fw.sum(x, 1), lambda x: x.sum(1),
           torch=lambda torch, x: torch.sum(x, 1), dtypes=_INTS, grad=False),
    OpCase("sum", "bool_counts", [mask(3, 4)], lambda fw, x: fw.sum(x, 0),
           lambda x: x.sum(0, dtype=np.int64), torch=lambda torch, x: torch.sum(x, 0),
           dtypes=("bool", "float64"), grad=False),
    OpCase("sum", "dtype_float64", [arg(3, 4)], lambda fw, x: fw.sum(x, dtype=fw.float64),
           lambda x: x.astype(np.float64).sum(), dtypes=("float32",),
           torch=lambda torch, x: torch.sum(x, dtype=torch.float64)),
    OpCase("sum", "empty_all", [arg(0, 3)], lambda fw, x: fw.sum(x), lambda x: np.zeros(()),
           torch=lambda torch, x: torch.sum(x)),
    OpCase("sum", "empty_dim_list", [arg(3, 4)], lambda fw, x: fw.sum(x, ()),
           lambda x: x.sum(), torch=lambda torch, x: torch.sum(x, ())),
    OpCase("sum", "method", [arg(2, 3, 4)], lambda fw, x: x.sum([0, -1], keepdim=True),
           lambda x: x.sum((0, 2), keepdims=True),
           torch=lambda torch, x: x.sum([0, -1], keepdim=True)),
    *_cases("mean", _np(np.mean), variants=_NONEMPTY),
    OpCase("mean", "empty_all", [arg(0, 3)], lambda fw, x: fw.mean(x),
           lambda x: np.full((), np.nan),
           torch=lambda torch, x: torch.mean(x), grad=False),
    OpCase("mean", "int_with_dtype", [ints(3, 4)], lambda fw, x: fw.mean(x, 0, dtype=fw.float64),
           lambda x: x.astype(np.float64).mean(0),
           torch=lambda torch, x: torch.mean(x, 0, dtype=torch.float64), dtypes=_INTS,
           grad=False),
    *_cases("prod", _np(np.prod)),
    OpCase("prod", "int_widens", [ints(3, 4)], lambda fw, x: fw.prod(x, 0), lambda x: x.prod(0),
           torch=lambda torch, x: torch.prod(x, 0), dtypes=_INTS, grad=False),
    OpCase("prod", "bool", [mask(3, 4)], lambda fw, x: fw.prod(x, 1),
           lambda x: x.prod(1, dtype=np.int64), torch=lambda torch, x: torch.prod(x, 1),
           dtypes=("bool",), grad=False),
    OpCase("prod", "empty_all", [arg(0, 3)], lambda fw, x: fw.prod(x), lambda x: np.ones(()),
           torch=lambda torch, x: torch.prod(x)),
    # -- extremes ----------------------------------------------------------------------------------
    *_cases("amax", _np(np.max)),
    *_cases("amin", _np(np.min)),
    OpCase("amax", "int", [ints(3, 4)], lambda fw, x: fw.amax(x, -1), lambda x: x.max(-1),
           torch=lambda torch, x: torch.amax(x, -1), dtypes=_INTS, grad=False),
    OpCase("amin", "bool", [mask(3, 4)], lambda fw, x: fw.amin(x, 0), lambda x: x.min(0),
           torch=lambda torch, x: torch.amin(x, 0), dtypes=("bool", "float64"), grad=False),
    OpCase("max", "without_dim", [arg(3, 4)], lambda fw, x: fw.max(x), lambda x: x.max(),
           torch=lambda torch, x: torch.max(x), dtypes=_FLOATS),
    OpCase("min", "method_without_dim", [arg(3, 4)], lambda fw, x: x.min(), lambda x: x.min(),
           torch=lambda torch, x: x.min()),
    OpCase("max", "scalar_without_dim", [arg()], lambda fw, x: x.max(), lambda x: x,
           torch=lambda torch, x: x.max()),
    *_values_indices("max", np.max, np.argmax),
    *_values_indices("min", np.min, np.argmin),
    OpCase("max", "int_dim", [ints(3, 4)], lambda fw, x: fw.max(x, 1).values,
           lambda x: x.max(1), torch=lambda torch, x: torch.max(x, 1).values, dtypes=_INTS,
           grad=False),
    OpCase("maximum", "max_with_tensor", [arg(3, 4), arg(4)], lambda fw, a, b: fw.max(a, b),
           np.maximum, torch=lambda torch, a, b: torch.max(a, b)),
    OpCase("minimum", "min_method_tensor", [arg(3, 4), arg(3, 1)], lambda fw, a, b: a.min(b),
           np.minimum, torch=lambda torch, a, b: a.min(b)),
    # -- argmax / argmin ---------------------------------------------------------------------------
    *_cases("argmax", _np(np.argmax), variants=_ONE_DIM, grad=False, fill_dim=False),
    *_cases("argmin", _np(np.argmin), variants=_ONE_DIM, grad=False, fill_dim=False),
    OpCase("argmax", "int", [ints(4, 5)], lambda fw, x: fw.argmax(x, 0), lambda x: x.argmax(0),
           torch=lambda torch, x: torch.argmax(x, 0), dtypes=_INTS, grad=False),
    OpCase("argmin", "int_flat_keepdim", [ints(4, 5)], lambda fw, x: x.argmin(keepdim=True),
           lambda x: x.argmin(keepdims=True), torch=lambda torch, x: x.argmin(keepdim=True),
           dtypes=_INTS, grad=False),
    # -- var / std ---------------------------------------------------------------------------------
    *_cases("var", _np(np.var, ddof=1), variants=_VAR_DIMS),
    *_cases("std", _np(np.std, ddof=1), variants=_VAR_DIMS),
    *_spread_cases("var"),
    *_spread_cases("std"),
    # -- logsumexp ---------------------------------------------------------------------------------
    *_cases("logsumexp", _logsumexp, variants=[c for c in _DIMS if c[1]]),
    OpCase("logsumexp", "large_values_stable", [arg(3, 4, low=500, high=900)],
           lambda fw, x: fw.logsumexp(x, 1), lambda x: special.logsumexp(_wide(x), 1),
           torch=lambda torch, x: torch.logsumexp(x, 1)),
    OpCase("logsumexp", "very_negative_stable", [arg(3, 4, low=-900, high=-500)],
           lambda fw, x: fw.logsumexp(x, (0, 1)), lambda x: special.logsumexp(_wide(x)),
           torch=lambda torch, x: torch.logsumexp(x, (0, 1))),
    OpCase("logsumexp", "empty_dim_is_minus_inf", [arg(3, 0)], lambda fw, x: fw.logsumexp(x, 1),
           lambda x: np.full((3,), -np.inf), torch=lambda torch, x: torch.logsumexp(x, 1)),
    OpCase("logsumexp", "scalar_dim0", [arg()], lambda fw, x: fw.logsumexp(x, 0),
           lambda x: x, torch=lambda torch, x: torch.logsumexp(x, 0)),
    OpCase("logsumexp", "int_gives_float", [ints(3, 4)], lambda fw, x: fw.logsumexp(x, 1),
           lambda x: special.logsumexp(x.astype(np.float64), 1),
           torch=lambda torch, x: torch.logsumexp(x, 1), dtypes=_INTS, grad=False,
           tolerance={t: (1e-5, 1e-5) for t in _INTS}),  # a float32 result
    # -- norm --------------------------------------------------------------------------------------
    *_cases("norm", _norm(2)),
    *_cases("norm", _norm(1), variants=[("p1_" + n, s, d) for n, s, d in _DIMS[:6]],
            extra={"p": 1}),
    *_cases("norm", _norm(np.inf), variants=[("inf_" + n, s, d) for n, s, d in _DIMS[:6]],
            extra={"p": float("inf")}),
    *_cases("norm", _norm(-np.inf), variants=[("neg_inf_" + n, s, d) for n, s, d in _DIMS[1:3]],
            extra={"p": float("-inf")}),
    *_cases("norm", _norm(3), variants=[("p3_" + n, s, d) for n, s, d in _DIMS[:6]],
            extra={"p": 3}),
    *_cases("norm", _norm(0.5), variants=[("p_half_" + n, s, d) for n, s, d in _DIMS[1:3]],
            extra={"p": 0.5}, inp=positive),
    *_cases("norm", _norm(0), variants=[("p0_" + n, s, d) for n, s, d in _DIMS[1:3]],
            extra={"p": 0}, grad=False),
    OpCase("norm", "fro_two_dims", [arg(2, 3, 4)], lambda fw, x: fw.norm(x, "fro", (1, 2)),
           lambda x: np.sqrt((_wide(x) ** 2).sum((1, 2))),
           torch=lambda torch, x: torch.norm(x, "fro", (1, 2))),
    OpCase("norm", "method_default", [arg(3, 4)], lambda fw, x: x.norm(),
           lambda x: np.linalg.norm(_wide(x)), torch=lambda torch, x: x.norm()),
    OpCase("norm", "empty_is_zero", [arg(0, 3)], lambda fw, x: fw.norm(x), lambda x: np.zeros(()),
           torch=lambda torch, x: torch.norm(x), grad=False),
    # -- all / any ---------------------------------------------------------------------------------
    *_cases("all", _np(np.all), inp=mask, dtypes=("bool", "float64"), grad=False),
    *_cases("any", _np(np.any), inp=mask, dtypes=("bool", "float64"), grad=False),
    OpCase("all", "float_nonzero", [arg(3, 4)], lambda fw, x: fw.all(x, 1), lambda x: x.all(1),
           torch=lambda torch, x: torch.all(x, 1), grad=False),
    OpCase("any", "int_keepdim", [ints(3, 4)], lambda fw, x: x.any(0, keepdim=True),
           lambda x: x.any(0, keepdims=True), torch=lambda torch, x: x.any(0, keepdim=True),
           dtypes=_INTS, grad=False),
    OpCase("all", "empty_is_true", [mask(0, 3)], lambda fw, x: fw.all(x), lambda x: np.True_,
           torch=lambda torch, x: torch.all(x), dtypes=("bool",), grad=False),
    # -- cumsum ------------------------------------------------------------------------------------
    *[OpCase("cumsum", name, [arg(*shape)], lambda fw, x, _d=dim: fw.cumsum(x, _d),
             lambda x, _d=dim: _cumsum(_wide(x), _d),
             torch=lambda torch, x, _d=dim: torch.cumsum(x, _d),
             dtypes=_FLOATS if name == "dim0" else ("float32", "float64"))
      for name, shape, dim in (("dim0", (4, 3), 0), ("dim1", (4, 3), 1),
                               ("dim_negative", (2, 3, 4), -1), ("vector", (6,), 0),
                               ("scalar", (), 0), ("size1", (1, 3), 0), ("empty", (0, 3), 0))],
    OpCase("cumsum", "int_widens", [ints(3, 4)], lambda fw, x: fw.cumsum(x, 1),
           lambda x: np.cumsum(x, 1, dtype=np.int64), torch=lambda torch, x: torch.cumsum(x, 1),
           dtypes=_INTS, grad=False),
    OpCase("cumsum", "bool_counts", [mask(3, 4)], lambda fw, x: x.cumsum(0),
           lambda x: np.cumsum(x, 0, dtype=np.int64), torch=lambda torch, x: x.cumsum(0),
           dtypes=("bool", "float64"), grad=False),
    OpCase("cumsum", "dtype_float64", [arg(5)], lambda fw, x: fw.cumsum(x, 0, dtype=fw.float64),
           lambda x: np.cumsum(x.astype(np.float64)), dtypes=("float32",),
           torch=lambda torch, x: torch.cumsum(x, 0, dtype=torch.float64)),
    # -- unreduce: the glue of every reduction's VJP -----------------------------------------------
    OpCase("unreduce", "middle_dim", [arg(3, 2)],
           lambda fw, x: fw.ops.reduction.unreduce(x, (3, 4, 2), 1),
           lambda x: np.broadcast_to(x[:, None, :], (3, 4, 2)),
           torch=lambda torch, x: x.unsqueeze(1).expand(3, 4, 2)),
    OpCase("unreduce", "two_dims", [arg(4)],
           lambda fw, x: fw.ops.reduction.unreduce(x, (2, 4, 3), (0, 2)),
           lambda x: np.broadcast_to(x[None, :, None], (2, 4, 3)),
           torch=lambda torch, x: x[None, :, None].expand(2, 4, 3)),
]
