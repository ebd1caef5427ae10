"""The model is one traceable module: fw.compile replays it and export-style traces are
the same graph at every batch size and sequence length."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.compile.trace import trace


def test_compiled_model_equals_eager(encoder, sentences):
    ids, mask = encoder.tokenize(sentences)
    compiled = fw.compile(encoder.model)
    with fw.no_grad():
        eager = encoder.model(ids, mask).numpy()
        while compiled.counts["plan_calls"] == 0:  # eager calls until the scheduler compiles
            assert compiled.counts["calls"] < 10, compiled.explain()
            out = compiled(ids, mask).numpy()
        assert compiled.counts["fallbacks"] == 0, compiled.explain()
    np.testing.assert_allclose(out, eager, rtol=0, atol=1e-5)


def _traced_ops(model, batch: int, seq: int) -> list[str]:
    rng = np.random.default_rng(batch * 1000 + seq)
    ids = rng.integers(1000, 30000, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[0, seq // 2:] = 0  # one padded row
    with fw.no_grad():
        tracer, out = trace(lambda a, b: model(a, b), (fw.from_numpy(ids), fw.from_numpy(mask)))
    assert not tracer.breaks, tracer.breaks
    assert tuple(out.shape) == (batch, 384)
    return [node.op.name for node in tracer.graph.nodes()]


@pytest.mark.parametrize("batch, seq", [(2, 7), (3, 7), (2, 12), (3, 12)])
def test_trace_has_no_breaks_and_the_ops_of_every_size(encoder, batch, seq):
    assert _traced_ops(encoder.model, batch, seq) == _traced_ops(encoder.model, 1, 5)


def test_forward_refuses_sequences_longer_than_the_position_table(encoder):
    ids = fw.from_numpy(np.ones((1, 513), dtype=np.int64))
    with pytest.raises(fw.errors.ShapeError, match="512 positions"):
        encoder.model(ids, ids)
