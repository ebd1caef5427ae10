"""Fused optimizer updates: one Numba pass per parameter instead of a dozen array passes.

An Adam step over NumPy ufuncs reads and writes each element about twelve times; one loop
reads the parameter, gradient and moments once and writes them once. It does the generic
kernel's arithmetic in the same order and the same dtype, so results match it to the last
bit or so. It is a guarded kernel above the generic one: small parameters (and other dtypes or
layouts) go to the generic kernel, where the Numba call overhead and its first compile would not
pay, and ``fw.plugins.explain_dispatch`` says which of the two took a call.
"""

from __future__ import annotations

import numpy as np

from fw_core.records import KernelSpec

#: parameters with fewer elements use the generic kernel
MIN_ELEMENTS = 1 << 14
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_compiled = {}


def adam_takes(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, **_) -> bool:
    """Whether the Numba pass takes this step (else the generic kernel does)."""
    return (param.size >= MIN_ELEMENTS and param.dtype in _FLOATS and max_exp_avg_sq is None
            and all(a.flags.c_contiguous and a.dtype == param.dtype
                    for a in (param, grad, exp_avg, exp_avg_sq)))


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, *, lr, beta1, beta2,
                eps, weight_decay, decoupled, maximize, step):
    """One Adam/AdamW step in one Numba pass, in place; the calls :func:`adam_takes` accepts."""
    kernel = _compiled.get("adam") or _compile()["adam"]
    c = param.dtype.type
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    decay = c(1 - lr * weight_decay) if weight_decay != 0 and decoupled else c(1)
    l2 = c(weight_decay) if weight_decay != 0 and not decoupled else c(0)
    small_weight = 1 - beta1 < 0.5
    kernel(param.reshape(-1), grad.reshape(-1), exp_avg.reshape(-1),
           exp_avg_sq.reshape(-1), decay, l2, c(-1 if maximize else 1),
           c(1 - beta1 if small_weight else beta1), small_weight, c(beta2), c(1 - beta2),
           c(1 / (bias_correction2_sqrt * -step_size)), c(eps / -step_size))
    return param


def sgd_takes(param, grad, momentum_buffer=None, **_) -> bool:
    """Whether the Numba pass takes this SGD step (else the generic kernel does)."""
    arrays = (param, grad) if momentum_buffer is None else (param, grad, momentum_buffer)
    return (param.size >= MIN_ELEMENTS and param.dtype in _FLOATS
            and all(a.flags.c_contiguous and a.dtype == param.dtype for a in arrays))


def sgd_update(param, grad, momentum_buffer=None, *, lr, momentum, dampening, weight_decay,
               nesterov, maximize, first):
    """One SGD step in one Numba pass, in place; the calls :func:`sgd_takes` accepts."""
    kernel = _compiled.get("sgd") or _compile()["sgd"]
    c = param.dtype.type
    has_buffer = momentum != 0
    buffer = momentum_buffer if has_buffer else param  # unread without momentum
    kernel(param.reshape(-1), grad.reshape(-1), buffer.reshape(-1), c(-1 if maximize else 1),
           c(weight_decay), c(momentum), c(1 - dampening), has_buffer, bool(first),
           bool(nesterov), c(-lr))
    return param


#: the kernels this module adds to the cpu device, above the generic ones
KERNELS = [
    KernelSpec(op="adam_update", device="cpu", fn=adam_update, priority=1, guard=adam_takes,
               takes=f"float32/float64 C-contiguous parameters of {MIN_ELEMENTS}+ elements, "
               "without AMSGrad"),
    KernelSpec(op="sgd_update", device="cpu", fn=sgd_update, priority=1, guard=sgd_takes,
               takes=f"float32/float64 C-contiguous parameters of {MIN_ELEMENTS}+ elements"),
]


def _compile():
    import numba

    @numba.njit(cache=True, error_model="numpy", nogil=True)
    def adam(p, g, m, v, decay, l2, sign, weight, small_weight, beta2, one_minus_beta2,
             scale, offset):
        for i in range(p.size):
            pi = p[i] * decay
            gi = g[i] * sign + l2 * pi if l2 != 0 else g[i] * sign
            if small_weight:
                mi = m[i] + (gi - m[i]) * weight
            else:
                mi = gi - (gi - m[i]) * weight
            vi = v[i] * beta2 + gi * one_minus_beta2 * gi
            m[i] = mi
            v[i] = vi
            p[i] = pi + mi / (np.sqrt(vi) * scale + offset)

    @numba.njit(cache=True, error_model="numpy", nogil=True)
    def sgd(p, g, b, sign, l2, momentum, keep, has_buffer, first, nesterov, neg_lr):
        # the generic kernel's operations in its order: d, the buffer, the step
        for i in range(p.size):
            d = g[i] * sign if l2 == 0 else p[i] * l2 + g[i] * sign
            if has_buffer:
                bi = d if first else b[i] * momentum + d * keep
                b[i] = bi
                d = bi * momentum + d if nesterov else bi
            p[i] = p[i] + d * neg_lr

    _compiled.update(adam=adam, sgd=sgd)
    return _compiled
