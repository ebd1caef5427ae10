"""Teaching mode: a tensor's history, the chain of ops and modules that produced it, in words.

The history is read from the autograd graph the tensor carries (each node keeps its op, its
module path and its input shapes), so it is complete when gradients were recorded. A tensor
made without a graph (``no_grad``, or no input requiring grad) still knows its last op and
module; :func:`history` says so rather than guessing the rest.
"""

from __future__ import annotations

from fw_core.autograd.node import Node

_LIMIT = 40  # steps shown; longer histories keep the latest ones


def history(tensor, limit: int = _LIMIT) -> str:
    """The ops and modules that produced ``tensor``, oldest first, with shapes, in plain words.

    Args:
        tensor: any fw Tensor.
        limit: show at most this many steps (the ones closest to ``tensor``).

    Example::

        >>> print(fw_debugger.history(model(x)))
        float32[2, 3] was made in 3 steps:
          1. linear in module fc (x @ weight^T + bias, ...): takes ...; gives [2, 3]
          ...
    """
    spec = _spec(tensor.shape, tensor.dtype.name)
    node = tensor._node
    if node is None:
        if tensor.op is None:
            kind = "a parameter or input (it requires grad)" if tensor.requires_grad else "data"
            return f"{spec} was made from {kind}, not by an op: it has no history."
        if tensor._op.family == "creation" and tensor._op.vjp is None:
            return f"{spec} was made by {tensor.op}, which creates values: it has no history."
        return (f"{spec} was made by {tensor.op} in {_where(tensor.module)}. Its earlier history "
                "was not recorded (gradients were off, or no input required grad); recompute it "
                "with inputs that require grad to see the whole chain.")
    order, out_shapes = _topological(node, tuple(tensor.shape))
    steps = {id(n): i for i, n in enumerate(order, start=1)}
    lines = [f"{spec} was made in {len(order)} step{'s' * (len(order) != 1)}:"]
    shown = order[-limit:]
    if len(shown) < len(order):
        lines.append(f"  ... {len(order) - len(shown)} earlier step(s) not shown")
    for n in shown:
        inputs = ", ".join(_source(nxt, shape, steps)
                           for nxt, shape in zip(n.next, n.input_shapes))
        lines.append(f"  {steps[id(n)]}. {n.op.name} in {_where(n.module)} "
                     f"({_first_sentence(n)}): takes {inputs}; gives {_shape(out_shapes[id(n)])}")
    return "\n".join(lines)


def _topological(root: Node, root_shape: tuple) -> tuple[list[Node], dict[int, tuple]]:
    """Nodes reachable from ``root``, each after the nodes it reads; their output shapes."""
    order: list[Node] = []
    shapes = {id(root): root_shape}
    seen = {id(root)}
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        stack.append((node, True))
        for nxt, shape in zip(node.next, node.input_shapes):
            if nxt.__class__ is Node:
                shapes.setdefault(id(nxt), shape)
                if id(nxt) not in seen:
                    seen.add(id(nxt))
                    stack.append((nxt, False))
    return order, shapes


def _source(nxt, shape, steps: dict) -> str:
    if nxt is None:
        return f"a {_shape(shape)} tensor that needs no gradient"
    if nxt.__class__ is Node:
        return f"the {_shape(shape)} of step {steps[id(nxt)]}"
    return f"a {nxt.dtype.name}{_shape(shape)} leaf that requires grad"


def _shape(shape) -> str:
    return f"[{', '.join(map(str, shape))}]"


def _spec(shape, dtype: str) -> str:
    return f"{dtype}{_shape(shape)}"


def _where(module: str) -> str:
    return f"module {module}" if module else "no module"


def _first_sentence(node: Node) -> str:
    doc = node.op.doc.strip()
    return doc.split(". ")[0].rstrip(".")
