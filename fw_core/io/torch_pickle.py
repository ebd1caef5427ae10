"""The restricted unpickler that reads the pickles inside PyTorch checkpoints without torch.

A pickle names the functions it calls (``GLOBAL module name``); unpickling it normally imports
and calls them, so a crafted checkpoint can run anything (``os.system`` through
``__reduce__``). This unpickler resolves a name only from :data:`ALLOWED`, the globals that
``torch.load(weights_only=True)`` admits for plain tensors: the tensor rebuild functions, storage
classes, dtypes, ``torch.Size``/``torch.device``, ``collections.OrderedDict``/``Counter`` and a
few builtins (``set``, ``complex``, ``bytearray``, ``_codecs.encode`` for ``bytes``). Each name
maps to a function of fw's own that only records its arguments (as :class:`TensorRecord`,
:class:`TorchDType`, ...); nothing of the file's choosing is imported or called. Any other name
raises CheckpointError naming it, before anything it names is looked up.

The records are turned into arrays and fw tensors by :mod:`.torch_checkpoint` once the
storages' bytes are known (the legacy format stores them after the pickle).
"""

from __future__ import annotations

import _compat_pickle
import collections
import pickle
from dataclasses import dataclass, replace

import numpy as np

from ..errors import CheckpointError

#: NumPy's limit on dimensions
MAX_RANK = 64

__all__ = ["ALLOWED", "Storage", "StorageType", "TensorRecord", "TorchDType", "UNNAMED",
           "damaged", "refused", "unpickle"]


@dataclass(frozen=True, slots=True)
class TorchDType:
    """A torch dtype named in a checkpoint: its name and the NumPy dtype of its values (None
    for the dtypes NumPy lacks; bfloat16's values are read as float32, see ``widened``)."""

    name: str
    numpy: np.dtype | None
    widened: bool = False

    @property
    def itemsize(self) -> int:
        """Bytes per element in the file."""
        return 2 if self.widened else self.numpy.itemsize


_NUMPY_OF = {"float64": "<f8", "float32": "<f4", "float16": "<f2", "bfloat16": "<f4",
             "int64": "<i8", "int32": "<i4", "int16": "<i2", "int8": "i1", "uint8": "u1",
             "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "?",
             "complex128": "<c16", "complex64": "<c8"}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
            "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
#: dtypes torch has and NumPy does not: named so the refusal can say what the tensor was
_NO_NUMPY = ("complex32", "chalf", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8",
             "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8",
             "bits16")
DTYPES = {name: TorchDType(name, np.dtype(code), widened=name == "bfloat16")
          for name, code in _NUMPY_OF.items()}
DTYPES.update({alias: DTYPES[name] for alias, name in _ALIASES.items()})
DTYPES.update({name: TorchDType(name, None) for name in _NO_NUMPY})
#: the legacy storage classes (``torch.FloatStorage``...) and the dtype of their elements
_STORAGE_DTYPES = {"Double": "float64", "Float": "float32", "Half": "float16",
                   "BFloat16": "bfloat16", "Long": "int64", "Int": "int32", "Short": "int16",
                   "Char": "int8", "Byte": "uint8", "Bool": "bool", "ComplexFloat": "complex64",
                   "ComplexDouble": "complex128", "QInt8": "qint8", "QUInt8": "quint8",
                   "QInt32": "qint32", "QUInt4x2": "quint4x2", "QUInt2x4": "quint2x4"}


@dataclass(frozen=True, slots=True)
class StorageType:
    """A storage class named in a checkpoint (``torch.FloatStorage``): its element dtype."""

    dtype: TorchDType


@dataclass(frozen=True, slots=True, eq=False)
class Storage:
    """One storage of a checkpoint: ``numel`` elements of ``dtype`` saved at ``location``
    ("cpu", "cuda:0") under ``key``; ``root``/``offset`` make a legacy storage view (elements
    ``offset...`` of another storage). Its bytes are kept by the reader, by key."""

    dtype: TorchDType
    key: str
    location: str
    numel: int
    root: Storage | None = None
    offset: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class TensorRecord:
    """A tensor as the checkpoint describes it: a strided view of a storage, read as
    ``dtype`` (its storage's unless the rebuild names one). Records are frozen and slotted,
    so a pickle's BUILD cannot change one after its rebuild function checked it."""

    storage: Storage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    requires_grad: bool
    dtype: TorchDType
    parameter: bool = False


#: how this module's messages start; :mod:`.torch_checkpoint` puts the file's name there
UNNAMED = "the checkpoint"


def damaged(what: str, name: str = UNNAMED) -> CheckpointError:
    """The CheckpointError for a file whose content cannot be what torch.save wrote."""
    return CheckpointError(f"{name} is not a readable PyTorch checkpoint ({what})",
                           hint="the file is truncated or damaged: restore it from a backup or "
                           "save it again")


def _counts(value, what: str) -> tuple[int, ...]:
    if not (isinstance(value, tuple) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value)):
        raise damaged(f"a tensor's {what} is {value!r}, not a tuple of counts")
    return value


def _tensor(storage, offset, size, stride, requires_grad=False, dtype=None) -> TensorRecord:
    if not isinstance(storage, Storage):
        raise damaged(f"a tensor rebuilt from a {type(storage).__name__}, not a storage")
    (offset,) = _counts((offset,), "storage offset")
    size, stride = _counts(tuple(size), "size"), _counts(tuple(stride), "stride")
    if len(size) != len(stride) or len(size) > MAX_RANK:
        raise damaged(f"a tensor of size {size} has strides {stride}")
    return TensorRecord(storage, offset, size, stride, bool(requires_grad),
                        dtype if dtype is not None else storage.dtype)


def _rebuild_tensor(storage, offset, size, stride):
    return _tensor(storage, offset, size, stride)


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return _tensor(storage, offset, size, stride, requires_grad)


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    if not isinstance(dtype, TorchDType):
        raise damaged(f"a tensor whose dtype is {dtype!r}")
    return _tensor(storage, offset, size, stride, requires_grad, dtype)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    if not isinstance(data, TensorRecord):
        raise damaged(f"a Parameter rebuilt from a {type(data).__name__}, not a tensor")
    if state:
        raise CheckpointError(
            f"{UNNAMED} holds a Parameter with Python attributes "
            f"({', '.join(map(str, state))}), which fw's Parameters cannot carry",
            hint="in PyTorch, save model.state_dict() (plain tensors) instead")
    return replace(data, parameter=True, requires_grad=bool(requires_grad))


def _torch_size(dims=()):
    return _counts(tuple(dims), "size")


def _torch_device(kind, index=None):
    if not isinstance(kind, str) or not (index is None or isinstance(index, int)):
        raise damaged(f"a device ({kind!r}, {index!r})")
    return kind if index is None or ":" in kind else f"{kind}:{index}"


def _encode(text, encoding="latin1"):
    """``_codecs.encode`` as protocol 2 pickles use it for ``bytes``: latin-1 text only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise damaged(f"_codecs.encode({type(text).__name__}, {encoding!r})")
    return text.encode("latin1")


ALLOWED = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "_codecs.encode": _encode,
    "torch.Size": _torch_size,
    "torch.device": _torch_device,
    "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch.storage.UntypedStorage": StorageType(DTYPES["uint8"]),
}
ALLOWED.update({f"torch.{name}": dtype for name, dtype in DTYPES.items()})
for _prefix in ("torch", "torch.cuda"):
    ALLOWED.update({f"{_prefix}.{kind}Storage": StorageType(DTYPES[name])
                    for kind, name in _STORAGE_DTYPES.items()})

#: torch globals that torch's weights_only loader admits and fw cannot read, and why
_UNSUPPORTED = {
    "torch._utils._rebuild_qtensor": "a quantized tensor",
    "torch._utils._rebuild_sparse_tensor": "a sparse tensor",
    "torch._utils._rebuild_nested_tensor": "a nested tensor",
    "torch._utils._rebuild_meta_tensor_no_storage": "a tensor on the meta device (no values)",
    "torch._utils._rebuild_wrapper_subclass": "a tensor subclass",
    "torch._tensor._rebuild_from_type_v2": "a tensor subclass or a tensor with attributes",
    "torch._utils._rebuild_device_tensor_from_numpy": "a tensor of a device without storages",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "a tensor of a device without "
                                                           "storages",
}


class _Unpickler(pickle.Unpickler):
    """pickle's own unpickler, with every global resolved from :data:`ALLOWED` and persistent
    ids (the storages) answered by ``storage(saved_id)``."""

    def __init__(self, file, storage, options: dict):
        super().__init__(file, **options)
        self._storage = storage

    def find_class(self, module: str, name: str):
        # pickles of protocol <= 2 spell Python 3 names the Python 2 way (__builtin__.set)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        qualified = f"{module}.{name}"
        if qualified in ALLOWED:
            return ALLOWED[qualified]
        raise refused(qualified)

    def persistent_load(self, saved_id):
        if self._storage is None:
            raise damaged(f"a storage reference {saved_id!r} where none belongs")
        return self._storage(saved_id)


def refused(qualified: str) -> CheckpointError:
    """The CheckpointError for a global outside the allowlist, naming it and what to do."""
    if qualified in _UNSUPPORTED:
        return CheckpointError(
            f"{UNNAMED} holds {_UNSUPPORTED[qualified]} ({qualified}), which fw cannot read",
            hint="in PyTorch, convert it to a plain dense CPU tensor (.dequantize(), "
            ".to_dense(), .cpu()) and save that")
    looks_like_a_model = qualified.startswith(("torch.nn.", "__main__."))
    return CheckpointError(
        f"{UNNAMED} names the Python global {qualified}, which fw.load does not admit: "
        "loading a pickled object runs code chosen by the file, so fw reads only tensors, "
        "OrderedDicts and plain values (what torch.load(weights_only=True) admits), even "
        "with weights_only=False",
        hint=("it holds a whole pickled model: in PyTorch, save model.state_dict() instead, "
              "and load that into the same fw architecture with load_state_dict"
              if looks_like_a_model else
              "in PyTorch, save only tensors, state_dict()s and plain values; if you trust "
              "the file, load it with torch.load(weights_only=False) and save those"))


def unpickle(file, storage=None, **options):
    """The object pickled at ``file``'s position, built only from admitted globals;
    ``storage(saved_id)`` answers persistent ids (None: the pickle may hold none), and
    ``options`` (``encoding``, ``errors``) go to :class:`pickle.Unpickler`.

    Raises:
        CheckpointError: a global outside :data:`ALLOWED` (naming it), or a damaged pickle.
    """
    try:
        return _Unpickler(file, storage, options).load()
    except CheckpointError:
        raise
    except RecursionError:
        raise damaged("it nests too deeply") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, UnicodeDecodeError, MemoryError) as exc:
        raise damaged(f"{type(exc).__name__}: {exc}") from None
