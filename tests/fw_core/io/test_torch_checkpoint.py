"""fw.load reads PyTorch checkpoints (zip and legacy, made here by torch 2.13) without torch and
without running code: values, dtypes, Parameters, shared storages and views come back exactly;
anything but tensors and plain values is refused by name; damaged files raise CheckpointError."""

import collections
import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentTypeError, CheckpointError, UnsupportedError

torch = pytest.importorskip("torch")

FORMATS = {"zip": True, "legacy": False}


def saved(obj, layout: str) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=FORMATS[layout])
    return buffer.getvalue()


def loaded(obj, layout: str, **kwargs):
    return fw.load(io.BytesIO(saved(obj, layout)), **kwargs)


# -- a torch state dict into the same fw architecture, in a process where torch cannot load ----
def torch_models():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 5))
    cnn.train()
    for _ in range(3):  # running statistics that are not the initial ones
        cnn(torch.randn(4, 3, 8, 8))
    cnn.eval()
    lstm = torch.nn.LSTM(5, 7, num_layers=2, batch_first=True)
    inputs = {"mlp": torch.randn(4, 6), "cnn": torch.randn(2, 3, 8, 8),
              "lstm": torch.randn(3, 4, 5)}
    return {"mlp": mlp, "cnn": cnn, "lstm": lstm}, inputs


#: makes `import torch` fail in the process that runs it
_BLOCKER = """
import importlib.abc, json, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"{name} is blocked in this process")

sys.meta_path.insert(0, NoTorch())
"""
_CHILD = _BLOCKER + """
import numpy as np
import fw_core as fw

nn = fw.nn
models = {
    "mlp": lambda: nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)),
    "cnn": lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                 nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 5)),
    "lstm": lambda: nn.LSTM(5, 7, num_layers=2, batch_first=True),
}
for case in json.loads(sys.argv[1]):
    model = models[case["model"]]()
    model.load_state_dict(fw.load(case["checkpoint"]))
    model.eval()
    with fw.no_grad():
        out = model(fw.from_numpy(np.load(case["input"])))
    out = out[0] if isinstance(out, tuple) else out
    np.save(case["output"], out.numpy())
assert not [m for m in sys.modules if m == "torch" or m.startswith("torch.")]
print("loaded without torch")
"""


def test_torch_state_dicts_load_into_fw_models_in_a_process_without_torch(tmp_path):
    models, inputs = torch_models()
    cases, expected = [], {}
    for name, model in models.items():
        np.save(tmp_path / f"{name}.in.npy", inputs[name].numpy())
        with torch.no_grad():
            out = model(inputs[name])
        expected[name] = (out[0] if isinstance(out, tuple) else out).numpy()
        for layout, zipped in FORMATS.items():
            checkpoint = tmp_path / f"{name}.{layout}.pt"
            torch.save(model.state_dict(), checkpoint, _use_new_zipfile_serialization=zipped)
            cases.append({"model": name, "checkpoint": str(checkpoint),
                          "input": str(tmp_path / f"{name}.in.npy"),
                          "output": str(tmp_path / f"{name}.{layout}.out.npy")})
    env = {k: v for k, v in os.environ.items() if k not in ("FW_PLUGINS", "PYTHONPATH")}
    child = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cases)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert "loaded without torch" in child.stdout
    for case in cases:
        np.testing.assert_allclose(np.load(case["output"]), expected[case["model"]],
                                   rtol=1e-5, atol=1e-5)


def test_the_blocker_really_blocks_torch():
    child = subprocess.run([sys.executable, "-c", _BLOCKER + "import torch"],
                           capture_output=True, text=True, timeout=60)
    assert child.returncode != 0 and "torch is blocked" in child.stderr


# -- values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", FORMATS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8,
                                   torch.uint8, torch.bool, torch.float16, torch.float32,
                                   torch.float64])
def test_every_dtype_fw_has_comes_back_exactly(layout, dtype):
    source = (torch.arange(-7, 17) * 37).reshape(4, 6)
    source = source > 0 if dtype == torch.bool else source.to(dtype)
    out = loaded({"t": source, "zero_d": source[1, 2]}, layout)
    assert isinstance(out["t"], fw.Tensor) and out["t"].dtype.name == str(dtype)[6:]
    np.testing.assert_array_equal(out["t"].numpy(), source.numpy())
    assert out["zero_d"].shape == () and out["zero_d"].item() == source[1, 2].item()


@pytest.mark.parametrize("layout", FORMATS)
def test_views_with_offsets_and_strides_keep_their_values_and_share_memory(layout):
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    views = {"base": base, "rows": base[2:5], "cols": base[:, 3:7], "t": base.t(),
             "step": base[1::2, ::3], "flat": base.view(-1)[7:19], "empty": base[3:3]}
    out = loaded(views, layout)
    for key, view in views.items():
        assert out[key].shape == tuple(view.shape), key
        np.testing.assert_array_equal(out[key].numpy(), view.numpy(), err_msg=key)
    arrays = {k: v.numpy() for k, v in out.items()}
    assert all(np.shares_memory(arrays["base"], arrays[k]) for k in ("rows", "cols", "t", "flat"))
    arrays["base"][3, 4] = -1.0                # one storage: a write shows through every view
    assert arrays["rows"][1, 4] == -1.0 and arrays["t"][4, 3] == -1.0
    assert arrays["cols"][3, 1] == -1.0


@pytest.mark.parametrize("layout", FORMATS)
def test_a_tensor_saved_twice_comes_back_as_one_tensor(layout):
    weight = torch.randn(3, 3)
    out = loaded({"encoder": weight, "decoder": weight}, layout)
    assert out["encoder"] is out["decoder"]


@pytest.mark.parametrize("layout", FORMATS)
def test_parameters_come_back_as_fw_parameters(layout):
    out = loaded({"p": torch.nn.Parameter(torch.ones(2, 3)),
                  "frozen": torch.nn.Parameter(torch.zeros(2), requires_grad=False),
                  "plain": torch.ones(2)}, layout)
    assert isinstance(out["p"], fw.nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], fw.nn.Parameter) and not out["frozen"].requires_grad
    assert not isinstance(out["plain"], fw.nn.Parameter) and not out["plain"].requires_grad


@pytest.mark.parametrize("layout", FORMATS)
def test_optimizer_state_and_plain_values_keep_their_structure(layout):
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01, betas=(0.8, 0.9), amsgrad=True)
    net(torch.randn(4, 3)).sum().backward()
    optimizer.step()
    checkpoint = {"model": net.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3,
                  "nested": [{"a": (1, 2.5, None, "s")}, {4, 5}], "size": torch.Size([2, 3]),
                  "bytes": b"\x00\xff", "complex": 1 + 2j, "dtype": torch.float64,
                  "device": torch.device("cpu"), "counts": collections.Counter("aab")}
    out = loaded(checkpoint, layout)
    assert isinstance(out["model"], collections.OrderedDict)
    assert list(out["model"]) == ["weight", "bias"]
    assert out["model"]._metadata == checkpoint["model"]._metadata
    state, groups = out["optimizer"]["state"], out["optimizer"]["param_groups"]
    assert sorted(state) == [0, 1] and sorted(state[0]) == ["exp_avg", "exp_avg_sq",
                                                              "max_exp_avg_sq", "step"]
    reference = optimizer.state_dict()
    for index in (0, 1):
        for key, value in reference["state"][index].items():
            np.testing.assert_array_equal(state[index][key].numpy(), value.numpy())
    assert groups == reference["param_groups"] and groups[0]["betas"] == (0.8, 0.9)
    assert out["epoch"] == 3 and out["nested"] == [{"a": (1, 2.5, None, "s")}, {4, 5}]
    assert out["size"] == (2, 3) and out["bytes"] == b"\x00\xff" and out["complex"] == 1 + 2j
    assert out["dtype"] is fw.float64 and out["device"] == "cpu"
    assert out["counts"] == collections.Counter("aab")


@pytest.mark.parametrize("layout", FORMATS)
def test_bfloat16_becomes_float32_exactly_with_a_warning(layout):
    source = torch.tensor([1.5, -2.25, 3.0e38, 1e-3]).to(torch.bfloat16)
    with pytest.warns(UserWarning, match="2 bfloat16 tensor.*became float32"):
        out = loaded({"h": source, "view": source[1:3]}, layout)
    assert out["h"].dtype is fw.float32
    np.testing.assert_array_equal(out["h"].numpy(), source.float().numpy())
    assert np.shares_memory(out["h"].numpy(), out["view"].numpy())


@pytest.mark.parametrize("layout", FORMATS)
def test_dtypes_fw_lacks_come_back_as_numpy_arrays_with_a_warning(layout):
    source = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    with pytest.warns(UserWarning, match=r"came back as NumPy arrays \(1 complex64\)"):
        out = loaded({"c": source}, layout)
    assert isinstance(out["c"], np.ndarray) and out["c"].dtype == np.complex64
    np.testing.assert_array_equal(out["c"], source.numpy())


def rewritten_zip(data: bytes, change) -> bytes:
    """A zip checkpoint with each record's bytes replaced by ``change(name, bytes)``."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            target.writestr(info.filename, change(info.filename, source.read(info)))
    return out.getvalue()


def test_a_big_endian_zip_checkpoint_is_read_in_its_byte_order():
    def to_big_endian(name, data):
        if name.endswith("/byteorder"):
            return b"big"
        dtypes = {"/data/0": "<f4", "/data/1": "<i8"}
        kind = next((d for suffix, d in dtypes.items() if name.endswith(suffix)), None)
        return np.frombuffer(data, kind).byteswap().tobytes() if kind else data

    big = rewritten_zip(saved({"w": torch.arange(6.0) - 2.5, "i": torch.arange(3) * 1000},
                              "zip"), to_big_endian)
    out = fw.load(io.BytesIO(big))
    assert out["w"].numpy().tolist() == [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]
    assert out["i"].numpy().tolist() == [0, 1000, 2000]


class _View:
    """Pickles as a tensor of a storage view, as ``torch.save`` wrote them before PyTorch 1.0."""

    def __init__(self, storage, offset, size):
        self.storage, self.offset, self.size = storage, offset, size

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, (self.storage, self.offset, self.size, (1,),
                                                 False, collections.OrderedDict())


def legacy_with_storage_views() -> bytes:
    """A legacy checkpoint as PyTorch before 1.0 wrote one for tensors of storage *views*:
    each persistent id names its root storage and (view key, element offset, view size)."""
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, tuple) and obj[:1] == ("view",):
                return ("storage", torch.FloatStorage, "root", "cpu", 10, obj[1:])
            return None

    out = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        pickle.dump(part, out, protocol=2)
    views = {"a": _View(("view", "v1", 2, 5), 1, (3,)),        # elements 3, 4, 5 of the root
             "b": _View(("view", "v2", 4, 6), 0, (4,))}        # elements 4..7
    Pickler(out, protocol=2).dump(views)
    pickle.dump(["root"], out, protocol=2)
    out.write(np.int64(10).tobytes() + np.arange(10, dtype="<f4").tobytes())
    return out.getvalue()


def test_legacy_storage_views_are_slices_of_their_root():
    out = fw.load(io.BytesIO(legacy_with_storage_views()))
    assert out["a"].numpy().tolist() == [3.0, 4.0, 5.0]
    assert out["b"].numpy().tolist() == [4.0, 5.0, 6.0, 7.0]
    out["a"].numpy()[1] = -1.0                      # both are views of the one root array
    assert out["b"].numpy().tolist() == [-1.0, 5.0, 6.0, 7.0]


def test_a_dtype_numpy_lacks_is_refused_by_name():
    with pytest.raises(CheckpointError, match="torch.float8_e4m3fn"):
        loaded({"f8": torch.ones(2).to(torch.float8_e4m3fn)}, "zip")


# -- arguments torch.load and torch.save take --------------------------------------------------
def test_map_location_in_each_form_torch_takes(tmp_path):
    path = tmp_path / "net.pth"
    torch.save({"w": torch.ones(2)}, path)
    seen = []

    def callable_form(storage, location):
        seen.append(location)
        return storage

    for map_location in (None, "cpu", torch.device("cpu"), fw.device("cpu"), {"cpu": "cpu"},
                         {"cuda:0": "cpu"}, callable_form, lambda storage, loc: storage.cpu()):
        out = fw.load(str(path), map_location=map_location)
        assert out["w"].device == "cpu" and out["w"].numpy().tolist() == [1.0, 1.0]
    assert seen == ["cpu"]
    with pytest.raises(ArgumentTypeError, match="map_location 3"):
        fw.load(path, map_location=3)


def saved_on_gpu(obj) -> bytes:
    """A zip checkpoint whose storages say they were saved from cuda:0 (as one saved on a GPU
    machine does), made by rewriting the locations of a CPU checkpoint's data.pkl."""
    source = zipfile.ZipFile(io.BytesIO(saved(obj, "zip")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("/data.pkl"):
                cpu, gpu = b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"
                assert cpu in data
                data = data.replace(cpu, gpu)
            target.writestr(info.filename, data)
    return out.getvalue()


def test_a_checkpoint_saved_on_a_gpu_loads_on_the_cpu_unless_asked():
    data = saved_on_gpu({"w": torch.arange(3.0)})
    seen = []
    for map_location in (None, {"cuda:0": "cpu"}, {"cuda:1": "cuda:1"},
                         lambda storage, location: seen.append(location) or storage.cpu()):
        out = fw.load(io.BytesIO(data), map_location=map_location)
        assert out["w"].device == "cpu" and out["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    assert seen == ["cuda:0"]
    if "cuda" in fw.available_devices():
        out = fw.load(io.BytesIO(data), map_location=lambda storage, location: storage.cuda(0))
        assert out["w"].device == "cuda:0"
    else:
        with pytest.raises(fw.errors.DeviceError):
            fw.load(io.BytesIO(data), map_location=lambda storage, location: storage.cuda(0))


def test_torch_load_arguments_are_accepted_or_refused_clearly(tmp_path):
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(3)}, path)
    for kwargs in ({"weights_only": True}, {"weights_only": False}, {"mmap": True},
                   {"pickle_module": pickle}, {"encoding": "latin1"}, {"fix_imports": True}):
        assert fw.load(path, **kwargs)["w"].numpy().tolist() == [0, 1, 2], kwargs
    with pytest.raises(UnsupportedError, match="pickle_module='json'"):
        fw.load(path, pickle_module=json)
    with pytest.raises(ArgumentTypeError, match="unexpected keyword argument.*buffers"):
        fw.load(path, buffers=True)


class Unseekable(io.RawIOBase):
    """A pipe-like binary stream: read only, no seek."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, buffer):
        return self._data.readinto(buffer)


@pytest.mark.parametrize("layout", FORMATS)
def test_f_may_be_a_path_a_str_an_open_file_or_an_unseekable_stream(layout, tmp_path):
    path = tmp_path / "c.pth"
    path.write_bytes(saved({"w": torch.arange(5)}, layout))
    with open(path, "rb") as file:
        sources = [path, str(path), file, Unseekable(path.read_bytes())]
        for source in sources:
            assert fw.load(source)["w"].numpy().tolist() == [0, 1, 2, 3, 4]


def test_fw_save_takes_torch_save_arguments_and_file_objects(tmp_path):
    state = {"w": fw.arange(4), "step": 2}
    fw.save(state, str(tmp_path / "a.pt"), pickle_module=pickle, pickle_protocol=4,
            _use_new_zipfile_serialization=True)
    buffer = io.BytesIO()
    fw.save(state, buffer)
    buffer.seek(0)
    for source in (tmp_path / "a.pt", buffer):
        out = fw.load(source, map_location="cpu")
        assert out["step"] == 2 and out["w"].numpy().tolist() == [0, 1, 2, 3]
    untouched = io.BytesIO()
    with pytest.raises(CheckpointError, match="cannot store a function"):
        fw.save({"schedule": lambda epoch: 0.1}, untouched)
    assert untouched.getvalue() == b""
    with pytest.raises(UnsupportedError, match="legacy file format"):
        fw.save(state, tmp_path / "b.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(UnsupportedError, match="pickle_module"):
        fw.save(state, tmp_path / "b.pt", pickle_module=json)
    assert not (tmp_path / "b.pt").exists()


# -- what is refused, and nothing runs ---------------------------------------------------------
class RunsAShellCommand:
    """Pickles as a call of os.system: loading it with pickle would create the marker."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class PlainObject:
    pass


@pytest.mark.parametrize("layout", FORMATS)
def test_a_reduce_that_would_run_a_command_is_refused_and_runs_nothing(layout, tmp_path):
    marker = tmp_path / "ran"
    data = saved({"w": torch.ones(2), "payload": RunsAShellCommand(marker)}, layout)
    pickle.loads(pickle.dumps(RunsAShellCommand(tmp_path / "proof")))   # the payload is real
    assert (tmp_path / "proof").exists()
    with pytest.raises(CheckpointError, match=r"global posix\.system") as error:
        fw.load(io.BytesIO(data))
    assert not marker.exists()
    assert "weights_only=False" in str(error.value) and error.value.hint


@pytest.mark.parametrize("layout", FORMATS)
def test_an_unknown_global_is_refused_by_name(layout):
    with pytest.raises(CheckpointError, match=f"global {__name__}.PlainObject"):
        loaded({"x": PlainObject()}, layout)


def test_a_refused_global_is_never_imported(tmp_path, monkeypatch):
    """The name is refused before it is looked up: a module that would leave a marker when
    imported is not imported."""
    marker = tmp_path / "imported"
    (tmp_path / "leaves_a_marker.py").write_text(f"open({str(marker)!r}, 'w').close()\nx = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    legacy = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        pickle.dump(part, legacy, protocol=2)
    legacy.write(b"\x80\x02cleaves_a_marker\nx\n.")        # GLOBAL leaves_a_marker.x
    legacy.seek(0)
    with pytest.raises(CheckpointError, match=r"global leaves_a_marker\.x"):
        fw.load(legacy)
    assert not marker.exists() and "leaves_a_marker" not in sys.modules


def test_a_whole_pickled_model_is_refused_with_the_state_dict_fix():
    with pytest.raises(CheckpointError, match=r"torch\.nn\.modules\..*Linear") as error:
        loaded(torch.nn.Linear(2, 2), "zip")
    assert "state_dict()" in error.value.hint


def test_a_torch_global_outside_the_allowlist_is_refused_by_name():
    class CallsTorchLoad:
        def __reduce__(self):
            return torch.serialization.load, ("elsewhere.pt",)

    with pytest.raises(CheckpointError, match=r"torch\.serialization\.load"):
        loaded({"x": CallsTorchLoad()}, "zip")


def test_a_quantized_tensor_is_refused_with_what_to_do():
    quantized = torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8)
    with pytest.raises(CheckpointError, match="quantized tensor") as error:
        loaded({"q": quantized}, "zip")
    assert "dequantize" in error.value.hint


def test_torchscript_archives_and_the_tar_format_are_refused(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, tmp_path / "script.pt")
    with pytest.raises(CheckpointError, match="TorchScript"):
        fw.load(tmp_path / "script.pt")
    with tarfile.open(tmp_path / "old.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        for member in ("storages", "tensors", "pickle"):
            info = tarfile.TarInfo(member)
            info.size = 4
            tar.addfile(info, io.BytesIO(b"\x80\x02K\x00"))
    with pytest.raises(CheckpointError, match="tar archive"):
        fw.load(tmp_path / "old.tar")


# -- damaged files -----------------------------------------------------------------------------
@pytest.mark.parametrize("layout", FORMATS)
def test_truncated_checkpoints_are_refused(layout):
    data = saved({"w": torch.randn(16, 16), "b": torch.randn(16)}, layout)
    for length in (len(data) // 3, len(data) // 2, len(data) - 9):
        with pytest.raises(CheckpointError, match="not a readable PyTorch checkpoint|damaged"):
            fw.load(io.BytesIO(data[:length]))


def test_a_changed_byte_in_a_zip_storage_is_detected_by_its_crc():
    data = bytearray(saved({"w": torch.arange(64, dtype=torch.float32)}, "zip"))
    at = data.index(np.arange(64, dtype=np.float32).tobytes())
    data[at + 100] ^= 0x10
    with pytest.raises(CheckpointError, match="CRC"):
        fw.load(io.BytesIO(bytes(data)))


@pytest.mark.parametrize("layout", FORMATS)
def test_any_changed_byte_gives_a_value_or_a_checkpoint_error_never_another_error(layout):
    data = saved({"w": torch.randn(4, 4), "view": torch.arange(10)[2:], "n": 3}, layout)
    rng = np.random.default_rng(0)
    for _ in range(200):
        damaged = bytearray(data)
        at = int(rng.integers(len(data)))
        damaged[at] = (damaged[at] + int(rng.integers(1, 256))) % 256
        try:
            fw.load(io.BytesIO(bytes(damaged)))
        except CheckpointError:
            pass


def test_a_hand_made_pickle_with_a_bad_tensor_view_is_refused():
    """A legacy file whose tensor reaches past its storage: refused, not read out of bounds."""
    data = saved({"w": torch.arange(4.0)}, "legacy")
    grown = data.replace(b"K\x04\x85", b"K\x09\x85", 1)     # size (4,) -> (9,)
    assert grown != data
    with pytest.raises(CheckpointError, match="reaches past its storage"):
        fw.load(io.BytesIO(grown))


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        fw.load(tmp_path / "missing.pt")


def test_a_zip_without_data_pkl_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("a/readme.txt", "hello")
    with pytest.raises(CheckpointError, match="0 data.pkl records"):
        fw.load(tmp_path / "other.zip")

