"""Shared fixtures of fw_zoo's tests: the encoder loaded once per session, its files, and a
handful of real sentences of different lengths (so batches are padded)."""

import pytest
from zoo_torch_bert import TorchSentenceBert

import fw_zoo
from fw_zoo import minilm
from fw_zoo.package_files import model_folder

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "Two men pushed carts through the woods, talking quietly about the long winter that "
    "was coming and the firewood they would need.",
    "Hello!",
    "The quarterly report shows revenue grew by 12% while costs stayed flat.",
]


@pytest.fixture(scope="session")
def encoder():
    return fw_zoo.load("all-minilm-l6-v2")


@pytest.fixture(scope="session")
def folder():
    return model_folder(minilm.PACKAGE, minilm.DISTRIBUTION, minilm.FILES)


@pytest.fixture(scope="session")
def torch_bert(folder):
    return TorchSentenceBert(folder)


@pytest.fixture
def sentences():
    return list(SENTENCES)
