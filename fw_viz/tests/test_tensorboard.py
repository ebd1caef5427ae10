"""fw_viz.TensorBoard: event files written through tensorboardX, read back with TensorBoard's
own EventAccumulator."""

import numpy as np
import pytest

import fw_core as fw
import fw_core.nn as nn

pytest.importorskip("tensorboard")


def _accumulator(log_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir), size_guidance={"histograms": 0, "scalars": 0})
    acc.Reload()
    return acc


def _fit(callbacks, epochs=2, model=None):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (64, 6)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    if model is None:
        fw.manual_seed(0)
        model = fw.Sequential([nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2)])
        model.compile(optimizer="sgd", loss="cross_entropy", metrics=["accuracy"], lr=0.1)
    model.fit(x, y, epochs=epochs, batch_size=16, verbose=0, callbacks=callbacks)
    return model


def test_scalars_histograms_and_graph_read_back(tmp_path):
    from fw_viz import TensorBoard

    board = TensorBoard(tmp_path / "run", batch_scalars=True)
    _fit([board])
    acc = _accumulator(tmp_path / "run")
    tags = acc.Tags()
    assert {"loss", "accuracy", "lr", "batch/loss"} <= set(tags["scalars"])
    assert [e.step for e in acc.Scalars("loss")] == [0, 1]
    assert acc.Scalars("lr")[0].value == pytest.approx(0.1)
    assert len(acc.Scalars("batch/loss")) == 8
    names = {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert {f"weights/{n}" for n in names} <= set(tags["histograms"])
    assert {f"gradients/{n}" for n in names} <= set(tags["histograms"])
    weights = acc.Histograms("weights/0.weight")
    assert len(weights) == 2 and weights[0].histogram_value.num == 6 * 8
    assert tags["graph"] and not board.notes
    graph = acc.Graph()
    ops = {node.op for node in graph.node}
    assert {"linear", "tanh"} <= ops
    linear = next(n for n in graph.node if n.op == "linear" and n.name.startswith("0/"))
    assert linear.input  # edges are there
    shape = linear.attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [16, 8]


def test_graph_is_taken_even_when_the_step_is_already_compiled(tmp_path):
    from fw_viz import TensorBoard

    model = _fit([], epochs=2)  # the training step repeats: fw.compile'd from here on
    board = TensorBoard(tmp_path / "run", histograms=False)
    _fit([board], epochs=1, model=model)
    assert not board.notes
    assert {"linear", "tanh"} <= {n.op for n in _accumulator(tmp_path / "run").Graph().node}


def test_graph_falls_back_to_text_summary(tmp_path):
    from fw_viz import TensorBoard

    board = TensorBoard(tmp_path / "run", histograms=False, graph_input=object())
    _fit([board], epochs=1)
    assert board.notes and "model summary as text" in board.notes[0]
    acc = _accumulator(tmp_path / "run")
    assert "graph/text_summary" in acc.Tags()["tensors"]
    assert not acc.Tags()["histograms"]
