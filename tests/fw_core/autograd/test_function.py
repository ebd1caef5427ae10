"""fw.autograd.Function: both forward styles, ctx features, multiple outputs, checked
gradients and double backward, against torch.autograd.Function where values are compared."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import AutogradError, FwError


def _cube_class(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=1.0):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad * ctx.scale, None

    return Cube


Cube = _cube_class(fw)
TorchCube = _cube_class(torch)


class Cube2(fw.autograd.Function):
    """torch 2 style: forward without ctx, setup_context fills it."""

    @staticmethod
    def forward(x, scale=1.0):
        return x ** 3 * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad * ctx.scale, None


VALUES = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])


def test_forward_and_backward_match_torch():
    x = fw.tensor(VALUES, requires_grad=True)
    tx = torch.tensor(VALUES, requires_grad=True)
    y, ty = Cube.apply(x, 2.0), TorchCube.apply(tx, 2.0)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    (y * fw.tensor(VALUES)).sum().backward()
    (ty * torch.tensor(VALUES)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("fn", [Cube, Cube2])
def test_gradcheck_and_gradgradcheck(fn):
    x = fw.tensor(VALUES, requires_grad=True)
    assert fw.autograd.gradcheck(lambda t: fn.apply(t, 1.5), (x,))
    assert fw.autograd.gradgradcheck(lambda t: fn.apply(t, 1.5), (x,))


def test_second_derivative_with_create_graph():
    x = fw.tensor(VALUES, requires_grad=True)
    (g,) = fw.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = fw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * VALUES)


def test_keyword_arguments_reach_forward():
    x = fw.tensor(VALUES, requires_grad=True)
    np.testing.assert_allclose(Cube.apply(x, scale=3.0).detach().numpy(), 3 * VALUES ** 3)
    np.testing.assert_allclose(Cube2.apply(x, scale=3.0).detach().numpy(), 3 * VALUES ** 3)


def test_outputs_name_the_function():
    x = fw.tensor(VALUES, requires_grad=True)
    y = Cube.apply(x)
    assert y.op == "Cube"
    assert y.grad_fn.name() == "CubeBackward"
    assert "grad_fn=<CubeBackward>" in repr(y)
    with fw.no_grad():
        assert Cube.apply(x).op == "Cube" and Cube.apply(x).grad_fn is None


def test_needs_input_grad_and_non_tensor_arguments():
    seen = {}

    class Mul(fw.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return (g * b * 2 if ctx.needs_input_grad[0] else None,
                    g * a * 2 if ctx.needs_input_grad[1] else None, None)

    a = fw.tensor([1.0, 2.0], requires_grad=True)
    b = fw.tensor([3.0, 4.0])
    Mul.apply(a, b, 2).sum().backward()
    assert seen["needs"] == (True, False, False)
    assert a.grad.tolist() == [6.0, 8.0]


def _two_outputs():
    class SinCos(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return fw.sin(x), fw.cos(x)

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * fw.cos(x) - gc * fw.sin(x)

    return SinCos


def test_multiple_outputs_materialize_missing_gradients_as_zeros():
    SinCos = _two_outputs()
    x = fw.tensor(VALUES, requires_grad=True)
    s, c = SinCos.apply(x)
    assert s.op == c.op == "SinCos"
    s.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(VALUES))
    x.grad = None
    s, c = SinCos.apply(x)
    (s * 2 + c * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(VALUES) - 3 * np.sin(VALUES))
    assert fw.autograd.gradcheck(lambda t: SinCos.apply(t), (fw.tensor(VALUES,
                                                                       requires_grad=True),))


def test_set_materialize_grads_false_passes_none():
    received = []

    class Two(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, a, b):
            received.append((a is None, b is None))
            return (0 if a is None else a * 2) + (0 if b is None else b * 3)

    x = fw.tensor([1.0, 2.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert received == [(False, True)]
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_non_differentiable_output():
    got = {}

    class MaxWithIndex(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * 2, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            got["mask_grad"] = g_mask.tolist()
            return g * 2

    x = fw.tensor([1.0, -2.0], requires_grad=True)
    value, mask = MaxWithIndex.apply(x)
    assert value.requires_grad and not mask.requires_grad
    value.sum().backward()
    assert got["mask_grad"] == [0.0, 0.0] and x.grad.tolist() == [2.0, 2.0]


def test_integer_outputs_do_not_require_grad():
    class ArgMax(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x.argmax()

        @staticmethod
        def backward(ctx, g, gi):
            return g

    y, i = ArgMax.apply(fw.tensor([1.0, 3.0], requires_grad=True))
    assert y.requires_grad and not i.requires_grad and i.op == "ArgMax"


def test_mark_dirty_makes_the_input_the_output():
    class Double_(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    leaf = fw.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(AutogradError, match="in-place"):
        Double_.apply(leaf)
    z = leaf * 1
    out = Double_.apply(z)
    assert out is z and z.grad_fn.name() == "Double_Backward"
    out.sum().backward()
    # the refused call ran forward first (as torch's does), so leaf holds [2, 4] now
    assert leaf.grad.tolist() == [2.0, 2.0] and z.tolist() == [4.0, 8.0]


def test_an_input_returned_as_is_is_aliased():
    class Identity(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = fw.tensor([1.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [5.0]


def test_wrong_number_of_gradients_names_the_function():
    class Bad(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = fw.tensor([1.0], requires_grad=True)
    with pytest.raises(AutogradError, match=r"BadBackward returned an incorrect number of "
                                            r"gradients \(expected 2, got 1\)"):
        Bad.apply(x, x).sum().backward()


def test_wrong_gradient_shape_names_the_function_and_broadcast_ones_are_summed():
    class Bad(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    class Wide(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(0).expand(2, 3)

    x = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(AutogradError, match=r"BadBackward returned an invalid gradient at "
                                            r"index 0 - got \[1\] but expected shape "
                                            r"compatible with \[3\]") as info:
        Bad.apply(x).sum().backward()
    assert isinstance(info.value, RuntimeError)
    Wide.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_gradient_is_cast_to_the_input_dtype():
    class ToDouble(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.double()

    x = fw.tensor([1.0], requires_grad=True)
    ToDouble.apply(x).sum().backward()
    assert x.grad.dtype is fw.float32


def test_save_for_backward_refuses_non_tensors():
    class Saves(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

    with pytest.raises(TypeError, match="argument 1 is of type int"):
        Saves.apply(fw.tensor([1.0], requires_grad=True))


def test_saved_tensor_modified_in_place_raises():
    x = fw.tensor([1.0, 2.0], requires_grad=True)
    z = x * 1
    y = Cube.apply(z)
    with fw.no_grad():
        z.add_(1)
    with pytest.raises(AutogradError, match="modified in place"):
        y.sum().backward()


def test_backward_twice_without_retain_graph_raises():
    x = fw.tensor([1.0], requires_grad=True)
    y = Cube.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [6.0]
    with pytest.raises(AutogradError, match="second time"):
        y.sum().backward()


def test_instantiating_or_missing_backward_is_an_error():
    with pytest.raises(FwError, match="apply"):
        Cube()

    class NoBackward(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(FwError, match="must define backward"):
        NoBackward.apply(fw.tensor([1.0], requires_grad=True)).sum().backward()


def test_once_differentiable_backward_runs_without_recording():
    class Host(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        @fw.autograd.once_differentiable
        def backward(ctx, g):
            return g * 2

    x = fw.tensor([1.0], requires_grad=True)
    (g,) = fw.autograd.grad(Host.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0] and not g.requires_grad


def test_non_tensor_result_is_returned_as_is():
    class Count(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.numel()

    assert Count.apply(fw.tensor([1.0, 2.0], requires_grad=True)) == 2


def test_multi_output_function_backward_under_an_inspector():
    from fw_core.records import Inspector

    seen = []
    inspector = Inspector(name="test-function-events",
                          on_op=lambda event: seen.append((event.op.name, event.phase)))
    SinCos = _two_outputs()
    x = fw.tensor(VALUES, requires_grad=True)
    with fw.inspectors.activated(inspector):
        s, c = SinCos.apply(x)
        (s + c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(VALUES) - np.sin(VALUES))
    assert ("sum", "backward") in seen  # the recorded ops' VJPs were reported
    assert seen.count(("cos", "forward")) == 2  # forward's cos, and the one backward ran
