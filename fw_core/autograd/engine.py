"""Reverse-mode differentiation over the recorded nodes: ``backward`` and ``grad``.

A backward pass runs in the calling thread, with that thread's grad mode and inspectors. Threads
may run backward passes at once, also into shared leaves: a leaf's ``.grad`` is replaced only
under :data:`_accumulating` and only if no other thread replaced it since it was read, so no
thread's gradient is lost (see :func:`_accumulate`).

A leaf may carry post-accumulate hooks (:func:`register_post_accumulate_grad_hook`): called once
per backward pass, when the last gradient that pass sends to the leaf has been added to its
``.grad`` (data-parallel training starts a gradient all-reduce there). Their table is empty
unless someone registers one, so a backward pass without them pays one falsy test per leaf.
"""

from __future__ import annotations

import threading
import weakref

from .. import capture
from .._state import state
from ..errors import AutogradError, ShapeError
from ..memory import track
from .node import Node

#: held while a leaf's ``.grad`` is compared and replaced: two threads whose backward passes
#: reach one parameter would otherwise each add to the old value and drop the other's sum
_accumulating = threading.Lock()
#: id(leaf) -> the hooks to call once the leaf's .grad is final in a backward pass
_post_accumulate: dict[int, list] = {}


def register_post_accumulate_grad_hook(leaf, hook):
    """Call ``hook(leaf)`` once per backward pass, after the pass's last gradient for the leaf
    tensor ``leaf`` has been accumulated into ``leaf.grad`` (PyTorch's
    ``Tensor.register_post_accumulate_grad_hook``). Returns a handle with ``remove()``.

    Raises:
        AutogradError: ``leaf`` is not a leaf that requires grad.
    """
    if not leaf.requires_grad or leaf._node is not None:
        raise AutogradError("a post-accumulate-grad hook needs a leaf tensor that requires grad",
                            hint="register it on a parameter (or a tensor made with "
                                 "requires_grad=True), not on the result of an op")
    key = id(leaf)
    if key not in _post_accumulate:
        _post_accumulate[key] = []
        weakref.finalize(leaf, _post_accumulate.pop, key, None)
    hooks = _post_accumulate[key]
    hooks.append(hook)
    return _PostAccumulateHandle(key, hook)


class _PostAccumulateHandle:
    __slots__ = ("_key", "_hook")

    def __init__(self, key, hook):
        self._key, self._hook = key, hook

    def remove(self) -> None:
        hooks = _post_accumulate.get(self._key)
        if hooks is not None and self._hook in hooks:
            hooks.remove(self._hook)
            if not hooks:
                del _post_accumulate[self._key]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad`` (see :meth:`Tensor.backward`).

    Args:
        tensors: a tensor or a sequence of tensors to differentiate.
        grad_tensors: the gradients w.r.t. ``tensors`` (default: ones, only for scalars).
        retain_graph: keep saved values for another backward (default: ``create_graph``).
        create_graph: record the backward pass itself, for higher-order gradients.
        inputs: if given, accumulate only into these leaves.
    """
    roots, seeds = _roots_and_seeds(tensors, grad_tensors)
    targets = None if inputs is None else _as_list(inputs)
    _run(roots, seeds, retain_graph, create_graph, targets, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    Args:
        outputs: tensor(s) to differentiate.
        inputs: tensor(s) to differentiate with respect to (leaves or intermediate results).
        grad_outputs: gradients w.r.t. ``outputs`` (default: ones, only for scalars).
        retain_graph: keep saved values for another backward (default: ``create_graph``).
        create_graph: record the computation, so the result can be differentiated again.
        allow_unused: return None for inputs the outputs do not depend on instead of raising.

    Returns:
        A tuple with one gradient per input.
    """
    roots, seeds = _roots_and_seeds(outputs, grad_outputs)
    targets = _as_list(inputs)
    for t in targets:
        if not t.requires_grad:
            raise AutogradError(
                f"an input of shape {tuple(t.shape)} does not require grad",
                hint="call .requires_grad_() on it before computing the outputs",
            )
    found = _run(roots, seeds, retain_graph, create_graph, targets, accumulate=False)
    result = []
    for t in targets:
        g = found.get(id(t._node) if t._node is not None else id(t))
        if g is None and not allow_unused:
            raise AutogradError(
                f"an input of shape {tuple(t.shape)} was not used to compute the outputs",
                hint="pass allow_unused=True to get None for it",
            )
        result.append(g)
    return tuple(result)


def _as_list(x):
    from ..tensor import Tensor

    return [x] if isinstance(x, Tensor) else list(x)


def _roots_and_seeds(tensors, grad_tensors):
    from ..ops.creation import ones_like

    roots = _as_list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(roots)
    else:
        grad_tensors = _as_list(grad_tensors)
    seeds = []
    for t, g in zip(roots, grad_tensors):
        if not t.requires_grad:
            raise AutogradError(
                f"tensor of shape {tuple(t.shape)} does not require grad and has no grad_fn",
                hint="make sure a leaf it depends on has requires_grad=True and that the "
                "computation did not run under fw.no_grad()",
            )
        if g is None:
            if t._data.size != 1:
                raise AutogradError(
                    f"grad can be implicitly created only for scalar outputs, got shape "
                    f"{tuple(t.shape)}",
                    hint="reduce it first (loss.sum() or loss.mean()) or pass a gradient: "
                    "y.backward(fw.ones_like(y))",
                )
            g = ones_like(t)
        elif tuple(g.shape) != tuple(t.shape):
            raise ShapeError(f"gradient of shape {tuple(g.shape)} given for a tensor of shape "
                             f"{tuple(t.shape)}", hint="pass a gradient of the output's shape")
        seeds.append(g)
    return roots, seeds


def _graph_order(root_nodes):
    """Count, for every reachable node, how many edges lead into it from other nodes."""
    dependencies: dict[int, int] = {}
    seen = set()
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for nxt in node.next:
            if nxt.__class__ is Node:
                dependencies[id(nxt)] = dependencies.get(id(nxt), 0) + 1
                stack.append(nxt)
            elif _post_accumulate and id(nxt) in _post_accumulate:
                dependencies[id(nxt)] = dependencies.get(id(nxt), 0) + 1
    return dependencies


def _run(roots, seeds, retain_graph, create_graph, targets, accumulate):

    if retain_graph is None:
        retain_graph = create_graph
    wanted = None
    if targets is not None:
        wanted = {id(t._node) if t._node is not None else id(t) for t in targets}
    found: dict[int, object] = {}
    # arrays already handed to a leaf (or owned by the caller): a second owner gets a copy, so
    # an in-place update of one .grad (clip_grad_norm_) never changes another
    delivered = {id(g._data) for g in seeds}

    pending: dict[int, object] = {}  # id(node) -> accumulated output gradient
    nodes: dict[int, Node] = {}
    leaves = []
    for t, g in zip(roots, seeds):
        if t._node is None:  # a leaf differentiated w.r.t. itself
            leaves.append((t, g))
            continue
        key = id(t._node)
        nodes[key] = t._node
        pending[key] = pending[key] + g if key in pending else g
    dependencies = _graph_order(list(nodes.values()))
    ready = [n for k, n in nodes.items() if dependencies.get(k, 0) == 0]

    if state.observed:
        for inspector in state.inspectors:
            if inspector.on_backward is not None:
                inspector.on_backward(roots)
    outer, state.in_backward = state.in_backward, True
    try:
        with capture.backward():
            _propagate(ready, pending, dependencies, wanted, found, leaves, retain_graph,
                       create_graph, accumulate, delivered)
    finally:
        state.in_backward = outer
    return found


def _propagate(ready, pending, dependencies, wanted, found, leaves, retain_graph, create_graph,
               accumulate, delivered):
    from .grad_mode import set_grad_enabled

    with set_grad_enabled(create_graph):
        for leaf, g in leaves:
            _deliver_leaf(leaf, g, wanted, found, accumulate, create_graph, delivered)
            if accumulate and _post_accumulate and id(leaf) not in dependencies:
                _after_accumulate(leaf, wanted)
        while ready:
            node = ready.pop()
            key = id(node)
            g = pending.pop(key)
            if node.hooks:
                for hook in node.hooks:
                    replaced = hook(g)
                    if replaced is not None:
                        g = replaced
            if wanted is not None and key in wanted:
                found[key] = g
            grads = _call_vjp(node, g)
            if not retain_graph:
                node.release()
            for nxt, gi in zip(node.next, grads):
                if nxt is None:
                    continue
                if gi is None:
                    if _post_accumulate and nxt.__class__ is not Node:
                        _leaf_edge_done(nxt, dependencies, wanted, accumulate)
                    continue
                if nxt.__class__ is Node:
                    nkey = id(nxt)
                    pending[nkey] = pending[nkey] + gi if nkey in pending else gi
                    dependencies[nkey] -= 1
                    if dependencies[nkey] == 0:
                        ready.append(nxt)
                else:
                    _deliver_leaf(nxt, gi, wanted, found, accumulate, create_graph, delivered)
                    if _post_accumulate:
                        _leaf_edge_done(nxt, dependencies, wanted, accumulate)


def _leaf_edge_done(leaf, dependencies, wanted, accumulate):
    """One edge into ``leaf`` has delivered (or sent no gradient); after its last one, the
    leaf's post-accumulate hooks run."""
    key = id(leaf)
    if key not in dependencies:
        return
    dependencies[key] -= 1
    if dependencies[key] == 0 and accumulate:
        _after_accumulate(leaf, wanted)


def _after_accumulate(leaf, wanted):
    if wanted is not None and id(leaf) not in wanted:
        return
    for hook in list(_post_accumulate.get(id(leaf), ())):
        hook(leaf)


def _call_vjp(node, g):
    op = node.op
    if op.vjp is None:
        raise AutogradError(f"{op.name} is not differentiable", op=op.name,
                            module=node.module or None,
                            hint="detach() its inputs, or use a differentiable formulation")
    node._check_alive()
    # ops the VJP runs are attributed to the module whose forward recorded the node
    previous, state.module_path = state.module_path, node.module
    outer, state.vjp_node = state.vjp_node, node
    try:
        grads = op.vjp(node, g)
    finally:
        state.module_path = previous
        state.vjp_node = outer
    if len(grads) != len(node.next):
        raise AutogradError(f"VJP returned {len(grads)} gradients for {len(node.next)} inputs",
                            op=op.name, hint="return one gradient (or None) per input")
    for gi, shape in zip(grads, node.input_shapes):
        if gi is not None and shape is not None and gi._data.shape != shape:
            raise AutogradError(
                f"VJP returned a gradient of shape {tuple(gi._data.shape)} for an input of "
                f"shape {shape}", op=op.name, module=node.module or None,
                hint="this is a bug in the op's vjp; reduce broadcast dimensions with sum_to",
            )
    if state.observed:
        from ..inspectors import notify_backward
        from ..tensor import Tensor

        # a multi-output Function's slots pass packed gradients, not tensors: inspectors see
        # the ops its backward runs instead
        if isinstance(g, Tensor) and node.input_shapes != (None,):
            notify_backward(node, g, grads)
    return grads


def _deliver_leaf(leaf, g, wanted, found, accumulate, create_graph, delivered):
    if leaf._hooks:
        for hook in leaf._hooks:
            replaced = hook(g)
            if replaced is not None:
                g = replaced
    key = id(leaf)
    if wanted is not None and key in wanted:
        found[key] = found[key] + g if key in found else g
        if not accumulate:
            return
    if not accumulate or (wanted is not None and key not in wanted):
        return
    if g.dtype is not leaf.dtype:
        g = g.to(leaf.dtype)
    grad = _accumulate(leaf, g, create_graph, delivered)
    if not create_graph:
        track(grad, "gradient")
    capture.grad_set(leaf)


def _accumulate(leaf, g, create_graph, delivered):
    """Set ``leaf.grad`` to ``g`` or add ``g`` to it; returns the new ``.grad``.

    The sum is computed outside the lock (it is an op: inspectors run, and may block), then
    stored only if ``leaf.grad`` is still the tensor it was computed from; otherwise another
    thread's backward stored meanwhile, and the sum is taken again from its result.
    """
    while True:
        current = leaf.grad
        if current is None:
            if not create_graph:
                g = g.detach()
                if id(g._data) in delivered or not _writeable(g._data):
                    g = g.clone()
            new = g
        else:
            capture.grad_read(leaf)
            new = current + g
        with _accumulating:
            if leaf.grad is current:
                leaf.grad = new
                if current is None:
                    delivered.add(id(new._data))
                return new


def _writeable(array) -> bool:
    """False for read-only storage (a broadcast view): such a .grad could not be updated in
    place by an optimizer or clip_grad_norm_."""
    flags = getattr(array, "flags", None)
    return getattr(flags, "writeable", True)
