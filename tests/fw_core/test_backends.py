"""fw.backends: the flags PyTorch programs set are kept, with PyTorch's defaults, refused as
PyTorch refuses them, and answer what fw really has (fw_onednn for mkldnn, no cuDNN)."""

import pytest
import torch

import fw_core as fw
from fw_core.device import registry
from fw_core.errors import InvalidArgumentError

FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
         ("cudnn", "allow_tf32"), ("cuda.matmul", "allow_tf32"),
         ("cuda.matmul", "allow_fp16_reduced_precision_reduction"),
         ("cuda.matmul", "allow_bf16_reduced_precision_reduction"), ("mkldnn", "enabled")]


def _group(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


@pytest.mark.parametrize("path,flag", FLAGS)
def test_flags_start_at_pytorchs_defaults_and_keep_what_is_set(path, flag):
    ours, theirs = _group(fw.backends, path), _group(torch.backends, path)
    assert getattr(ours, flag) is getattr(theirs, flag)
    default = getattr(ours, flag)
    try:
        setattr(ours, flag, not default)
        assert getattr(ours, flag) is (not default)
    finally:
        setattr(ours, flag, default)


@pytest.mark.parametrize("path,flag", FLAGS[:2])
def test_a_flag_takes_only_a_bool_as_in_pytorch(path, flag):
    with pytest.raises(InvalidArgumentError, match=f"{flag} expects a bool, but got int") as e:
        setattr(_group(fw.backends, path), flag, 1)
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(RuntimeError, match="expects a bool"):
        setattr(_group(torch.backends, path), flag, 1)


def test_an_unknown_flag_is_an_attribute_error_not_a_silent_new_setting():
    with pytest.raises(AttributeError, match="has no flag 'benchmarks'"):
        fw.backends.cudnn.benchmarks = True
    with pytest.raises(AttributeError, match="flags: allow_bf16"):
        fw.backends.cuda.matmul.allow_tf33  # noqa: B018


def test_availability_answers_what_fw_has():
    assert fw.backends.cudnn.is_available() is False and fw.backends.cudnn.version() is None
    assert fw.backends.mps.is_available() is False and fw.backends.mps.is_built() is False
    assert fw.backends.cuda.is_built() is ("cuda" in registry.specs)
    onednn = any(i.name == "fw_onednn" and i.state == "loaded" for i in fw.plugins.info())
    assert fw.backends.mkldnn.is_available() is onednn
    fw.plugins.use(["fw_cpu"])
    try:
        assert fw.backends.mkldnn.is_available() is False
        assert fw.backends.cuda.is_built() is False
    finally:
        fw.plugins.use(None)
