"""The tokenizer is set up as sentence-transformers runs it for this model."""

import json


def test_truncates_at_max_seq_length(encoder, folder):
    limit = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
    ids, mask = encoder.tokenize(["word " * (2 * limit), "short"])
    assert tuple(ids.shape) == (2, limit)
    # "short" is [CLS] short [SEP], then padding with the pad id 0
    assert mask.numpy().sum(1).tolist() == [limit, 3]
    assert ids.numpy()[1, 3:].tolist() == [0] * (limit - 3)


def test_pads_to_the_longest_sentence_of_the_batch(encoder):
    ids, mask = encoder.tokenize(["short", "a sentence of seven word pieces"])
    assert tuple(ids.shape) == (2, max(mask.numpy().sum(1)))
    assert ids.numpy()[0, 0] == 101 and ids.dtype.name == "int64"
