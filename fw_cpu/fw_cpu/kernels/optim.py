"""Optimizer update kernels, written once against ``xp`` (the CPU plugin replaces the one for
large float32/float64 parameters with a single Numba pass: see ``fw_cpu.fused_optim``)."""

from __future__ import annotations

from functools import partial

from fw_core.ops.update_math import (
    add_quotient_,
    decayed_direction,
    direction,
    lerp_,
    second_moment_,
)


def adam_update(xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, *, lr, beta1, beta2,
                eps, weight_decay, decoupled, maximize, step):
    """One Adam (``decoupled``: AdamW) step, in place on ``param`` and the moment buffers
    (``max_exp_avg_sq``: AMSGrad's running maximum of ``exp_avg_sq``); returns ``param``.
    ``step`` counts from 1, for the bias corrections."""
    tmp = xp.empty_like(param)
    if weight_decay != 0 and decoupled:
        param *= 1 - lr * weight_decay
    g = grad
    if weight_decay != 0 and not decoupled:
        g = xp.multiply(param, weight_decay, out=xp.empty_like(param))  # 0-d stays an array
        (xp.subtract if maximize else xp.add)(g, grad, out=g)
    elif maximize:
        g = xp.negative(grad)
    # exp_avg += (1 - beta1) * (g - exp_avg), in PyTorch's two numerically stable forms
    xp.subtract(g, exp_avg, out=tmp)
    if 1 - beta1 < 0.5:
        tmp *= 1 - beta1
        exp_avg += tmp
    else:
        tmp *= beta1
        xp.subtract(g, tmp, out=exp_avg)
    exp_avg_sq *= beta2
    xp.multiply(g, 1 - beta2, out=tmp)
    tmp *= g
    exp_avg_sq += tmp
    v_hat = exp_avg_sq
    if max_exp_avg_sq is not None:
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        v_hat = max_exp_avg_sq
    # param += m / denom with denom = (sqrt(v)/sqrt(bc2) + eps) / -step_size: one pass less
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    xp.sqrt(v_hat, out=tmp)
    tmp *= 1 / (bias_correction2_sqrt * -step_size)
    tmp += eps / -step_size
    xp.divide(exp_avg, tmp, out=tmp)
    param += tmp
    return param


def sgd_update(xp, param, grad, momentum_buffer=None, *, lr, momentum, dampening,
               weight_decay, nesterov, maximize, first):
    """One SGD step, in place on ``param`` and ``momentum_buffer`` (None without momentum;
    ``first``: the buffer is filled with the direction, as PyTorch's first step does); returns
    ``param``. Rounds as ``torch.optim.SGD`` does, one operation at a time."""
    d = direction(xp, param, grad, weight_decay, maximize)
    if momentum != 0:
        buf = momentum_buffer
        if first:
            buf[...] = d
        else:
            buf *= momentum
            buf += d if dampening == 0 else xp.multiply(d, 1 - dampening)
        if nesterov:
            d = xp.multiply(buf, momentum) + d
        else:
            d = buf
    param += xp.multiply(d, -lr)
    return param


def rmsprop_update(xp, param, grad, square_avg, grad_avg=None, momentum_buffer=None, *, lr,
                   alpha, eps, weight_decay, momentum, maximize):
    """One RMSprop step, in place on ``param`` and its state (``grad_avg``: centered;
    ``momentum_buffer``: with momentum); returns ``param``. Rounds as ``torch.optim.RMSprop``."""
    tmp = xp.empty_like(param)
    g = direction(xp, param, grad, weight_decay, maximize)
    second_moment_(xp, square_avg, g, alpha, tmp)
    if grad_avg is not None:
        lerp_(xp, grad_avg, g, 1 - alpha, tmp)
        xp.multiply(grad_avg, grad_avg, out=tmp)
        xp.subtract(square_avg, tmp, out=tmp)
        xp.sqrt(tmp, out=tmp)
    else:
        xp.sqrt(square_avg, out=tmp)
    tmp += eps
    xp.divide(g, tmp, out=tmp)
    if momentum_buffer is not None:
        momentum_buffer *= momentum
        momentum_buffer += tmp
        xp.multiply(momentum_buffer, -lr, out=tmp)
    else:
        tmp *= -lr
    param += tmp
    return param


def adagrad_update(xp, param, grad, state_sum, *, lr, lr_decay, eps, weight_decay, maximize,
                   step):
    """One Adagrad step, in place on ``param`` and ``state_sum``; returns ``param``. ``step``
    counts from 1, for the learning-rate decay. Rounds as ``torch.optim.Adagrad``."""
    tmp = xp.empty_like(param)
    g = direction(xp, param, grad, weight_decay, maximize)
    xp.multiply(g, g, out=tmp)
    state_sum += tmp
    xp.sqrt(state_sum, out=tmp)
    tmp += eps
    xp.divide(g, tmp, out=tmp)
    tmp *= -(lr / (1 + (step - 1) * lr_decay))
    param += tmp
    return param


def adadelta_update(xp, param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay,
                    maximize):
    """One Adadelta step, in place on ``param`` and its two averages; returns ``param``.
    Rounds as ``torch.optim.Adadelta``."""
    tmp, delta = xp.empty_like(param), xp.empty_like(param)
    g = direction(xp, param, grad, weight_decay, maximize)
    second_moment_(xp, square_avg, g, rho, tmp)
    xp.add(square_avg, eps, out=tmp)
    xp.sqrt(tmp, out=tmp)
    xp.add(acc_delta, eps, out=delta)
    xp.sqrt(delta, out=delta)
    delta /= tmp
    delta *= g
    second_moment_(xp, acc_delta, delta, rho, tmp)
    delta *= -lr
    param += delta
    return param


def adamax_update(xp, param, grad, exp_avg, exp_inf, *, lr, beta1, beta2, eps, weight_decay,
                  maximize, step):
    """One Adamax step, in place on ``param``, ``exp_avg`` and ``exp_inf``; returns ``param``.
    ``step`` counts from 1, for the bias correction. Rounds as ``torch.optim.Adamax``."""
    tmp = xp.empty_like(param)
    g = direction(xp, param, grad, weight_decay, maximize)
    lerp_(xp, exp_avg, g, 1 - beta1, tmp)
    exp_inf *= beta2
    xp.abs(g, out=tmp)
    tmp += eps
    xp.maximum(exp_inf, tmp, out=exp_inf)
    add_quotient_(xp, param, exp_avg, exp_inf, -(lr / (1 - beta1 ** step)), tmp)
    return param


def nadam_update(xp, param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay,
                 decoupled, maximize, bias_correction2, grad_coef, avg_coef):
    """One NAdam step, in place on ``param`` and the moments, with the coefficients of its
    momentum schedule given; returns ``param``. Rounds as ``torch.optim.NAdam``."""
    tmp, denom = xp.empty_like(param), xp.empty_like(param)
    g = decayed_direction(xp, param, grad, lr, weight_decay, decoupled, maximize)
    lerp_(xp, exp_avg, g, 1 - beta1, tmp)
    second_moment_(xp, exp_avg_sq, g, beta2, tmp)
    xp.divide(exp_avg_sq, bias_correction2, out=denom)
    xp.sqrt(denom, out=denom)
    denom += eps
    add_quotient_(xp, param, g, denom, grad_coef, tmp)
    add_quotient_(xp, param, exp_avg, denom, avg_coef, tmp)
    return param


def radam_update(xp, param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay,
                 decoupled, maximize, step):
    """One RAdam step, in place on ``param`` and the moments; returns ``param``. ``step``
    counts from 1. Rounds as ``torch.optim.RAdam``."""
    tmp = xp.empty_like(param)
    g = decayed_direction(xp, param, grad, lr, weight_decay, decoupled, maximize)
    lerp_(xp, exp_avg, g, 1 - beta1, tmp)
    second_moment_(xp, exp_avg_sq, g, beta2, tmp)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    update = xp.divide(exp_avg, bias_correction1, out=tmp)
    update *= lr
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:  # the variance is tractable: rectify the adaptive step
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive = xp.sqrt(exp_avg_sq, out=xp.empty_like(param))  # 0-d stays an array
        adaptive += eps
        xp.divide(bias_correction2 ** 0.5, adaptive, out=adaptive)
        update *= adaptive
        update *= rect
    param -= update
    return param


def asgd_update(xp, param, grad, ax, *, lambd, eta, mu, weight_decay, maximize):
    """One ASGD step, in place on ``param`` and its average ``ax``, with this step's ``eta``
    and ``mu`` given; returns ``param``. Rounds as ``torch.optim.ASGD``."""
    tmp = xp.empty_like(param)
    g = direction(xp, param, grad, weight_decay, maximize)
    param *= 1 - lambd * eta
    xp.multiply(g, -eta, out=tmp)
    param += tmp
    if mu != 1:
        xp.subtract(param, ax, out=tmp)
        tmp *= mu
        ax += tmp
    else:
        ax[...] = param
    return param


def rprop_update(xp, param, grad, prev, step_size, *, eta_minus, eta_plus, step_size_min,
                 step_size_max, maximize):
    """One Rprop step, in place on ``param``, the previous gradient and the step sizes;
    returns ``param``. Compares signs as ``torch.optim.Rprop`` does (by value)."""
    g = direction(xp, param, grad, 0.0, maximize)
    factor = xp.multiply(g, prev, out=xp.empty_like(param))
    xp.sign(factor, out=factor)
    grows, shrinks, keeps = factor > 0, factor < 0, factor == 0
    factor[grows] = eta_plus
    factor[shrinks] = eta_minus
    factor[keeps] = 1
    step_size *= factor
    xp.clip(step_size, step_size_min, step_size_max, out=step_size)
    # a flipped sign: no step now, and no comparison next time (as PyTorch: by value)
    g = xp.where(factor == eta_minus, 0, g)
    xp.sign(g, out=factor)
    factor *= step_size
    param -= factor
    prev[...] = g
    return param


def kernels(xp, special) -> dict:
    """The optimizer kernels for namespace ``xp`` (they need nothing of ``special``)."""
    return {"adam_update": partial(adam_update, xp), "sgd_update": partial(sgd_update, xp),
            "rmsprop_update": partial(rmsprop_update, xp),
            "adagrad_update": partial(adagrad_update, xp),
            "adadelta_update": partial(adadelta_update, xp),
            "adamax_update": partial(adamax_update, xp),
            "nadam_update": partial(nadam_update, xp), "radam_update": partial(radam_update, xp),
            "asgd_update": partial(asgd_update, xp), "rprop_update": partial(rprop_update, xp)}
