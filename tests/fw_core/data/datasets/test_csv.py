"""CSVDataset: columns, target kinds, and errors that name the line."""

import gzip

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import DataError, DataFormatError, DataLoader, DatasetError
from fw_core.data.datasets import CSVDataset

IRIS = """sepal_length,sepal_width,petal_length,species
5.1,3.5,1.4,setosa
7.0,3.2,4.7,versicolor

6.3,3.3,6.0,virginica
4.9,3.0,1.4,setosa
"""


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_text_target_becomes_sorted_class_indices(tmp_path):
    ds = CSVDataset(write(tmp_path, IRIS), target_column="species")
    assert len(ds) == 4 and ds.classes == ["setosa", "versicolor", "virginica"]
    assert ds.columns == ["sepal_length", "sepal_width", "petal_length"]
    features, target = ds[2]
    np.testing.assert_array_equal(features, np.array([6.3, 3.3, 6.0], np.float32))
    assert features.dtype == np.float32 and target == 2 and ds.targets.dtype == np.int64
    x, y = next(iter(DataLoader(ds, batch_size=4)))
    assert x.shape == (4, 3) and x.dtype == fw.float32 and y.tolist() == [0, 1, 2, 0]


def test_numeric_targets_whole_numbers_are_labels_others_values(tmp_path):
    labels = CSVDataset(write(tmp_path, "a,b,y\n1,2,0\n3,4,1\n5,6,1\n"), target_column="y")
    assert labels.targets.dtype == np.int64 and labels.targets.tolist() == [0, 1, 1]
    assert labels.classes is None
    values = CSVDataset(write(tmp_path, "a,y\n1,0.5\n2,1.5\n"), target_column=-1,
                        dtype=fw.float64)
    assert values.targets.dtype == np.float64 and values.targets.tolist() == [0.5, 1.5]
    assert values.data.dtype == np.float64


def test_columns_by_number_without_header_and_feature_subset(tmp_path):
    path = write(tmp_path, "1;10;100;7\n2;20;200;8\n", "plain.txt")
    ds = CSVDataset(path, target_column=0, feature_columns=[3, 1], delimiter=";", header=False)
    np.testing.assert_array_equal(ds.data, [[7, 10], [8, 20]])
    assert ds.targets.tolist() == [1, 2] and ds.columns == ["3", "1"]
    with pytest.raises(DataError, match="no header"):
        CSVDataset(path, target_column="y", delimiter=";", header=False)


def test_quoted_fields_and_gzip(tmp_path):
    text = 'x,label\n1.5,"big, red"\n2.5,small\n'
    path = tmp_path / "q.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    ds = CSVDataset(path, target_column="label")
    assert ds.classes == ["big, red", "small"] and ds.data[:, 0].tolist() == [1.5, 2.5]


def test_non_numeric_feature_names_line_and_column(tmp_path):
    path = write(tmp_path, IRIS.replace("4.9,3.0", "4.9,abc"))
    with pytest.raises(DataFormatError) as info:
        CSVDataset(path, target_column="species")
    message = str(info.value)
    assert f"{path}, line 6, column 'sepal_width': 'abc' is not a number" in message
    assert isinstance(info.value, ValueError)


def test_missing_value_and_ragged_row_name_the_line(tmp_path):
    path = write(tmp_path, "a,b,y\n1,2,0\n3,,1\n")
    with pytest.raises(DataFormatError, match="line 3, column 'b': '' is not a number"):
        CSVDataset(path, target_column="y")
    path = write(tmp_path, "a,b,y\n1,2,0\n3,4,1\n5,6\n")
    with pytest.raises(DataFormatError, match="line 4: 2 fields, expected 3"):
        CSVDataset(path, target_column="y")


def test_column_and_file_errors(tmp_path):
    path = write(tmp_path, IRIS)
    with pytest.raises(DataError, match="no column 'color'") as info:
        CSVDataset(path, target_column="color")
    assert "sepal_length" in str(info.value)
    with pytest.raises(DataError, match="column 9 is out of range"):
        CSVDataset(path, target_column=9)
    with pytest.raises(DataError, match="no feature columns"):
        CSVDataset(path, target_column="species", feature_columns=[])
    with pytest.raises(DatasetError, match="does not exist") as info:
        CSVDataset(tmp_path / "nope.csv", target_column=0)
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(DataFormatError, match="no data rows"):
        CSVDataset(write(tmp_path, "a,b\n\n"), target_column="b")
    with pytest.raises(DataFormatError, match="empty"):
        CSVDataset(write(tmp_path, ""), target_column=0)


def test_duplicate_column_names_are_refused(tmp_path):
    # "a" named two columns: target_column="a" silently meant the first of them
    path = write(tmp_path, "a,b,a,y\n1,2,3,0\n4,5,6,1\n")
    with pytest.raises(DataFormatError) as info:
        CSVDataset(path, target_column="y")
    text = str(info.value)
    assert text.startswith("CSVDataset: ") and "line 1" in text and "'a' more than once" in text
    assert "header: 'a,b,a,y'" in text and "\n  fix:" in text
    with pytest.raises(DataFormatError, match="'a' more than once"):
        fw.data.datasets.read_csv(path)
    names, rows = fw.data.datasets.read_csv(path, header=False)  # no header: columns by number
    assert names == ["0", "1", "2", "3"] and len(rows) == 3


def test_target_among_features_and_repeated_features_are_refused(tmp_path):
    path = write(tmp_path, IRIS)
    with pytest.raises(DataError, match="'species' is both the target and a feature"):
        CSVDataset(path, target_column="species", feature_columns=["sepal_length", "species"])
    with pytest.raises(DataError, match="lists 'sepal_width' more than once"):
        CSVDataset(path, target_column="species", feature_columns=[1, "sepal_width"])
