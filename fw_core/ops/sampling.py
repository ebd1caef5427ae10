"""Random draws shaped by tensors: ``bernoulli``, ``multinomial``, ``poisson``, ``normal``, and
Tensor's in-place fills (``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``,
``geometric_``, ``cauchy_``, ``log_normal_``, ``random_``), as PyTorch has them.

Like :func:`fw.rand`, every draw comes from a generator's PCG64 stream on the host (the
``generator=`` given, else the default one that ``fw.manual_seed`` seeds) and is copied to the
tensor's device, so one seed gives one stream on every device. The numbers are not those
PyTorch's generator gives for the same seed; their distributions are the same.

A draw's gradient with respect to its parameters is zero, as in PyTorch (``bernoulli(p)``,
``normal(mean, std)`` and ``poisson(rates)`` record a node that returns zeros): a pathwise
gradient needs the ``rsample`` of :mod:`fw.distributions`. Parameters given as tensors are read
on the host, so inside ``fw.compile`` such a draw is a logged graph break.
"""

from __future__ import annotations

__all__ = ["bernoulli", "multinomial", "normal", "poisson"]

import numpy as np

from .. import capture
from .. import dtypes as _dt
from .._state import state
from ..autograd.grad_mode import INFERENCE
from ..autograd.node import Node
from ..device import get as get_device
from ..errors import DTypeError, InvalidArgumentError, UnsupportedError
from ..random import default_generator
from ..records import Structure
from ..tensor import Tensor
from . import anchors
from .creation import _random
from .dispatch import check_tensors
from .registry import define_op


def _zero_vjp(ctx, g):
    from .creation import zeros

    return tuple(None if nxt is None else zeros(shape, dtype=g.dtype, device=g.device)
                 for nxt, shape in zip(ctx.next, ctx.input_shapes))


def _sampler(name: str, doc: str, signature: str):
    """The contract a draw's result names: its gradient is zero (a sample's value does not
    move with its parameters along any path autograd can see)."""
    return define_op(name, family="sampling", doc=doc, signature=signature,
                     meta=_host_only, vjp=_zero_vjp, structure=Structure.NONE,
                     anchor=anchors.flat("a random draw: zero gradient with respect to its "
                                         "parameters; use a distribution's rsample for a "
                                         "pathwise one"))


def _host_only(*args, **kwargs):
    raise UnsupportedError("a random draw has no meta rule: it is made on the host",
                           hint="call the function on tensors")


BERNOULLI = _sampler("bernoulli", "1 with probability p, else 0, elementwise.",
                     "bernoulli(input: Tensor, p: float | None = None) -> Tensor")
POISSON = _sampler("poisson", "A Poisson draw with each element as its rate.",
                   "poisson(input: Tensor) -> Tensor")
NORMAL = _sampler("normal", "mean + std * N(0, 1), elementwise (broadcast).",
                  "normal(mean, std, size=None) -> Tensor")
MULTINOMIAL = _sampler("multinomial", "Category indices drawn with the input's weights.",
                       "multinomial(input: Tensor[n] | Tensor[r, n], num_samples: int, "
                       "replacement: bool = False) -> Tensor[int64]")


# -- the shared path -----------------------------------------------------------------------------
def _host(t: Tensor, op: str) -> np.ndarray:
    """``t``'s values on the host (a traced run notes the read as a graph break)."""
    capture.host_read(t, f"fw.{op} (drawn on the host from its parameters)")
    return np.asarray(t._device.spec.to_numpy(t._data))


def _result(op, values: np.ndarray, device, parameters: tuple) -> Tensor:
    """A drawn array as a tensor of ``op`` on ``device``; recorded with a zero gradient when a
    tensor parameter requires grad."""
    out = Tensor._wrap(device.spec.from_numpy(np.ascontiguousarray(values), device.index),
                       device, op, state.module_path)
    if state.inference_mode:
        out._vc = INFERENCE
    if state.grad_enabled and _dt.is_float(values.dtype) and any(
            isinstance(p, Tensor) and p.requires_grad for p in parameters):
        out._node = Node(op, parameters, {}, out, state.module_path)
        out.requires_grad = True
    return out


def _rng(generator):
    return (generator or default_generator).numpy


def _float_input(op: str, t: Tensor) -> None:
    check_tensors(op, t)
    if not _dt.is_float(t._data.dtype):
        raise UnsupportedError(f"{op} is not implemented for {t.dtype.name} tensors",
                               op=op, hint="convert the input first: t.float()")


# -- public functions ----------------------------------------------------------------------------
def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p`` for every element, when given), else 0; the
    input's shape and dtype.

    Raises InvalidArgumentError for probabilities outside [0, 1].
    """
    _float_input("bernoulli", input)
    probs = _host(input, "bernoulli") if p is None else np.float64(p)
    if not np.all((probs >= 0) & (probs <= 1)):
        raise InvalidArgumentError("probabilities must be in [0, 1] (Expected p_in >= 0 && "
                                   "p_in <= 1)", op="bernoulli",
                                   hint="clamp them: p.clamp(0, 1), or use logits with "
                                   "fw.distributions.Bernoulli")
    draws = _rng(generator).random(input.shape) < probs
    return _result(BERNOULLI, draws.astype(input._data.dtype), input._device,
                   (input,) if p is None else ())


def poisson(input: Tensor, generator=None) -> Tensor:
    """A Poisson draw per element, with the element as its rate; the input's dtype.

    Raises InvalidArgumentError for a negative rate.
    """
    _float_input("poisson", input)
    rates = _host(input, "poisson")
    if np.any(rates < 0) or np.any(np.isnan(rates)):
        raise InvalidArgumentError("invalid Poisson rate, expected rate to be non-negative",
                                   op="poisson", hint="rates are >= 0 (e.g. x.clamp(min=0))")
    draws = _rng(generator).poisson(rates).astype(input._data.dtype)
    return _result(POISSON, draws.reshape(input.shape), input._device, (input,))


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Normal draws, as each of ``torch.normal``'s overloads:

    - ``normal(mean: Tensor, std: Tensor)``: one draw per (broadcast) element;
    - ``normal(mean: Tensor, std: float = 1.0)`` and ``normal(mean: float, std: Tensor)``;
    - ``normal(mean: float, std: float, size)``: a new tensor of ``size`` (with ``dtype``,
      ``device`` and ``requires_grad``).

    Raises InvalidArgumentError for a negative std.
    """
    tensors = tuple(v for v in (mean, std) if isinstance(v, Tensor))
    if not tensors:
        if size is None:
            raise UnsupportedError("normal(mean: float, std: float) needs size=",
                                   op="normal", hint="e.g. fw.normal(0.0, 1.0, size=(2, 3))")
        _check_std(std)
        return _random("normal", lambda rng, s: rng.normal(mean, std, s),
                       (size,), dtype, device, generator, requires_grad)
    for t in tensors:
        _float_input("normal", t)
    means = _host(mean, "normal") if isinstance(mean, Tensor) else np.float64(mean)
    stds = _host(std, "normal") if isinstance(std, Tensor) else np.float64(std)
    _check_std(stds)
    from .meta import broadcast_shapes

    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors), op="normal")
    result_dtype = _dt.PROMOTE_NUMPY[tensors[0]._data.dtype, tensors[-1]._data.dtype]
    draws = means + stds * _rng(generator).standard_normal(shape)
    return _result(NORMAL, np.asarray(draws, dtype=result_dtype).reshape(shape),
                   tensors[0]._device, (mean, std))


def _check_std(std) -> None:
    low = np.min(std) if np.size(std) else 0.0
    if low < 0:
        raise InvalidArgumentError(f"normal expects std >= 0.0, but found std {low:g}",
                                   op="normal", hint="a standard deviation is >= 0")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """``num_samples`` category indices per row of ``input`` (1-d or 2-d, non-negative
    weights, not necessarily summing to 1); int64 of shape ``(num_samples,)`` or
    ``(rows, num_samples)``. Without replacement each index appears at most once per row.

    Raises InvalidArgumentError as PyTorch does: a negative, infinite or NaN weight, a row
    summing to 0, ``num_samples <= 0``, or more samples than categories without replacement;
    DTypeError for a non-floating input.
    """
    check_tensors("multinomial", input)
    if not _dt.is_float(input._data.dtype):
        raise DTypeError(f"multinomial only supports floating-point dtypes for input, got: "
                         f"{input.dtype.name}", op="multinomial", hint="use weights.float()")
    if input.ndim not in (1, 2):
        raise InvalidArgumentError(f"prob_dist must be 1 or 2 dim, got {input.ndim}",
                                   op="multinomial", hint="one row of weights per draw")
    if num_samples <= 0:
        raise InvalidArgumentError("cannot sample n_sample <= 0 samples", op="multinomial",
                                   hint="ask for at least one sample")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise InvalidArgumentError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
            op="multinomial", hint="pass replacement=True, or fewer samples")
    weights = _host(input, "multinomial").astype(np.float64).reshape(-1, categories)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InvalidArgumentError("probability tensor contains either `inf`, `nan` or "
                                   "element < 0", op="multinomial",
                                   hint="weights must be finite and >= 0")
    totals = weights.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise InvalidArgumentError("invalid multinomial distribution (sum of probabilities "
                                   "<= 0)", op="multinomial",
                                   hint="give every row at least one positive weight")
    rng = _rng(generator)
    if replacement:
        cdf = np.cumsum(weights / totals, axis=1)
        u = rng.random((weights.shape[0], num_samples))
        picks = np.stack([np.searchsorted(row, draws, side="right")
                          for row, draws in zip(cdf, u)])
        picks = np.minimum(picks, categories - 1)
    else:
        # weighted sampling without replacement: the largest weight / Exp(1) keys come out in
        # the order a draw-and-remove process would pick them
        keys = weights / rng.standard_exponential(weights.shape)
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    picks = picks.astype(np.int64).reshape(input.shape[:-1] + (num_samples,))
    return _result(MULTINOMIAL, picks, input._device, ())


# -- in-place fills -------------------------------------------------------------------------------
def _fill(x: Tensor, values) -> Tensor:
    from ..tensor_methods import assign_

    return assign_(x, np.asarray(values).astype(x._data.dtype, copy=False))


def _float_fill(op: str, x: Tensor) -> None:
    if not _dt.is_float(x._data.dtype):
        raise UnsupportedError(f"{op} is not implemented for {x.dtype.name} tensors",
                               op=op, hint="fill a floating tensor, or use random_ for integers")


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill ``x`` with N(mean, std^2) draws, in place."""
    _float_fill("normal_", x)
    _check_std(std)
    return _fill(x, _rng(generator).normal(mean, std, x.shape))


def uniform_(x: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None,
             **kwargs) -> Tensor:
    """Fill ``x`` with U[from, to) draws, in place (``from`` may be given by keyword)."""
    from_ = kwargs.pop("from", from_)
    _float_fill("uniform_", x)
    if from_ > to:
        raise InvalidArgumentError(f"uniform_ expects to return a [from, to) range, but found "
                                   f"from={from_:g} > to={to:g}", op="uniform_",
                                   hint="pass from <= to")
    return _fill(x, _rng(generator).uniform(from_, to, x.shape))


def bernoulli_(x: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill ``x`` with 1 (probability ``p``, a number or a tensor broadcasting to ``x``) or 0."""
    probs = _host(p, "bernoulli_") if isinstance(p, Tensor) else np.float64(p)
    if not np.all((probs >= 0) & (probs <= 1)):
        raise InvalidArgumentError(f"bernoulli_ expects p to be in [0, 1], but got p={p}",
                                   op="bernoulli_", hint="pass a probability in [0, 1]")
    return _fill(x, _rng(generator).random(x.shape) < probs)


def exponential_(x: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill ``x`` with Exp(lambd) draws (mean 1 / lambd), in place."""
    _float_fill("exponential_", x)
    if not lambd > 0:
        raise InvalidArgumentError(f"exponential_ expects lambda > 0.0, but found "
                                   f"lambda={lambd:g}", op="exponential_",
                                   hint="the rate is > 0")
    return _fill(x, _rng(generator).exponential(1.0 / lambd, x.shape))


def geometric_(x: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill ``x`` with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise InvalidArgumentError(f"geometric_ expects p to be in (0, 1), but got p={p:g}",
                                   op="geometric_", hint="pass 0 < p < 1")
    return _fill(x, _rng(generator).geometric(p, x.shape))


def cauchy_(x: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill ``x`` with Cauchy(median, sigma) draws, in place."""
    _float_fill("cauchy_", x)
    if not sigma > 0:
        raise InvalidArgumentError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}",
                                   op="cauchy_", hint="the scale is > 0")
    return _fill(x, median + sigma * _rng(generator).standard_cauchy(x.shape))


def log_normal_(x: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill ``x`` with exp(N(mean, std^2)) draws, in place."""
    _float_fill("log_normal_", x)
    if not std > 0:
        raise InvalidArgumentError(f"log_normal_ expects std > 0.0, but found std={std:g}",
                                   op="log_normal_", hint="the standard deviation is > 0")
    return _fill(x, _rng(generator).lognormal(mean, std, x.shape))


def random_(x: Tensor, *bounds, generator=None, **named) -> Tensor:
    """Fill ``x`` with integers uniform in [from, to), as PyTorch's three forms:
    ``random_()`` spans [0, 2^mantissa] for floats and [0, max] for integers, ``random_(to)``
    [0, to), ``random_(from, to)`` (``from``/``to`` may also be keywords; ``to=None`` is the
    dtype's span)."""
    low, high = named.pop("from", None), named.pop("to", None)
    if len(bounds) == 2:
        low, high = bounds
    elif len(bounds) == 1 and low is None and "to" not in named and high is None:
        high = bounds[0]
    elif len(bounds) == 1:
        low = bounds[0]
    low = 0 if low is None else low
    high = _random_span(x.dtype) if high is None else high
    if low >= high:
        raise InvalidArgumentError(f"random_ expects 'from' to be less than 'to', but got "
                                   f"from={low} >= to={high}", op="random_",
                                   hint="pass from < to (to is exclusive)")
    return _fill(x, _rng(generator).integers(low, high, x.shape))


def _random_span(dtype) -> int:
    """One past the largest value ``random_()`` draws for ``dtype`` (as PyTorch)."""
    if dtype.category == _dt.FLOATING:
        return 2 ** (np.finfo(dtype.numpy).nmant + 1) + 1
    if dtype is _dt.bool_:
        return 2
    return int(np.iinfo(dtype.numpy).max) + 1


def new_empty(x: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` with ``x``'s dtype and device (unless given)."""
    from .creation import empty

    return empty(*size, dtype=dtype or x.dtype, device=get_device(device) if device else
                 x.device, requires_grad=requires_grad)


def _multinomial_method(x, num_samples, replacement=False, *, generator=None) -> Tensor:
    return multinomial(x, num_samples, replacement, generator=generator)


def _bernoulli_method(x, p=None, *, generator=None) -> Tensor:
    return bernoulli(x, p, generator=generator)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {
    "bernoulli": _bernoulli_method, "multinomial": _multinomial_method, "normal_": normal_,
    "uniform_": uniform_, "bernoulli_": bernoulli_, "exponential_": exponential_,
    "geometric_": geometric_, "cauchy_": cauchy_, "log_normal_": log_normal_,
    "random_": random_, "new_empty": new_empty,
}
