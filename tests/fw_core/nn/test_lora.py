"""LoRA: fw.nn.LoRA against a PyTorch reference written here (PEFT's lora.Linear forward:
base(x) + scaling * B(A(dropout(x)))), merging, and fw.nn.utils.lora's apply / save / merge
over a model, eager and compiled."""

import math

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.nn.utils.lora import apply_lora, load_lora_state_dict, lora_state_dict, merge_lora


class TorchLoRA(torch.nn.Module):
    """The reference: PEFT's ``lora.Linear`` forward for one adapter."""

    def __init__(self, base: torch.nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base_layer = base.requires_grad_(False)
        self.lora_A = torch.nn.Linear(base.in_features, r, bias=False, dtype=base.weight.dtype)
        self.lora_B = torch.nn.Linear(r, base.out_features, bias=False, dtype=base.weight.dtype)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


class Attention(fw.nn.Module):
    """LLaMA-style names: what apply_lora's default targets look for."""

    def __init__(self, width: int):
        super().__init__()
        self.q_proj = fw.nn.Linear(width, width)
        self.k_proj = fw.nn.Linear(width, width)
        self.v_proj = fw.nn.Linear(width, width)
        self.o_proj = fw.nn.Linear(width, width, bias=False)

    def forward(self, x):
        return self.o_proj(fw.tanh(self.q_proj(x)) * self.k_proj(x) + self.v_proj(x))


def tiny_model(width: int = 6, depth: int = 2) -> fw.nn.Module:
    return fw.nn.Sequential(*[Attention(width) for _ in range(depth)], fw.nn.Linear(width, 1))


def randomise_b(layer: fw.nn.LoRA) -> None:
    """A nonzero B, so the adapter changes the output and A gets a gradient."""
    fw.nn.init.normal_(layer.lora_B.weight, 0.0, 0.5)


def test_a_new_adapter_leaves_the_output_unchanged_with_kaiming_uniform_a():
    base = fw.nn.Linear(64, 32)
    layer = fw.nn.LoRA(base, r=16, alpha=32)
    x = fw.randn(5, 64)
    np.testing.assert_array_equal(layer(x).detach().numpy(), base(x).detach().numpy())
    assert layer.lora_A.weight.shape == (16, 64) and layer.lora_B.weight.shape == (32, 16)
    assert not layer.lora_B.weight.detach().numpy().any()
    a = layer.lora_A.weight.detach().numpy()
    bound = 1 / math.sqrt(64)  # kaiming_uniform_(a=sqrt(5)): sqrt(6 / ((1 + 5) * fan_in))
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
    assert abs(a.std() - bound / math.sqrt(3)) < 0.1 * bound  # uniform's standard deviation
    assert layer.scaling == 2.0 and not layer.merged


@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 7)])
def test_forward_and_adapter_gradients_equal_the_torch_reference(shape):
    base = fw.nn.Linear(7, 5, dtype=fw.float64)
    layer = fw.nn.LoRA(base, r=3, alpha=6)
    randomise_b(layer)
    reference = TorchLoRA(torch.nn.Linear(7, 5, dtype=torch.float64), r=3, alpha=6)
    with torch.no_grad():
        for name, p in reference.named_parameters():
            p.copy_(torch.from_numpy(layer.state_dict()[name].numpy()))

    x = np.random.default_rng(0).standard_normal(shape)
    cotangent = np.random.default_rng(1).standard_normal((*shape[:-1], 5))
    fx, tx = fw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = layer(fx), reference(tx)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    out.backward(fw.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    for part in ("lora_A", "lora_B"):
        np.testing.assert_allclose(getattr(layer, part).weight.grad.numpy(),
                                   getattr(reference, part).weight.grad.numpy(), rtol=1e-12,
                                   atol=1e-12, err_msg=part)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert base.weight.grad is None and base.bias.grad is None
    assert not base.weight.requires_grad and not base.bias.requires_grad


def test_dropout_acts_on_the_adapter_input_only():
    layer = fw.nn.LoRA(fw.nn.Linear(8, 4), r=2, alpha=2, dropout=0.5)
    x = fw.randn(16, 8)
    base = layer.base_layer(x).detach().numpy()
    np.testing.assert_array_equal(layer(x).detach().numpy(), base)  # B = 0: base path undropped
    randomise_b(layer)
    layer.eval()
    clean = layer(x).detach().numpy()
    np.testing.assert_allclose(clean, (layer.base_layer(x) + layer.lora_B(layer.lora_A(x))
                                       ).detach().numpy(), rtol=1e-6, atol=1e-6)
    layer.train()
    assert not np.allclose(layer(x).detach().numpy(), clean)


def test_merge_equals_the_unmerged_forward_and_unmerge_restores_the_weight():
    base = fw.nn.Linear(10, 6)
    original = base.weight.detach().numpy().copy()
    layer = fw.nn.LoRA(base, r=4, alpha=8)
    randomise_b(layer)
    x = fw.randn(3, 10)
    unmerged = layer(x).detach().numpy()
    weight = base.weight
    assert layer.merge() is layer and layer.merged
    assert base.weight is weight  # in place: an optimizer holding it still does
    expected = original + 2.0 * (layer.lora_B.weight @ layer.lora_A.weight).detach().numpy()
    np.testing.assert_allclose(base.weight.detach().numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(layer(x).detach().numpy(), unmerged, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(base(x).detach().numpy(), unmerged, rtol=1e-5, atol=1e-6)
    with pytest.raises(fw.errors.InvalidArgumentError, match="merged already"):
        layer.merge()
    layer.unmerge()
    assert not layer.merged
    np.testing.assert_allclose(base.weight.detach().numpy(), original, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(layer(x).detach().numpy(), unmerged, rtol=1e-5, atol=1e-6)
    with pytest.raises(fw.errors.InvalidArgumentError, match="not merged"):
        layer.unmerge()


def test_layer_arguments_are_checked():
    with pytest.raises(fw.errors.ArgumentTypeError, match="must be an fw.nn.Linear, got Conv2d"):
        fw.nn.LoRA(fw.nn.Conv2d(3, 3, 1))
    with pytest.raises(fw.errors.ArgumentError, match="r must be >= 1, got 0"):
        fw.nn.LoRA(fw.nn.Linear(4, 4), r=0)
    with pytest.raises(fw.errors.ArgumentError, match=r"dropout must be in \[0.0, 1.0\)"):
        fw.nn.LoRA(fw.nn.Linear(4, 4), dropout=1.0)


def test_apply_lora_wraps_the_targets_and_freezes_everything_else():
    model = tiny_model()
    x = fw.randn(4, 6)
    before = model(x).detach().numpy()
    assert apply_lora(model, r=2, alpha=4) is model
    adapted = [path for path, m in model.named_modules() if isinstance(m, fw.nn.LoRA)]
    assert adapted == ["0.q_proj", "0.v_proj", "1.q_proj", "1.v_proj"]
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable == [f"{path}.{part}.weight" for path in adapted
                         for part in ("lora_A", "lora_B")]
    assert model.num_parameters(trainable_only=True) == 4 * 2 * (6 + 6)
    assert "0.q_proj.base_layer.weight" in model.state_dict()
    np.testing.assert_array_equal(model(x).detach().numpy(), before)


def test_targets_by_regular_expression_and_by_predicate():
    by_pattern = apply_lora(tiny_model(), r"1\.(k|o)_proj")
    assert [p for p, m in by_pattern.named_modules() if isinstance(m, fw.nn.LoRA)] == \
        ["1.k_proj", "1.o_proj"]
    by_predicate = apply_lora(tiny_model(), lambda path, m: isinstance(m, fw.nn.Linear)
                              and m.bias is None)
    assert [p for p, m in by_predicate.named_modules() if isinstance(m, fw.nn.LoRA)] == \
        ["0.o_proj", "1.o_proj"]


def test_a_second_call_adds_adapters_and_keeps_the_first_trainable():
    model = apply_lora(tiny_model(), ["q_proj"])
    apply_lora(model, ["k_proj"])
    trainable = {name.rsplit(".", 3)[1] for name, p in model.named_parameters()
                 if p.requires_grad}
    assert trainable == {"q_proj", "k_proj"}


def test_a_shared_linear_gets_one_adapter():
    shared = fw.nn.Linear(3, 3)
    model = fw.nn.Sequential(shared, fw.nn.ReLU(), shared)
    apply_lora(model, ["0", "2"])
    assert model[0] is model[2] and isinstance(model[0], fw.nn.LoRA)
    assert len(lora_state_dict(model)) == 2


def test_target_errors_name_what_exists_and_leave_the_model_unchanged():
    model = tiny_model()
    with pytest.raises(fw.errors.ArgumentError) as error:
        apply_lora(model, ["q_proj", "v_prj"])
    message = str(error.value)
    assert "'v_prj' matched no module" in message and "'q_proj'" not in message.split(":")[1]
    assert "its 9 Linear layers are named q_proj, k_proj, v_proj, o_proj, 2" in message
    with pytest.raises(fw.errors.ArgumentError, match="matched no module"):
        apply_lora(model, r"q_proj")  # a string is a whole-path expression, as in PEFT
    with pytest.raises(fw.errors.ArgumentTypeError, match="0 is a module of type Attention"):
        apply_lora(model, ["0"])
    with pytest.raises(fw.errors.ArgumentError, match="r must be >= 1, got -1"):
        apply_lora(model, r=-1)
    with pytest.raises(fw.errors.ArgumentTypeError, match="must be module names"):
        apply_lora(model, [])
    assert all(p.requires_grad for p in model.parameters())
    assert not any(isinstance(m, fw.nn.LoRA) for m in model.modules())
    apply_lora(model, ["v_proj"])
    with pytest.raises(fw.errors.ArgumentTypeError, match="0.v_proj has a LoRA adapter already"):
        apply_lora(model, ["v_proj"])


def _regression(seed: int = 0):
    """A frozen model and targets from the same model with a rank-2 change of each q_proj."""
    fw.manual_seed(seed)
    teacher, student = tiny_model(), tiny_model()
    student.load_state_dict(teacher.state_dict())
    with fw.no_grad():
        for block in (teacher[0], teacher[1]):
            change = fw.randn(6, 2) @ fw.randn(2, 6) * 0.3
            block.q_proj.weight.add_(change)
    x = fw.randn(64, 6)
    with fw.no_grad():
        y = teacher(x)
    return student, x, y


def training_step(model, optimizer):
    """One step of mean-squared-error regression: ``step(x, y) -> loss``."""
    def step(x, y):
        optimizer.zero_grad()
        loss = fw.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def test_training_only_the_adapters_fits_a_low_rank_change():
    model, x, y = _regression()
    frozen = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    apply_lora(model, ["q_proj"], r=2, alpha=2)
    step = training_step(model, fw.optim.Adam([p for p in model.parameters()
                                               if p.requires_grad], lr=3e-2))
    losses = [step(x, y).item() for _ in range(150)]
    assert losses[-1] < 0.02 * losses[0], (losses[0], losses[-1])
    for name, p in model.named_parameters():
        if not p.requires_grad:
            assert p.grad is None, name
            plain = name.replace(".base_layer", "")
            np.testing.assert_array_equal(p.detach().numpy(), frozen[plain], err_msg=name)

    trained = model(x).detach().numpy()
    merged = merge_lora(model)
    assert not any(isinstance(m, fw.nn.LoRA) for m in merged.modules())
    assert isinstance(merged[0].q_proj, fw.nn.Linear) and merged[0].q_proj.path == "0.q_proj"
    assert list(merged.state_dict()) == list(frozen)
    np.testing.assert_allclose(merged(x).detach().numpy(), trained, rtol=1e-5, atol=1e-6)


def test_merge_lora_of_a_lone_adapter_returns_its_linear():
    layer = fw.nn.LoRA(fw.nn.Linear(5, 3), r=2)
    randomise_b(layer)
    x = fw.randn(2, 5)
    expected = layer(x).detach().numpy()
    linear = merge_lora(layer)
    assert type(linear) is fw.nn.Linear and linear is layer.base_layer
    np.testing.assert_allclose(linear(x).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_the_adapter_state_dict_round_trips_through_save_and_load(tmp_path):
    model, x, _ = _regression()
    base_state = model.state_dict()
    apply_lora(model, ["q_proj", "v_proj"], r=3)
    for m in model.modules():
        if isinstance(m, fw.nn.LoRA):
            randomise_b(m)
    adapter = lora_state_dict(model)
    assert list(adapter) == [f"{i}.{name}.{part}.weight" for i in (0, 1)
                             for name in ("q_proj", "v_proj") for part in ("lora_A", "lora_B")]
    fw.save(adapter, tmp_path / "adapter.safetensors")

    fresh = tiny_model()
    fresh.load_state_dict(base_state)
    apply_lora(fresh, ["q_proj", "v_proj"], r=3)
    load_lora_state_dict(fresh, fw.load(tmp_path / "adapter.safetensors"))
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())

    other = apply_lora(tiny_model(), ["q_proj"], r=3)
    with pytest.raises(fw.errors.StateDictError, match="no adapter weight of this model: "
                       "0.v_proj.lora_A.weight"):
        load_lora_state_dict(other, adapter)
    with pytest.raises(fw.errors.StateDictError, match="missing adapter keys: 1.q_proj"):
        load_lora_state_dict(other, {k: v for k, v in adapter.items() if k.startswith("0.")})
    lower_rank = apply_lora(tiny_model(), ["q_proj", "v_proj"], r=2)
    with pytest.raises(fw.errors.StateDictError, match=r"checkpoint \(3, 6\) vs model \(2, 6\)"):
        load_lora_state_dict(lower_rank, adapter)


def test_a_compiled_training_step_equals_the_eager_one():
    fw.scheduler.reset()
    fw.scheduler.configure(compile_after=0)
    try:
        runs = []
        for compiled in (False, True):
            model, x, y = _regression()
            apply_lora(model, ["q_proj", "v_proj"], r=2, alpha=4, dropout=0.0)
            step = training_step(model, fw.optim.AdamW([p for p in model.parameters()
                                                        if p.requires_grad], lr=1e-2))
            run = fw.compile(step) if compiled else step
            losses = [run(x, y).item() for _ in range(10)]
            runs.append((losses, lora_state_dict(model), model))
        (eager, eager_adapter, _), (losses, adapter, model) = runs
        np.testing.assert_allclose(losses, eager, rtol=1e-4, atol=1e-6)
        assert losses[-1] < losses[0]
        for key in adapter:
            np.testing.assert_allclose(adapter[key].numpy(), eager_adapter[key].numpy(),
                                       rtol=1e-4, atol=1e-6, err_msg=key)
        assert run.counts["plan_calls"] == 9 and run.counts["fallbacks"] == 0, run.explain()
        assert all(p.grad is None for p in model.parameters() if not p.requires_grad)
    finally:
        fw.scheduler.reset()
