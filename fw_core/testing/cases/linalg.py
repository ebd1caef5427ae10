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
