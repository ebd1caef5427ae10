"""history(): the chain of ops and modules that produced a tensor, in plain words."""

import fw_core as fw
from fw_core import nn
from fw_debugger import history


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_history_lists_ops_modules_and_shapes_in_order():
    text = history(Mlp()(fw.randn(2, 4)).sum())
    lines = text.splitlines()
    assert lines[0] == "float32[] was made in 4 steps:"
    assert lines[1].startswith("  1. linear in module fc1 (")
    assert "takes a [2, 4] tensor that needs no gradient, a float32[8, 4] leaf that " \
           "requires grad, a float32[8] leaf that requires grad; gives [2, 8]" in lines[1]
    assert lines[2].startswith("  2. relu in module act (max(x, 0)): takes the [2, 8] of step 1")
    assert lines[3].startswith("  3. linear in module fc2") and lines[3].endswith("gives [2, 3]")
    assert lines[4].startswith("  4. sum in no module") and lines[4].endswith("gives []")


def test_shared_inputs_appear_once_and_limit_keeps_the_latest_steps():
    x = fw.randn(3, requires_grad=True)
    y = x.exp()
    z = y * y + y
    text = history(z)
    assert text.count(". exp in") == 1 and "3 steps" in text.splitlines()[0]
    short = history(z, limit=1).splitlines()
    assert short[1] == "  ... 2 earlier step(s) not shown" and short[2].startswith("  3. add")


def test_without_a_graph_only_the_last_op_is_known():
    net = Mlp()
    with fw.no_grad():
        out = net(fw.randn(2, 4))
    text = history(out)
    assert text.startswith("float32[2, 3] was made by linear in module fc2.")
    assert "not recorded" in text


def test_leaves():
    assert "made from data" in history(fw.tensor([1.0, 2.0]))
    assert history(fw.ones(2)) == "float32[2] was made by ones, which creates values: it has " \
                                  "no history."
    assert "parameter or input" in history(nn.Linear(2, 2).weight)
