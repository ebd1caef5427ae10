"""A recorded op: the backward edge of one tensor, with its provenance."""

from __future__ import annotations

from ..errors import AutogradError


class Node:
    """One op application recorded for backward.

    It keeps what the op's VJP reads (``op.saves``: inputs and/or output), where gradients go
    next (``next``: the producing node or the leaf tensor of each input), the module path that
    was running, and hooks registered on the output. It is also the ``ctx`` a VJP receives.
    """

    __slots__ = ("op", "next", "_inputs", "_versions", "_out_data", "_out_device",
                 "_out_version", "attrs", "input_shapes", "module", "hooks", "released")

    def __init__(self, op, inputs, attrs, out, module):
        self.op = op
        self.attrs = attrs
        self.module = module
        self.hooks = None
        self.released = False
        nxt = []
        shapes = []
        for t in inputs:
            if t.__class__ in _SCALARS or t is None:
                nxt.append(None)
                shapes.append(())
                continue
            shapes.append(t._data.shape)
            if t.requires_grad:
                nxt.append(t._node if t._node is not None else t)
            else:
                nxt.append(None)
        self.next = tuple(nxt)
        self.input_shapes = tuple(shapes)
        saves = op.saves
        if "inputs" in saves:
            self._inputs = inputs
            self._versions = tuple(version_of(t) for t in inputs)
        else:
            self._inputs = None
        if "out" in saves:
            counter = out._vc
            if counter is None:
                counter = out._vc = [0]
            self._out_data = out._data
            self._out_device = out._device
            self._out_version = (counter, counter[0])
        else:
            self._out_data = None

    @staticmethod
    def linked(op, target: Node, attrs: dict, module: str) -> Node:
        """A node whose one edge leads into node ``target`` rather than to a tensor's producer
        (an output of a multi-output ``autograd.Function``); the gradient it passes on is not
        a tensor, so its input shape is None and the engine does not check it."""
        node = object.__new__(Node)
        node.op = op
        node.attrs = attrs
        node.module = module
        node.hooks = None
        node.released = False
        node.next = (target,)
        node.input_shapes = (None,)
        node._inputs = None
        node._out_data = None
        return node

    def name(self) -> str:
        """``"<op>Backward"``, as PyTorch's ``grad_fn.name()``."""
        return f"{self.op.name}Backward"

    # -- the ctx a VJP reads ------------------------------------------------------------------
    @property
    def inputs(self) -> tuple:
        self._check_alive()
        if self._inputs is None:
            raise AutogradError(f"the VJP of {self.op.name} reads its inputs but the op does not "
                                f"declare saves={{'inputs'}}", op=self.op.name)
        for t, (counter, version) in zip(self._inputs, self._versions):
            if counter is not None and counter[0] != version:
                self._modified(t, version, counter[0])
        return self._inputs

    @property
    def out(self):
        self._check_alive()
        if self._out_data is None:
            raise AutogradError(f"the VJP of {self.op.name} reads its output but the op does not "
                                f"declare saves={{'out'}}", op=self.op.name)
        counter, version = self._out_version
        if counter[0] != version:
            self._modified(None, version, counter[0])
        from ..tensor import Tensor

        out = Tensor._wrap(self._out_data, self._out_device, self.op, self.module)
        out.requires_grad = True
        out._node = self
        return out

    def release(self) -> None:
        """Drop what backward needed (after a backward without ``retain_graph``)."""
        self._inputs = None
        self._out_data = None
        self.released = True

    def _check_alive(self) -> None:
        if self.released:
            raise AutogradError(
                "trying to backward through the graph a second time, but its saved values were "
                "freed after the first backward",
                op=self.op.name, module=self.module or None,
                hint="pass retain_graph=True to the first backward() (or autograd.grad) if you "
                "need to backward twice",
            )

    def _modified(self, tensor, saved_version, version) -> None:
        what = "its output" if tensor is None else f"an input of shape {tuple(tensor.shape)}"
        raise AutogradError(
            f"{what} was modified in place after it was saved for backward "
            f"(saved at version {saved_version}, now version {version})",
            op=self.op.name, module=self.module or None,
            hint="use the out-of-place form (x = x + y rather than x += y / x.add_(y)) for "
            "tensors that backward still needs, or .clone() before modifying",
        )

    def __repr__(self) -> str:
        where = f" in {self.module}" if self.module else ""
        return f"<{self.name()}{where}>"


def version_of(t):
    if t.__class__ in _SCALARS or t is None:
        return (None, 0)
    counter = t._vc
    if counter is None:
        counter = t._vc = [0]
    elif counter.__class__ is not list:  # an inference tensor: it has no versions to check
        raise AutogradError(
            "Inference tensors cannot be saved for backward: this tensor was created in "
            "fw.inference_mode() and is used in a computation autograd records",
            hint="make a clone to get a normal tensor (t.clone()), or create it under "
            "fw.no_grad() instead of fw.inference_mode()")
    return (counter, counter[0])


_SCALARS = frozenset({int, float, bool})
