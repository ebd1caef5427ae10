"""Convolution, pooling and resampling: error messages, and option coverage against PyTorch."""

import itertools
import warnings

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, ShapeError, UnsupportedError
from fw_core.testing import conformance as cf

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _matches_torch(ours, theirs, *shapes):
    cf.check_torch_call(fw, torch, ours, theirs, *shapes)


# -- errors ---------------------------------------------------------------------------------------
def test_channel_mismatch_names_input_channels_and_the_weight():
    with pytest.raises(ShapeError) as info:
        fw.conv2d(fw.ones(2, 3, 5, 5), fw.ones(8, 4, 3, 3))
    text = str(info.value)
    assert "the input has 3 channels" in text
    assert "in_channels = weight.shape[1] * groups = 4 * 1 = 4" in text
    assert "in_channels" in info.value.hint and "float32[2, 3, 5, 5]" in text


def test_groups_must_divide_the_channels():
    with pytest.raises(ShapeError, match=r"out_channels \(weight.shape\[0\]\) \(4\) must be "
                                         r"divisible by groups \(3\)"):
        fw.conv2d(fw.ones(1, 3, 5, 5), fw.ones(4, 1, 3, 3), groups=3)
    with pytest.raises(ShapeError, match=r"the input has 4 channels .* = 2 \* 3 = 6"):
        fw.conv2d(fw.ones(1, 4, 5, 5), fw.ones(6, 2, 3, 3), groups=3)
    with pytest.raises(ShapeError, match="groups must be >= 1"):
        fw.conv2d(fw.ones(1, 4, 5, 5), fw.ones(6, 2, 3, 3), groups=0)


def test_conv_input_and_weight_ranks():
    with pytest.raises(ShapeError, match=r"expects a 4-d input \(N, C, H, W\) or an unbatched "
                                         r"3-d one"):
        fw.conv2d(fw.ones(5, 5), fw.ones(1, 1, 3, 3))
    with pytest.raises(ShapeError, match="weight must be 4-d"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 3, 3))
    with pytest.raises(ShapeError, match=r"expects a 3-d input \(N, C, L\)"):
        fw.conv1d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3))


def test_kernel_larger_than_the_padded_input():
    with pytest.raises(ShapeError, match="smaller than the kernel") as info:
        fw.conv2d(fw.ones(1, 1, 2, 2), fw.ones(1, 1, 3, 3))
    assert "padding" in info.value.hint


def test_padding_forms():
    with pytest.raises(UnsupportedError, match="padding='same' needs stride 1"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3, 3), stride=2, padding="same")
    with pytest.raises(ShapeError, match="'valid' or 'same'"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3, 3), padding="full")
    with pytest.raises(ShapeError, match="padding must be >= 0"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3, 3), padding=-1)
    with pytest.raises(ShapeError, match="stride must be an int or 2 ints"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3, 3), stride=(1, 2, 3))
    with pytest.raises(ShapeError, match="stride must be >= 1"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(1, 1, 3, 3), stride=0)


def test_conv_dtypes():
    with pytest.raises(DTypeError, match="the input is float64 but the weight is float32") as info:
        fw.conv2d(fw.ones(1, 1, 5, 5, dtype=fw.float64), fw.ones(1, 1, 3, 3))
    assert "to(" in info.value.hint
    with pytest.raises(DTypeError, match="floating-point"):
        fw.conv2d(fw.ones(1, 1, 5, 5, dtype=fw.int64), fw.ones(1, 1, 3, 3, dtype=fw.int64))
    with pytest.raises(ShapeError, match=r"bias must have shape \(2,\)"):
        fw.conv2d(fw.ones(1, 1, 5, 5), fw.ones(2, 1, 3, 3), fw.ones(3))


def test_transposed_conv_errors():
    with pytest.raises(ShapeError, match="weight.shape\\[0\\] = 4"):
        fw.conv_transpose2d(fw.ones(1, 3, 4, 4), fw.ones(4, 2, 3, 3))
    with pytest.raises(ShapeError, match="output_padding"):
        fw.conv_transpose2d(fw.ones(1, 2, 4, 4), fw.ones(2, 2, 3, 3), stride=2, output_padding=2)
    with pytest.raises(ShapeError, match="divisible by groups"):
        fw.conv_transpose2d(fw.ones(1, 3, 4, 4), fw.ones(3, 2, 3, 3), groups=2)


def test_pool_errors():
    with pytest.raises(ShapeError, match="at most half the window"):
        fw.max_pool2d(fw.ones(1, 1, 6, 6), 2, padding=2)
    with pytest.raises(ShapeError, match="output would be empty"):
        fw.max_pool2d(fw.ones(1, 1, 2, 2), 3)
    with pytest.raises(DTypeError, match="floating-point"):
        fw.avg_pool2d(fw.ones(1, 1, 4, 4, dtype=fw.int64), 2)
    with pytest.raises(DTypeError, match="bool"):
        fw.max_pool2d(fw.ones(1, 1, 4, 4, dtype=fw.bool_), 2)
    with pytest.raises(ShapeError, match="expects a 4-d input"):
        fw.avg_pool2d(fw.ones(4, 4), 2)
    with pytest.raises(ShapeError, match="output_size must be >= 1"):
        fw.adaptive_avg_pool2d(fw.ones(1, 1, 4, 4), 0)


def test_interpolate_errors_are_torchs():
    x = fw.ones(1, 1, 4, 4)
    with pytest.raises(UnsupportedError, match="'bogus'"):
        fw.interpolate(x, scale_factor=2, mode="bogus")
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        fw.interpolate(x, size=8, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        fw.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        fw.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="not meaningful with an explicit size"):
        fw.interpolate(x, size=8, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        fw.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        fw.interpolate(fw.ones(1, 4, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D"):
        fw.interpolate(fw.ones(4, 4), scale_factor=2)
    with pytest.raises(RuntimeError, match="sizes should be greater than 0"):
        fw.interpolate(x, scale_factor=-1.0)
    with pytest.raises(TypeError, match="not implemented for int64"):
        fw.interpolate(fw.ones(1, 1, 4, 4, dtype=fw.int64), size=3)


# -- option coverage against PyTorch --------------------------------------------------------------
CONV2D = [dict(stride=s, padding=p, dilation=d, groups=g)
          for s, p, d, g in itertools.product([1, 2, (2, 1)], [0, 1, (2, 0)], [1, 2, (1, 2)],
                                              [1, 2])]
SAME = [dict(padding="same", dilation=d, kernel=k)
        for k, d in itertools.product([(2, 2), (4, 3), (1, 2), (3, 3)], [1, 2, (2, 1)])]


@pytest.mark.parametrize("options", CONV2D, ids=str)
def test_conv2d_options_match_torch(options):
    _matches_torch(lambda fw, *t: fw.conv2d(*t, **options),
                   lambda torch, *t: F.conv2d(*t, **options),
                   (2, 4, 7, 6), (6, 4 // options["groups"], 3, 2), (6,))


@pytest.mark.parametrize("options", SAME, ids=str)
def test_same_padding_with_even_and_odd_kernels_matches_torch(options):
    kernel = options.pop("kernel")
    assert fw.conv2d(fw.ones(2, 2, 6, 7), fw.ones(3, 2, *kernel), **options).shape == (2, 3, 6, 7)
    with warnings.catch_warnings():  # torch warns that even kernels cost it a padded copy
        warnings.simplefilter("ignore")
        _matches_torch(lambda fw, *t: fw.conv2d(*t, **options),
                       lambda torch, *t: F.conv2d(*t, **options), (2, 2, 6, 7), (3, 2) + kernel)


@pytest.mark.parametrize("options", [dict(stride=2, padding=1, dilation=2, groups=2),
                                     dict(padding="same", dilation=3), dict(stride=3),
                                     dict(padding="valid", groups=4)], ids=str)
def test_conv1d_options_match_torch(options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _matches_torch(lambda fw, *t: fw.conv1d(*t, **options),
                       lambda torch, *t: F.conv1d(*t, **options),
                       (2, 4, 11), (4, 4 // options.get("groups", 1), 4), (4,))


TRANSPOSED = [dict(stride=s, padding=p, output_padding=o, dilation=d, groups=g)
              for s, p, o, d, g in itertools.product([1, 2, (3, 2)], [0, 1], [0, 1], [1, 2],
                                                     [1, 2])
              if all(o < max(si, d) for si in ((s,) if isinstance(s, int) else s))]


@pytest.mark.parametrize("options", TRANSPOSED, ids=str)
def test_conv_transpose2d_options_match_torch(options):
    _matches_torch(lambda fw, *t: fw.conv_transpose2d(*t, **options),
                   lambda torch, *t: F.conv_transpose2d(*t, **options),
                   (2, 4, 4, 3), (4, 6 // options["groups"], 3, 2), (6,))


def test_conv_transpose1d_matches_torch():
    options = dict(stride=2, padding=1, output_padding=1, dilation=1)
    _matches_torch(lambda fw, *t: fw.conv_transpose1d(*t, **options),
                   lambda torch, *t: F.conv_transpose1d(*t, **options), (2, 3, 5), (3, 2, 4), (2,))


def test_conv_is_differentiable_three_times():
    """The gradient ops (conv_transpose, weight_grad) are themselves differentiable."""
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 3, 3))
    x, w = fw.tensor(xv, requires_grad=True), fw.tensor(wv, requires_grad=True)
    tx, tw = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)

    def third(conv, grad, x, w, sum_):
        y = sum_(conv(x, w, stride=2, padding=1) ** 3)
        gx, gw = grad(y, (x, w), create_graph=True)
        hx, = grad(sum_(gx * gx) + sum_(gw), (x,), create_graph=True)
        return grad(sum_(hx ** 2), (w,))[0]

    ours = third(fw.conv2d, fw.autograd.grad, x, w, fw.sum)
    theirs = third(F.conv2d, torch.autograd.grad, tx, tw, torch.sum)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-9)


POOLS = [dict(kernel_size=k, stride=s, padding=p, ceil_mode=c)
         for k, s, p, c in itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 3)], [0, 1],
                                             [False, True])]


@pytest.mark.parametrize("options", POOLS, ids=str)
@pytest.mark.parametrize("dilation", [1, 2])
def test_max_pool2d_options_and_indices_match_torch(options, dilation):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 8))
    _, index = fw.max_pool2d(fw.tensor(x), dilation=dilation, return_indices=True, **options)
    _, expected = F.max_pool2d(torch.tensor(x), dilation=dilation, return_indices=True,
                               **options)
    np.testing.assert_array_equal(index.numpy(), expected.numpy())
    _matches_torch(lambda fw, x: fw.max_pool2d(x, dilation=dilation, **options),
                   lambda torch, x: F.max_pool2d(x, dilation=dilation, **options), (2, 3, 7, 8))


@pytest.mark.parametrize("options", POOLS, ids=str)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_options_match_torch(options, count_include_pad):
    _matches_torch(lambda fw, x: fw.avg_pool2d(x, count_include_pad=count_include_pad, **options),
                   lambda torch, x: F.avg_pool2d(x, count_include_pad=count_include_pad,
                                                 **options), (2, 3, 7, 8))


def test_max_pool_indices_skip_padding_and_follow_nan_like_torch():
    values = np.full((1, 1, 4, 5), -np.inf)
    values[0, 0, 1, 2] = np.nan
    values[0, 0, 3, 4] = 7.0
    out, index = fw.max_pool2d(fw.tensor(values), 3, stride=2, padding=1, return_indices=True)
    expected, expected_index = F.max_pool2d(torch.tensor(values), 3, stride=2, padding=1,
                                            return_indices=True)
    np.testing.assert_array_equal(index.numpy(), expected_index.numpy())
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_max_pool_gradient_goes_to_the_first_maximum_among_ties():
    x = fw.tensor([[[[1.0, 1.0], [0.0, 1.0]]]], requires_grad=True)
    fw.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]


@pytest.mark.parametrize("shape, output_size", [((2, 3, 7, 9), (3, 4)), ((1, 2, 6, 6), 3),
                                                ((1, 2, 3, 5), (5, 7)), ((2, 4, 5), (None, 2)),
                                                ((1, 1, 5, 5), 1)])
def test_adaptive_avg_pool2d_matches_torch(shape, output_size):
    _matches_torch(lambda fw, x: fw.adaptive_avg_pool2d(x, output_size),
                   lambda torch, x: F.adaptive_avg_pool2d(x, output_size), shape)


RESAMPLES = ([dict(size=s) for s in [(8, 10), (3, 2), 5, (7, 13)]]
             + [dict(scale_factor=f) for f in [2, 3, 0.5, 1.7, (1.5, 2.25)]]
             + [dict(scale_factor=1.7, recompute_scale_factor=True)])


@pytest.mark.parametrize("options", RESAMPLES, ids=str)
@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("bilinear", False),
                                                 ("bilinear", True)])
def test_interpolate_matches_torch(options, mode, align_corners):
    _matches_torch(lambda fw, x: fw.interpolate(x, mode=mode, align_corners=align_corners,
                                                **options),
                   lambda torch, x: F.interpolate(x, mode=mode, align_corners=align_corners,
                                                  **options), (2, 3, 4, 5))


def test_interpolate_float32_indices_match_torch_exactly():
    x = np.arange(2 * 37 * 29, dtype=np.float32).reshape(1, 2, 37, 29)
    for size in [(53, 41), (23, 17), (111, 88)]:
        ours = fw.interpolate(fw.tensor(x), size=size).numpy()
        np.testing.assert_array_equal(ours, F.interpolate(torch.tensor(x), size=size).numpy())
        ours = fw.interpolate(fw.tensor(x), size=size, mode="bilinear").numpy()
        expected = F.interpolate(torch.tensor(x), size=size, mode="bilinear").numpy()
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-3)


def test_unbatched_inputs_match_torch():
    _matches_torch(lambda fw, *t: fw.conv2d(*t, padding=1),
                   lambda torch, *t: F.conv2d(*t, padding=1), (3, 6, 6), (4, 3, 3, 3), (4,))
    _matches_torch(lambda fw, x: fw.max_pool2d(x, 3, 2, 1),
                   lambda torch, x: F.max_pool2d(x, 3, 2, 1), (3, 6, 6))


def test_float16_is_computed_in_float32_and_returned_as_float16():
    x = fw.full((1, 64, 3, 3), 0.1, dtype=fw.float16)
    out = fw.conv2d(x, fw.ones(1, 64, 3, 3, dtype=fw.float16))
    assert out.dtype is fw.float16 and abs(out.item() - 57.6) < 0.1
    assert fw.avg_pool2d(x, 3).dtype is fw.float16
