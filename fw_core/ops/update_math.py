"""Optimizer arithmetic on raw arrays, in place, rounded as PyTorch's in-place ops round it.

The update kernels (``fw_cpu.kernels.optim``, run for every NumPy-like device) and the optimizers
that still update with array calls share these, so a step is the same floats either way.
"""

from __future__ import annotations


def direction(xp, param, grad, weight_decay: float, maximize: bool):
    """The gradient an update follows: ``grad + weight_decay * param``, negated under
    ``maximize``; ``grad`` itself when neither applies (a new array otherwise)."""
    if weight_decay != 0:
        d = xp.multiply(param, weight_decay, out=xp.empty_like(param))  # 0-d stays an array
        return (xp.subtract if maximize else xp.add)(d, grad, out=d)
    if maximize:
        return xp.negative(grad)
    return grad


def decayed_direction(xp, param, grad, lr: float, weight_decay: float, decoupled: bool,
                      maximize: bool):
    """:func:`direction`, or with ``decoupled`` the weights shrunk in place first
    (``param *= 1 - lr * weight_decay``) and the raw (possibly negated) gradient returned."""
    if decoupled and weight_decay != 0:
        param *= 1 - lr * weight_decay
        return direction(xp, param, grad, 0.0, maximize)
    return direction(xp, param, grad, weight_decay, maximize)


def lerp_(xp, start, end, weight: float, tmp) -> None:
    """``start += weight * (end - start)`` on raw arrays, in place, in PyTorch's two
    numerically stable forms (``end - (end - start) * (1 - weight)`` for weight >= 0.5);
    ``tmp`` is scratch space shaped like ``start``."""
    xp.subtract(end, start, out=tmp)
    if weight < 0.5:
        tmp *= weight
        start += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(end, tmp, out=start)


def second_moment_(xp, average, value, beta: float, tmp) -> None:
    """``average = beta * average + (1 - beta) * value**2`` on raw arrays, in place, rounded as
    PyTorch's ``average.mul_(beta).addcmul_(value, value, value=1 - beta)``; ``tmp`` is scratch
    space shaped like ``average``."""
    average *= beta
    xp.multiply(value, 1 - beta, out=tmp)
    tmp *= value
    average += tmp


def add_quotient_(xp, data, numerator, denominator, value: float, tmp) -> None:
    """``data += value * numerator / denominator`` on raw arrays, in place, in the order
    PyTorch's ``addcdiv_`` rounds it (the product first); ``tmp`` may be ``numerator``."""
    xp.multiply(numerator, value, out=tmp)
    tmp /= denominator
    data += tmp
