"""fw_zoo's all-MiniLM-L6-v2 against a BERT written by hand in PyTorch from the same file."""

import numpy as np


def test_embeddings_match_a_torch_bert_written_by_hand(encoder, torch_bert, sentences):
    ids, mask = encoder.tokenize(sentences)
    assert mask.numpy().min() == 0, "the sentences should differ in length, so some are padded"
    expected = torch_bert(ids.numpy(), mask.numpy())
    # batches of 3, longest first: each sentence is padded differently from the reference's batch
    got = encoder.encode(sentences, batch_size=3)
    assert got.dtype == np.float32 and got.shape == (len(sentences), 384)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_embeddings_have_unit_length(encoder, sentences):
    norms = np.linalg.norm(encoder.encode(sentences), axis=1)
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=1e-6)


def test_padding_does_not_change_a_sentence_embedding(encoder, sentences):
    alone = np.concatenate([encoder.encode([s]) for s in sentences])
    np.testing.assert_allclose(encoder.encode(sentences), alone, rtol=0, atol=1e-5)
