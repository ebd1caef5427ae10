"""Behaviour of the nn ops beyond the conformance cases: side effects, randomness, errors,
masking, and agreement with PyTorch where the cases cannot express it."""

import math

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, FwError, ShapeError, UnsupportedError
from fw_core.records import Structure

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _pair(array, requires_grad=False):
    """The same float64 values as an fw tensor and a torch tensor."""
    array = np.asarray(array, dtype=np.float64)
    return (fw.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _close(ours, theirs, atol=1e-10):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(np.asarray(ours.detach().__array__()), theirs, atol=atol,
                               rtol=1e-7)


# -- contracts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, structure, anchor", [
    ("softmax", Structure.REDUCTION, "temperature"),
    ("log_softmax", Structure.REDUCTION, "smooth"),
    ("batch_norm", Structure.REDUCTION, "pole"),
    ("layer_norm", Structure.REDUCTION, "pole"),
    ("group_norm", Structure.REDUCTION, "pole"),
    ("rms_norm", Structure.REDUCTION, "pole"),
    ("dropout", Structure.ELEMENTWISE, "smooth"),
    ("embedding", Structure.INJECTIVE, "smooth"),
    ("scaled_dot_product_attention", Structure.OPAQUE, "temperature"),
])
def test_contract_declares_structure_and_anchor(name, structure, anchor):
    op = fw.ops.get(name)
    assert op.family == ("attention" if name == "scaled_dot_product_attention" else "nn")
    assert op.structure is structure
    assert op.anchor.kind == anchor
    assert op.twice_differentiable


def test_log_softmax_anchor_recommends_it_over_log_of_softmax():
    assert "log(softmax(x))" in fw.ops.get("log_softmax").anchor.says


# -- softmax --------------------------------------------------------------------------------------
def test_softmax_of_huge_logits_is_finite_and_sums_to_one():
    x = fw.tensor([[1000.0, 999.0, -1000.0]])
    p = fw.softmax(x, dim=1)
    assert np.isfinite(p.numpy()).all()
    np.testing.assert_allclose(p.numpy().sum(), 1.0, rtol=1e-6)


def test_log_softmax_is_stable_where_log_of_softmax_underflows():
    x = fw.tensor([0.0, -200.0], dtype=fw.float32)
    assert fw.log(fw.softmax(x, 0)).numpy()[1] == -math.inf
    np.testing.assert_allclose(fw.log_softmax(x, 0).numpy(), [0.0, -200.0], atol=1e-5)


def test_softmax_is_a_tensor_method():
    x = fw.randn(2, 3)
    np.testing.assert_allclose(x.softmax(1).numpy(), fw.softmax(x, 1).numpy())
    np.testing.assert_allclose(x.log_softmax(-1).numpy(), fw.log_softmax(x, -1).numpy())


def test_softmax_rejects_integers_and_bad_dims():
    with pytest.raises(DTypeError, match="softmax"):
        fw.softmax(fw.tensor([1, 2, 3]), 0)
    with pytest.raises(ShapeError, match="dimension 2 is out of range"):
        fw.softmax(fw.randn(2, 3), 2)


def test_softmax_of_an_all_minus_inf_row_is_nan_like_torch():
    x = fw.tensor([[-math.inf, -math.inf], [0.0, 1.0]])
    ours = fw.softmax(x, 1).numpy()
    theirs = torch.softmax(torch.tensor(x.numpy()), 1).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))


# -- batch_norm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 3, 4, 4)])
def test_batch_norm_running_stats_match_torch_after_three_steps(shape):
    rng = np.random.default_rng(0)
    channels = shape[1]
    mean, t_mean = _pair(np.zeros(channels))
    var, t_var = _pair(np.ones(channels))
    weight, t_weight = _pair(rng.uniform(0.5, 1.5, channels), requires_grad=True)
    bias, t_bias = _pair(rng.normal(size=channels), requires_grad=True)
    for step in range(3):
        x, tx = _pair(rng.normal(step, 1 + step, shape), requires_grad=True)
        out = fw.batch_norm(x, mean, var, weight, bias, training=True, momentum=0.3)
        t_out = F.batch_norm(tx, t_mean, t_var, t_weight, t_bias, training=True, momentum=0.3)
        _close(out, t_out)
        out.backward(fw.ones_like(out))  # the in-place update must not break backward
        t_out.backward(torch.ones_like(t_out))
        _close(x.grad, tx.grad)
    _close(mean, t_mean)
    _close(var, t_var)
    _close(weight.grad, t_weight.grad)
    _close(bias.grad, t_bias.grad)
    x, tx = _pair(rng.normal(size=shape))
    _close(fw.batch_norm(x, mean, var, weight, bias), F.batch_norm(
        tx, t_mean, t_var, t_weight, t_bias))


def test_batch_norm_update_is_a_side_effect_outside_autograd():
    mean, var = fw.zeros(2), fw.ones(2)
    x = fw.randn(4, 2, requires_grad=True)
    fw.batch_norm(x, mean, var, training=True)
    assert not mean.requires_grad and mean.grad_fn is None
    assert mean._version == 1
    with fw.no_grad():
        fw.batch_norm(x, mean, var, training=True)
    assert mean._version == 2
    expected = 0.19 * x.detach().numpy().mean(axis=0)
    np.testing.assert_allclose(mean.numpy(), expected, rtol=1e-5)


def test_batch_norm_in_evaluation_mode_leaves_running_stats_alone():
    mean, var = fw.tensor([0.5, -0.5]), fw.tensor([2.0, 3.0])
    fw.batch_norm(fw.randn(4, 2), mean, var, training=False)
    np.testing.assert_array_equal(mean.numpy(), [0.5, -0.5])
    assert mean._version == 0


def test_batch_norm_errors_read_like_torch():
    with pytest.raises(ShapeError, match="more than 1 value per channel"):
        fw.batch_norm(fw.randn(1, 3), fw.zeros(3), fw.ones(3), training=True)
    with pytest.raises(FwError, match="running_mean must be defined in evaluation mode"):
        fw.batch_norm(fw.randn(4, 3))
    with pytest.raises(ShapeError, match=r"weight has shape \(4,\), expected \(3,\)"):
        fw.batch_norm(fw.randn(4, 3), weight=fw.ones(4), training=True)
    with pytest.raises(ShapeError, match=r"\(N, C\)"):
        fw.batch_norm(fw.randn(3), training=True)


# -- layer_norm, group_norm, rms_norm -------------------------------------------------------------
def test_layer_norm_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError, match=r"normalized_shape \(5,\).*\(2, 4\)"):
        fw.layer_norm(fw.randn(2, 4), 5)


def test_group_norm_needs_groups_that_divide_channels():
    with pytest.raises(ShapeError, match="6 channels cannot be split into 4 groups"):
        fw.group_norm(fw.randn(2, 6, 3), 4)


def test_rms_norm_default_eps_is_the_dtype_epsilon():
    x = fw.full((2, 3), 1e-5, dtype=fw.float64)
    expected = F.rms_norm(torch.full((2, 3), 1e-5, dtype=torch.float64), (3,))
    _close(fw.rms_norm(x, 3), expected, atol=1e-12)


def test_layer_norm_of_a_constant_row_is_zero_with_a_finite_gradient():
    x = fw.full((2, 4), 3.0, dtype=fw.float64, requires_grad=True)
    y = fw.layer_norm(x, 4)
    np.testing.assert_array_equal(y.detach().numpy(), 0.0)
    (y * fw.arange(4, dtype=fw.float64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


# -- dropout --------------------------------------------------------------------------------------
def test_dropout_same_seed_same_mask_and_different_seed_different_mask():
    x = fw.ones(64, 64)
    a = fw.dropout(x, 0.5, generator=fw.Generator(7)).numpy()
    b = fw.dropout(x, 0.5, generator=fw.Generator(7)).numpy()
    c = fw.dropout(x, 0.5, generator=fw.Generator(8)).numpy()
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
    fw.manual_seed(3)
    d = fw.dropout(x, 0.5).numpy()
    fw.manual_seed(3)
    np.testing.assert_array_equal(d, fw.dropout(x, 0.5).numpy())


def test_dropout_scales_kept_values_and_drops_about_p():
    out = fw.dropout(fw.ones(200, 200), 0.25, generator=fw.Generator(0)).numpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((out == 0).mean() - 0.25) < 0.01


def test_dropout_gradient_is_the_mask_over_keep_probability():
    x = fw.randn(5, 6, requires_grad=True)
    y = fw.dropout(x, 0.4, generator=fw.Generator(1))
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.6, rtol=1e-6)


def test_dropout_edge_probabilities():
    x = fw.randn(3, 4, requires_grad=True)
    assert fw.dropout(x, 0.0) is x
    assert fw.dropout(x, 0.9, training=False) is x
    zeros = fw.dropout(x, 1.0)
    np.testing.assert_array_equal(zeros.detach().numpy(), 0.0)
    zeros.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    with pytest.raises(FwError, match="between 0 and 1, got 1.5"):
        fw.dropout(x, 1.5)


# -- embedding ------------------------------------------------------------------------------------
def test_embedding_index_out_of_range_names_index_and_vocabulary():
    weight = fw.randn(10, 4)
    with pytest.raises(FwError) as info:
        fw.embedding(fw.tensor([[1, 2], [12, 3]]), weight)
    text = str(info.value)
    assert "index 12 is out of range" in text and "10 embeddings" in text
    assert "[0, 9]" in text and "num_embeddings" in text
    with pytest.raises(FwError, match="index -1 is out of range"):
        fw.embedding(fw.tensor([-1]), weight)


def test_embedding_needs_integer_indices():
    with pytest.raises(DTypeError, match=r"integer indices.*float32"):
        fw.embedding(fw.tensor([1.0]), fw.randn(3, 2))


@pytest.mark.parametrize("padding_idx", [None, 0, 2, -1])
def test_embedding_weight_gradient_matches_torch(padding_idx):
    indices = np.array([[0, 2, 2, 4], [4, 1, 0, 2]])
    weight, t_weight = _pair(np.random.default_rng(0).normal(size=(5, 3)), requires_grad=True)
    out = fw.embedding(fw.tensor(indices), weight, padding_idx=padding_idx)
    t_out = F.embedding(torch.tensor(indices), t_weight, padding_idx=padding_idx)
    cotangent = np.random.default_rng(1).normal(size=(2, 4, 3))
    out.backward(fw.tensor(cotangent))
    t_out.backward(torch.tensor(cotangent))
    _close(out, t_out)
    _close(weight.grad, t_weight.grad)


def test_embedding_double_backward_keeps_padding_rows_at_zero():
    indices = fw.tensor([1, 0, 1])
    weight = fw.randn(3, 2, dtype=fw.float64, requires_grad=True)
    g = fw.randn(3, 2, dtype=fw.float64, requires_grad=True)
    (grad_w,) = fw.autograd.grad(fw.embedding(indices, weight, padding_idx=1), weight, g,
                                 create_graph=True)
    probe = fw.tensor(np.arange(6.0).reshape(3, 2))
    (grad_g,) = fw.autograd.grad((grad_w * probe).sum(), g)
    # g's rows 0 and 2 looked up the padding row: they never reach grad_w
    np.testing.assert_array_equal(grad_g.numpy(), [[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])


# -- scaled_dot_product_attention -----------------------------------------------------------------
def _attention_inputs(seed=0, shape_q=(2, 2, 4, 3), shape_k=(2, 2, 5, 3), shape_v=(2, 2, 5, 2)):
    rng = np.random.default_rng(seed)
    return [_pair(rng.normal(size=s), requires_grad=True) for s in (shape_q, shape_k, shape_v)]


def _check_attention(fw_mask=None, torch_mask=None, **kwargs):
    (q, tq), (k, tk), (v, tv) = _attention_inputs(**{key: kwargs.pop(key) for key in list(kwargs)
                                                     if key.startswith("shape")})
    out = fw.scaled_dot_product_attention(q, k, v, fw_mask, **kwargs)
    t_out = F.scaled_dot_product_attention(tq, tk, tv, torch_mask, **kwargs)
    _close(out, t_out)
    cotangent = np.random.default_rng(5).normal(size=tuple(out.shape))
    out.backward(fw.tensor(cotangent))
    t_out.backward(torch.tensor(cotangent))
    for ours, theirs in ((q, tq), (k, tk), (v, tv)):
        _close(ours.grad, theirs.grad)
    return out


def test_attention_causal_matches_torch():
    _check_attention(is_causal=True)
    _check_attention(is_causal=True, shape_q=(1, 6, 3), shape_k=(1, 4, 3), shape_v=(1, 4, 2))


def test_attention_bool_mask_matches_torch_and_combines_with_causal_by_folding():
    mask = np.random.default_rng(2).random((4, 5)) < 0.7
    mask[:, 0] = True
    _check_attention(fw.tensor(mask), torch.tensor(mask))
    causal_and_mask = np.tril(np.ones((4, 5), bool)) & mask
    _check_attention(fw.tensor(causal_and_mask), torch.tensor(causal_and_mask))
    (q, _), (k, _), (v, _) = _attention_inputs()
    with pytest.raises(UnsupportedError, match="fold the causal mask into attn_mask"):
        fw.scaled_dot_product_attention(q, k, v, fw.tensor(mask), is_causal=True)


def test_attention_fully_masked_rows_give_zeros_not_nan_like_torch():
    mask = np.ones((4, 5), bool)
    mask[1] = False  # query 1 may attend to nothing
    out = _check_attention(fw.tensor(mask), torch.tensor(mask))
    assert np.isfinite(out.detach().numpy()).all()
    np.testing.assert_array_equal(out.detach().numpy()[:, :, 1], 0.0)
    additive = np.where(mask, 0.0, -np.inf)
    out = _check_attention(fw.tensor(additive), torch.tensor(additive))
    np.testing.assert_array_equal(out.detach().numpy()[:, :, 1], 0.0)


def test_attention_minus_inf_mask_never_creates_nan_with_one_allowed_key():
    additive = np.full((4, 5), -np.inf)
    additive[np.arange(4), np.arange(4)] = 0.0  # each query sees exactly one key
    (q, _), (k, _), (v, _) = _attention_inputs()
    out = fw.scaled_dot_product_attention(q, k, v, fw.tensor(additive))
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(
        v.detach().numpy()[:, :, :4], out.shape))
    out.sum().backward()
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))


def test_attention_float_mask_gradient_matches_torch():
    rng = np.random.default_rng(3)
    (q, tq), (k, tk), (v, tv) = _attention_inputs()
    mask, t_mask = _pair(rng.normal(size=(2, 1, 4, 5)), requires_grad=True)
    out = fw.scaled_dot_product_attention(q, k, v, mask, scale=0.7)
    t_out = F.scaled_dot_product_attention(tq, tk, tv, t_mask, scale=0.7)
    out.sum().backward()
    t_out.sum().backward()
    _close(out, t_out)
    _close(mask.grad, t_mask.grad)


def test_attention_shape_errors_name_the_shapes():
    (q, _), (k, _), (v, _) = _attention_inputs()
    short_v = fw.randn(2, 2, 3, 2, dtype=fw.float64)
    with pytest.raises(ShapeError, match=r"k \(2, 2, 5, 3\) and v \(2, 2, 3, 2\) do not fit"):
        fw.scaled_dot_product_attention(q, k, short_v)
    with pytest.raises(ShapeError, match="attn_mask"):
        fw.scaled_dot_product_attention(q, k, v, fw.ones(3, 5, dtype=fw.bool))


def test_attention_grouped_query_heads_refuses_heads_that_do_not_divide():
    """enable_gqa as torch: key/value heads must divide the query's (a RuntimeError there and
    here), and inputs need a heads dimension (an IndexError in both)."""
    q, k = fw.randn(2, 7, 4, 8), fw.randn(2, 2, 5, 8)
    with pytest.raises(ShapeError, match=r"must divide the number of heads in query \(7\)"):
        fw.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    with pytest.raises(RuntimeError):
        torch.nn.functional.scaled_dot_product_attention(
            torch.randn(2, 7, 4, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8),
            enable_gqa=True)
    with pytest.raises(IndexError):
        fw.scaled_dot_product_attention(fw.randn(4, 8), fw.randn(5, 8), fw.randn(5, 8),
                                        enable_gqa=True)
    with pytest.raises(ShapeError):  # without enable_gqa the heads must broadcast
        fw.scaled_dot_product_attention(fw.randn(2, 6, 4, 8), k, k)
