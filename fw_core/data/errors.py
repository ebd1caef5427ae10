"""The errors fw.data raises: each one names the file, line, sample or argument at fault.

They derive from :class:`fw_core.errors.FwError` and from the built-in exception a Python user
would catch for the same mistake (a missing dataset file is a ``FileNotFoundError``, a bad row a
``ValueError``, a missing optional package an ``ImportError``).
"""

from __future__ import annotations

from ..errors import FwError


class DataError(FwError, ValueError):
    """A data argument that cannot work: a batch size of 0, lengths that do not add up,
    samples that cannot be batched together."""


class DataFormatError(DataError):
    """A file whose content does not match its format (bad magic number, truncated record,
    a CSV row that is not numeric); the message names the file and the line or offset."""


class DatasetError(FwError, FileNotFoundError):
    """Dataset files that are not where fw looks for them. fw never downloads data: the
    message lists each missing file and the folder to put it in."""


class MissingDependencyError(FwError, ImportError):
    """An optional package a loader needs (Pillow, scikit-learn, mlxtend) is not installed."""


class SampleError(FwError, RuntimeError):
    """Loading or transforming one sample failed inside a DataLoader.

    Raised in the loop that iterates the loader, whether the sample was loaded there or in a
    worker thread. Attributes: ``index`` (the dataset index, or the position in an iterable
    dataset's stream), ``original`` (the exception the dataset raised) and ``traceback`` (its
    traceback as text, also part of the message).
    """

    def __init__(self, message: str, *, index, original: BaseException, traceback: str,
                 inputs: str | None = None, hint: str | None = None):
        super().__init__(message, inputs=inputs, hint=hint)
        self.index = index
        self.original = original
        self.traceback = traceback

    def __str__(self) -> str:
        return f"{super().__str__()}\n  original traceback:\n{self.traceback.rstrip()}"


class UnsizedError(FwError, TypeError):
    """``len()`` of a loader or dataset that has no length (an IterableDataset without
    ``__len__``). A ``TypeError``, so ``list(loader)`` still works."""


class DataIndexError(FwError, IndexError):
    """A sample index outside a dataset. An ``IndexError``, so Python's sequence protocol
    (``for sample in dataset``) stops on it as usual."""


class LoaderTimeoutError(FwError, RuntimeError):
    """No batch came from the DataLoader's workers within its ``timeout`` seconds. A
    ``RuntimeError``, as PyTorch raises."""


class WorkerInitError(FwError, RuntimeError):
    """A DataLoader's ``worker_init_fn`` raised in a worker thread. ``original`` is the
    exception, ``traceback`` its traceback as text (also part of the message)."""

    def __init__(self, message: str, *, original: BaseException, traceback: str,
                 hint: str | None = None):
        super().__init__(message, hint=hint)
        self.original = original
        self.traceback = traceback

    def __str__(self) -> str:
        return f"{super().__str__()}\n  original traceback:\n{self.traceback.rstrip()}"
