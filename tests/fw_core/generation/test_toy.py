"""The toy causal LM of fw_core.generation.toy keeps the protocol: a cached forward equals the
full forward, the cache refuses to overflow, the mask must cover past and new tokens."""

from __future__ import annotations

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError, ShapeError
from fw_core.generation.toy import CharTokenizer, TinyCausalLM, TinyConfig


@pytest.fixture(scope="module")
def model():
    return TinyCausalLM(TinyConfig(), seed=1)


def test_a_cached_forward_in_pieces_equals_the_full_forward(model):
    ids = np.array([[0, 5, 9, 4, 4, 7, 3]])
    with fw.no_grad():
        full = model(fw.tensor(ids)).numpy()
        cache = model.new_cache(1, 10)
        first = model(fw.tensor(ids[:, :4]), cache=cache, attention_mask=fw.tensor(
            np.ones((1, 4), np.int64)), position_ids=fw.tensor([[0, 1, 2, 3]]))
        pieces = [first.numpy()]
        for t in range(4, 7):
            step = model(fw.tensor(ids[:, t:t + 1]), cache=cache,
                         attention_mask=fw.tensor(np.ones((1, t + 1), np.int64)),
                         position_ids=fw.tensor([[t]]))
            pieces.append(step.numpy())
    assert cache.length == 7 and cache.max_length == 10
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), full, rtol=1e-5, atol=1e-5)


def test_the_weights_come_from_the_seed_alone(model):
    state = fw.get_rng_state()
    again = TinyCausalLM(TinyConfig(), seed=1)
    assert fw.get_rng_state() == state
    for (name, a), (_, b) in zip(model.named_parameters(), again.named_parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=name)


def test_the_cache_refuses_more_positions_than_it_holds(model):
    cache = model.new_cache(1, 3)
    with fw.no_grad(), pytest.raises(ArgumentError, match="holds 3 positions"):
        model(fw.tensor([[0, 1, 2, 3]]), cache=cache, attention_mask=fw.tensor([[1, 1, 1, 1]]),
              position_ids=fw.tensor([[0, 1, 2, 3]]))


def test_the_mask_must_cover_the_past_and_the_new_tokens(model):
    cache = model.new_cache(1, 8)
    with fw.no_grad():
        model(fw.tensor([[0, 1]]), cache=cache, attention_mask=fw.tensor([[1, 1]]),
              position_ids=fw.tensor([[0, 1]]))
        with pytest.raises(ShapeError, match=r"\(1, 3\)"):
            model(fw.tensor([[4]]), cache=cache, attention_mask=fw.tensor([[1]]),
                  position_ids=fw.tensor([[2]]))


def test_the_char_tokenizer_round_trips_and_names_unknown_characters():
    tokenizer = CharTokenizer()
    ids = tokenizer.encode("hi there!")
    assert min(ids) >= 3 and tokenizer.decode([0] + ids + [1, 2]) == "hi there!"
    with pytest.raises(ArgumentError, match="'Q'"):
        tokenizer.encode("Q")
