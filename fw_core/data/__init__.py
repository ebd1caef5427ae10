"""fw.data: datasets, samplers, the DataLoader, transforms and dataset loaders.

>>> import fw_core as fw
>>> train = fw.data.datasets.load_mnist_sample("train")
>>> loader = fw.data.DataLoader(train, batch_size=64, shuffle=True, num_workers=2)
>>> for images, labels in loader: ...
"""

from . import datasets, transforms
from .dataset import (
    ArrayDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .errors import (
    DataError,
    DataFormatError,
    DataIndexError,
    DatasetError,
    MissingDependencyError,
    SampleError,
    UnsizedError,
)
from .loader import DataLoader, default_collate, sample_generator
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["ArrayDataset", "BatchSampler", "ConcatDataset", "DataError", "DataFormatError",
           "DataIndexError", "DataLoader", "Dataset", "DatasetError", "IterableDataset",
           "MissingDependencyError", "RandomSampler", "Sampler", "SampleError",
           "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "UnsizedError", "WeightedRandomSampler", "datasets", "default_collate",
           "random_split", "sample_generator", "transforms"]
