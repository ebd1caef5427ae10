"""Errors name the op, the module path, what arrived, and a fix."""

import pytest

import fw_core as fw
from fw_core._state import state
from fw_core.errors import DeviceError, FwError, ShapeError, UnsupportedError


def test_broadcast_error_names_op_shapes_module_and_fix():
    state.module_path = "encoder.layers.1.ffn"
    try:
        with pytest.raises(ShapeError) as info:
            fw.ones(3, 4) + fw.ones(5)
    finally:
        state.module_path = ""
    text = str(info.value)
    assert text.startswith("add:")
    assert "(3, 4)" in text and "(5,)" in text
    assert "in module: encoder.layers.1.ffn" in text
    assert "float32[3, 4] on cpu" in text
    assert "fix:" in text


def test_errors_are_also_builtin_exceptions():
    with pytest.raises(ValueError):
        fw.ones(2) * fw.ones(3)
    assert issubclass(fw.errors.DTypeError, TypeError)
    assert issubclass(fw.errors.UnsupportedError, NotImplementedError)


def test_non_tensor_argument_says_to_wrap_it():
    with pytest.raises(FwError, match=r"fw.tensor"):
        fw.exp([1.0, 2.0])


def test_unknown_device_names_the_plugins_to_install():
    # fw-cuda missing: how to install it; installed without a GPU: why it is unavailable
    with pytest.raises(DeviceError, match="pip install fw-cuda|no CUDA device|CuPy"):
        fw.zeros(2, device="cuda")


def test_op_without_kernel_on_device_is_unsupported_with_hint():
    from fw_core.ops.dispatch import apply
    from fw_core.ops.registry import define_op
    from fw_core.records import Structure

    op = define_op("kernel_less_for_test", family="elementwise", doc="no kernels",
                   signature="f(x)", meta=fw.ops.get("neg").meta, vjp=None,
                   structure=Structure.ELEMENTWISE, anchor=fw.ops.get("neg").anchor)
    with pytest.raises(UnsupportedError, match="no kernel for kernel_less_for_test"):
        apply(op, (fw.ones(2),))


def test_where_condition_must_be_bool():
    with pytest.raises(fw.errors.DTypeError, match="condition must be a bool tensor"):
        fw.where(fw.ones(2), fw.ones(2), fw.zeros(2))


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(2) + lib.ones(3),
    lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(2, 3)),
    lambda lib: lib.ones(2, 3).reshape(4),
    lambda lib: lib.ones(3)[5],
    lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3, 2)]),
    lambda lib: lib.where(lib.ones(2), lib.ones(2), lib.ones(2)),
    lambda lib: lib.ones(2, 3).sum(5),
    lambda lib: lib.ones(2, 3).squeeze(-4),
], ids=["add", "matmul", "reshape", "index", "cat", "where-condition", "dim-range",
        "squeeze-dim-range"])
def test_an_error_is_caught_by_the_except_clause_written_for_torch(case):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        case(torch)
    with pytest.raises(FwError) as ours:
        case(fw)
    assert isinstance(ours.value, type(theirs.value)), (type(ours.value).__mro__,
                                                        type(theirs.value))
