"""Creation and conversion op cases (values from arguments; dtype and device rules)."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg

_ALL = ("float32", "float64", "float16", "int64", "int32", "uint8", "bool")


def _made(op, name, fn, reference, torch_fn, dtypes=("float32",)):
    return OpCase(op, name, [], fn, reference, torch=torch_fn, dtypes=dtypes, grad=False)


CASES = [
    _made("zeros", "matrix", lambda fw: fw.zeros(2, 3), lambda: np.zeros((2, 3), np.float32),
          lambda torch: torch.zeros(2, 3)),
    _made("zeros", "size0", lambda fw: fw.zeros((0, 3)), lambda: np.zeros((0, 3), np.float32),
          lambda torch: torch.zeros(0, 3)),
    _made("ones", "int", lambda fw: fw.ones(4, dtype=fw.int64), lambda: np.ones(4, np.int64),
          lambda torch: torch.ones(4, dtype=torch.int64)),
    _made("ones", "scalar", lambda fw: fw.ones(()), lambda: np.ones((), np.float32),
          lambda torch: torch.ones(())),
    _made("full", "float", lambda fw: fw.full((2, 2), 1.5), lambda: np.full((2, 2), 1.5,
                                                                           np.float32),
          lambda torch: torch.full((2, 2), 1.5)),
    _made("full", "bool", lambda fw: fw.full((3,), True), lambda: np.full(3, True),
          lambda torch: torch.full((3,), True)),
    _made("arange", "ints", lambda fw: fw.arange(2, 11, 3), lambda: np.arange(2, 11, 3),
          lambda torch: torch.arange(2, 11, 3)),
    _made("arange", "floats", lambda fw: fw.arange(0.0, 1.0, 0.125),
          lambda: np.arange(0, 1, 0.125, dtype=np.float32),
          lambda torch: torch.arange(0.0, 1.0, 0.125)),
    _made("arange", "negative_step", lambda fw: fw.arange(5, 0, -2), lambda: np.arange(5, 0, -2),
          lambda torch: torch.arange(5, 0, -2)),
    _made("linspace", "inclusive", lambda fw: fw.linspace(-1, 1, 5),
          lambda: np.linspace(-1, 1, 5, dtype=np.float32), lambda torch: torch.linspace(-1, 1, 5)),
    # integers: each value truncated toward zero (four zeros here), as PyTorch's
    _made("linspace", "int32_truncates", lambda fw: fw.linspace(5, -5, 20, dtype=fw.int32),
          lambda: np.trunc(np.where(np.arange(20) < 10, 5 - np.arange(20) * 10 / 19,
                                    -5 + (19 - np.arange(20)) * 10 / 19)).astype(np.int32),
          lambda torch: torch.linspace(5, -5, 20, dtype=torch.int32)),
    _made("linspace", "one_step_is_start", lambda fw: fw.linspace(5, 10, 1),
          lambda: np.array([5.0], np.float32), lambda torch: torch.linspace(5, 10, 1)),
    _made("eye", "square", lambda fw: fw.eye(3), lambda: np.eye(3, dtype=np.float32),
          lambda torch: torch.eye(3)),
    _made("eye", "rectangular", lambda fw: fw.eye(2, 4, dtype=fw.float64),
          lambda: np.eye(2, 4), lambda torch: torch.eye(2, 4, dtype=torch.float64)),
    # empty's values are arbitrary: fill them to compare, the meta check covers shape and dtype
    _made("empty", "filled", lambda fw: fw.empty(2, 3).zero_(),
          lambda: np.zeros((2, 3), np.float32), lambda torch: torch.empty(2, 3).zero_()),
    OpCase("cast", "to_float64", [arg(3, 4)], lambda fw, x: x.double(),
           lambda x: x.astype(np.float64), torch=lambda torch, x: x.double(),
           dtypes=("float32", "float16")),
    OpCase("cast", "to_int", [arg(3, 4, low=-5, high=5)], lambda fw, x: x.long(),
           lambda x: x.astype(np.int64), torch=lambda torch, x: x.long(), grad=False),
    OpCase("cast", "to_half_and_back", [arg(2, 3)], lambda fw, x: x.half().float(),
           lambda x: x.astype(np.float16).astype(x.dtype),
           torch=lambda torch, x: x.half().to(x.dtype), dtypes=("float32",),
           grad=False),  # float16 rounding defeats finite differences; to_float64 checks the VJP
    OpCase("clone", "matrix", [arg(3, 4)], lambda fw, x: x.clone(), lambda x: x.copy(),
           torch=lambda torch, x: x.clone(), dtypes=_ALL[:5]),
    OpCase("sum_to", "leading_and_inner", [arg(2, 3, 4)], lambda fw, x: fw.sum_to(x, (3, 1)),
           lambda x: x.sum(axis=(0, 2), keepdims=True)[0],
           torch=lambda torch, x: x.sum_to_size(3, 1)),
    OpCase("sum_to", "scalar", [arg(2, 3)], lambda fw, x: fw.sum_to(x, ()),
           lambda x: np.asarray(x.sum()), torch=lambda torch, x: x.sum()),
    OpCase("broadcast_to", "expand", [arg(3, 1)], lambda fw, x: fw.broadcast_to(x, (2, 3, 4)),
           lambda x: np.broadcast_to(x, (2, 3, 4)),
           torch=lambda torch, x: torch.broadcast_to(x, (2, 3, 4))),
]
