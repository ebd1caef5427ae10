"""fw.nn.summary: the table's rows, shapes, counts and totals; no side effects on the model."""

import numpy as np
import pytest

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import FwError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(4 * 4 * 4, 10))

    def forward(self, x):
        return self.head(self.features(x))


def test_table_lists_every_module_with_output_shape_and_own_parameters():
    text = nn.summary(Net(), (2, 3, 8, 8), quiet=True)
    lines = text.splitlines()
    assert lines[1].split() == ["Layer", "Type", "Output", "shape", "Params"]
    rows = {line.split()[0]: line.split() for line in lines[3:13]}
    assert list(rows) == ["(root)", "features", "features.0", "features.1", "features.2",
                          "features.3", "head", "head.0", "head.1", "head.2"]
    assert rows["(root)"][1:] == ["Net", "[2,", "10]", "-"]
    assert rows["features.0"][1:] == ["Conv2d", "[2,", "4,", "8,", "8]", "112"]
    assert rows["features.1"][1:] == ["BatchNorm2d", "[2,", "4,", "8,", "8]", "8"]
    assert rows["features.3"][1:] == ["MaxPool2d", "[2,", "4,", "4,", "4]", "-"]
    assert rows["head.0"][1:] == ["Flatten", "[2,", "64]", "-"]
    assert rows["head.2"][1:] == ["Linear", "[2,", "10]", "650"]
    assert "Total params: 770" in text  # 112 + 8 + 650
    assert "Trainable params: 770" in text and "Non-trainable params: 0" in text


def test_paths_are_indented_by_depth():
    text = nn.summary(Net(), (1, 3, 8, 8), quiet=True)
    assert "\n  features " in text and "\n    features.0 " in text and "\n  head " in text


def test_totals_and_memory_estimates():
    model = nn.Sequential(nn.Linear(100, 200), nn.ReLU())
    model[0].bias.requires_grad_(False)
    text = nn.summary(model, (8, 100), quiet=True)
    assert "Total params: 20,200" in text
    assert "Trainable params: 20,000" in text and "Non-trainable params: 200" in text
    assert "Parameter memory: 78.91 KB" in text  # 20 200 float32
    assert "Estimated activation memory: 12.50 KB" in text  # two leaf outputs of 8 x 200
    assert "Input size: 3.12 KB" in text


def test_prints_and_returns(capsys):
    text = nn.summary(nn.Linear(2, 3), (1, 2))
    assert capsys.readouterr().out.strip() == text.strip()


def test_example_tensors_multiple_inputs_and_dtypes():
    attn = nn.MultiheadAttention(8, 2)
    x = fw.randn(5, 1, 8)
    assert "[5, 1, 8], [1, 5, 5]" in nn.summary(attn, [x, x, x], quiet=True)
    emb = nn.Embedding(10, 4)
    assert "[2, 3, 4]" in nn.summary(emb, (2, 3), dtypes=[fw.int64], quiet=True)
    lstm = nn.LSTM(3, 4)
    assert "[6, 2, 4], [1, 2, 4], [1, 2, 4]" in nn.summary(lstm, (6, 2, 3), quiet=True)


def test_no_side_effects_on_modes_running_stats_or_gradients():
    model = Net()
    model.train()
    mean_before = model.features[1].running_mean.numpy().copy()
    nn.summary(model, (2, 3, 8, 8), quiet=True)
    assert all(m.training for m in model.modules())
    np.testing.assert_array_equal(model.features[1].running_mean.numpy(), mean_before)
    assert model.features[1].num_batches_tracked.item() == 0
    assert all(p.grad is None for p in model.parameters())
    assert not model.head[2]._forward_hooks


def test_unused_modules_are_marked():
    class Partial(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(2, 2), nn.Linear(2, 2)

        def forward(self, x):
            return self.used(x)

    assert "(not run)" in nn.summary(Partial(), (1, 2), quiet=True)


def test_bad_inputs():
    with pytest.raises(FwError, match="cannot build inputs"):
        nn.summary(nn.Linear(2, 2), "2x2", quiet=True)
    with pytest.raises(FwError, match="one dtype per input"):
        nn.summary(nn.Linear(2, 2), (1, 2), dtypes=[fw.float32, fw.float32], quiet=True)
    model = nn.Linear(2, 2)
    with pytest.raises(FwError):
        nn.summary(model, (1, 3), quiet=True)
    assert not model._forward_hooks and model.training


def test_without_input_lists_modules_and_parameters_only():
    text = nn.summary(Net(), quiet=True)
    assert "Total params: 770" in text and "Parameter memory" in text
    assert "activation" not in text and "(not run)" not in text
    assert "features.0" in text
