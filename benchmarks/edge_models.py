"""The models of ``benchmarks/edge.py``, each as three contenders on the same weights: an fw-edge
program (written by ``fw.export``), an onnxruntime session (of the PyTorch twin, written by
``torch.onnx.export``) and PyTorch eager.

A :class:`Contenders` holds the three as calls on prepared inputs, so the timing loop times the
call and nothing else. MiniLM's PyTorch side is the hand-written reference of fw_zoo's tests
(``plugins/fw_zoo/tests/zoo_torch_bert.py``), run through :class:`TorchBertModule`.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from benchmarks.workloads import WORKLOADS
from benchmarks.workloads.common import (
    TORCH_THREADS,
    build_model,
    fw_lib,
    initial_weights,
    normal,
    torch_lib,
)

ROOT = Path(__file__).resolve().parents[1]
#: the workloads of the suite measured here, the LSTM included (torch.onnx exports nn.LSTM)
WORKLOAD_NAMES = ("mlp", "cnn", "transformer", "lstm")
MINILM = "all-minilm-l6-v2"
MINILM_VOCAB = 30522
#: the largest difference any two contenders' outputs may show before nothing is timed
AGREEMENT = 1e-4


def tiny_build(lib):
    """The tiny MLP, 16->32->4 with ReLU, in either framework."""
    nn = lib.nn
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


#: the tiny MLP as a workload, so that it takes the workloads' path (weights, build, data)
TINY = SimpleNamespace(name="tiny_mlp", build=tiny_build,
                       data=lambda batch, rng: (normal(rng, (batch, 16)), None))


@dataclass
class Contenders:
    """One model's three runs on the same inputs: ``calls[name]()`` returns its outputs as
    one NumPy array (fw-edge and onnxruntime) or a tensor (PyTorch eager, to be called under
    ``torch.inference_mode()``). ``files``: the fw-edge program and the ONNX model."""

    name: str
    calls: dict[str, Callable]
    files: dict[str, Path]

    def check(self) -> float:
        """The largest difference between two contenders' outputs (every pair compared).

        Raises:
            AssertionError: two contenders differ by more than AGREEMENT.
        """
        import torch

        with torch.inference_mode():
            outputs = {name: np.asarray(call()) for name, call in self.calls.items()}
        worst, names = 0.0, list(outputs)
        for i, mine in enumerate(names):
            for theirs in names[i + 1:]:
                np.testing.assert_allclose(outputs[mine], outputs[theirs], rtol=AGREEMENT,
                                           atol=AGREEMENT,
                                           err_msg=f"{self.name}: {mine} against {theirs}")
                worst = max(worst, float(np.abs(outputs[mine] - outputs[theirs]).max()))
        return worst


def ort_session(path: Path, threads: int = TORCH_THREADS):
    """An onnxruntime CPU session with default options but the benchmark's thread count."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _three(name: str, program_path: Path, onnx_path: Path, torch_model, feed: dict) -> Contenders:
    """Contenders calling ``feed`` (input name -> array, in signature order) on each runtime."""
    import torch

    import fw_edge

    program, session = fw_edge.load(program_path), ort_session(onnx_path)
    arrays = list(feed.values())
    tensors = [torch.from_numpy(a) for a in arrays]
    first = session.get_outputs()[0].name
    return Contenders(name, {
        "fw_edge": lambda: program(*arrays),
        "onnxruntime": lambda: session.run([first], feed)[0],
        "torch": lambda: torch_model(*tensors),
    }, {"fw_edge": program_path, "onnx": onnx_path})


def _onnx_export(model, feed: dict, path: Path, dynamic_axes: dict | None = None) -> None:
    import torch

    with warnings.catch_warnings():  # the tracer's notes on Python ints it records as sizes
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(model, tuple(torch.from_numpy(a) for a in feed.values()), str(path),
                          dynamo=False, opset_version=17, input_names=list(feed),
                          output_names=["output"], dynamic_axes=dynamic_axes)


def workload_contenders(name: str, folder: Path) -> Contenders:
    """The tiny MLP (``"tiny_mlp"``) or a suite workload at batch 1, PyTorch's seeded initial
    weights in both frameworks, inputs from ``workload.data(1, rng)``."""
    import fw_core as fw

    workload = TINY if name == TINY.name else WORKLOADS[name]
    weights = initial_weights(workload)
    ours = build_model(workload, fw_lib(), weights).eval()
    theirs = build_model(workload, torch_lib(), weights).eval()
    x, _ = workload.data(1, np.random.default_rng(0))
    program, onnx = folder / f"{name}.fwm", folder / f"{name}.onnx"
    fw.export(ours, fw.tensor(x), program)
    _onnx_export(theirs, {"x": x}, onnx)
    return _three(name, program, onnx, theirs, {"x": x})


class _Override:
    """A module seen through a few replaced attributes (the rest are the module's own)."""

    def __init__(self, module, **replaced):
        self._module, self._replaced = module, replaced

    def __getattr__(self, name):
        return self._replaced[name] if name in self._replaced else getattr(self._module, name)


class _Result:
    """Stands for a tensor whose ``.numpy()`` the reference calls: it gives the tensor back."""

    def __init__(self, tensor):
        self._tensor = tensor

    def numpy(self):
        return self._tensor


def _torch_bert_module():
    import torch

    class TorchBertModule(torch.nn.Module):
        """fw_zoo's hand-written PyTorch MiniLM (``TorchSentenceBert``) as an ``nn.Module``:
        its weights are buffers here, and its own forward and helpers run on tensors in and out
        (``torch.from_numpy`` and ``.numpy()`` pass a tensor through; layer norm gets its
        normalised shape as ints), so ``torch.onnx.export`` traces one graph of its maths.

        ``forward(input_ids, attention_mask)`` (int64, (batch, sequence)) -> (batch, 384)
        normalised embeddings.
        """

        def __init__(self, reference):
            super().__init__()
            import zoo_torch_bert

            functional = torch.nn.functional
            names = dict(vars(zoo_torch_bert))
            names["torch"] = _Override(torch, from_numpy=lambda t: t)
            names["F"] = _Override(
                functional,
                normalize=lambda *a, **k: _Result(functional.normalize(*a, **k)),
                layer_norm=lambda x, shape, *a: functional.layer_norm(
                    x, [int(n) for n in shape], *a))
            cls = type(reference)
            self.reference, self.keys = reference, list(reference.w)
            for name in ("_linear", "_norm"):
                code = getattr(cls, name).__code__
                setattr(reference, name,
                        types.MethodType(types.FunctionType(code, names), reference))
            self.math = types.FunctionType(cls.__call__.__wrapped__.__code__, names)
            for i, key in enumerate(self.keys):
                self.register_buffer(f"w{i}", reference.w[key])

        def forward(self, input_ids, attention_mask):
            self.reference.w = {k: getattr(self, f"w{i}") for i, k in enumerate(self.keys)}
            return self.math(self.reference, input_ids, attention_mask)

    return TorchBertModule


@dataclass
class MiniLM:
    """MiniLM exported once for every sequence length: the fw-edge program (fp32 and int8),
    the ONNX model and the PyTorch module, plus what the int8 export reported."""

    program: Path
    onnx: Path
    torch_model: object
    int8_bytes: int
    int8_cosine: float
    fp32_bytes: int

    def contenders(self, seq: int) -> Contenders:
        return _three(f"minilm_seq{seq}", self.program, self.onnx, self.torch_model,
                      minilm_inputs(seq))


def minilm_inputs(seq: int) -> dict[str, np.ndarray]:
    """Batch 1 of ``seq`` token ids (seeded, [CLS] first) and an all-ones mask."""
    ids = np.random.default_rng(seq).integers(1000, MINILM_VOCAB, (1, seq), dtype=np.int64)
    ids[0, 0] = 101
    return {"input_ids": ids, "attention_mask": np.ones((1, seq), np.int64)}


def minilm(folder: Path) -> MiniLM:
    """Export fw_zoo's MiniLM (fp32 and int8, batch and sequence dynamic) and the PyTorch
    reference (ONNX, opset 17, the same dynamic axes)."""
    import fw_core as fw
    import fw_zoo
    from fw_zoo import minilm as card
    from fw_zoo.package_files import model_folder

    sys.path.insert(0, str(ROOT / "plugins" / "fw_zoo" / "tests"))
    from zoo_torch_bert import TorchSentenceBert

    encoder = fw_zoo.load(MINILM)
    ids, mask = encoder.tokenize(["The weather is lovely today.", "It is sunny."])
    example = {"input_ids": ids, "attention_mask": mask}
    axes = {0: "batch", 1: "sequence"}
    dynamic = {"input_ids": axes, "attention_mask": axes}
    fp32 = fw.export(encoder.model, example, folder / "minilm.fwm", dynamic_dims=dynamic)
    int8 = fw.export(encoder.model, example, folder / "minilm_int8.fwm", dynamic_dims=dynamic,
                     quantize="int8")
    reference = TorchSentenceBert(model_folder(card.PACKAGE, card.DISTRIBUTION, card.FILES))
    module = _torch_bert_module()(reference).eval()
    onnx = folder / "minilm.onnx"
    _onnx_export(module, minilm_inputs(16), onnx, dynamic_axes=dynamic)
    return MiniLM(fp32.path, onnx, module, int8.bytes, int8.cosine, fp32.bytes)
