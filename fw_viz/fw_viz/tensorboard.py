"""``TensorBoard``: a ``Model.fit`` callback writing standard TensorBoard event files.

Everything goes through tensorboardX's ``SummaryWriter`` (a maintained writer, not a
hand-written protocol): scalars per epoch (every logged key, plus ``lr``), optionally per batch
(``batch/<key>``), and histograms of every parameter (``weights/<name>``) and of its gradient
from the epoch's last batch (``gradients/<name>``).

The graph is not traced by TensorBoard's own tooling (``add_graph`` needs torch and fails on
dynamic code, pytorch#75673): ``fw_viz.capture`` runs the model eagerly on the first training
batch (taken by a forward pre-hook while an idle inspector keeps that one step eager; or
``graph_input`` when given), and the captured ops are written as a GraphDef whose node names are
the module paths (TensorBoard groups them into collapsible scopes), with output shapes on the
edges. If the capture fails, the model's summary is written as text under the ``graph`` tag
instead, and ``self.notes`` says why.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np

import fw_core as fw
from fw_core.records import Inspector
from fw_core.training.callbacks import Callback

__all__ = ["TensorBoard", "graph_def"]

#: watches nothing; while active, compiled steps run eagerly, so the graph input can be taken
_EAGER = Inspector(name="fw_viz.tensorboard.eager", on_op=lambda event: None)


def _name(node: dict) -> str:
    """A TensorBoard node name: module scopes separated by "/", then op and id."""
    scope = node.get("module") or ""
    raw = "/".join([*scope.split("."), f"{node['op']}_{node['id']}"] if scope else
                   [f"{node['op']}_{node['id']}"])
    return re.sub(r"[^A-Za-z0-9_./]", "_", raw)


def graph_def(data: dict):
    """A tensorboardX ``GraphDef`` from a ``fw_viz.capture`` graph dict (its ``.data``)."""
    from tensorboardX.proto.attr_value_pb2 import AttrValue
    from tensorboardX.proto.graph_pb2 import GraphDef
    from tensorboardX.proto.node_def_pb2 import NodeDef
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboardX.proto.versions_pb2 import VersionDef

    names = {n["id"]: _name(n) for n in data["nodes"]}
    inputs: dict[str, list[str]] = {}
    for edge in data["edges"]:
        if edge["source"] in names:
            inputs.setdefault(edge["target"], []).append(names[edge["source"]])
    nodes = []
    for node in data["nodes"]:
        shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(s)) for s in o["shape"]])
                  for o in node.get("outputs") or [] if o.get("shape") is not None]
        attr = {"_output_shapes": AttrValue(list=AttrValue.ListValue(shape=shapes))}
        dtypes = ",".join(o.get("dtype") or "?" for o in node.get("outputs") or [])
        attr["dtype"] = AttrValue(s=dtypes.encode())
        nodes.append(NodeDef(name=names[node["id"]], op=node["op"],
                             input=inputs.get(node["id"], []), attr=attr))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))


class TensorBoard(Callback):
    """``model.fit(..., callbacks=[fw_viz.TensorBoard("runs/exp1")])``, then
    ``tensorboard --logdir runs``.

    Args:
        log_dir: the event files' folder.
        histograms: write weight and gradient histograms at each epoch end.
        graph: write the model's graph once (see the module docstring).
        batch_scalars: also write ``batch/<key>`` scalars every batch.
        graph_input: the example input(s) for the graph; default: the first training batch.
    """

    def __init__(self, log_dir, histograms: bool = True, graph: bool = True,
                 batch_scalars: bool = False, graph_input=None):
        self.log_dir, self.histograms, self.graph = str(log_dir), histograms, graph
        self.batch_scalars, self.graph_input = batch_scalars, graph_input
        self.notes: list[str] = []
        self.writer = None

    def on_train_begin(self, logs=None):
        from tensorboardX import SummaryWriter

        self.writer = SummaryWriter(self.log_dir)
        self.step, self._graph_done = 0, not self.graph
        self._grabbing = contextlib.ExitStack()

    def on_train_batch_begin(self, batch, logs=None):
        if self._graph_done or self.graph_input is not None or self.step:
            return
        # an active inspector keeps the step eager (a compiled plan would skip the hook)
        self._grabbing.enter_context(fw.inspectors.activated(_EAGER))
        self._grabbing.callback(self._module().register_forward_pre_hook(self._grab).remove)

    def _module(self):
        return getattr(self.model, "module", self.model)

    def _grab(self, module, args):
        """Forward pre-hook: keep the first real batch's inputs for the graph capture."""
        if self.graph_input is None and all(isinstance(a, fw.Tensor) for a in args):
            self.graph_input = tuple(a.detach() for a in args)

    def on_train_batch_end(self, batch, logs=None):
        self._grabbing.close()
        if self.batch_scalars:
            for key, value in (logs or {}).items():
                self.writer.add_scalar(f"batch/{key}", float(value), self.step)
        self.step += 1

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and "lr" not in logs:
            logs["lr"] = optimizer.param_groups[0]["lr"]
        for key, value in logs.items():
            self.writer.add_scalar(key, float(value), epoch)
        if self.histograms:
            self._write_histograms(epoch)
        if not self._graph_done:
            self._write_graph()
        self.writer.flush()

    def _write_histograms(self, epoch: int) -> None:
        for name, p in self._module().named_parameters():
            self.writer.add_histogram(f"weights/{name}", np.asarray(p.detach().numpy()), epoch)
            if p.grad is not None:
                self.writer.add_histogram(f"gradients/{name}",
                                          np.asarray(p.grad.detach().numpy()), epoch)

    def _write_graph(self) -> None:
        from . import graph as viz_graph

        self._graph_done = True
        module = self._module()
        inputs = self.graph_input
        inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
        try:
            if self.graph_input is None:
                raise ValueError("no input was seen (pass graph_input=...)")
            with fw.no_grad():
                captured = viz_graph.capture(module, *inputs)
            # add_onnx_graph writes any GraphDef as the run's graph event (add_graph needs torch)
            self.writer._get_file_writer().add_onnx_graph(graph_def(captured.data))
        except Exception as error:  # the graph is an extra: training goes on without it
            self.notes.append(f"graph not captured ({type(error).__name__}: {error}); "
                              "wrote the model summary as text instead")
            self.writer.add_text("graph", f"```\n{module}\n```", 0)

    def on_train_end(self, logs=None):
        self._grabbing.close()
        if self.writer is not None:
            self.writer.close()
