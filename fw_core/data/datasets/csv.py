"""Tabular data from a delimited text file: numeric feature columns and one target column."""

from __future__ import annotations

__all__ = ["CSVDataset", "read_csv"]

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ... import dtypes as _dt
from ...errors import FwError
from ...ops.meta import describe, located
from ..dataset import ArrayDataset
from ..errors import DataError, DataFormatError, DatasetError
from ._files import read_bytes


def read_csv(path: str | os.PathLike, delimiter: str = ",", header: bool = True
             ) -> tuple[list[str], list[str]]:
    """(column names, data lines) of a text file, raw or gzipped; blank lines are dropped.

    Without a header the columns are named "0", "1", ... after the first data line.

    Raises:
        DatasetError: the file does not exist.
        DataFormatError: not UTF-8, empty, no data rows, or a header naming a column twice.
    """
    return _read(path, delimiter, header, "read_csv")


def _read(path, delimiter: str, header: bool, who: str) -> tuple[list[str], list[str]]:
    """read_csv for ``who`` (read_csv, CSVDataset), whose name its errors carry."""
    path = Path(path)
    arrived = describe(path=str(path), delimiter=delimiter, header=header)
    if not path.is_file():
        raise DatasetError(f"CSV file {path} does not exist", op=who, inputs=arrived,
                           hint="pass the path of an existing file (fw never downloads data)")
    try:
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{path} is not UTF-8 text ({exc})", op=who, inputs=arrived,
                              hint="save it as UTF-8, or check that it is a CSV file") from None
    lines = text.splitlines()
    numbered = [(k, line) for k, line in enumerate(lines, 1) if line.strip()]
    if header:
        if not numbered:
            raise DataFormatError(f"{path} is empty: expected a header line", op=who,
                                  inputs=arrived, hint="add a header line naming the columns, "
                                  "then the data rows (or pass header=False)")
        names = _split(numbered[0][1], delimiter)
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise DataFormatError(
                f"{path}, line {numbered[0][0]}: the header names column "
                f"{', '.join(map(repr, repeated))} more than once, so a column name would mean "
                "two columns", op=who, inputs=f"header: {numbered[0][1][:80]!r}",
                hint="give every column its own name in the header")
        numbered = numbered[1:]
    else:
        names = [str(k) for k in range(len(_split(numbered[0][1], delimiter)))] if numbered \
            else []
    if not numbered:
        raise DataFormatError(f"{path} has no data rows", op=who, inputs=arrived,
                              hint="add rows below the header")
    return names, numbered


def _split(line: str, delimiter: str) -> list[str]:
    return next(csv.reader([line], delimiter=delimiter))


def _column(ref, names: list[str], path: Path, header: bool) -> int:
    if isinstance(ref, str):
        if not header:
            raise DataError(f"column {ref!r}: {path} has no header, so columns are numbers",
                            inputs=f"columns: {list(range(len(names)))}",
                            hint="refer to columns by position (0, 1, ...) or pass header=True")
        if ref not in names:
            raise DataError(f"{path} has no column {ref!r}", inputs=f"columns: {names}",
                            hint="use one of the header's names, or a column number")
        return names.index(ref)
    if not -len(names) <= int(ref) < len(names):
        raise DataError(f"column {ref} is out of range: {path} has {len(names)} columns",
                        inputs=f"columns: {names}",
                        hint=f"use a column number in [{-len(names)}, {len(names) - 1}]")
    return int(ref) % len(names)


def _first_bad_row(path: Path, names, rows, delimiter: str, numeric: list[int]) -> Exception:
    """Find and describe the first line that np.loadtxt could not parse."""
    for number, line in rows:
        fields = _split(line, delimiter)
        if len(fields) != len(names):
            return DataFormatError(f"{path}, line {number}: {len(fields)} fields, expected "
                                   f"{len(names)}", inputs=f"line {number}: {line[:80]!r}",
                                   hint="every row needs one value per column; check for a "
                                        "missing or extra delimiter")
        for col in numeric:
            try:
                float(fields[col])
            except ValueError:
                return DataFormatError(f"{path}, line {number}, column {names[col]!r}: "
                                       f"{fields[col]!r} is not a number",
                                       inputs=f"line {number}: {line[:80]!r}",
                                       hint="fix or remove the row, or leave the column out "
                                            "of feature_columns")
    return DataFormatError(f"{path} could not be parsed as delimited numbers",
                           inputs=f"{len(rows)} rows, delimiter {delimiter!r}",
                           hint="check the delimiter and the quoting")


class CSVDataset(ArrayDataset):
    """Rows of a CSV file as (features, target) samples.

    Args:
        path: the file (raw or gzipped).
        target_column: the target's header name or column number (negative counts from the
            end).
        feature_columns: names or numbers of the feature columns (default: all the others).
        delimiter: the field separator.
        header: whether the first line holds column names.
        dtype: the features' dtype (fw.float32 by default).
        transform, target_transform: applied to each feature row / target.

    Sample ``i`` is ``(features, target)``: a 1-d NumPy array and a NumPy scalar. A numeric
    target column is int64 when all its values are whole numbers (class labels) and of
    ``dtype`` otherwise; a non-numeric one becomes class indices into ``classes`` (sorted).

    Raises:
        DatasetError: the file does not exist.
        DataFormatError: a row with the wrong number of fields or a non-numeric feature; the
            message names the line number and the column.
        DataError: an unknown column name or number.

    >>> ds = fw.data.datasets.CSVDataset("iris.csv", target_column="species")
    """

    def __init__(self, path: str | os.PathLike, target_column: int | str,
                 feature_columns: Sequence[int | str] | None = None, delimiter: str = ",",
                 header: bool = True, dtype=_dt.float32, transform=None,
                 target_transform=None):
        path = Path(path)
        try:
            dtype = _dt.as_dtype(dtype).numpy
            names, rows = _read(path, delimiter, header, "CSVDataset")
            target = _column(target_column, names, path, header)
            features = ([c for c in range(len(names)) if c != target] if feature_columns is None
                        else [_column(c, names, path, header) for c in feature_columns])
            _check_features(path, names, features, target)
            values, target_values = _parse(path, names, rows, delimiter, features, target)
        except FwError as err:
            raise located(err, "CSVDataset", path=str(path), target_column=target_column,
                          feature_columns=feature_columns) from None
        labels, classes = _targets(target_values, dtype)
        super().__init__(values.astype(dtype), labels, transform, target_transform, classes)
        self.columns = [names[c] for c in features]
        self.target_column = names[target]
        self.path = path


def _check_features(path: Path, names: list[str], features: list[int], target: int) -> None:
    """At least one feature column, none of them the target, none listed twice."""
    if not features:
        raise DataError(f"{path}: no feature columns are left",
                        hint="name at least one feature column besides the target")
    if target in features:
        raise DataError(f"column {names[target]!r} is both the target and a feature, so the "
                        "model would be given the answer",
                        hint=f"leave {names[target]!r} out of feature_columns")
    repeated = sorted({names[c] for c in features if features.count(c) > 1})
    if repeated:
        raise DataError(f"feature_columns lists {', '.join(map(repr, repeated))} more than once",
                        hint="list each feature column once")


def _parse(path: Path, names: list[str], rows, delimiter: str, features: list[int],
           target: int) -> tuple[np.ndarray, np.ndarray]:
    """(feature values as float64, the target column as numbers or text)."""
    lines = [line for _, line in rows]
    quoted = any('"' in line for line in lines)
    widths = {len(_split(line, delimiter)) if quoted else line.count(delimiter) + 1
              for line in lines}
    options = {"delimiter": delimiter, "quotechar": '"', "comments": None, "ndmin": 2}
    try:
        if widths != {len(names)}:
            raise ValueError("ragged rows")
        try:  # all numeric: one pass
            table = np.loadtxt(lines, dtype=np.float64, **options)
            return table[:, features], table[:, target]
        except ValueError:  # a text target column (class names)
            values = np.loadtxt(lines, dtype=np.float64, usecols=features, **options)
            return values, np.loadtxt(lines, dtype=str, usecols=[target], **options)[:, 0]
    except ValueError:
        raise _first_bad_row(path, names, rows, delimiter, features) from None


def _targets(column: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, list[str] | None]:
    try:
        numbers = column.astype(np.float64)
    except ValueError:
        classes, indices = np.unique(np.char.strip(column), return_inverse=True)
        return indices.astype(np.int64), classes.tolist()
    if np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)):
        return numbers.astype(np.int64), None
    return numbers.astype(dtype), None
