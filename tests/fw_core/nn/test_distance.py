"""CosineSimilarity, PairwiseDistance (modules, functional and top-level forms) against
PyTorch, and gumbel_softmax's distribution, one-hot samples and straight-through gradient."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
import fw_core.nn.functional as F

from .layer_check import check_layer

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes,dim", [(((4, 5), (4, 5)), 1), (((4, 5), (1, 5)), 1),
                                        (((2, 3, 4), (2, 3, 4)), -1), (((3, 4), (3, 4)), 0)],
                         ids=str)
def test_cosine_similarity(shapes, dim, dtype):
    args = [rng.standard_normal(s) for s in shapes]
    check_layer(nn.CosineSimilarity(dim), torch.nn.CosineSimilarity(dim), args, dtype=dtype)


def test_cosine_similarity_of_a_zero_vector_uses_eps_as_torch():
    args = [rng.standard_normal((3, 4)), np.zeros((3, 4))]
    check_layer(nn.CosineSimilarity(), torch.nn.CosineSimilarity(), args, dtype="float64")


@pytest.mark.parametrize("options", [{}, {"p": 1.0}, {"p": 3.0, "keepdim": True},
                                     {"eps": 0.0, "p": np.inf}], ids=str)
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((5,), (5,))], ids=str)
def test_pairwise_distance(shapes, options):
    args = [rng.standard_normal(s) for s in shapes]
    check_layer(nn.PairwiseDistance(**options), torch.nn.PairwiseDistance(**options), args,
                dtype="float64")


def test_functional_and_top_level_forms():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for ours, theirs in [(F.cosine_similarity, torch.nn.functional.cosine_similarity),
                         (fw.cosine_similarity, torch.cosine_similarity),
                         (F.pairwise_distance, torch.nn.functional.pairwise_distance),
                         (fw.pairwise_distance, torch.pairwise_distance)]:
        np.testing.assert_allclose(ours(fw.tensor(a), fw.tensor(b)).numpy(),
                                   theirs(torch.from_numpy(a), torch.from_numpy(b)).numpy(),
                                   atol=1e-12)
    with pytest.raises(RuntimeError, match="do not broadcast"):
        F.cosine_similarity(fw.ones(3, 4), fw.ones(2, 4))


def test_gumbel_softmax_samples_follow_the_softmax():
    logits = fw.tensor(np.log([[0.1, 0.2, 0.7]] * 20_000).astype(np.float32))
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.numpy().sum(-1), 1.0, rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(-1) == 1).all()
    np.testing.assert_allclose(hard.mean(0), [0.1, 0.2, 0.7], atol=0.015)


def test_gumbel_softmax_hard_has_the_soft_gradient():
    logits = fw.randn(4, 5, requires_grad=True)
    weights = fw.randn(4, 5)
    fw.manual_seed(3)
    (F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1) * weights).sum().backward()
    hard_grad = logits.grad.numpy().copy()
    logits.grad = None
    fw.manual_seed(3)
    (F.gumbel_softmax(logits, tau=0.7, hard=False, dim=1) * weights).sum().backward()
    np.testing.assert_allclose(hard_grad, logits.grad.numpy(), atol=1e-6)
