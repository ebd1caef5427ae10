"""Explanation anchors: the ways an op's local linear approximation can break.

Each constructor returns an :class:`~fw_core.records.Anchor`; ``region`` (if given) maps the
op's inputs to a bool tensor marking where the break bites, so tools can measure it.
"""

from __future__ import annotations

from ..records import Anchor

_EVERYWHERE = "smooth everywhere: the linear approximation holds at every input"


def smooth(says: str = _EVERYWHERE) -> Anchor:
    """No break: the Jacobian is continuous (add, exp, matmul)."""
    return Anchor("smooth", says)


def kink(says: str, region=None, dead: bool = False) -> Anchor:
    """A corner where the derivative jumps (relu at 0, abs at 0, max ties); ``dead``: the
    gradient is 0 over the whole region (relu's x <= 0)."""
    return Anchor("kink", says, region, dead)


def flat(says: str, region=None) -> Anchor:
    """Zero gradient almost everywhere (floor, round, sign, comparisons, argmax)."""
    return Anchor("flat", says, region)


def saturation(says: str, region=None) -> Anchor:
    """The derivative vanishes for large inputs (sigmoid, tanh, softmax with a dominant logit)."""
    return Anchor("saturation", says, region)


def pole(says: str, region=None) -> Anchor:
    """The derivative blows up near a point (1/x at 0, rsqrt at 0, log near 0)."""
    return Anchor("pole", says, region)


def domain(says: str, region=None) -> Anchor:
    """Outside a domain the result is NaN/Inf (log of x < 0, sqrt of x < 0)."""
    return Anchor("domain", says, region)


def temperature(says: str, region=None) -> Anchor:
    """A scale that sharpens or flattens the output (softmax logits, attention scores)."""
    return Anchor("temperature", says, region)
