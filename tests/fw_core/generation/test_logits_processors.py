"""The logits processors against HF transformers' rules, written out independently in NumPy
(the sort-and-cumulate form HF uses, where fw finds thresholds instead)."""

from __future__ import annotations

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError, ArgumentTypeError, FwError
from fw_core.generation import (
    LogitsProcessor,
    LogitsProcessorList,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

INF = np.inf


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _scatter_back(sorted_flags, order):
    flags = np.empty_like(sorted_flags)
    np.put_along_axis(flags, order, sorted_flags, axis=-1)
    return flags


def hf_top_k(s, k, keep=1):
    k = min(max(k, keep), s.shape[-1])
    kth = -np.sort(-s, axis=-1)[:, k - 1:k]
    return np.where(s < kth, -INF, s)


def hf_top_p(s, p, keep=1):
    order = np.argsort(s, axis=-1, kind="stable")
    cumulative = np.cumsum(_softmax(np.take_along_axis(s, order, -1)), axis=-1)
    drop = cumulative <= 1 - p
    drop[:, -keep:] = False
    return np.where(_scatter_back(drop, order), -INF, s)


def hf_min_p(s, p, keep=1):
    probs = _softmax(s)
    drop = probs < p * probs.max(axis=-1, keepdims=True)
    order = np.argsort(-s, axis=-1, kind="stable")
    sorted_drop = np.take_along_axis(drop, order, -1)
    sorted_drop[:, :keep] = False
    return np.where(_scatter_back(sorted_drop, order), -INF, s)


def hf_repetition(ids, s, penalty):
    out = s.copy()
    for row, tokens in enumerate(ids):
        for token in set(tokens.tolist()):
            value = s[row, token]
            out[row, token] = value * penalty if value < 0 else value / penalty
    return out


@pytest.fixture
def scores():
    return np.random.default_rng(0).normal(0, 2, (3, 50)).astype(np.float32)


IDS = fw.tensor(np.array([[1, 4, 4, 9], [0, 0, 0, 0], [49, 3, 7, 12]]))


def run(processor, s):
    return processor(IDS, fw.tensor(s)).numpy()


def test_temperature_divides_scores(scores):
    np.testing.assert_allclose(run(TemperatureLogitsWarper(0.5), scores), scores / 0.5)


@pytest.mark.parametrize("k, keep", [(1, 1), (5, 1), (2, 7), (50, 1), (80, 1)])
def test_top_k_keeps_the_k_highest(scores, k, keep):
    got = run(TopKLogitsWarper(k, min_tokens_to_keep=keep), scores)
    np.testing.assert_array_equal(got, hf_top_k(scores, k, keep))
    assert (np.isfinite(got).sum(axis=1) == min(max(k, keep), 50)).all()


def test_top_k_keeps_ties_with_the_kth():
    s = np.array([[3.0, 1.0, 1.0, 0.0]], np.float32)
    got = run(TopKLogitsWarper(2), s)
    np.testing.assert_array_equal(got, [[3.0, 1.0, 1.0, -INF]])


@pytest.mark.parametrize("p, keep", [(0.1, 1), (0.5, 1), (0.9, 1), (0.999, 1), (1.0, 1),
                                     (0.3, 5), (1e-6, 1)])
def test_top_p_keeps_the_nucleus(scores, p, keep):
    got = run(TopPLogitsWarper(p, min_tokens_to_keep=keep), scores)
    np.testing.assert_array_equal(got, hf_top_p(scores, p, keep))


@pytest.mark.parametrize("spread, p, keep", [(8.0, 0.9, 1), (3.0, 0.5, 1), (1.0, 0.95, 1),
                                          (0.1, 0.9, 1), (3.0, 0.2, 300)])
def test_top_p_over_a_large_vocabulary_sorts_only_what_it_keeps(spread, p, keep):
    # wide and peaked rows: the candidates grow from 64 until the rest can all be dropped
    s = np.random.default_rng(int(spread * 10)).normal(0, spread, (2, 5000)).astype(np.float32)
    got = TopPLogitsWarper(p, min_tokens_to_keep=keep)(IDS[:2], fw.tensor(s)).numpy()
    np.testing.assert_array_equal(got, hf_top_p(s, p, keep))
    assert np.isfinite(got).sum(axis=1).min() >= keep


def test_top_p_after_top_k_sees_only_the_survivors(scores):
    after_k = hf_top_k(scores, 10)
    got = run(TopPLogitsWarper(0.8), after_k)
    np.testing.assert_array_equal(got, hf_top_p(after_k, 0.8))
    assert np.isfinite(got).sum(axis=1).max() <= 10


def test_top_p_min_tokens_to_keep_beyond_the_finite_scores():
    s = np.array([[5.0, -INF, 0.0, -INF]], np.float32)
    got = run(TopPLogitsWarper(0.5, min_tokens_to_keep=3), s)
    np.testing.assert_array_equal(got, [[5.0, -INF, 0.0, -INF]])


@pytest.mark.parametrize("p, keep", [(0.0, 1), (0.05, 1), (0.3, 1), (1.0, 1), (0.9, 4)])
def test_min_p_drops_tokens_below_a_fraction_of_the_top(scores, p, keep):
    got = run(MinPLogitsWarper(p, min_tokens_to_keep=keep), scores)
    expected = hf_min_p(scores, p, keep)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    np.testing.assert_array_equal(got[np.isfinite(got)], scores[np.isfinite(got)])


@pytest.mark.parametrize("penalty", [1.5, 0.5])
def test_repetition_penalty_is_ctrls_rule(scores, penalty):
    got = run(RepetitionPenaltyLogitsProcessor(penalty), scores)
    np.testing.assert_allclose(got, hf_repetition(IDS.numpy(), scores, penalty), rtol=1e-6)
    untouched = np.ones_like(scores, bool)
    untouched[0, [1, 4, 9]] = untouched[1, 0] = untouched[2, [49, 3, 7, 12]] = False
    np.testing.assert_array_equal(got[untouched], scores[untouched])


def test_a_list_applies_processors_in_order(scores):
    chain = LogitsProcessorList([TemperatureLogitsWarper(2.0), TopKLogitsWarper(3)])
    np.testing.assert_allclose(run(chain, scores), hf_top_k(scores / 2.0, 3))


def test_a_user_processor_composes_with_the_builtins(scores):
    class Ban(LogitsProcessor):
        def __call__(self, input_ids, scores):
            return fw.where(fw.arange(scores.shape[-1]) == 7, float("-inf"), scores)

    got = run(LogitsProcessorList([Ban(), TopKLogitsWarper(50)]), scores)
    assert np.isneginf(got[:, 7]).all() and np.isfinite(np.delete(got, 7, axis=1)).all()


def test_the_base_class_needs_a_call(scores):
    with pytest.raises(ArgumentTypeError, match="__call__"):
        run(LogitsProcessor(), scores)


@pytest.mark.parametrize("make, name", [
    (lambda: TemperatureLogitsWarper(0.0), "temperature"),
    (lambda: TemperatureLogitsWarper(-1.0), "temperature"),
    (lambda: TopKLogitsWarper(0), "top_k"),
    (lambda: TopKLogitsWarper(2.5), "top_k"),
    (lambda: TopPLogitsWarper(0.0), "top_p"),
    (lambda: TopPLogitsWarper(1.5), "top_p"),
    (lambda: MinPLogitsWarper(-0.1), "min_p"),
    (lambda: MinPLogitsWarper(0.1, min_tokens_to_keep=0), "min_tokens_to_keep"),
    (lambda: RepetitionPenaltyLogitsProcessor(0.0), "penalty"),
    (lambda: RepetitionPenaltyLogitsProcessor("2"), "penalty"),
])
def test_bad_settings_name_the_argument_and_a_fix(make, name):
    with pytest.raises(ArgumentError) as caught:
        make()
    assert isinstance(caught.value, FwError) and name in str(caught.value)
    assert caught.value.hint
