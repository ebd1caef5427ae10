"""Linear algebra cases: matmul's rank rules, bmm, einsum equations, outer and linear."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg

_NUMERIC = ("float32", "float64", "float16", "int64", "int32")


def _matmul(name, a, b, dtypes=("float32", "float64")):
    return OpCase("matmul", name, [arg(*a), arg(*b)], lambda fw, x, y: fw.matmul(x, y),
                  lambda x, y: np.asarray(np.matmul(x, y)),
                  torch=lambda torch, x, y: torch.matmul(x, y), dtypes=dtypes)


def _einsum(name, equation, *shapes, reference=None, dtypes=("float32", "float64")):
    return OpCase("einsum", name, [arg(*s) for s in shapes],
                  lambda fw, *xs: fw.einsum(equation, *xs),
                  reference or (lambda *xs: np.asarray(np.einsum(equation, *xs))),
                  torch=lambda torch, *xs: torch.einsum(equation, *xs), dtypes=dtypes)


def _linear_ref(x, w, b=None):
    out = x.astype(np.float64) @ w.astype(np.float64).T
    return (out if b is None else out + b).astype(x.dtype)


def _linear(name, x, w, bias=True, dtypes=("float32", "float64")):
    inputs = [arg(*x), arg(*w)] + ([arg(w[0])] if bias else [])
    return OpCase("linear", name, inputs, lambda fw, *t: fw.linear(*t), _linear_ref,
                  torch=lambda torch, *t: torch.nn.functional.linear(*t), dtypes=dtypes)


CASES = [
    _matmul("matrix", (3, 4), (4, 5), dtypes=_NUMERIC),
    _matmul("dot", (4,), (4,), dtypes=_NUMERIC),
    _matmul("vector_matrix", (4,), (4, 5)),
    _matmul("matrix_vector", (3, 4), (4,)),
    _matmul("batched", (2, 3, 4), (2, 4, 5)),
    _matmul("broadcast_batch", (2, 1, 3, 4), (3, 4, 2)),
    _matmul("batch_times_matrix", (2, 3, 4), (4, 2)),
    _matmul("vector_times_batch", (4,), (2, 4, 3)),
    _matmul("batch_times_vector", (2, 3, 4), (4,)),
    _matmul("empty_rows", (0, 4), (4, 3)),
    _matmul("empty_inner", (3, 0), (0, 2)),
    OpCase("matmul", "operator", [arg(3, 4), arg(4, 2)], lambda fw, x, y: x @ y, np.matmul,
           torch=lambda torch, x, y: x @ y),
    OpCase("bmm", "batched", [arg(2, 3, 4), arg(2, 4, 5)], lambda fw, x, y: fw.bmm(x, y),
           np.matmul, torch=lambda torch, x, y: torch.bmm(x, y),
           dtypes=("float32", "float64", "float16")),
    OpCase("outer", "vectors", [arg(3), arg(4)], lambda fw, x, y: fw.outer(x, y), np.outer,
           torch=lambda torch, x, y: torch.outer(x, y), dtypes=_NUMERIC),
    OpCase("outer", "empty", [arg(0), arg(4)], lambda fw, x, y: fw.outer(x, y), np.outer,
           torch=lambda torch, x, y: torch.outer(x, y)),
    # the equations a transformer uses, and the rest of the notation
    _einsum("batched_matmul", "bij,bjk->bik", (2, 3, 4), (2, 4, 5),
            dtypes=("float32", "float64", "float16", "int64")),
    _einsum("attention_scores", "bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    _einsum("attention_values", "bhqk,bhkd->bhqd", (2, 2, 3, 5), (2, 2, 5, 4)),
    _einsum("transpose", "ij->ji", (3, 4)),
    _einsum("outer", "i,j->ij", (3,), (4,)),
    _einsum("ellipsis", "...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
    _einsum("ellipsis_broadcast", "...ij,...jk->...ik", (2, 1, 3, 4), (3, 4, 2),
            reference=lambda a, b: np.matmul(a, b)),
    _einsum("ellipsis_summed", "...i,...i->i", (2, 3, 4), (4,),
            reference=lambda a, b: (a * b).reshape(-1, 4).sum(0)),
    _einsum("implicit_output", "ij,jk", (3, 4), (4, 2)),
    _einsum("sum_all", "ij->", (3, 4)),
    _einsum("row_sums", "ij->i", (3, 4)),
    _einsum("dot", "i,i->", (5,), (5,)),
    _einsum("diagonal", "ii->i", (4, 4)),
    _einsum("trace", "ii", (4, 4)),
    _einsum("slice_traces", "iij->j", (3, 3, 2)),
    _einsum("diagonal_times_matrix", "ii,ij->j", (3, 3), (3, 4)),
    _einsum("elementwise_then_sum", "ij,ij->i", (3, 4), (3, 4)),
    _einsum("summed_in_one_operand", "ij,k->ik", (3, 4), (2,)),
    _einsum("size1_broadcast", "ij,ij->ij", (3, 1), (3, 4)),
    _einsum("contracted_size1", "ij,jk->ik", (3, 1), (4, 2),
            reference=lambda a, b: a @ np.broadcast_to(b.sum(0, keepdims=True), (1, 2))),
    _einsum("three_operands", "ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _einsum("permuted_output", "bqhd,bkhd->bhqk", (2, 3, 2, 4), (2, 5, 2, 4)),
    _einsum("scalar_operand", ",ij->ij", (), (2, 3)),
    # linear: the fused x @ W^T + b
    _linear("bias", (5, 3), (4, 3), dtypes=("float32", "float64", "float16")),
    _linear("no_bias", (5, 3), (4, 3), bias=False),
    _linear("batched", (2, 3, 4), (5, 4)),
    _linear("vector_input", (3,), (2, 3)),
    _linear("empty_batch", (0, 3), (2, 3)),
]


def _kron(a, b):
    return np.kron(a, b)


def _cross(a, b, dim):
    return np.cross(a, b, axis=dim)


def _cdist(x1, x2, p):
    difference = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == np.inf:
        return difference.max(-1)
    return (difference ** p).sum(-1) ** (1 / p)


def _scaled(beta, alpha):
    return lambda c, a, b: beta * c + alpha * (a @ b)


# products composed from matmul/bmm (linalg_composed) and cdist (distance), by their ops
CASES += [
    OpCase("matmul", "mm", [arg(3, 4), arg(4, 2)], lambda fw, a, b: fw.mm(a, b), np.matmul,
           torch=lambda torch, a, b: torch.mm(a, b)),
    OpCase("matmul", "mv", [arg(3, 4), arg(4)], lambda fw, a, b: a.mv(b), np.matmul,
           torch=lambda torch, a, b: torch.mv(a, b)),
    OpCase("matmul", "dot", [arg(5), arg(5)], lambda fw, a, b: fw.dot(a, b), np.dot,
           torch=lambda torch, a, b: torch.dot(a, b)),
    OpCase("matmul", "addmm_scaled", [arg(3, 2), arg(3, 4), arg(4, 2)],
           lambda fw, c, a, b: fw.addmm(c, a, b, beta=0.5, alpha=2.0), _scaled(0.5, 2.0),
           torch=lambda torch, c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0)),
    OpCase("matmul", "addmm_broadcast_input", [arg(2), arg(3, 4), arg(4, 2)],
           lambda fw, c, a, b: c.addmm(a, b), _scaled(1, 1),
           torch=lambda torch, c, a, b: c.addmm(a, b)),
    OpCase("matmul", "addmv", [arg(3), arg(3, 4), arg(4)],
           lambda fw, c, a, b: fw.addmv(c, a, b, alpha=-1.5), _scaled(1, -1.5),
           torch=lambda torch, c, a, b: torch.addmv(c, a, b, alpha=-1.5)),
    OpCase("bmm", "baddbmm", [arg(2, 3, 2), arg(2, 3, 4), arg(2, 4, 2)],
           lambda fw, c, a, b: fw.baddbmm(c, a, b, beta=2.0), _scaled(2.0, 1),
           torch=lambda torch, c, a, b: torch.baddbmm(c, a, b, beta=2.0)),
    OpCase("bmm", "addbmm", [arg(3, 2), arg(2, 3, 4), arg(2, 4, 2)],
           lambda fw, c, a, b: fw.addbmm(c, a, b), lambda c, a, b: c + (a @ b).sum(0),
           torch=lambda torch, c, a, b: torch.addbmm(c, a, b)),
    *[OpCase("mul", f"kron_{name}", [arg(*sa), arg(*sb)], lambda fw, a, b: fw.kron(a, b), _kron,
             torch=lambda torch, a, b: torch.kron(a, b))
      for name, sa, sb in (("matrices", (2, 3), (3, 2)), ("ranks_differ", (2,), (2, 3)),
                           ("3d", (2, 1, 2), (1, 3, 2)))],
    *[OpCase("mul", f"cross_dim{dim}", [arg(*sa), arg(*sb)],
             lambda fw, a, b, d=dim: fw.cross(a, b, dim=d),
             lambda a, b, d=dim: _cross(*np.broadcast_arrays(a, b), d),
             torch=lambda torch, a, b, d=dim: torch.cross(a, b, dim=d))
      for dim, sa, sb in ((-1, (4, 3), (4, 3)), (0, (3, 2), (3, 1)), (1, (2, 3, 2), (1, 3, 2)))],
    *[OpCase("norm", f"cdist_p{p}", [arg(2, 4, 3), arg(2, 5, 3)],
             lambda fw, a, b, p=p: fw.cdist(a, b, p=p), lambda a, b, p=p: _cdist(a, b, p),
             torch=lambda torch, a, b, p=p: torch.cdist(a, b, p=p))
      for p in (2.0, 1.0, 3.0, np.inf)],
    OpCase("norm", "cdist_broadcast_batch", [arg(4, 3), arg(2, 5, 3)],
           lambda fw, a, b: fw.cdist(a, b), lambda a, b: _cdist(a, b, 2.0),
           torch=lambda torch, a, b: torch.cdist(a, b)),
]
