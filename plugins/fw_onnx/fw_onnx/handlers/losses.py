"""ONNX's loss ops, which have PyTorch's semantics (ONNX took them from it)."""

from __future__ import annotations

import fw_core as fw

F = fw.nn.functional


def nll(node, log_prob, target, weight=None):
    return F.nll_loss(log_prob, target.to(fw.int64), weight=weight,
                      ignore_index=node.get("ignore_index", -100),
                      reduction=node.get("reduction", "mean"))


def softmax_cross_entropy(node, scores, labels, weight=None):
    log_prob = fw.log_softmax(scores, dim=1)
    loss = F.nll_loss(log_prob, labels.to(fw.int64), weight=weight,
                      ignore_index=node.get("ignore_index", -100),
                      reduction=node.get("reduction", "mean"))
    return loss, log_prob


HANDLERS = {"NegativeLogLikelihoodLoss": nll, "SoftmaxCrossEntropyLoss": softmax_cross_entropy}
