"""Products, convolutions and pooling."""

from __future__ import annotations

from ..graph import GraphBuilder
from .call import Call


def linear(g: GraphBuilder, c: Call) -> None:
    x, weight, bias = (c.inputs + [None])[:3]
    if c.attrs.get("weight_layout") != "in_out":  # fw's [out, in]
        weight = g.one("Transpose", [weight], perm=[1, 0])
    if bias is None:
        g.add("MatMul", [x, weight], [c.out])
    else:
        g.add("Add", [g.one("MatMul", [x, weight]), bias], [c.out])


def matmul(g: GraphBuilder, c: Call) -> None:
    g.add("MatMul", c.inputs[:2], [c.out])


def conv(g: GraphBuilder, c: Call) -> None:
    a = c.attrs
    padding = a["padding"]
    if isinstance(padding, str):
        raise c.refuse(f"padding={padding!r}", "export with numeric padding")
    pads = [p[0] for p in padding] + [p[1] for p in padding]
    g.add("Conv", [i for i in c.inputs if i is not None], [c.out], strides=a["stride"],
          pads=pads, dilations=a["dilation"], group=a["groups"])


def max_pool(g: GraphBuilder, c: Call) -> None:
    a = c.attrs
    padding = list(a["padding"])
    g.add("MaxPool", [c.inputs[0]], [c.out], kernel_shape=a["kernel_size"],
          strides=a["stride"], pads=padding + padding, dilations=a["dilation"],
          ceil_mode=int(a["ceil_mode"]))


def avg_pool(g: GraphBuilder, c: Call) -> None:
    a = c.attrs
    if a.get("divisor_override") is not None:
        raise c.refuse("divisor_override", "pool without divisor_override")
    padding = list(a["padding"])
    g.add("AveragePool", [c.inputs[0]], [c.out], kernel_shape=a["kernel_size"],
          strides=a["stride"], pads=padding + padding, ceil_mode=int(a["ceil_mode"]),
          count_include_pad=int(a["count_include_pad"]))


def adaptive_avg_pool(g: GraphBuilder, c: Call) -> None:
    """Global average pooling for output size 1, else AveragePool where every bin has one
    size (the input a multiple of the output); other bins have no ONNX form."""
    sizes = c.values[0]["shape"][2:]
    outs = c.out_value["shape"][2:]
    if all(o == 1 for o in outs):
        g.add("GlobalAveragePool", [c.inputs[0]], [c.out])
        return
    if not all(isinstance(s, int) and isinstance(o, int) and s % o == 0
               for s, o in zip(sizes, outs)):
        raise c.refuse(f"adaptive bins of {sizes} into {outs}",
                       "pick an output size that divides the input size")
    kernel = [s // o for s, o in zip(sizes, outs)]
    g.add("AveragePool", [c.inputs[0]], [c.out], kernel_shape=kernel, strides=kernel)


CONVERTERS = {"linear": linear, "matmul": matmul, "bmm": matmul,
              **{f"conv{n}d": conv for n in (1, 2, 3)},
              **{f"max_pool{n}d": max_pool for n in (1, 2, 3)},
              **{f"avg_pool{n}d": avg_pool for n in (1, 2, 3)},
              **{f"adaptive_avg_pool{n}d": adaptive_avg_pool for n in (1, 2, 3)}}
