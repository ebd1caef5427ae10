"""Samplers and random_split against torch.utils.data where the algorithm fixes the result:
BatchSampler's batches and lengths, random_split's sizes for fractions (the remainder dealt
from the first subset) and its refusals, the flags torch's samplers insist are bools, and the
draws of the random samplers staying inside what torch's can give."""

import warnings

import numpy as np
import pytest
import torch.utils.data as tud

import fw_core as fw
from fw_core.data import (
    BatchSampler,
    DataError,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    random_split,
)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,size", [(0, 3), (1, 3), (7, 3), (9, 3), (5, 1), (4, 9)])
def test_batch_sampler_gives_torchs_batches(n, size, drop_last):
    order = list(range(n))[::-1]
    ours, theirs = BatchSampler(order, size, drop_last), tud.BatchSampler(order, size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"batch_size": True},
                                    {"batch_size": 2.0}, {"drop_last": 1},
                                    {"drop_last": None}])
def test_batch_sampler_refuses_what_torch_refuses(kwargs):
    arguments = {"batch_size": 2, "drop_last": False, **kwargs}
    with pytest.raises(ValueError):
        tud.BatchSampler(range(4), **arguments)
    with pytest.raises(DataError):
        BatchSampler(range(4), **arguments)


def split_sizes(split, n, lengths):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sizes = [len(s) for s in split(range(n), lengths)]
    return sizes, len(caught)


@pytest.mark.parametrize("n,lengths", [
    (10, [0.5, 0.5]), (11, [0.5, 0.5]), (3, [0.5, 0.25, 0.25]), (7, [0.1] * 10),
    (100, [0.7, 0.2, 0.1]), (5, [1 / 3] * 3), (10, [1, 0]), (10, [0.0, 1.0]),
    (10, [3, 7]), (0, [0.5, 0.5]), (4, [0, 4, 0]),
])
def test_random_split_sizes_and_empty_warnings_match_torch(n, lengths):
    assert split_sizes(random_split, n, lengths) == split_sizes(tud.random_split, n, lengths)


@pytest.mark.parametrize("lengths", [[0.5, 0.6], [1.5, -0.5], [3, 6], [0.2, 9.8]])
def test_random_split_refuses_what_torch_refuses(lengths):
    with pytest.raises((ValueError, TypeError)):
        tud.random_split(range(10), lengths)
    with pytest.raises(DataError):
        random_split(range(10), lengths)


def test_random_split_refuses_negative_sizes_that_torch_takes():
    assert [len(s) for s in tud.random_split(range(10), [11, -1])] == [10, 0]
    with pytest.raises(DataError, match="neither integers >= 0 nor fractions"):
        random_split(range(10), [11, -1])


def test_random_split_fraction_outside_0_1_names_its_index():
    with pytest.raises(DataError, match=r"fraction at index 0 \(1.5\) is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])


def test_random_split_subsets_partition_the_dataset_and_follow_the_generator():
    parts = random_split(range(20), [0.6, 0.4], generator=fw.Generator(5))
    again = random_split(range(20), [0.6, 0.4], generator=fw.Generator(5))
    assert [list(p.indices) for p in parts] == [list(p.indices) for p in again]
    assert sorted(np.concatenate([p.indices for p in parts]).tolist()) == list(range(20))
    perm = fw.Generator(5).numpy.permutation(20)
    assert list(parts[0].indices) == perm[:12].tolist()


@pytest.mark.parametrize("make", [
    lambda mod, flag: mod.RandomSampler(range(3), replacement=flag),
    lambda mod, flag: mod.WeightedRandomSampler([1.0, 2.0], 2, replacement=flag),
])
def test_replacement_must_be_a_bool_as_torch(make):
    with pytest.raises((ValueError, TypeError), match="replacement"):
        make(tud, 1)
    with pytest.raises(DataError, match="replacement must be True or False, got 1"):
        make(fw.data, 1)
    assert len(list(make(fw.data, True))) == len(list(make(tud, True)))


def test_weighted_sampler_refuses_2d_weights_as_torch():
    with pytest.raises(ValueError, match="1d"):
        tud.WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(DataError, match="1-d sequence, got shape"):
        WeightedRandomSampler([[1.0, 2.0]], 2)


def test_weighted_sampler_never_draws_a_zero_weight_and_follows_the_weights():
    picks = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=fw.Generator(0)))
    counts = np.bincount(picks, minlength=3)
    assert counts[0] == 0 and 2.6 < counts[2] / counts[1] < 3.4
    distinct = list(WeightedRandomSampler([1.0, 0.0, 2.0, 5.0], 3, replacement=False,
                                          generator=fw.Generator(1)))
    assert sorted(distinct) == [0, 2, 3]


def test_subset_random_sampler_permutes_exactly_its_indices():
    indices = [9, 4, 7, 1]
    ours = SubsetRandomSampler(indices, generator=fw.Generator(3))
    first, second = list(ours), list(ours)
    assert sorted(first) == sorted(second) == sorted(indices) and len(ours) == 4
    perm = fw.Generator(3).numpy.permutation(4)
    assert first == [indices[i] for i in perm]


def test_random_sampler_with_more_samples_than_the_dataset_repeats_permutations_as_torch():
    ours = list(RandomSampler(range(4), num_samples=10, generator=fw.Generator(2)))
    theirs = list(tud.RandomSampler(range(4), num_samples=10))
    assert len(ours) == len(theirs) == 10
    for chunk in (ours[:4], ours[4:8], theirs[:4], theirs[4:8]):
        assert sorted(chunk) == [0, 1, 2, 3]
