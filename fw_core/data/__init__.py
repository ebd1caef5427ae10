"""fw.data: datasets, samplers, the DataLoader, transforms and dataset loaders.

>>> import fw_core as fw
>>> train = fw.data.datasets.load_mnist_sample("train")
>>> loader = fw.data.DataLoader(train, batch_size=64, shuffle=True, num_workers=2)
>>> for images, labels in loader: ...
"""

from . import datasets, transforms
from .collate import default_collate, default_convert
from .dataset import (
    ArrayDataset,
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .errors import (
    DataError,
    DataFormatError,
    DataIndexError,
    DatasetError,
    LoaderTimeoutError,
    MissingDependencyError,
    SampleError,
    UnsizedError,
    WorkerInitError,
)
from .loader import DataLoader, sample_generator
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .workers import WorkerInfo, get_worker_info

__all__ = ["ArrayDataset", "BatchSampler", "ChainDataset", "ConcatDataset", "DataError",
           "DataFormatError", "DataIndexError", "DataLoader", "Dataset", "DatasetError",
           "DistributedSampler", "IterableDataset", "LoaderTimeoutError",
           "MissingDependencyError", "RandomSampler", "Sampler", "SampleError",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "UnsizedError", "WeightedRandomSampler", "WorkerInfo", "WorkerInitError", "datasets",
           "default_collate", "default_convert", "get_worker_info", "random_split",
           "sample_generator", "transforms"]
