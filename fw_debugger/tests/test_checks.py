"""gradcheck/gradgradcheck naming the op, and declared Jacobian structures against measured ones."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import define_op, hookimpl
from fw_core.ops import anchors
from fw_core.records import KernelSpec, Structure, TensorSpec
from fw_debugger.checks import GradcheckError, check_structure, gradcheck, gradgradcheck


def _same(x):
    return TensorSpec(tuple(x.shape), x.dtype)


def _cumsum_vjp(ctx, g):
    return (fw.flip(fw.cumsum(fw.flip(g, 0), 0), 0),)  # the true VJP of a running sum


# declares ELEMENTWISE but each output is a running sum: a planted wrong structure
LIAR = define_op("liar_cumsum", family="custom", doc="running sum (declared elementwise: wrong)",
                 signature="liar_cumsum(x: Tensor) -> Tensor", meta=_same, vjp=_cumsum_vjp,
                 structure=Structure.ELEMENTWISE, anchor=anchors.smooth())
# x ** 3 with a planted wrong gradient (2x^2 instead of 3x^2)
BADCUBE = define_op("bad_cube", family="custom", doc="x ** 3 with a wrong vjp",
                    signature="bad_cube(x: Tensor) -> Tensor", meta=_same,
                    vjp=lambda ctx, g: (g * ctx.inputs[0] * ctx.inputs[0] * 2,),
                    structure=Structure.ELEMENTWISE, anchor=anchors.smooth(), saves=("inputs",))


class _Plugin:
    """The two ops above, registered in-process like an installed plugin."""

    @hookimpl
    def fw_register_ops(self):
        return [LIAR, BADCUBE]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op="liar_cumsum", device="cpu", fn=lambda x: np.cumsum(x, axis=0)),
                KernelSpec(op="bad_cube", device="cpu", fn=lambda x: x * x * x)]


@pytest.fixture(scope="module")
def custom_ops():
    fw.plugins.register(_Plugin(), "d3_test_ops")
    yield
    fw.plugins.unregister("d3_test_ops")


@pytest.mark.parametrize("op, inputs, attrs", [
    ("relu", [np.array([[0.5, -1.0, 2.0], [-0.3, 0.7, 1.5]])], {}),
    ("add", [np.ones((2, 3)), np.arange(3.0)], {}),
    ("reshape", [np.arange(6.0).reshape(2, 3)], {"shape": (3, 2)}),
    ("sum", [np.arange(6.0).reshape(2, 3)], {"dim": (1,), "keepdim": False}),
    ("gt", [np.ones(3), np.zeros(3)], {}),
])
def test_builtin_structures_hold(op, inputs, attrs):
    result = check_structure(op, *[fw.tensor(a) for a in inputs], **attrs)
    assert result.ok, str(result)
    assert result.op == op and result.declared is fw.ops.get(op).structure


def test_density_of_a_reduction_is_reported():
    result = check_structure("sum", fw.ones(2, 3), dim=(1,), keepdim=False)
    assert result.ok and result.density == pytest.approx(0.5)
    assert "reduction" in str(result)


def test_wrong_declared_structure_is_caught(custom_ops):
    result = check_structure("liar_cumsum", fw.tensor([1.0, 2.0, 3.0]))
    assert not result
    input_index, out_el, in_el, value = result.entry
    assert (input_index, out_el, in_el, value) == (0, 1, 0, 1.0)  # out[1] = x[0] + x[1]
    assert "output element 1 depends on element 0" in result.message
    assert "CONTRADICTS" in str(result) and "liar_cumsum" in str(result)
    # the kernel itself (finite differences) shows the same
    assert not check_structure(LIAR, fw.tensor([1.0, 2.0, 3.0]), method="numerical")


def test_injective_rejects_a_scaled_copy():
    # mul by 2 declared BROADCAST passes; checked as if INJECTIVE it must fail (entry 2, not 1)
    from fw_debugger.checks import _check_injective
    ok, message, entry = _check_injective([np.eye(3) * 2])
    assert not ok and entry == (0, 0, 0, 2.0) and "derivative 1" in message


def test_gradcheck_passes_for_correct_ops_in_float64():
    x = fw.tensor([0.3, -1.2, 2.0])  # float32: converted to float64 by the checker
    assert gradcheck("sigmoid", [x])
    assert gradgradcheck(fw.tanh, [x])


def test_gradcheck_names_the_op_with_a_wrong_vjp(custom_ops):
    with pytest.raises(GradcheckError) as info:
        gradcheck("bad_cube", [fw.tensor([0.5, 1.5])])
    assert info.value.op == "bad_cube" and "Jacobian mismatch" in str(info.value)
    assert gradcheck("bad_cube", [fw.tensor([0.5, 1.5])], raise_exception=False) is False
