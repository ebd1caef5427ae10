"""Every Tensor method has a definition site a reader and an IDE can find."""

import pathlib

import fw_core as fw
from fw_core import tensor_stub


def test_the_checked_in_stub_is_up_to_date():
    path = pathlib.Path(tensor_stub.__file__).with_name("tensor.pyi")
    assert path.read_text() == tensor_stub.render(), \
        "Tensor's methods changed: run `python -m fw_core.tensor_stub`, commit fw_core/tensor.pyi"


def test_every_method_names_a_module_level_definition():
    stub = tensor_stub.render()
    methods = [line for line in stub.splitlines() if line.startswith("    def ")]
    assert len(methods) > 300
    assert not [m for m in methods if "<lambda>" in m or "<locals>" in m]
    assert "def sum(self, dim: Any = None, keepdim: bool = False" in stub
    assert "# fw_core.ops.reduction.sum" in stub


def test_help_finds_the_op_behind_a_method():
    assert fw.Tensor.sum.__module__ == "fw_core.ops.reduction"
    assert fw.Tensor.add_.__doc__ == fw.add.__doc__ and fw.Tensor.add_.__name__ == "add_"


def test_methods_that_return_a_tensor_say_so():
    stub = tensor_stub.render()
    methods = [line.strip() for line in stub.splitlines() if line.startswith("    def ")]
    for name in ("exp", "sum", "mean", "softmax", "__add__", "__and__", "add_", "T", "data"):
        line = next(m for m in methods if m.startswith(f"def {name}("))
        assert "-> Tensor:" in line, line
    assert "def shape(self) -> tuple[int, ...]" in stub  # a property's own annotation
    untyped = [m for m in methods if "-> Any:" in m]
    assert len(untyped) < 40, untyped  # tuples, unions and host values (sort, max, item...)
