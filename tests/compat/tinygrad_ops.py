"""tinygrad's op suite as a judge of fw's PyTorch compatibility.

    python tests/compat/tinygrad_ops.py PATH/TO/tinygrad/test/backend/test_ops.py [-k NAME] [-v]

tinygrad's ``test_ops.py`` holds ~400 op tests, each running a PyTorch lambda and tinygrad's
version of it on the same inputs and comparing values and gradients. Here each test's *PyTorch*
lambda runs twice: on torch tensors (the reference) and on fw tensors, with the lambda's
``torch`` rebound to ``fw_core`` and any torch tensor it closes over converted to fw. So a test
passes when a PyTorch program using those ops, its import renamed, computes what torch computes:
the same shapes, dtypes, values (the test's tolerances) and gradients, and raises the exception
type torch raises where the test expects one.

tinygrad is not a dependency and its file is not shipped with fw (it is tinygrad's code): pass
the path of a checkout. The module is loaded with a stand-in ``tinygrad`` package; a test that
uses tinygrad's own API outside the lambdas (``Tensor`` methods, dtypes) is counted "not
applicable", as is one tinygrad itself skips here.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib.util
import sys
import traceback
import types
import unittest

import numpy as np
import torch

import fw_core as fw


class NotApplicable(Exception):
    """The test uses tinygrad's own API, not a PyTorch lambda."""


# -- the stand-in tinygrad package --------------------------------------------------------------
def _refused(name: str):
    def call(*args, **kwargs):
        raise NotApplicable(name)

    return call


class _Refuses(type):
    """Reading ``Tensor.dot`` is fine (the test passes it along as tinygrad's version, which
    is not run); calling it is tinygrad's API."""

    def __getattr__(cls, name):
        return _refused(f"tinygrad.Tensor.{name}")


class _Tensor(metaclass=_Refuses):
    """A tinygrad tensor built in a test body for tinygrad's side only: inert until used."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        raise NotApplicable(f"a tinygrad Tensor's .{name}")


class _Anything:
    """A name tinygrad's module reads at import (dtypes.int32, DEV.renderer): a placeholder."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, name):
        return _Anything(f"{self._name}.{name}")

    def startswith(self, prefix):
        return False

    def __repr__(self) -> str:
        return self._name


class _Device:
    """``Device.DEFAULT`` and ``Device["CPU"].renderer``, as the module's skip conditions read."""

    DEFAULT = "CPU"

    def __getitem__(self, name):
        return types.SimpleNamespace(renderer=_Renderer(), compiler=object())


class _Renderer:
    """A renderer that supports every dtype (fw's cpu kernels have them all)."""

    def supported_dtypes(self):
        return _Everything()


class _Everything:
    def __contains__(self, item) -> bool:
        return True


def _getenv(name, default=0):
    return default


def _stand_in_tinygrad() -> dict[str, types.ModuleType]:
    root = types.ModuleType("tinygrad")
    root.Tensor, root.dtypes = _Tensor, _Anything("dtypes")
    root.Device = _Device()
    helpers = types.ModuleType("tinygrad.helpers")
    helpers.getenv, helpers.DEBUG, helpers.IMAGE = _getenv, 0, 0
    helpers.DEV = types.SimpleNamespace(interface=_Anything("interface"), renderer=_Renderer(),
                                        device="CPU")
    helpers.Context = lambda **flags: contextlib.nullcontext()
    tensor = types.ModuleType("tinygrad.tensor")

    def _to_np_dtype(dtype):
        return np.float32

    tensor._to_np_dtype = _to_np_dtype
    renderer = types.ModuleType("tinygrad.renderer")
    nir = types.ModuleType("tinygrad.renderer.nir")
    nir.NIRRenderer = type("NIRRenderer", (), {})
    return {"tinygrad": root, "tinygrad.helpers": helpers, "tinygrad.tensor": tensor,
            "tinygrad.renderer": renderer, "tinygrad.renderer.nir": nir}


# -- running a torch lambda on fw -----------------------------------------------------------------
def _to_fw(value):
    if isinstance(value, torch.Tensor):
        return fw.tensor(value.detach().numpy())
    if isinstance(value, torch.dtype):
        return getattr(fw, str(value).removeprefix("torch."))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_fw(v) for v in value)
    return value


def _on_fw(fn):
    """``fn`` with ``torch`` meaning fw_core and its closed-over torch values converted; a
    function of torch itself (``torch.abs``, ``torch.Tensor.abs``, ``F.relu``) becomes fw's of
    the same name."""
    if isinstance(fn, functools.partial):
        return functools.partial(_on_fw(fn.func), *_to_fw(fn.args),
                                 **{k: _to_fw(v) for k, v in fn.keywords.items()})
    if isinstance(fn, torch.nn.Module):  # a layer without weights: fw's, built alike
        settings = {k: v for k, v in vars(fn).items() if not k.startswith("_") and
                    k != "training"}
        return getattr(fw.nn, type(fn).__name__)(**settings)
    if getattr(fn, "__objclass__", None) is torch._C.TensorBase:
        name = fn.__name__
        return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)
    if not hasattr(fn, "__globals__") or (fn.__module__ or "").startswith("torch"):
        return _fw_named_like(fn)
    globals_ = dict(fn.__globals__, torch=fw)
    cells = None
    if fn.__closure__:
        cells = tuple(types.CellType(_to_fw(c.cell_contents)) if _filled(c) else c
                      for c in fn.__closure__)
    return types.FunctionType(fn.__code__, globals_, fn.__name__, fn.__defaults__, cells)


def _fw_named_like(fn):
    """fw's function under the public torch name that ``fn`` is (``F.logsigmoid`` is
    ``torch._C._nn.log_sigmoid``: fw's ``nn.functional.logsigmoid``)."""
    for theirs, ours in ((torch.nn.functional, fw.nn.functional), (torch, fw)):
        for name, value in vars(theirs).items():
            if value is fn and not name.startswith("_"):
                return getattr(ours, name)
    return getattr(fw, fn.__name__)


def _filled(cell) -> bool:
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:  # a cell not yet assigned
        return False


_EMPTY = object()


def _inputs(shps, vals, low, high, forward_only):
    """torch inputs as tinygrad's ``prepare_test_op`` makes them, and their fw twins."""
    if shps is None:
        ts = [torch.tensor(x, requires_grad=not forward_only) for x in vals]
    else:
        np.random.seed(0)
        ts = [torch.tensor(np.random.uniform(low, high, size).astype(np.float32),
                           requires_grad=not forward_only) for size in shps]
    ts = [t.type(torch.int32) if t.dtype == torch.int64 else t for t in ts]
    ft = [fw.tensor(t.detach().numpy(), requires_grad=t.requires_grad) for t in ts]
    return ts, ft


def _numpy(value):
    if isinstance(value, fw.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def _compare(what, ours, theirs, atol, rtol):
    ours, theirs = _numpy(ours), theirs.detach().numpy()
    assert ours.shape == theirs.shape, f"{what}: shape fw {ours.shape} | torch {theirs.shape}"
    assert ours.dtype == theirs.dtype, f"{what}: dtype fw {ours.dtype} | torch {theirs.dtype}"
    if np.issubdtype(ours.dtype, np.floating):
        np.testing.assert_allclose(ours, theirs, atol=atol, rtol=rtol, err_msg=what)
    else:
        np.testing.assert_equal(ours, theirs, err_msg=what)


def helper_test_op(shps, torch_fxn, tinygrad_fxn=None, atol=1e-6, rtol=1e-3, grad_atol=1e-4,
                   grad_rtol=1e-3, forward_only=False, vals=None, low=-2, high=2):
    """tinygrad's helper with the torch lambda standing in for tinygrad's."""
    ts, ft = _inputs(shps, vals, low, high, forward_only)
    on_fw = _on_fw(torch_fxn)
    _compare("forward", on_fw(*ft), torch_fxn(*ts), atol, rtol)
    if forward_only or not ts:
        return
    theirs = torch.autograd.grad(torch_fxn(*ts).sum(), ts)
    ours = fw.autograd.grad(on_fw(*ft).sum(), ft)
    for i, (g, t) in enumerate(zip(ours, theirs)):
        _compare(f"gradient {i}", g, t, grad_atol, grad_rtol)


def helper_test_exception(self, shps, torch_fxn, tinygrad_fxn=None, expected=None,
                          forward_only=False, exact=False, vals=None, low=-1.5, high=1.5):
    """tinygrad's helper: torch and fw (on the torch lambda) both raise ``expected``."""
    ts, ft = _inputs(shps, vals, low, high, forward_only)
    with self.assertRaises(expected):
        torch_fxn(*ts)
    with self.assertRaises(expected):
        _on_fw(torch_fxn)(*ft)


# -- the run ------------------------------------------------------------------------------------
def load(path: str) -> types.ModuleType:
    """tinygrad's test module, importing the stand-in tinygrad, with fw's helpers in place."""
    sys.modules.update(_stand_in_tinygrad())
    spec = importlib.util.spec_from_file_location("tinygrad_test_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.helper_test_op = helper_test_op
    for case in vars(module).values():
        if isinstance(case, type) and issubclass(case, unittest.TestCase):
            case.helper_test_exception = helper_test_exception
    return module


class _Tally(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes: dict[str, tuple[str, str]] = {}

    def addSuccess(self, test):
        self.outcomes[test.id()] = ("pass", "")

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = ("not applicable", f"skipped: {reason}")

    def addFailure(self, test, err):
        self._failed(test, err)

    def addError(self, test, err):
        self._failed(test, err)

    def _failed(self, test, err):
        kind, value, _ = err
        if isinstance(value, NotApplicable) or _tinygrad_only(err) or \
                any(name in str(value) for name in ("_Tensor", "_Anything")):
            self.outcomes[test.id()] = ("not applicable", f"uses {value}")
        else:
            line = str(value).strip().splitlines()[0] if str(value).strip() else ""
            self.outcomes[test.id()] = ("fail", f"{kind.__name__}: {line[:160]}")


def _tinygrad_only(err) -> bool:
    """Whether the error comes from tinygrad's API in the test body (a NotApplicable raised
    inside, then wrapped; or a stand-in tinygrad value handed to torch)."""
    return any("NotApplicable" in line for line in traceback.format_exception(*err))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("-k", default="", help="only tests whose name contains this")
    parser.add_argument("-v", action="store_true", help="list every failure")
    args = parser.parse_args()
    module = load(args.path)
    suite = unittest.TestSuite(
        t for t in _flatten(unittest.defaultTestLoader.loadTestsFromModule(module))
        if args.k in t.id())
    tally = _Tally()
    suite.run(tally)
    counts = collections.Counter(kind for kind, _ in tally.outcomes.values())
    applicable = counts["pass"] + counts["fail"]
    print(f"tinygrad test_ops on fw: {counts['pass']} of {applicable} applicable tests pass "
          f"({100 * counts['pass'] / max(applicable, 1):.1f}%); "
          f"{counts['not applicable']} not applicable")
    causes = collections.Counter(why.split(":")[0] + ": " + why.split(":", 2)[1].strip()[:70]
                                 for kind, why in tally.outcomes.values() if kind == "fail")
    for cause, n in causes.most_common(40):
        print(f"{n:4}  {cause}")
    if args.v:
        for name, (kind, why) in sorted(tally.outcomes.items()):
            if kind == "fail":
                print(f"FAIL {name.rsplit('.', 1)[-1]}: {why}")


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


if __name__ == "__main__":
    main()
