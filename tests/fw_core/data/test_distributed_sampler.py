"""DistributedSampler against torch.utils.data's: the same partition of indices over ranks,
padding and drop_last for every dataset length, the same shuffled partition of fw's own
permutation (seed + epoch), and an fw error when no world size or rank is given."""

import numpy as np
import pytest
import torch.utils.data as tud

import fw_core as fw
from fw_core.data import DataError, DataLoader, DistributedSampler, TensorDataset
from fw_core.errors import FwError

SHAPES = [(n, replicas) for n in (0, 1, 5, 7, 8, 10, 13) for replicas in (1, 2, 3, 4)]


def per_rank(sampler_type, n, replicas, **kwargs):
    samplers = [sampler_type(range(n), num_replicas=replicas, rank=r, **kwargs)
                for r in range(replicas)]
    return [list(s) for s in samplers], [len(s) for s in samplers]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,replicas", SHAPES)
def test_unshuffled_partition_pads_and_drops_as_torch(n, replicas, drop_last):
    ours = per_rank(DistributedSampler, n, replicas, shuffle=False, drop_last=drop_last)
    theirs = per_rank(tud.DistributedSampler, n, replicas, shuffle=False, drop_last=drop_last)
    assert ours == theirs


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,replicas", [(10, 3), (7, 4), (8, 2), (2, 5)])
def test_shuffled_partition_is_torchs_partition_of_fws_permutation(n, replicas, drop_last):
    # torch's unshuffled sampler gives each rank its positions in the padded order; shuffled,
    # each rank reads the permutation at those positions (fw's permutation: fw's RNG)
    positions, _ = per_rank(tud.DistributedSampler, n, replicas, shuffle=False,
                            drop_last=drop_last)
    for epoch in (0, 3):
        perm = fw.Generator(7 + epoch).numpy.permutation(n)
        samplers = [DistributedSampler(range(n), replicas, r, seed=7, drop_last=drop_last)
                    for r in range(replicas)]
        for s in samplers:
            s.set_epoch(epoch)
        assert [list(s) for s in samplers] == [[int(perm[p % n]) for p in pos]
                                               for pos in positions]


def test_set_epoch_changes_the_order_and_ranks_stay_disjoint():
    samplers = [DistributedSampler(range(12), num_replicas=3, rank=r) for r in range(3)]
    first = [list(s) for s in samplers]
    for s in samplers:
        s.set_epoch(1)
    second = [list(s) for s in samplers]
    assert first != second
    for epoch in (first, second):
        assert sorted(i for part in epoch for i in part) == list(range(12))
    assert [list(s) for s in samplers] == second  # the same epoch gives the same order


def test_attributes_match_torch():
    ours = DistributedSampler(range(10), num_replicas=4, rank=1, drop_last=True, seed=3)
    theirs = tud.DistributedSampler(range(10), num_replicas=4, rank=1, drop_last=True, seed=3)
    for name in ("num_replicas", "rank", "epoch", "num_samples", "total_size", "shuffle",
                 "seed", "drop_last"):
        assert getattr(ours, name) == getattr(theirs, name), name


def test_without_a_world_size_or_rank_it_says_what_to_pass():
    for kwargs in ({}, {"num_replicas": 2}, {"rank": 0}):
        with pytest.raises(ValueError):
            tud.DistributedSampler(range(4), **kwargs)  # torch: no default process group
        with pytest.raises(DataError, match="needs num_replicas and rank") as info:
            DistributedSampler(range(4), **kwargs)
        assert isinstance(info.value, FwError) and "WORLD_SIZE" in info.value.hint


@pytest.mark.parametrize("rank", [-1, 2, 5])
def test_a_rank_outside_the_world_is_refused_as_torch(rank):
    with pytest.raises(ValueError, match=r"rank should be in the interval \[0, 1\]"):
        tud.DistributedSampler(range(4), num_replicas=2, rank=rank)
    with pytest.raises(DataError, match=r"rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=rank)


def test_drives_a_dataloader_per_rank():
    ds = TensorDataset(fw.arange(10))
    got = []
    for rank in range(2):
        sampler = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=False)
        got.append([b[0].tolist() for b in DataLoader(ds, batch_size=2, sampler=sampler)])
    assert got == [[[0, 2], [4, 6], [8]], [[1, 3], [5, 7], [9]]]
    assert fw.utils.data.DistributedSampler is DistributedSampler
    assert np.array_equal(sorted(sum(sum(got, []), [])), np.arange(10))
