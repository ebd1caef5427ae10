"""A custom-op plugin: the op "cube" (x ** 3) with its full contract and a CPU kernel."""

from fw_core import define_op, hookimpl
from fw_core.ops import anchors, apply_unary
from fw_core.records import KernelSpec, Structure, TensorSpec


def _meta(x):
    return TensorSpec(tuple(x.shape), x.dtype)


def _vjp(ctx, g):
    x = ctx.inputs[0]
    return (g * x * x * 3,)  # fw ops, so the gradient is itself differentiable


CUBE = define_op(
    "cube", family="custom", doc="x ** 3, elementwise.", signature="cube(x: Tensor) -> Tensor",
    meta=_meta, vjp=_vjp, structure=Structure.ELEMENTWISE,
    anchor=anchors.smooth("smooth; the gradient 3x^2 grows quickly for large |x|"),
    saves=("inputs",))


def cube(x):
    """x ** 3, elementwise (the op "cube" of plugin fw_cube)."""
    return apply_unary(CUBE, x)


def _cube_kernel(x):
    return x * x * x


@hookimpl
def fw_register_ops():
    return [CUBE]


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="cube", device="cpu", fn=_cube_kernel)]
