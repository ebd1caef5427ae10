"""fw.save / fw.load: round trips, the safetensors strided-array pitfall, atomic writes, and
clear errors for broken files."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import CheckpointError


def test_state_dict_round_trip_keeps_values_dtypes_and_structure(tmp_path):
    state = {"w": fw.randn(3, 4), "step": 7, "nested": {"m": fw.zeros(2, dtype=fw.int64),
                                                        "betas": (0.9, 0.999)},
             "flag": fw.tensor([True, False]), "half": fw.ones(2, dtype=fw.float16),
             "names": ["a", "b"], "none": None}
    fw.save(state, tmp_path / "s.safetensors")
    back = fw.load(tmp_path / "s.safetensors")
    assert back["step"] == 7 and back["names"] == ["a", "b"] and back["none"] is None
    assert back["nested"]["betas"] == (0.9, 0.999)
    np.testing.assert_array_equal(back["w"].numpy(), state["w"].numpy())
    assert back["nested"]["m"].dtype is fw.int64 and back["flag"].dtype is fw.bool_
    assert back["half"].dtype is fw.float16


def test_non_contiguous_tensors_are_saved_correctly(tmp_path):
    """Regression for safetensors 0.8.0, which writes strided NumPy arrays wrongly."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    transposed = fw.from_numpy(base.T)  # non-contiguous view
    strided = fw.from_numpy(base[:, ::2])
    assert not transposed.numpy().flags["C_CONTIGUOUS"]
    fw.save({"t": transposed, "s": strided}, tmp_path / "x.safetensors")
    back = fw.load(tmp_path / "x.safetensors")
    np.testing.assert_array_equal(back["t"].numpy(), base.T)
    np.testing.assert_array_equal(back["s"].numpy(), base[:, ::2])


def test_truncated_file_raises_checkpoint_error(tmp_path):
    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.randn(100)}, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        fw.load(path)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        fw.load(tmp_path / "nope.safetensors")


def test_failed_write_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    import safetensors.numpy

    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.ones(3)}, path)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.numpy, "save_file", crash)
    with pytest.raises(OSError, match="disk full"):
        fw.save({"w": fw.zeros(3)}, path)
    assert fw.load(path)["w"].tolist() == [1.0, 1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["s.safetensors"]  # no temp file left


def test_unsupported_objects_say_what_can_be_saved(tmp_path):
    with pytest.raises(CheckpointError, match="state_dict"):
        fw.save({"f": object()}, tmp_path / "x.safetensors")


def test_flipped_byte_in_tensor_values_is_detected(tmp_path):
    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.ones(64)}, path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # inside the last tensor's values
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="checksums"):
        fw.load(path)
