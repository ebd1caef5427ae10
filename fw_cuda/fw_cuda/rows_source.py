"""The CUDA C text of fw_cuda's row kernels (softmax family, layer/RMS norm, attention rows).

One source holds every kernel: device templates over the element type, and an ``extern "C"``
entry point per dtype (``fw_softmax_f32`` ...), so CuPy finds them by plain name and
``nvcc``/the host runner see the same text. A row is handled by one block: its threads stride
over the row, a shared-memory tree combines their partial results (``blockDim.x`` is a power of
two), and blocks stride over the rows (grid-stride), so any grid, even one block of one thread,
covers every row. Half rows are loaded as ``__half``, computed in float and rounded once at
the store; sums accumulate in float for half/float rows and double for double rows.

Only constructs the host runner (``fw_cuda/tests/host_cuda.py``) also understands are used:
no warp shuffles, no ``rsqrt``, no ``INFINITY`` (NVRTC lacks ``math.h``).
"""

from __future__ import annotations

#: the widest block the kernels are written for (the size of their shared arrays)
MAX_BLOCK = 512

#: dtype suffix of the entry points -> C element type
ELEMENTS = {"f16": "__half", "f32": "float", "f64": "double"}

_COMMON = f"""#include <cuda_fp16.h>

#define FW_BLOCK {MAX_BLOCK}
#define FW_NEG_INF (-1.0 / 0.0)

template <typename T> struct fw_acc {{ typedef T type; }};
template <> struct fw_acc<__half> {{ typedef float type; }};

__device__ __forceinline__ float fw_f(__half v) {{ return __half2float(v); }}
__device__ __forceinline__ float fw_f(float v) {{ return v; }}
__device__ __forceinline__ double fw_f(double v) {{ return v; }}
__device__ __forceinline__ void fw_put(__half* p, long long i, float v)
{{ p[i] = __float2half(v); }}
__device__ __forceinline__ void fw_put(float* p, long long i, float v) {{ p[i] = v; }}
__device__ __forceinline__ void fw_put(double* p, long long i, double v) {{ p[i] = v; }}
__device__ __forceinline__ float fw_exp(float v) {{ return expf(v); }}
__device__ __forceinline__ double fw_exp(double v) {{ return exp(v); }}
__device__ __forceinline__ float fw_log(float v) {{ return logf(v); }}
__device__ __forceinline__ double fw_log(double v) {{ return log(v); }}
__device__ __forceinline__ float fw_sqrt(float v) {{ return sqrtf(v); }}
__device__ __forceinline__ double fw_sqrt(double v) {{ return sqrt(v); }}

/* The block's combined value (MAX: the maximum, else the sum) of every thread's v; all
   threads get it. red is the block's shared scratch, free again on return. */
template <bool MAX, typename Acc>
__device__ __forceinline__ Acc fw_block_reduce(Acc v, Acc* red)
{{
    red[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) {{
            const Acc a = red[threadIdx.x], b = red[threadIdx.x + s];
            red[threadIdx.x] = MAX ? (b > a ? b : a) : a + b;
        }}
        __syncthreads();
    }}
    const Acc total = red[0];
    __syncthreads();
    return total;
}}
"""

_SOFTMAX = """
/* Softmax (mode 0), safe softmax (1: an all -inf row gives zeros) or log-softmax (2) of x
   viewed as (outer, n, inner), along n. Row r is (r / inner, :, r % inner). The maximum
   ignores NaN; a NaN still reaches the whole row through the sum, as on the CPU. */
template <typename T>
__device__ __forceinline__ void fw_softmax_rows(const T* __restrict__ x, T* __restrict__ out,
                                                long long outer, long long n, long long inner,
                                                int mode)
{
    typedef typename fw_acc<T>::type Acc;
    __shared__ Acc red[FW_BLOCK];
    const Acc neg_inf = (Acc)FW_NEG_INF;
    for (long long r = blockIdx.x; r < outer * inner; r += gridDim.x) {
        const long long base = (r / inner) * n * inner + r % inner;
        Acc m = neg_inf;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) {
            const Acc v = fw_f(x[base + j * inner]);
            m = v > m ? v : m;
        }
        m = fw_block_reduce<true>(m, red);
        if (mode == 1 && m == neg_inf) m = (Acc)0;
        Acc part = (Acc)0;
        for (long long j = threadIdx.x; j < n; j += blockDim.x)
            part += fw_exp(fw_f(x[base + j * inner]) - m);
        Acc total = fw_block_reduce<false>(part, red);
        if (mode == 2) {
            const Acc lse = fw_log(total);
            for (long long j = threadIdx.x; j < n; j += blockDim.x)
                fw_put(out, base + j * inner, (fw_f(x[base + j * inner]) - m) - lse);
        } else {
            if (mode == 1 && total == (Acc)0) total = (Acc)1;
            const Acc inv = (Acc)1 / total;
            for (long long j = threadIdx.x; j < n; j += blockDim.x)
                fw_put(out, base + j * inner, fw_exp(fw_f(x[base + j * inner]) - m) * inv);
        }
    }
}
"""

_NORM = """
/* Layer norm (center 1) or RMS norm (center 0) of each length-n row of x: the mean, then the
   mean square of the centred row (two passes, not E[x^2] - E[x]^2), scaled by
   1 / sqrt(var + eps), then times weight and plus bias where given (same length n). */
template <typename T>
__device__ __forceinline__ void fw_norm_rows(const T* __restrict__ x,
                                             const T* __restrict__ weight,
                                             const T* __restrict__ bias, T* __restrict__ out,
                                             long long rows, long long n, double eps,
                                             int center, int has_weight, int has_bias)
{
    typedef typename fw_acc<T>::type Acc;
    __shared__ Acc red[FW_BLOCK];
    const Acc inv_n = (Acc)(1.0 / (double)n);
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* row = x + r * n;
        Acc mean = (Acc)0;
        if (center) {
            Acc part = (Acc)0;
            for (long long j = threadIdx.x; j < n; j += blockDim.x) part += fw_f(row[j]);
            mean = fw_block_reduce<false>(part, red) * inv_n;
        }
        Acc part = (Acc)0;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) {
            const Acc d = fw_f(row[j]) - mean;
            part += d * d;
        }
        const Acc var = fw_block_reduce<false>(part, red) * inv_n;
        const Acc scale = (Acc)1 / fw_sqrt(var + (Acc)eps);
        for (long long j = threadIdx.x; j < n; j += blockDim.x) {
            Acc y = (fw_f(row[j]) - mean) * scale;
            if (has_weight) y *= fw_f(weight[j]);
            if (has_bias) y += fw_f(bias[j]);
            fw_put(out, r * n + j, y);
        }
    }
}
"""

_ATTENTION = """
/* The attention weights from the raw products q @ k^T (rows of length S, L rows per head):
   times scale, masked (mask_kind 1: causal, column j > row i % L; 2: boolean, false = -inf;
   3: additive), softmax (safe when masked: a fully masked row gives zeros), then times
   keep * drop where keep is given. Row r reads mask row r % mask_rows (mask_rows = L for a
   mask shared by every head, the number of rows for a full one). The launcher passes one
   buffer as scores and weights (in place), so neither is __restrict__: each thread reads its
   elements of scores before it writes them in weights. */
template <typename Acc>
__device__ __forceinline__ void fw_attention_rows(const Acc* scores,
                                                  const bool* __restrict__ bool_mask,
                                                  const Acc* __restrict__ add_mask,
                                                  const bool* __restrict__ keep, Acc* weights,
                                                  long long rows, long long S, long long L,
                                                  long long mask_rows, double scale,
                                                  int mask_kind, int has_keep, double drop)
{
    __shared__ Acc red[FW_BLOCK];
    const Acc neg_inf = (Acc)FW_NEG_INF;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const Acc* in = scores + r * S;
        Acc* row = weights + r * S;
        const long long i = r % L, mask_at = (r % mask_rows) * S;
        Acc m = neg_inf;
        for (long long j = threadIdx.x; j < S; j += blockDim.x) {
            Acc v = in[j] * (Acc)scale;
            if ((mask_kind == 1 && j > i) || (mask_kind == 2 && !bool_mask[mask_at + j]))
                v = neg_inf;
            else if (mask_kind == 3)
                v += add_mask[mask_at + j];
            row[j] = v;
            m = v > m ? v : m;
        }
        m = fw_block_reduce<true>(m, red);
        if (mask_kind != 0 && m == neg_inf) m = (Acc)0;
        Acc part = (Acc)0;
        for (long long j = threadIdx.x; j < S; j += blockDim.x) {
            const Acc e = fw_exp(row[j] - m);
            row[j] = e;
            part += e;
        }
        Acc total = fw_block_reduce<false>(part, red);
        if (mask_kind != 0 && total == (Acc)0) total = (Acc)1;
        const Acc inv = (Acc)1 / total;
        for (long long j = threadIdx.x; j < S; j += blockDim.x) {
            Acc w = row[j] * inv;
            if (has_keep) w = w * (Acc)keep[r * S + j] * (Acc)drop;
            row[j] = w;
        }
    }
}
"""


def _entry_points() -> str:
    lines = []
    for sfx, t in ELEMENTS.items():
        lines += [
            f'extern "C" __global__ void fw_softmax_{sfx}(const {t}* x, {t}* out, long long outer,'
            f" long long n, long long inner, int mode)",
            f"{{ fw_softmax_rows<{t}>(x, out, outer, n, inner, mode); }}",
            f'extern "C" __global__ void fw_norm_{sfx}(const {t}* x, const {t}* weight, '
            f"const {t}* bias, {t}* out, long long rows, long long n, double eps, int center, "
            "int has_weight, int has_bias)",
            f"{{ fw_norm_rows<{t}>(x, weight, bias, out, rows, n, eps, center, has_weight, "
            "has_bias); }",
        ]
    for sfx in ("f32", "f64"):  # half attention computes its scores in float
        t = ELEMENTS[sfx]
        lines += [
            f'extern "C" __global__ void fw_attention_{sfx}(const {t}* scores, '
            f"const bool* bool_mask, const {t}* add_mask, const bool* keep, {t}* weights, "
            "long long rows, long long S, long long L, long long mask_rows, double scale, "
            "int mask_kind, int has_keep, double drop)",
            f"{{ fw_attention_rows<{t}>(scores, bool_mask, add_mask, keep, weights, rows, S, L, "
            "mask_rows, scale, mask_kind, has_keep, drop); }",
        ]
    return "\n".join(lines) + "\n"


#: the whole module: compiled once by CuPy (``cupy.RawModule``), by nvcc in the tests
SOURCE = _COMMON + _SOFTMAX + _NORM + _ATTENTION + "\n" + _entry_points()

#: every entry point of :data:`SOURCE`
KERNELS = tuple(f"fw_{kind}_{sfx}" for kind in ("softmax", "norm") for sfx in ELEMENTS) + \
    ("fw_attention_f32", "fw_attention_f64")
