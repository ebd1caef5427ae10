"""A hand-written CUDA kernel for ``adam_update``: one launch per parameter per step.

Why: fw_cpu's xp-generic Adam on CuPy is about a dozen kernel launches and two temporary
arrays per parameter per step, each pass reading and writing the whole parameter in device
memory. Here one grid-stride pass reads the parameter, gradient and moments once and writes the
parameter and moments (and the running maximum with amsgrad) once, in place.

Arithmetic: the generic kernel's, in its order and its dtype (float16 parameters are loaded as
half, computed in float, rounded once at the store). Every multiply, add, subtract, divide and
square root is a round-to-nearest intrinsic (``__fmul_rn`` ...), which the compiler never
contracts into a fused multiply-add, whatever the flags: so float32/float64 results equal fw_cpu's
to the bit, and the ptxas figures the tests record are those of the code CuPy runs (an NVRTC
``--fmad=false`` option would do the same, but only where the option is passed). The update is
memory-bound, so the unfused arithmetic costs nothing measurable. The step-size constants are
computed here in double (Python floats), as the generic kernel does, and passed in the
compute type.

What falls back to the generic kernel (decided on dtypes and layouts, before CuPy is touched):
dtypes other than float16/32/64, state arrays whose dtype, shape or strides differ from the
parameter's, layouts that are not dense (neither C- nor F-contiguous), empty parameters.

Kernel arguments: the inputs ``param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq``, then the
outputs ``param, exp_avg, exp_avg_sq, max_exp_avg_sq``, then the scalars. On the GPU each output
pointer is its input's buffer (the update is in place: every element is read before it is
written, by the same thread); the host runner of the tests passes separate buffers and reads the
outputs back. Without amsgrad both ``max_exp_avg_sq`` pointers are ``exp_avg_sq`` and unused.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from .raw_module import RawModule

#: threads per block
THREADS = 256
#: the most blocks a launch asks for (an H200 holds 132 SMs x 8 such blocks: ~4 waves);
#: the grid-stride loop covers the elements beyond
MAX_GRID = 1 << 12

#: parameter dtype -> (entry point, compute type of the scalars)
_ENTRIES = {np.dtype(np.float16): ("fw_adam_f16", np.float32),
            np.dtype(np.float32): ("fw_adam_f32", np.float32),
            np.dtype(np.float64): ("fw_adam_f64", np.float64)}
#: the entry points of :data:`SOURCE`
KERNELS = tuple(entry for entry, _ in _ENTRIES.values())

_HELPERS = """#include <cuda_fp16.h>

/* One IEEE round-to-nearest operation each: never contracted into a fused multiply-add. */
__device__ __forceinline__ float fw_adam_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double fw_adam_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float fw_adam_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double fw_adam_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float fw_adam_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double fw_adam_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float fw_adam_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double fw_adam_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float fw_adam_sqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double fw_adam_sqrt(double a) { return __dsqrt_rn(a); }

__device__ __forceinline__ float fw_adam_load(__half v) { return __half2float(v); }
__device__ __forceinline__ float fw_adam_load(float v) { return v; }
__device__ __forceinline__ double fw_adam_load(double v) { return v; }
__device__ __forceinline__ __half fw_adam_store(float v, __half*) { return __float2half(v); }
__device__ __forceinline__ float fw_adam_store(float v, float*) { return v; }
__device__ __forceinline__ double fw_adam_store(double v, double*) { return v; }
"""

_BODY = """
/* One Adam step of n elements, C the compute type. decay multiplies the parameter first
   (1 - lr * weight_decay for AdamW, else 1: exact); l2 != 0 adds l2 * param to the gradient.
   The first moment is m + (g - m) * weight when small_weight (weight = 1 - beta1 < 0.5), else
   g - (g - m) * weight (weight = beta1), as PyTorch. v_hat is v, or with amsgrad the running
   maximum (NaN wins, as numpy.maximum). Then param += m / (sqrt(v_hat) * scale + offset) with
   scale = 1 / (sqrt(1 - beta2^t) * -step_size), offset = eps / -step_size. */
template <typename T, typename C>
__device__ __forceinline__ void fw_adam(
    const T* p_in, const T* __restrict__ grad, const T* m_in, const T* v_in, const T* vmax_in,
    T* p_out, T* m_out, T* v_out, T* vmax_out, long long n, C decay, C l2, int maximize,
    int small_weight, C weight, C beta2, C one_minus_beta2, int amsgrad, C scale, C offset)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const C p = fw_adam_mul(fw_adam_load(p_in[i]), decay);
        C g = fw_adam_load(grad[i]);
        if (l2 != (C)0) {
            const C wp = fw_adam_mul(p, l2);
            g = maximize ? fw_adam_sub(wp, g) : fw_adam_add(wp, g);
        } else if (maximize) {
            g = -g;
        }
        const C m0 = fw_adam_load(m_in[i]);
        const C d = fw_adam_mul(fw_adam_sub(g, m0), weight);
        const C m = small_weight ? fw_adam_add(m0, d) : fw_adam_sub(g, d);
        const C v = fw_adam_add(fw_adam_mul(fw_adam_load(v_in[i]), beta2),
                                fw_adam_mul(fw_adam_mul(g, one_minus_beta2), g));
        C v_hat = v;
        if (amsgrad) {
            const C top = fw_adam_load(vmax_in[i]);
            v_hat = (top > v || top != top) ? top : v;
            vmax_out[i] = fw_adam_store(v_hat, vmax_out);
        }
        const C denom = fw_adam_add(fw_adam_mul(fw_adam_sqrt(v_hat), scale), offset);
        m_out[i] = fw_adam_store(m, m_out);
        v_out[i] = fw_adam_store(v, v_out);
        p_out[i] = fw_adam_store(fw_adam_add(p, fw_adam_div(m, denom)), p_out);
    }
}
"""

_ENTRY = """
extern "C" __global__ void {name}(
    const {t}* p_in, const {t}* __restrict__ grad, const {t}* m_in, const {t}* v_in,
    const {t}* vmax_in, {t}* p_out, {t}* m_out, {t}* v_out, {t}* vmax_out, long long n,
    {c} decay, {c} l2, int maximize, int small_weight, {c} weight, {c} beta2,
    {c} one_minus_beta2, int amsgrad, {c} scale, {c} offset)
{{
    fw_adam<{t}, {c}>(p_in, grad, m_in, v_in, vmax_in, p_out, m_out, v_out, vmax_out, n, decay,
                      l2, maximize, small_weight, weight, beta2, one_minus_beta2, amsgrad,
                      scale, offset);
}}
"""

_CTYPES = {"fw_adam_f16": ("__half", "float"), "fw_adam_f32": ("float", "float"),
           "fw_adam_f64": ("double", "double")}

#: the CUDA C text: helpers, the templated update, an ``extern "C"`` entry point per dtype
SOURCE = _HELPERS + _BODY + "".join(_ENTRY.format(name=name, t=t, c=c)
                                    for name, (t, c) in _CTYPES.items())


class AdamLaunch(NamedTuple):
    """One kernel call: entry point, element count, and its arguments in order."""

    kernel: str  #: entry point in :data:`SOURCE`
    size: int  #: elements of the parameter
    inputs: tuple  #: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (exp_avg_sq if absent)
    outputs: tuple  #: param, exp_avg, exp_avg_sq, max_exp_avg_sq: the inputs' own buffers
    scalars: tuple  #: numpy-typed: int64 n, then the compute-type constants and int32 flags


def launch_size(size: int) -> tuple[int, int]:
    """(grid, block): a thread per element in blocks of :data:`THREADS`, at most
    :data:`MAX_GRID` blocks (the grid-stride loop covers the rest)."""
    return min(-(-size // THREADS), MAX_GRID), THREADS


def _dense_alike(param, others) -> bool:
    """Whether every array has the parameter's dtype, shape and strides, densely laid out:
    then element i is at the same offset in each, and a flat loop is elementwise."""
    if not (param.flags.c_contiguous or param.flags.f_contiguous):
        return False
    return all(a.dtype == param.dtype and tuple(a.shape) == tuple(param.shape) and
               tuple(a.strides) == tuple(param.strides) for a in others)


def adam_launch(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, *, lr, beta1, beta2,
                eps, weight_decay, decoupled, maximize, step) -> AdamLaunch | None:
    """The launch for ``adam_update``'s arguments (the op's attributes), or None where the
    generic kernel must run (see the module's docstring)."""
    entry = _ENTRIES.get(np.dtype(param.dtype))
    states = [a for a in (grad, exp_avg, exp_avg_sq, max_exp_avg_sq) if a is not None]
    if entry is None or param.size == 0 or not _dense_alike(param, states):
        return None
    kernel, c = entry
    # the generic kernel's constants, in double, then rounded to the compute type as NumPy
    # rounds a Python float meeting an array of that type
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    decay = 1 - lr * weight_decay if weight_decay != 0 and decoupled else 1
    l2 = weight_decay if weight_decay != 0 and not decoupled else 0
    small_weight = 1 - beta1 < 0.5
    amsgrad = max_exp_avg_sq is not None
    vmax = max_exp_avg_sq if amsgrad else exp_avg_sq
    return AdamLaunch(
        kernel, int(param.size), (param, grad, exp_avg, exp_avg_sq, vmax),
        (param, exp_avg, exp_avg_sq, vmax),
        (np.int64(param.size), c(decay), c(l2), np.int32(bool(maximize)),
         np.int32(small_weight), c(1 - beta1 if small_weight else beta1), c(beta2),
         c(1 - beta2), np.int32(amsgrad), c(1 / (bias_correction2_sqrt * -step_size)),
         c(eps / -step_size)))


_module = RawModule(SOURCE, KERNELS)


def adam_guard(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, **attrs):
    """The guard of the cuda ``adam_update`` kernel: the function that runs :data:`SOURCE`'s
    one launch for this call, or None where the generic kernel must run."""
    launch = adam_launch(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, **attrs)
    return None if launch is None else partial(_adam_launched, launch)


def _adam_launched(launch: AdamLaunch, param, *arrays, **attrs):
    """Run a planned Adam launch: the step in place; returns ``param``."""
    _module.launch(launch.kernel, *launch_size(launch.size),
                   (*launch.inputs, *launch.outputs, *launch.scalars))
    return param
