"""float16 in the CUDA fusion generator: what the source says about storage, rounding and
accumulation. (The half groups' results are checked on the host, and compiled with nvcc, with
every other group in ``test_fusion_codegen.py``.)"""

from __future__ import annotations

import numpy as np
from cuda_fusion_groups import Builder, build

from fw_cuda import fusion
from fw_cuda.fusion import render


def test_half_is_stored_as_half_and_computed_in_float():
    _, group = build("half_activation_chain")
    text = fusion.source(group)
    assert text.startswith("#include <cuda_fp16.h>\n")
    assert "const __half* in0" in text and "__half* out1" in text
    assert "const float x0 = __half2float(in0[" in text  # loads widen
    assert "erfcf(" in text and "expf(" in text and "tanhf(" in text
    assert "erfc(" not in text.replace("erfcf(", "") and "exp(" not in text  # float, not double
    # every node rounds to half once, each stored value is that rounded float
    assert text.count("__half2float(__float2half(") == len(group.nodes)
    assert "out0[i] = __float2half(v1);" in text


def test_sources_without_half_do_not_include_cuda_fp16():
    _, group = build("gelu_bias")
    assert "cuda_fp16" not in fusion.source(group)


def test_python_scalars_meet_half_rounded_to_half():
    b = Builder()
    x = b.input((3,), "float16")
    b.op("mul", x, 0.1)
    b.op("gt", x, 0.1)
    b.op("mul", b.op("cast", x, dtype=np.dtype("float32")), 0.1)
    half_mul, half_gt, _, float_mul = b.nodes
    rounded = repr(float(np.float16(0.1))) + "f"  # 0.0999755859375f, NumPy's weak scalar
    def text(node, args):
        return "\n".join(render.node_statements(node, args, "v9"))

    assert f"= (x0 * {rounded});" in text(half_mul, ["x0", None])
    assert f"const bool v9_ = (x0 > {rounded});" in text(half_gt, ["x0", None])
    assert "= (v0 * 0.1f);" in text(float_mul, ["v0", None])


def test_half_reductions_accumulate_in_double_and_round_once():
    _, group = build("half_rowsum")
    text = fusion.source(group)
    assert "double part = 0.0;" in text and "part += (double)v1;" in text
    assert "out0[o] = __double2half(acc[0]);" in text
    _, group = build("half_mean")
    assert "__double2half(acc[0] / (double)n_red)" in fusion.source(group)


def test_casts_round_from_their_source_type():
    _, group = build("half_casts")
    text = fusion.source(group)
    # float64 -> float16: one rounding
    assert "const double v3_ = x2;" in text and "__half2float(__double2half(v3_))" in text
    # int32 -> float16 via an exact float
    assert "const int v4_ = x3;" in text and "__float2half((float)(v4_))" in text
    # half -> int / double: widened
    assert "const float v6_ = v5;" in text and "(int)(v6_)" in text
    assert "const float v7_ = x0;" in text and "(double)(v7_)" in text


def test_half_kernel_shapes_and_dtypes_on_the_host_side():
    _, group = build("half_mean")
    kernel = fusion.generate(group)
    assert kernel.shapes([(7, 5, 12), (12,)]) == ((7, 5, 12), [(1, 5, 1)])
    assert [dtype for dtype, _ in kernel.outputs] == [np.dtype("float16")]
