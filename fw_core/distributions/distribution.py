"""The base of every distribution: shapes, sampling entry points and argument validation.

A distribution has a ``batch_shape`` (independent distributions side by side, from broadcasting
its parameters) and an ``event_shape`` (the shape of one draw: ``()`` for scalars, ``(k,)`` for
a Dirichlet or a multivariate normal). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``, as in ``torch.distributions``.

Validation follows PyTorch's ``validate_args`` (on by default; ``validate_args=False`` or
:meth:`Distribution.set_default_validate_args` turn it off): parameters are checked against
``arg_constraints`` when the distribution is built, and values passed to ``log_prob`` against
``support``. A failure raises :class:`~fw_core.errors.ArgumentError` (a ``ValueError``) naming
the distribution, the argument and the values that arrived.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as _dt
from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError, UnsupportedError
from ..ops.creation import as_tensor
from ..ops.meta import broadcast_shapes
from ..tensor import Tensor
from . import constraints


class Distribution:
    """A probability distribution over tensors (PyTorch's ``torch.distributions.Distribution``).

    Subclasses set ``arg_constraints`` ({parameter name: constraint}), ``support`` and
    ``has_rsample``, and implement what they can of ``rsample``/``sample``, ``log_prob``,
    ``entropy``, ``mean`` and ``variance``; the rest raise UnsupportedError (a
    ``NotImplementedError``) as PyTorch's do.
    """

    has_rsample = False
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: constraints.Constraint | None = None
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for distributions built without ``validate_args``."""
        Distribution._validate_default = bool(value)

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = (Distribution._validate_default if validate_args is None
                               else bool(validate_args))
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if name in self.__dict__:  # only the parameterisation that was given
                    self._check(f"parameter {name}", self.__dict__[name], constraint)

    # -- shapes -----------------------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple[int, ...]:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape):
        """The same distribution broadcast to ``batch_shape`` (its parameters expanded, views
        not copies), validated as this one is."""
        batch_shape = tuple(batch_shape)
        new = type(self).__new__(type(self))
        for name, event_dims in self._expanded_params().items():
            value = self.__dict__.get(name)
            if value is not None:
                event = tuple(value.shape[value.ndim - event_dims:]) if event_dims else ()
                new.__dict__[name] = value.expand(batch_shape + event)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expanded_params(self) -> dict[str, int]:
        """{parameter attribute: its event dims}: what ``expand`` broadcasts (whichever are
        set); the constrained parameters unless a subclass keeps others."""
        return {name: c.event_dim for name, c in self.arg_constraints.items()}

    # -- sampling ---------------------------------------------------------------------------
    def sample(self, sample_shape=()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def _noise(self, draw, sample_shape=()) -> Tensor:
        """``draw`` (``fw.randn``, ``fw.rand``) of the sample's shape, dtype and device: fw's
        generator, so ``fw.manual_seed`` makes samples reproducible."""
        like = self._first_param()
        return draw(*self._extended_shape(sample_shape), dtype=like.dtype, device=like.device)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise UnsupportedError(f"{type(self).__name__} has no reparameterised sample",
                               op=f"{type(self).__name__}.rsample",
                               hint="use sample() and a score-function (REINFORCE) estimator")

    # -- densities and moments ----------------------------------------------------------------
    def log_prob(self, value) -> Tensor:
        raise self._missing("log_prob")

    def entropy(self) -> Tensor:
        raise self._missing("entropy")

    @property
    def mean(self) -> Tensor:
        raise self._missing("mean")

    @property
    def variance(self) -> Tensor:
        raise self._missing("variance")

    @property
    def mode(self) -> Tensor:
        raise self._missing("mode")

    def cdf(self, value) -> Tensor:
        raise self._missing("cdf")

    def icdf(self, value) -> Tensor:
        raise self._missing("icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise self._missing("enumerate_support")

    def _enumerate(self, values: Tensor, expand: bool) -> Tensor:
        """``values`` (one per outcome) laid along a new first dim before the batch dims, as
        PyTorch's ``enumerate_support`` returns them: (outcomes,) + batch_shape when
        ``expand``, else (outcomes,) + (1,) * len(batch_shape)."""
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _missing(self, what: str) -> UnsupportedError:
        return UnsupportedError(f"{type(self).__name__} does not define {what}",
                                op=f"{type(self).__name__}.{what}")

    # -- validation ---------------------------------------------------------------------------
    def _value(self, value) -> Tensor:
        """``value`` as a tensor, checked (when validating) to broadcast with the distribution's
        shape and to lie in its support."""
        if not isinstance(value, Tensor):
            value = as_tensor(value, dtype=self._dtype())
        if not self._validate_args:
            return value
        expected = self._batch_shape + self._event_shape
        event = len(self._event_shape)
        if tuple(value.shape[len(value.shape) - event:] if event else ()) != self._event_shape:
            raise self._shape_error(value, expected)
        try:
            broadcast_shapes(tuple(value.shape), expected)
        except ShapeError:
            raise self._shape_error(value, expected) from None
        self._check("value", value, self.support)
        return value

    def _shape_error(self, value: Tensor, expected) -> ShapeError:
        name = type(self).__name__
        return ShapeError(f"value of shape {tuple(value.shape)} does not broadcast with "
                          f"batch_shape + event_shape {expected}", op=f"{name}.log_prob",
                          hint="give values whose trailing dims match the event shape")

    def _check(self, what: str, tensor: Tensor, constraint: constraints.Constraint) -> None:
        values = tensor.detach().numpy()
        ok = constraint.check(values)
        if not np.all(ok):
            name = type(self).__name__
            if constraint.event_dim == 0 and values.ndim:
                got = (f"{_show(values[~ok])} (the invalid entries of a tensor of shape "
                       f"{values.shape})")
            else:
                got = f"{_show(values)} (shape {values.shape})"
            raise ArgumentError(
                f"{what} must be {constraint.describe}, got {got}", op=name,
                inputs=self._describe_params(),
                hint=f"pass {what.removeprefix('parameter ')} {constraint.describe}, or "
                     f"validate_args=False to skip the check")

    def _first_param(self) -> Tensor:
        return next(v for v in self.__dict__.values() if isinstance(v, Tensor))

    def _dtype(self) -> _dt.DType:
        return self._first_param().dtype

    def _describe_params(self) -> str:
        parts = [f"{name}: shape {tuple(value.shape)}" for name, value in self.__dict__.items()
                 if isinstance(value, Tensor)]
        return f"{type(self).__name__}({', '.join(parts)})"

    def __repr__(self) -> str:
        return self._describe_params()


def _show(values: np.ndarray) -> str:
    return np.array2string(np.asarray(values).ravel()[:6], precision=4, separator=", ")


def as_float_tensors(*values) -> list[Tensor]:
    """Parameters as tensors of one float dtype: Python numbers (and integer tensors) take the
    float dtype of the tensors among them, or the default float, as ``torch.distributions``
    does."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    floats = [t.dtype for t in tensors if t.dtype.is_floating_point]
    dtype = functools.reduce(_dt.promote_types, floats) if floats else _dt.default_float
    device = tensors[0].device if tensors else None
    return [v if isinstance(v, Tensor) and v.dtype == dtype
            else v.to(dtype) if isinstance(v, Tensor)
            else as_tensor(v, dtype=dtype, device=device) for v in values]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """:func:`as_float_tensors`, broadcast to one shape (expanded views)."""
    converted = as_float_tensors(*values)
    shape = broadcast_shapes(*(tuple(t.shape) for t in converted))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in converted)
