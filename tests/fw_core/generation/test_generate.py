"""``fw.generation.generate`` against HF transformers' semantics, checked with a 1-layer
attention LM with a real KV cache (fw_core.generation.toy) and a scripted LM whose logits are
known, the expected results computed independently in NumPy."""

from __future__ import annotations

import io

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError, ArgumentTypeError, FwError, ShapeError
from fw_core.generation import LogitsProcessor, TextStreamer, generate
from fw_core.generation.toy import CharTokenizer, TinyCausalLM, TinyConfig

from .scripted import ScriptedLM, fixed, script

TOKENIZER = CharTokenizer()


@pytest.fixture(scope="module")
def tiny():
    """The toy LM without an eos token, so every generation runs to max_new_tokens."""
    return TinyCausalLM(TinyConfig(vocab_size=TOKENIZER.vocab_size, eos_token_id=None), seed=3)


def rollout(model, prompt: list[int], steps: int) -> list[int]:
    """Greedy decoding by recomputing the whole sequence without a cache each step."""
    sequence = list(prompt)
    with fw.no_grad():
        for _ in range(steps):
            logits = model(fw.tensor([sequence])).numpy()
            sequence.append(int(logits[0, -1].argmax()))
    return sequence


def left_padded(prompts: list[list[int]], pad: int = 2):
    width = max(map(len, prompts))
    ids = [[pad] * (width - len(p)) + p for p in prompts]
    mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
    return fw.tensor(ids), fw.tensor(mask)


PROMPTS = [[0, 10, 7, 14], [0, 5, 6, 7, 8, 9, 20], [0, 30]]


# -- greedy, the cache, batching -----------------------------------------------------------------
def test_greedy_equals_argmax_rollout_without_cache(tiny):
    for prompt in PROMPTS:
        out = generate(tiny, fw.tensor([prompt]), max_new_tokens=12)
        assert out.dtype == fw.int64 and out.shape == (1, len(prompt) + 12)
        assert out.numpy()[0].tolist() == rollout(tiny, prompt, 12)


def test_the_cache_is_sized_prompt_plus_new_tokens(tiny, monkeypatch):
    sizes = []
    original = tiny.new_cache
    monkeypatch.setattr(tiny, "new_cache", lambda b, n: sizes.append((b, n)) or original(b, n))
    generate(tiny, fw.tensor([PROMPTS[1]]), max_new_tokens=9)
    assert sizes == [(1, len(PROMPTS[1]) + 9)]


def test_left_padded_batch_equals_each_row_alone(tiny):
    ids, mask = left_padded(PROMPTS)
    batch = generate(tiny, ids, attention_mask=mask, max_new_tokens=10).numpy()
    width = ids.shape[1]
    for row, prompt in enumerate(PROMPTS):
        alone = generate(tiny, fw.tensor([prompt]), max_new_tokens=10).numpy()[0]
        assert batch[row, width:].tolist() == alone[len(prompt):].tolist()
        assert batch[row, :width].tolist() == ids.numpy()[row].tolist()


def test_the_mask_is_inferred_from_the_pad_token(tiny):
    ids, mask = left_padded(PROMPTS)
    inferred = generate(tiny, ids, max_new_tokens=6, pad_token_id=2)
    given = generate(tiny, ids, attention_mask=mask, max_new_tokens=6)
    np.testing.assert_array_equal(inferred.numpy(), given.numpy())


def test_the_model_gets_hf_masks_and_positions():
    model = ScriptedLM(script([[4, 5, 6], [4, 5, 6]], prompt_length=3), eos_token_id=None)
    generate(model, fw.tensor([[2, 0, 7], [0, 7, 7]]), fw.tensor([[0, 1, 1], [1, 1, 1]]),
             max_new_tokens=3)
    prefill, first, second = model.calls
    assert prefill["positions"].tolist() == [[0, 0, 1], [0, 1, 2]]
    assert first["ids"].tolist() == [[4], [4]] and first["positions"].tolist() == [[2], [3]]
    assert first["mask"].tolist() == [[0, 1, 1, 1], [1, 1, 1, 1]]
    assert second["positions"].tolist() == [[3], [4]] and second["mask"].shape == (2, 5)
    assert not any(call["grad"] for call in model.calls)


# -- stopping ------------------------------------------------------------------------------------
def test_rows_stop_at_eos_and_are_padded():
    model = ScriptedLM(script([[4, 1, 5, 6, 7], [4, 5, 6, 1, 7], [4, 5, 6, 7, 4]]))
    out = generate(model, fw.tensor([[0], [0], [0]]), max_new_tokens=8, pad_token_id=2)
    assert out.numpy().tolist() == [[0, 4, 1, 2, 2, 2, 2, 2, 2],
                                    [0, 4, 5, 6, 1, 2, 2, 2, 2],
                                    [0, 4, 5, 6, 7, 4, 3, 3, 3]]


def test_generation_ends_when_every_row_is_done():
    model = ScriptedLM(script([[4, 1], [5, 6, 7]]), eos_token_id=[1, 7], pad_token_id=None)
    out = generate(model, fw.tensor([[0], [0]]), max_new_tokens=10)
    assert out.numpy().tolist() == [[0, 4, 1, 1], [0, 5, 6, 7]]  # pad defaults to the first eos
    assert len(model.calls) == 3  # prefill + 2 decode steps: no call after the last token


def test_eos_from_the_argument_overrides_the_config():
    model = ScriptedLM(script([[4, 5, 6, 7]]))
    out = generate(model, fw.tensor([[0]]), max_new_tokens=10, eos_token_id=5)
    assert out.numpy().tolist() == [[0, 4, 5]]


def test_stop_strings_end_a_row_where_they_complete():
    text = "ab stop here"
    tokens = TOKENIZER.encode(text)
    model = ScriptedLM(script([tokens, tokens], vocab_size=TOKENIZER.vocab_size),
                       vocab_size=TOKENIZER.vocab_size,
                       eos_token_id=None)
    out = generate(model, fw.tensor([[0], [0]]), max_new_tokens=12, stop=["top", "zzz"],
                   tokenizer=TOKENIZER, pad_token_id=2)
    assert TOKENIZER.decode(out.numpy()[0].tolist()) == "ab stop"
    one = generate(model, fw.tensor([[0]]), max_new_tokens=12, stop="b s", tokenizer=TOKENIZER)
    assert TOKENIZER.decode(one.numpy()[0].tolist()) == "ab s"


def test_a_stop_string_may_start_in_the_prompt_but_must_end_in_new_text():
    prompt = [0] + TOKENIZER.encode("to")
    model = ScriptedLM(script([TOKENIZER.encode("p top")], TOKENIZER.vocab_size, 3),
                       vocab_size=TOKENIZER.vocab_size, eos_token_id=None)
    out = generate(model, fw.tensor([prompt]), max_new_tokens=5, stop="top", tokenizer=TOKENIZER)
    assert TOKENIZER.decode(out.numpy()[0].tolist()) == "top"
    model = ScriptedLM(script([TOKENIZER.encode("xx top")], TOKENIZER.vocab_size, 4),
                       vocab_size=TOKENIZER.vocab_size, eos_token_id=None)
    prompt = [0] + TOKENIZER.encode("top")
    out = generate(model, fw.tensor([prompt]), max_new_tokens=6, stop="top", tokenizer=TOKENIZER)
    assert TOKENIZER.decode(out.numpy()[0].tolist()) == "topxx top"


# -- sampling ------------------------------------------------------------------------------------
LOGITS = np.random.default_rng(1).normal(0, 1.5, 8).astype(np.float32)


def samples(model=None, rows=400, steps=5, **settings) -> np.ndarray:
    model = model or ScriptedLM(fixed(LOGITS), eos_token_id=None)
    out = generate(model, fw.tensor([[0]] * rows), max_new_tokens=steps, do_sample=True,
                   **settings)
    return out.numpy()[:, 1:]


def probabilities(logits):
    e = np.exp(logits - logits[np.isfinite(logits)].max())
    return e / e.sum()


def test_sampling_is_reproducible_with_a_seed_and_leaves_the_global_rng_alone(tiny):
    state = fw.get_rng_state()
    first = generate(tiny, fw.tensor([PROMPTS[0]]), max_new_tokens=15, do_sample=True, seed=7)
    again = generate(tiny, fw.tensor([PROMPTS[0]]), max_new_tokens=15, do_sample=True, seed=7)
    other = generate(tiny, fw.tensor([PROMPTS[0]]), max_new_tokens=15, do_sample=True, seed=8)
    assert fw.get_rng_state() == state
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert first.numpy().tolist() != other.numpy().tolist()


def test_sampling_without_a_seed_follows_fws_global_generator():
    fw.manual_seed(5)
    first = samples(rows=4)
    fw.manual_seed(5)
    np.testing.assert_array_equal(samples(rows=4), first)


def test_plain_sampling_matches_the_softmax():
    drawn = samples(rows=1000, steps=4, top_k=0)
    frequencies = np.bincount(drawn.ravel(), minlength=8) / drawn.size
    np.testing.assert_allclose(frequencies, probabilities(LOGITS), atol=0.02)


def test_sampling_across_vocabulary_blocks_draws_only_allowed_tokens():
    logits = np.full(600, -np.inf, np.float32)  # tokens on both sides of the 256-token blocks
    allowed = [5, 255, 256, 599]
    logits[allowed] = [0.0, 1.0, 0.5, -0.5]
    model = ScriptedLM(fixed(logits), vocab_size=600, eos_token_id=None)
    drawn = samples(model, rows=500, steps=4, top_k=0, seed=0)
    frequencies = np.bincount(drawn.ravel(), minlength=600) / drawn.size
    assert set(drawn.ravel()) == set(allowed)
    np.testing.assert_allclose(frequencies[allowed], probabilities(logits)[allowed], atol=0.03)


def test_a_draw_at_the_top_of_the_range_picks_the_last_allowed_token():
    from fw_core.generation.generate import _pick

    weights = np.zeros(1000, np.float32)
    weights[[3, 700]] = [0.25, 0.75]
    assert _pick(weights, np.nextafter(1.0, 0.0)) == 700 and _pick(weights, 0.0) == 3
    assert _pick(weights, 0.2499) == 3 and _pick(weights, 0.2501) == 700


def test_top_k_sampling_draws_only_the_k_best():
    drawn = samples(top_k=3)
    kept = np.argsort(-LOGITS)[:3]
    assert set(drawn.ravel()) == set(kept.tolist())


def test_top_p_sampling_draws_only_the_nucleus():
    probs = probabilities(LOGITS)
    order = np.argsort(probs)
    nucleus = order[np.cumsum(probs[order]) > 1 - 0.7]
    drawn = samples(top_p=0.7, top_k=0)
    assert set(drawn.ravel()) == set(nucleus.tolist()) and len(nucleus) < 8
    frequencies = np.bincount(drawn.ravel(), minlength=8) / drawn.size
    np.testing.assert_allclose(frequencies[nucleus], probs[nucleus] / probs[nucleus].sum(),
                               atol=0.03)


def test_min_p_sampling_draws_only_tokens_near_the_top():
    probs = probabilities(LOGITS)
    kept = np.flatnonzero(probs >= 0.2 * probs.max())
    drawn = samples(min_p=0.2, top_k=0)
    assert set(drawn.ravel()) == set(kept.tolist()) and len(kept) < 8


def test_temperature_sharpens_the_distribution():
    cold = np.bincount(samples(temperature=0.25, top_k=0).ravel(), minlength=8)
    hot = np.bincount(samples(temperature=4.0, top_k=0).ravel(), minlength=8)
    best = int(np.argmax(LOGITS))
    assert cold[best] > hot[best] and (cold > 0).sum() < (hot > 0).sum()


def test_settings_are_ignored_when_greedy():
    model = ScriptedLM(fixed(LOGITS), eos_token_id=None)
    out = generate(model, fw.tensor([[0]]), max_new_tokens=3, top_k=1, temperature=0.1)
    assert out.numpy()[0, 1:].tolist() == [int(np.argmax(LOGITS))] * 3


def test_the_generation_config_supplies_defaults():
    model = ScriptedLM(fixed(LOGITS), eos_token_id=None)
    model.generation_config = {"do_sample": True, "top_k": 2, "max_new_tokens": 6}
    drawn = generate(model, fw.tensor([[0]] * 200), seed=0).numpy()[:, 1:]
    assert drawn.shape == (200, 6) and set(drawn.ravel()) == set(np.argsort(-LOGITS)[:2])


def test_a_generation_config_object_and_the_models_tokenizer_are_used():
    tokens = TOKENIZER.encode("ab cd")
    model = ScriptedLM(script([tokens], TOKENIZER.vocab_size), vocab_size=TOKENIZER.vocab_size,
                       eos_token_id=None)
    model.generation_config = type("Config", (), {"max_new_tokens": 4, "top_k": None})()
    model.tokenizer = TOKENIZER
    out = generate(model, fw.tensor([[0]]), stop=" ")
    assert TOKENIZER.decode(out.numpy()[0].tolist()) == "ab "
    assert generate(model, fw.tensor([[0]])).shape == (1, 5)


def test_a_bool_attention_mask_is_accepted(tiny):
    ids, mask = left_padded(PROMPTS)
    as_bool = generate(tiny, ids, attention_mask=mask > 0, max_new_tokens=4)
    as_int = generate(tiny, ids, attention_mask=mask, max_new_tokens=4)
    np.testing.assert_array_equal(as_bool.numpy(), as_int.numpy())


# -- processors inside generate ------------------------------------------------------------------
def test_repetition_penalty_changes_the_greedy_choice():
    logits = np.array([0, 0, 0, 3.0, 2.9, -1, -1, -1], np.float32)
    model = ScriptedLM(fixed(logits), eos_token_id=None)
    out = generate(model, fw.tensor([[0, 3]]), max_new_tokens=3, repetition_penalty=1.2)
    # 3 is in the prompt: 3 / 1.2 = 2.5 < 2.9 picks 4; once both are seen, 2.5 > 2.9 / 1.2
    assert out.numpy()[0, 2:].tolist() == [4, 3, 3]


def test_a_user_processor_runs_after_the_penalty_and_before_sampling():
    seen = []

    class BanBest(LogitsProcessor):
        def __call__(self, input_ids, scores):
            seen.append(input_ids.numpy().copy())
            return fw.where(fw.arange(8) == int(np.argmax(LOGITS)), float("-inf"), scores)

    drawn = samples(rows=50, steps=3, top_k=1, logits_processor=[BanBest()])
    second = int(np.argsort(-LOGITS)[1])
    assert set(drawn.ravel()) == {second}
    assert [s.shape for s in seen] == [(50, 1), (50, 2), (50, 3)]
    alone = samples(rows=5, steps=1, top_k=1, logits_processor=BanBest())  # one, not a list
    assert set(alone.ravel()) == {second}


# -- streaming -----------------------------------------------------------------------------------
def test_a_callback_receives_every_new_token_in_order(tiny):
    received = []
    ids, mask = left_padded(PROMPTS)
    out = generate(tiny, ids, attention_mask=mask, max_new_tokens=7,
                   streamer=lambda new: received.append(new.numpy().tolist()))
    assert np.array(received).T.tolist() == out.numpy()[:, ids.shape[1]:].tolist()


def test_a_put_end_streamer_gets_the_prompt_then_each_token_then_end():
    events = []

    class Recorder:
        def put(self, value):
            events.append(value.numpy().tolist())

        def end(self):
            events.append("end")

    model = ScriptedLM(script([[4, 5, 1]], prompt_length=2))
    generate(model, fw.tensor([[0, 6]]), max_new_tokens=5, streamer=Recorder())
    assert events == [[[0, 6]], [4], [5], [1], "end"]


def test_text_streamer_prints_the_text_as_it_comes():
    tokens = TOKENIZER.encode("one two\nthree")
    model = ScriptedLM(script([tokens], TOKENIZER.vocab_size, 2), vocab_size=TOKENIZER.vocab_size,
                       eos_token_id=None)
    chunks = []

    class Capture(TextStreamer):
        def on_finalized_text(self, text, stream_end=False):
            chunks.append(text)

    prompt = [0] + TOKENIZER.encode("x")
    generate(model, fw.tensor([prompt]), max_new_tokens=len(tokens),
             streamer=Capture(TOKENIZER, skip_prompt=True))
    assert "".join(chunks) == "one two\nthree"
    assert "one " in chunks and "two\n" in chunks and chunks[-1] == "three"
    printed = io.StringIO()
    generate(model, fw.tensor([prompt]), max_new_tokens=4, streamer=TextStreamer(TOKENIZER,
                                                                                 file=printed))
    assert printed.getvalue() == "xone \n"


# -- the mixin and errors ------------------------------------------------------------------------
def test_the_mixin_gives_model_generate(tiny):
    np.testing.assert_array_equal(tiny.generate(fw.tensor([PROMPTS[0]]), max_new_tokens=4).numpy(),
                                  generate(tiny, fw.tensor([PROMPTS[0]]), max_new_tokens=4).numpy())
    assert fw.generation.generate is generate


BAD = [
    ({"do_sample": True, "temperature": -1.0}, ArgumentError, "temperature"),
    ({"do_sample": True, "temperature": 0.0}, ArgumentError, "do_sample=False"),
    ({"temperature": -0.5}, ArgumentError, "temperature"),
    ({"top_p": 0.0}, ArgumentError, "top_p"),
    ({"top_p": 1.2}, ArgumentError, "top_p"),
    ({"top_k": -3}, ArgumentError, "top_k"),
    ({"min_p": 1.5}, ArgumentError, "min_p"),
    ({"repetition_penalty": -1.0}, ArgumentError, "penalty"),
    ({"max_new_tokens": 0}, ArgumentError, "max_new_tokens"),
    ({"max_new_tokens": 100}, ArgumentError, "max_position_embeddings"),
    ({"stop": ["x"], "tokenizer": None}, ArgumentTypeError, "tokenizer"),
    ({"stop": [""]}, ArgumentTypeError, "stop"),
    ({"do_sample": True, "seed": "1"}, ArgumentTypeError, "seed"),
    ({"streamer": 3}, ArgumentTypeError, "streamer"),
    ({"eos_token_id": -1}, ArgumentError, "eos_token_id"),
    ({"pad_token_id": 1.5}, ArgumentError, "pad_token_id"),
    ({"logits_processor": [3]}, ArgumentTypeError, "logits_processor"),
    ({"logits_processor": 3}, ArgumentTypeError, "logits_processor"),
]


@pytest.mark.parametrize("settings, error, says", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_settings_raise_a_clear_error(tiny, settings, error, says):
    with pytest.raises(error) as caught:
        generate(tiny, fw.tensor([[0, 5, 6]]), **{"max_new_tokens": 5, **settings})
    assert isinstance(caught.value, FwError) and says in str(caught.value)
    assert caught.value.hint


@pytest.mark.parametrize("ids, mask, error, says", [
    ([[2, 5, 6]], [[1, 1, 0]], ArgumentError, "right padding"),
    ([[5, 2, 6]], [[1, 0, 1]], ArgumentError, "right padding"),
    ([[5, 6]], [[1, 2]], ArgumentError, "0 (padding) and 1"),
    ([[5, 6]], [[1, 1, 1]], ShapeError, "shape"),
    ([[5, 99]], None, ArgumentError, "vocabulary"),
    ([5, 6], None, ShapeError, "unsqueeze"),
    ([[]], None, ShapeError, "at least one token"),
])
def test_bad_prompts_raise_a_clear_error(tiny, ids, mask, error, says):
    ids = fw.tensor(ids, dtype=fw.int64)
    mask = None if mask is None else fw.tensor(mask)
    with pytest.raises(error) as caught:
        generate(tiny, ids, attention_mask=mask, max_new_tokens=3)
    assert says in str(caught.value) and caught.value.hint


def test_right_padding_inferred_from_the_pad_token_is_refused(tiny):
    with pytest.raises(ArgumentError, match="right padding"):
        generate(tiny, fw.tensor([[0, 5, 2]]), max_new_tokens=3, pad_token_id=2)


def test_a_batch_that_can_stop_needs_a_pad_token():
    model = ScriptedLM(script([[4], [4]]), eos_token_id=None, pad_token_id=None)
    with pytest.raises(ArgumentError, match="pad_token_id"):
        generate(model, fw.tensor([[0], [0]]), max_new_tokens=3, stop="x", tokenizer=TOKENIZER)


def test_a_row_with_every_token_filtered_out_cannot_be_sampled():
    class BanAll(LogitsProcessor):
        def __call__(self, input_ids, scores):
            return scores * 0 - float("inf")

    with pytest.raises(FwError, match="filtered out"):
        samples(rows=1, steps=1, logits_processor=[BanAll()])
