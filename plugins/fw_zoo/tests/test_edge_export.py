"""all-MiniLM-L6-v2 exported with fw.export and run on fw-edge: the embeddings match PyTorch's
from the same weights at batch and sequence sizes other than the export's, and the int8 export
stays within cosine 0.999 of them."""

import numpy as np
import pytest

import fw_core as fw

fw_edge = pytest.importorskip("fw_edge")

DYNAMIC = {0: "batch", 1: "sequence"}
#: the example the export traces (the tests then run other batches and lengths)
EXAMPLE = ["Edge devices run NumPy.", "A cat sleeps on the warm sofa all afternoon."]


@pytest.fixture(scope="module")
def exported(encoder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("minilm")
    ids, mask = encoder.tokenize(EXAMPLE)
    results = {}
    for name, quantize in (("fp32", None), ("int8", "int8")):
        results[name] = fw.export(encoder.model, {"input_ids": ids, "attention_mask": mask},
                                  folder / f"{name}.fwm", quantize=quantize,
                                  dynamic_dims={"input_ids": DYNAMIC, "attention_mask": DYNAMIC})
    return results


def _tokens(encoder, sentences):
    ids, mask = encoder.tokenize(sentences)
    return ids.numpy(), mask.numpy()


def test_fw_edge_matches_torch_at_other_sizes(encoder, sentences, exported, torch_bert):
    program = fw_edge.load(exported["fp32"].path)
    assert [p.shape for p in program.inputs] == [("batch", "sequence")] * 2
    for batch in (sentences, sentences[4:5], sentences[:3]):
        ids, mask = _tokens(encoder, batch)
        got = program(input_ids=ids, attention_mask=mask)
        assert np.abs(got - torch_bert(ids, mask)).max() < 1e-5


def test_int8_export_stays_close_to_fp32(encoder, sentences, exported, torch_bert):
    result = exported["int8"]
    assert result.bytes < exported["fp32"].bytes / 3
    assert len(result.quantized) == 37  # 36 linear weights and the word embeddings
    ids, mask = _tokens(encoder, sentences)
    got = fw_edge.load(result.path)(input_ids=ids, attention_mask=mask)
    want = torch_bert(ids, mask)
    cosine = (got * want).sum(axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cosine.min() >= 0.999
