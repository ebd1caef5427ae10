"""Reading .fwm files: the checksum, the format version, byte ranges, the tensors a program
names, and int8 weights dequantized at load."""

from __future__ import annotations

import json
import mmap
import struct

import numpy as np
import pytest
from fwm_writer import Builder, write_fwm

import fw_edge
from fw_edge import EdgeError


def _linear(int8_axis=None, weight=None):
    b = Builder({"batch": 1})
    x = b.input("x", "float32", ["batch", 3])
    weight = np.arange(6, dtype=np.float32).reshape(2, 3) / 7 if weight is None else weight
    w = b.weight(weight, "fc.weight", int8_axis=int8_axis)
    b.output(b.node("linear", [x, w, None], "float32", ["batch", 2], module="fc",
                    weight_layout="out_in"), "output")
    return b


def test_a_flipped_bit_is_refused_by_its_checksum(tmp_path):
    path = _linear().save(tmp_path / "m.fwm")
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(EdgeError, match="refused by its checksum"):
        fw_edge.load(path)


def test_a_truncated_file_is_damaged(tmp_path):
    path = _linear().save(tmp_path / "m.fwm")
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(EdgeError, match="not a readable .fwm program"):
        fw_edge.load(path)


def test_a_file_without_checksum_is_refused(tmp_path):
    header = json.dumps({"__metadata__": {"__fwm_format__": "1"}}).encode()
    path = tmp_path / "plain.fwm"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(EdgeError, match="no 64-digit checksum"):
        fw_edge.load(path)


def test_an_unknown_format_version_says_to_upgrade(tmp_path):
    b = _linear()
    write_fwm(tmp_path / "m.fwm", b.program(), b.tensors, version="2")
    with pytest.raises(EdgeError, match="format version '2'.*upgrade fw-edge"):
        fw_edge.load(tmp_path / "m.fwm")


def test_byte_ranges_must_tile_the_data(tmp_path):
    b = _linear()
    b.tensors["extra"] = np.zeros(3, np.float32)
    path = b.save(tmp_path / "m.fwm")
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = data[8:8 + length].replace(b'"data_offsets":[24,36]', b'"data_offsets":[28,40]')
    path.write_bytes(data[:8] + header + data[8 + length:])
    with pytest.raises(EdgeError, match="starts at byte 28, not 24"):
        fw_edge.load(path)


def test_a_missing_tensor_is_named(tmp_path):
    b = _linear()
    del b.tensors["fc.weight"]
    with pytest.raises(EdgeError, match="needs tensor 'fc.weight'"):
        fw_edge.load(b.save(tmp_path / "m.fwm"))


def test_int8_weights_are_dequantized_per_channel(tmp_path, rng):
    weight = rng.standard_normal((2, 3)).astype(np.float32)
    prog = fw_edge.load(_linear(int8_axis=0, weight=weight).save(tmp_path / "q.fwm"))
    scale = np.abs(weight).max(1, keepdims=True) / 127
    dequantized = np.clip(np.rint(weight / scale), -127, 127) * scale.astype(np.float32)
    x = rng.standard_normal((1, 3)).astype(np.float32)
    np.testing.assert_allclose(prog(x), x @ dequantized.T.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(prog(x), x @ weight.T, atol=0.05)


@pytest.mark.parametrize("layout, axis", [("out_in", 0), ("in_out", 1)])
def test_int8_weights_with_grouped_scales(tmp_path, rng, layout, axis):
    weight = rng.standard_normal((4, 6)).astype(np.float32)  # [out, in]
    scale = (np.abs(weight.reshape(4, 3, 2)).max(2) / 127).astype(np.float32)  # groups of 2
    q = np.clip(np.rint(weight / np.repeat(scale, 2, axis=1)), -127, 127).astype(np.int8)
    b = Builder({"batch": 1})
    x = b.input("x", "float32", ["batch", 6])
    stored = q if axis == 0 else np.ascontiguousarray(q.T)
    w = b.weight(stored.astype(np.float32), "fc.weight")
    b.tensors.pop("fc.weight")
    b.tensors["fc.weight.int8"], b.tensors["fc.weight.scale"] = stored, scale
    b.weights[str(w)] = {"int8": "fc.weight.int8", "scale": "fc.weight.scale", "axis": axis,
                         "dtype": "float32", "group": 2}
    b.output(b.node("linear", [x, w], "float32", ["batch", 4], weight_layout=layout), "output")
    prog = fw_edge.load(b.save(tmp_path / "g.fwm"))
    xs = rng.standard_normal((1, 6)).astype(np.float32)
    dequantized = q * np.repeat(scale, 2, axis=1)
    np.testing.assert_allclose(prog(xs), xs @ dequantized.T, rtol=1e-6)
    b.weights[str(w)]["group"] = 4  # 6 entries do not split into groups of 4
    with pytest.raises(EdgeError, match="group 4"):
        fw_edge.load(b.save(tmp_path / "bad.fwm"))


def test_an_unknown_op_is_named_with_its_module(tmp_path):
    b = Builder()
    x = b.input("x", "float32", [2])
    b.output(b.node("fancy_op", [x], "float32", [2], module="block.3.mixer"))
    with pytest.raises(EdgeError, match="fancy_op at block.3.mixer uses op 'fancy_op'"):
        fw_edge.load(b.save(tmp_path / "m.fwm"))


def test_an_unreadable_path(tmp_path):
    with pytest.raises(EdgeError, match="cannot read the program file"):
        fw_edge.load(tmp_path / "absent.fwm")


def test_weights_are_read_only_views_of_the_mapped_file(tmp_path):
    from fw_edge import fwm_file

    b = _linear()
    b.tensors["odd"] = np.arange(3, dtype=np.int8)  # puts the next tensor off 4-byte alignment
    b.tensors["after"] = np.arange(3, dtype=np.float32)
    contents = fwm_file.read(b.save(tmp_path / "m.fwm"))
    weight, after = contents.tensors["fc.weight"], contents.tensors["after"]
    owner = weight
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner.obj, mmap.mmap) and not weight.flags.writeable
    assert after.flags.aligned and not after.flags.writeable  # copied, being misaligned
    np.testing.assert_array_equal(after, [0, 1, 2])
    contents.drop_pages()  # the tensors still read the same after the pages are let go
    np.testing.assert_array_equal(weight, np.arange(6, dtype=np.float32).reshape(2, 3) / 7)


def test_a_flipped_bit_in_a_weight_of_a_mapped_file_is_refused(tmp_path):
    path = _linear().save(tmp_path / "m.fwm")
    data = bytearray(path.read_bytes())
    data[-20] ^= 0x01  # inside fc.weight's bytes
    path.write_bytes(bytes(data))
    with pytest.raises(EdgeError, match="refused by its checksum"):
        fw_edge.load(path)


def test_an_empty_file_is_damaged(tmp_path):
    (tmp_path / "empty.fwm").write_bytes(b"")
    with pytest.raises(EdgeError, match="0 bytes, shorter than a header"):
        fw_edge.load(tmp_path / "empty.fwm")
