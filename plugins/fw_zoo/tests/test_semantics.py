"""The embeddings mean something: paraphrases are closer than unrelated sentences."""

import numpy as np
import pytest

from fw_core.errors import ArgumentError, ArgumentTypeError


def test_paraphrases_are_more_similar_than_unrelated_sentences(encoder):
    a, b, c = encoder.encode(["A man is playing a guitar.",
                              "Someone plays an acoustic guitar.",
                              "The stock market fell sharply on Monday."])
    assert a @ b > 0.6
    assert a @ c < 0.2
    assert a @ b > a @ c + 0.4


def test_rows_come_back_in_the_order_given(encoder, sentences):
    forward = encoder.encode(sentences, batch_size=2)
    backward = encoder.encode(sentences[::-1], batch_size=2)
    np.testing.assert_allclose(forward, backward[::-1], rtol=0, atol=1e-5)


def test_no_sentences_give_an_empty_array(encoder):
    out = encoder.encode([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_one_string_is_refused_with_the_fix(encoder):
    with pytest.raises(ArgumentTypeError, match="list of sentences"):
        encoder.encode("A man is eating food.")


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, True])
def test_a_batch_size_that_is_not_a_positive_integer_is_refused(encoder, batch_size):
    with pytest.raises(ArgumentError, match="batch_size"):
        encoder.encode(["Hello!"], batch_size=batch_size)
