"""fw_zoo: pretrained models written in fw, built from weight files already installed.

>>> import fw_zoo
>>> fw_zoo.available()  # doctest: +SKIP
['all-minilm-l6-v2', 'efficientnet-lite0']
>>> print(fw_zoo.list())  # doctest: +SKIP
>>> encoder = fw_zoo.load("all-minilm-l6-v2")  # doctest: +SKIP
>>> encoder.encode(["A man is eating food.", "A man eats."]).shape  # doctest: +SKIP
(2, 384)

Nothing is downloaded: each model reads the files of a package installed beforehand and names
the pip command when it is missing.
"""

from .catalog import ZooEntry, ZooModel, available, list, load  # noqa: A004 (fw_zoo.list)
from .sentence_encoder import SentenceEncoder

__all__ = ["SentenceEncoder", "ZooEntry", "ZooModel", "available", "list", "load"]
