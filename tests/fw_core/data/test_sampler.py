"""Samplers: orders, determinism under a seeded generator, weights, batching."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import (
    BatchSampler,
    DataError,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

DATA = list(range(10))


def test_sequential_sampler_visits_in_order():
    sampler = SequentialSampler(DATA)
    assert list(sampler) == DATA and len(sampler) == 10


def test_random_sampler_is_a_permutation_fixed_by_its_generator():
    a = list(RandomSampler(DATA, generator=fw.Generator(4)))
    b = list(RandomSampler(DATA, generator=fw.Generator(4)))
    assert a == b and sorted(a) == DATA and a != DATA


def test_random_sampler_epochs_continue_the_stream():
    sampler = RandomSampler(list(range(100)), generator=fw.Generator(1))
    first, second = list(sampler), list(sampler)
    assert first != second and sorted(first) == sorted(second)


def test_random_sampler_uses_the_default_generator_at_each_epoch():
    sampler = RandomSampler(DATA)
    fw.manual_seed(11)
    a = list(sampler)
    fw.manual_seed(11)
    assert list(sampler) == a


def test_random_sampler_num_samples_and_replacement():
    twice = list(RandomSampler(DATA, num_samples=20, generator=fw.Generator(0)))
    assert len(twice) == 20 and np.bincount(twice).tolist() == [2] * 10
    drawn = list(RandomSampler(DATA, replacement=True, num_samples=500,
                               generator=fw.Generator(0)))
    assert len(drawn) == 500 and set(drawn) == set(DATA)
    assert list(RandomSampler([], generator=fw.Generator(0))) == []
    with pytest.raises(DataError, match="num_samples"):
        RandomSampler(DATA, num_samples=0)


def test_subset_random_sampler_permutes_only_the_given_indices():
    order = list(SubsetRandomSampler([3, 5, 7, 9], generator=fw.Generator(2)))
    assert sorted(order) == [3, 5, 7, 9] and len(SubsetRandomSampler([3, 5])) == 2


def test_weighted_random_sampler_follows_the_weights():
    picks = np.array(list(WeightedRandomSampler([0, 1, 0, 3], 8000,
                                                generator=fw.Generator(0))))
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == counts[2] == 0
    assert counts[3] / counts[1] == pytest.approx(3.0, rel=0.1)


def test_weighted_random_sampler_without_replacement_and_bad_weights():
    picks = list(WeightedRandomSampler([1, 1, 0, 1], 3, replacement=False,
                                       generator=fw.Generator(0)))
    assert sorted(picks) == [0, 1, 3]
    with pytest.raises(DataError, match="distinct"):
        WeightedRandomSampler([1, 1, 0, 1], 4, replacement=False)
    for weights in ([], [-1, 2], [0, 0], [1, float("nan")]):
        with pytest.raises(DataError, match="weights"):
            WeightedRandomSampler(weights, 2)


def test_batch_sampler_groups_and_drops_last():
    assert list(BatchSampler(range(7), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    assert len(BatchSampler(range(6), 3, False)) == 2
    for bad in (0, -1, 2.5, True):
        with pytest.raises(DataError, match="batch_size"):
            BatchSampler(range(4), bad)


def test_sampler_base_class_says_what_to_define():
    from fw_core.data import Sampler
    from fw_core.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="must define __iter__"):
        iter(Sampler())
