"""fw.save / fw.load: exact round trips, a checksum over the whole file, and CheckpointError
(nothing else) for every damaged or crafted file."""

import errno
import hashlib
import json
import os
import random
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import safetensors.numpy

import fw_core as fw
from fw_core.errors import CheckpointError
from fw_core.io import files, safetensors_format

FW_DTYPES = [fw.bool_, fw.uint8, fw.int8, fw.int16, fw.int32, fw.int64, fw.float16, fw.float32,
             fw.float64]


def values(dtype: np.dtype, shape) -> np.ndarray:
    count = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(count) % 3 == 0).reshape(shape)
    return (np.arange(count) * 7 % 251).astype(dtype).reshape(shape)


def assert_same(a, b):
    """Same type, dtype, shape and values, recursively."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, fw.Tensor):
        assert a.dtype is b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


def round_trip(obj, tmp_path):
    fw.save(obj, tmp_path / "x.safetensors")
    return fw.load(tmp_path / "x.safetensors")


# -- exact round trips ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FW_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (5,), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips_exactly(dtype, shape, tmp_path):
    t = fw.from_numpy(values(dtype.numpy, shape))
    assert_same(round_trip({"t": t}, tmp_path), {"t": t})


def test_non_contiguous_and_broadcast_tensors_round_trip_exactly(tmp_path):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    views = {"transposed": base.transpose(2, 0, 1), "strided": base[:, ::2, 1::2],
             "reversed": base[::-1], "broadcast": np.broadcast_to(np.float32(3.5), (4, 5)),
             "broadcast_row": np.broadcast_to(base[0, 0], (3, 4)), "scalar_view": base[1, 2, 3]}
    state = {k: fw.from_numpy(np.asarray(v)) for k, v in views.items()}
    back = round_trip(state, tmp_path)
    for key, view in views.items():
        assert back[key].shape == np.shape(view)
        np.testing.assert_array_equal(back[key].numpy(), view)


def test_arrays_numbers_and_nested_structures_round_trip_exactly(tmp_path):
    state = {
        "w": fw.randn(3, 4), "step": 7, "nested": {"m": fw.zeros(2, dtype=fw.int64),
                                                  "betas": (0.9, 0.999), 3: [None, True]},
        "arrays": [np.arange(5, dtype=np.int16), np.array(2.5), np.zeros((0, 2), np.uint32),
                   np.arange(4, dtype=">i4")],
        "floats": [float("inf"), -0.0, 1e-300, float("nan")], "text": "ünïcode ✓",
        "empty": {"d": {}, "l": [], "t": ()}, "big": 2**70,
    }
    back = round_trip(state, tmp_path)
    expected = {**state, "arrays": [*state["arrays"][:3], np.arange(4, dtype="<i4")]}
    assert_same(back, expected)
    assert str(back["floats"][1]) == "-0.0"


def test_batchnorm_state_dict_loads_into_its_own_model(tmp_path):
    net = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.BatchNorm1d(4))
    net(fw.randn(8, 3))
    back = round_trip(net.state_dict(), tmp_path)
    assert back["1.num_batches_tracked"].shape == ()
    copy = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.BatchNorm1d(4))
    copy.load_state_dict(back)
    assert copy[1].num_batches_tracked.item() == 1


def test_files_are_standard_safetensors_both_ways(tmp_path):
    fw.save({"a": fw.arange(6).reshape(2, 3), "s": fw.tensor(1.5)}, tmp_path / "fw.safetensors")
    read = safetensors.numpy.load_file(str(tmp_path / "fw.safetensors"))
    assert read["t0"].tolist() == [[0, 1, 2], [3, 4, 5]] and read["t1"].shape == ()
    safetensors.numpy.save_file({"x": np.ones((2, 2), np.float32)}, str(tmp_path / "p.st"))
    plain = fw.load(tmp_path / "p.st")
    assert plain["x"].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_plain_file_with_a_dtype_fw_lacks_says_how_to_read_it(tmp_path):
    safetensors.numpy.save_file({"x": np.ones(2, np.uint16)}, str(tmp_path / "p.st"))
    with pytest.raises(CheckpointError, match="(?s)uint16.*safetensors.numpy.load_file"):
        fw.load(tmp_path / "p.st")


def test_unsupported_values_are_refused_before_anything_is_written(tmp_path):
    for bad, match in [({"f": object()}, "state_dict"), ({(1, 2): 3}, "keys must be"),
                       ({True: 1}, "keys must be"), ({"c": np.ones(2, np.complex64)}, "dtype"),
                       ({"lambda": lambda: 0}, "cannot store a function")]:
        with pytest.raises(CheckpointError, match=match):
            fw.save(bad, tmp_path / "x.safetensors")
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(CheckpointError, match="nests more than"):
        fw.save(cycle, tmp_path / "x.safetensors")
    assert list(tmp_path.iterdir()) == []


# -- damaged files -------------------------------------------------------------------------------
def saved_file(tmp_path, name="s.safetensors"):
    path = tmp_path / name
    fw.save({"weights": {"a": fw.randn(8, 4), "b": fw.arange(6), "c": fw.tensor(3.0)},
             "step": 12, "names": ["x", "y"]}, path)
    return path


def header_length(data: bytes) -> int:
    return 8 + struct.unpack("<Q", data[:8])[0]


def test_every_single_bit_flip_in_the_header_is_detected(tmp_path):
    path = saved_file(tmp_path)
    data = path.read_bytes()
    end = header_length(data)
    damaged = tmp_path / "damaged.safetensors"
    flips = 0
    for byte in range(end):
        for bit in range(8):
            changed = bytearray(data)
            changed[byte] ^= 1 << bit
            damaged.write_bytes(bytes(changed))
            with pytest.raises(CheckpointError):
                fw.load(damaged)
            flips += 1
    assert flips == 8 * end >= 60


def test_bit_flips_in_the_values_are_detected(tmp_path):
    path = saved_file(tmp_path)
    data = path.read_bytes()
    start = header_length(data)
    damaged = tmp_path / "damaged.safetensors"
    rng = random.Random(0)
    for _ in range(60):
        changed = bytearray(data)
        changed[rng.randrange(start, len(data))] ^= 1 << rng.randrange(8)
        damaged.write_bytes(bytes(changed))
        with pytest.raises(CheckpointError, match="does not match the checksum"):
            fw.load(damaged)


def test_truncations_and_appended_junk_are_detected(tmp_path):
    path = saved_file(tmp_path)
    data = path.read_bytes()
    damaged = tmp_path / "damaged.safetensors"
    for cut in [*range(0, len(data), 7), len(data) - 1]:
        damaged.write_bytes(data[:cut])
        with pytest.raises(CheckpointError):
            fw.load(damaged)
    for junk in [b"\0", b"x" * 100]:
        damaged.write_bytes(data + junk)
        with pytest.raises(CheckpointError, match="follow the header"):
            fw.load(damaged)


def craft(path, header: dict, data: bytes, checksum: bool = True) -> None:
    """Write a file with any header, and (as a forger would) a correct checksum for it."""
    header = json.loads(json.dumps(header))
    if checksum:
        header.setdefault("__metadata__", {})[safetensors_format.CHECKSUM_KEY] = "0" * 64
    text = json.dumps(header, separators=(",", ":")).encode()
    prefix = struct.pack("<Q", len(text))
    digest = hashlib.sha256(prefix + text + data).hexdigest()
    path.write_bytes(prefix + text.replace(b"0" * 64, digest.encode(), 1) + data)


def fw_header(tensors: dict, structure, fmt: str = "2") -> dict:
    return {**tensors, "__metadata__": {files.FORMAT_KEY: fmt,
                                        files.STRUCTURE_KEY: json.dumps(structure)}}


ONE = {"t0": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
ONE_STRUCTURE = {"__dict__": [["w", {"__tensor__": "t0", "dtype": "float32", "shape": [2, 3]}]]}
DATA = np.arange(6, dtype=np.float32).tobytes()


def test_a_crafted_file_with_a_valid_checksum_loads_only_when_consistent(tmp_path):
    path = tmp_path / "c.safetensors"
    craft(path, fw_header(ONE, ONE_STRUCTURE), DATA)
    assert fw.load(path)["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    retyped = {"t0": {**ONE["t0"], "dtype": "I32"}}
    transposed = {"t0": {**ONE["t0"], "shape": [3, 2]}}
    for tensors, match in [(retyped, "int32 \\[2, 3\\] in the file but float32"),
                           (transposed, "float32 \\[3, 2\\] in the file but float32 \\[2, 3\\]")]:
        craft(path, fw_header(tensors, ONE_STRUCTURE), DATA)
        with pytest.raises(CheckpointError, match=match):
            fw.load(path)


CRAFTED = {
    "overlapping ranges": ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                            "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
                           b"\0" * 12),
    "a gap": ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
    "a range past the end": ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
                             b"\0" * 8),
    "a range of the wrong size": ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
                                  b"\0" * 8),
    "a negative size": ({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}},
                        b"\0" * 8),
    "a bool size": ({"a": {"dtype": "U8", "shape": [True], "data_offsets": [0, 1]}}, b"\0"),
    "a huge size": ({"a": {"dtype": "U8", "shape": [0, 2**70], "data_offsets": [0, 0]}}, b""),
    "an unknown dtype": ({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}},
                         b"\0"),
    "a missing field": ({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
    "an extra field": ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}},
                       b"\0" * 4),
    "offsets that are not numbers": ({"a": {"dtype": "F32", "shape": [1],
                                            "data_offsets": ["0", "4"]}}, b"\0" * 4),
    "a bool tensor holding 7": ({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}},
                                b"\x01\x07"),
    "metadata that is not strings": ({"__metadata__": {"k": 5}}, b""),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_safetensors_headers_raise_checkpoint_errors(case, tmp_path):
    header, data = CRAFTED[case]
    path = tmp_path / "c.safetensors"
    craft(path, header, data, checksum=False)
    with pytest.raises(CheckpointError):
        fw.load(path)


def _nest(depth):
    value = 0
    for _ in range(depth):
        value = {"__list__": [value]}
    return value


def test_fw_metadata_that_does_not_fit_raises_checkpoint_errors(tmp_path):
    path = tmp_path / "c.safetensors"
    cases = [
        (fw_header(ONE, ONE_STRUCTURE, fmt="99"), "upgrade fw-core"),
        (fw_header(ONE, ONE_STRUCTURE, fmt="x"), "format 'x'"),
        (fw_header({**ONE, "t1": {"dtype": "U8", "shape": [0], "data_offsets": [24, 24]}},
                   ONE_STRUCTURE), "belong to no entry"),
        (fw_header(ONE, {"__list__": [ONE_STRUCTURE, ONE_STRUCTURE]}), "already used"),
        (fw_header(ONE, {"__tensor__": "t9", "dtype": "float32", "shape": [2, 3]}),
         "names no tensor"),
        (fw_header(ONE, {"__pickle__": "x"}), "unknown entry"),
        (fw_header(ONE, [1, 2]), "bare list"),
        (fw_header(ONE, {"__list__": [ONE_STRUCTURE, _nest(150)]}), "levels deep"),
    ]
    for header, match in cases:
        craft(path, header, DATA)
        with pytest.raises(CheckpointError, match=match):
            fw.load(path)
    bomb = fw_header(ONE, ONE_STRUCTURE)
    bomb["__metadata__"][files.STRUCTURE_KEY] = "[" * 100_000 + "]" * 100_000
    craft(path, bomb, DATA)
    with pytest.raises(CheckpointError, match="nests too deeply"):
        fw.load(path)
    duplicate = json.dumps(fw_header(ONE, ONE_STRUCTURE)).replace(
        '"__metadata__"', '"t0": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}, '
        '"__metadata__"')
    craft(path, json.loads(duplicate), DATA)  # json.loads keeps one t0: build the text by hand
    text = duplicate.encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + DATA)
    with pytest.raises(CheckpointError, match="duplicate key"):
        fw.load(path)


def test_a_missing_checksum_or_partial_fw_metadata_is_refused(tmp_path):
    path = tmp_path / "c.safetensors"
    craft(path, fw_header(ONE, ONE_STRUCTURE), DATA, checksum=False)
    with pytest.raises(CheckpointError, match="missing __fw_sha256__"):
        fw.load(path)
    header = fw_header(ONE, ONE_STRUCTURE)
    del header["__metadata__"][files.FORMAT_KEY]
    craft(path, header, DATA)
    with pytest.raises(CheckpointError, match="missing __fw_format__"):
        fw.load(path)


def test_files_of_the_first_format_are_refused_with_the_reason(tmp_path):
    path = tmp_path / "old.safetensors"
    safetensors.numpy.save_file(
        {"t0": np.ones(2, np.float32)}, str(path),
        metadata={"__fw_structure__": json.dumps({"format": 1, "value": {"__tensor__": "t0"}}),
                  "__fw_sha256__": json.dumps({"t0": "ab"})})
    with pytest.raises(CheckpointError, match="format 1, whose header had no checksum"):
        fw.load(path)


def test_missing_file_and_folder_name_the_path(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        fw.load(tmp_path / "nope.safetensors")
    with pytest.raises(CheckpointError, match="it is a folder"):
        fw.load(tmp_path)


# -- atomic, durable writes ----------------------------------------------------------------------
def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.ones(3)}, path)
    real_write = safetensors_format.write

    def crash(file, *args, **kwargs):
        real_write(file, *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safetensors_format, "write", crash)
    with pytest.raises(CheckpointError, match="No space left on device") as info:
        fw.save({"w": fw.zeros(3)}, path)
    assert str(path) in str(info.value) and "free space" in str(info.value)
    assert fw.load(path)["w"].tolist() == [1.0, 1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["s.safetensors"]


@pytest.mark.parametrize("code,fix", [(errno.EROFS, "read-only"), (errno.EACCES, "permission"),
                                      (errno.EDQUOT, "quota")])
def test_os_errors_become_checkpoint_errors_with_a_fix(code, fix, tmp_path, monkeypatch):
    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.ones(3)}, path)

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(CheckpointError, match=fix) as info:
        fw.save({"w": fw.zeros(3)}, path)
    assert isinstance(info.value.__cause__, OSError)
    monkeypatch.undo()
    assert fw.load(path)["w"].tolist() == [1.0, 1.0, 1.0]
    assert fw.io.stale(path) == [] and len(list(tmp_path.iterdir())) == 1


def test_a_file_size_limit_gives_a_checkpoint_error_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "s.safetensors"
    fw.save({"w": fw.ones(3)}, path)
    script = textwrap.dedent(f"""
        import resource
        import fw_core as fw
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            fw.save({{"w": fw.zeros(100_000)}}, {str(path)!r})
        except fw.errors.CheckpointError as error:
            print(error)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert "could not save" in out and "ulimit -f" in out
    assert fw.load(path)["w"].tolist() == [1.0, 1.0, 1.0]
    assert len(list(tmp_path.iterdir())) == 1


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_leftovers_of_killed_saves_are_listed_and_removed_by_the_next_save(tmp_path):
    path = tmp_path / "s.safetensors"
    dead = tmp_path / f".s.safetensors.{dead_pid()}-0badc0de.fw-tmp"
    dead.write_bytes(b"half a checkpoint")
    alive = tmp_path / f".s.safetensors.{os.getppid()}-0badc0de.fw-tmp"  # a live process
    alive.write_bytes(b"a save still running")
    other = tmp_path / f".other.safetensors.{dead_pid()}-0badc0de.fw-tmp"
    other.write_bytes(b"another name's")
    assert fw.io.stale(path) == [dead]
    fw.save({"w": fw.ones(1)}, path)
    assert not dead.exists() and alive.exists() and other.exists()
    assert fw.io.stale(path) == []


def test_a_folder_cannot_be_overwritten_by_a_file(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(CheckpointError, match="it is a folder"):
        fw.save({"w": fw.ones(1)}, tmp_path / "d")
