"""Attributions: which input elements (or which regions of a conv layer) a prediction rests on.

``explain(model, x, target, method=...)`` with the methods of Captum: saliency, input x
gradient, integrated gradients (with the convergence delta, and the interpolation steps batched
by ``internal_batch_size`` so large step counts fit in memory), SmoothGrad (a noise tunnel over
saliency), occlusion and GradCAM. Samples are assumed independent (eval mode for BatchNorm).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

import fw_core as fw
from fw_core.errors import FwError

__all__ = ["Attribution", "METHODS", "explain"]


@dataclass
class Attribution:
    """What :func:`explain` returns.

    Attributes:
        values: an fw tensor shaped like ``x`` ((N, 1, H, W) for GradCAM).
        method: the method's name.
        target: the explained output index per sample (None for scalar outputs).
        delta: integrated gradients' convergence delta per sample,
            ``sum(attributions) - (f(x) - f(baseline))``; None for the other methods.
        extras: method-specific details (IG's alphas, GradCAM's layer-size map and weights).
    """

    values: fw.Tensor
    method: str
    target: object = None
    delta: fw.Tensor | None = None
    extras: dict = field(default_factory=dict)

    def __str__(self) -> str:
        values = self.values.numpy()
        text = (f"{self.method} attribution of shape {tuple(values.shape)}: "
                f"min {values.min():.4g}, max {values.max():.4g}")
        if self.delta is not None:
            text += f", convergence delta up to {np.abs(self.delta.numpy()).max():.3g}"
        return text


# -- the scalar being explained ----------------------------------------------------------------
def _targets(target, n: int):
    """One output index per sample, or None for a scalar-per-sample output."""
    if target is None:
        return None
    if isinstance(target, fw.Tensor):
        target = target.numpy()
    index = np.broadcast_to(np.asarray(target, dtype=np.int64).reshape(-1), (n,)) \
        if np.ndim(target) else np.full(n, int(target))
    return index


def _score(model, x, index):
    """f(x)[n, target[n]] for each sample: an (N,) tensor."""
    out = model(x)
    if index is None:
        if out.numel() != out.shape[0]:
            raise FwError(f"the model's output has shape {tuple(out.shape)}: say which output "
                          "to explain", hint="pass target=<class index> (an int or one per "
                          "sample)")
        return out.reshape(out.shape[0])
    out = out.reshape(out.shape[0], -1)
    picks = np.zeros(tuple(out.shape), dtype=out.dtype.numpy)
    n = np.arange(out.shape[0])
    picks[n, np.resize(index, out.shape[0])] = 1
    return (out * fw.tensor(picks, device=out.device)).sum(dim=1)


def _gradient(model, x: np.ndarray, index, like) -> tuple[np.ndarray, np.ndarray]:
    """(d score / d x, score) for a batch held as a host array."""
    xs = fw.tensor(x, dtype=like.dtype, device=like.device, requires_grad=True)
    with fw.enable_grad():
        score = _score(model, xs, index)
        (grad,) = fw.autograd.grad(score.sum(), [xs])
    return grad.detach().numpy(), score.detach().numpy()


def _chunks(copies: int, n: int, batch: int | None):
    """Ranges of copies of an n-sample batch to run together: about ``batch`` rows per
    forward (at least one copy), all at once when ``batch`` is None."""
    per = copies if not batch else max(1, int(batch) // n)
    for start in range(0, copies, per):
        yield start, min(start + per, copies)


def _stack(copies: np.ndarray, index):
    """(k, N, ...) copies as one (k*N, ...) batch, with the targets repeated."""
    rows = copies.reshape(-1, *copies.shape[2:])
    return rows, None if index is None else np.tile(index, len(copies))


def _scores(model, x: np.ndarray, index, like) -> np.ndarray:
    """The explained score of each row, without gradients."""
    with fw.no_grad():
        return _score(model, fw.tensor(x, dtype=like.dtype, device=like.device), index).numpy()


# -- the methods -----------------------------------------------------------------------------------
def _saliency(model, x, index, like, abs: bool = True):  # noqa: A002 - Captum's name
    grad, _ = _gradient(model, x, index, like)
    return (np.abs(grad) if abs else grad), {}


def _input_x_gradient(model, x, index, like):
    grad, _ = _gradient(model, x, index, like)
    return x * grad, {}


def _alphas(n_steps: int, method: str):
    """Points in [0, 1] and their quadrature weights."""
    if method == "riemann_trapezoid":
        alphas = np.linspace(0.0, 1.0, n_steps)
        weights = np.full(n_steps, 1.0 / (n_steps - 1))
        weights[[0, -1]] /= 2
        return alphas, weights
    if method == "gausslegendre":
        nodes, weights = np.polynomial.legendre.leggauss(n_steps)
        return (nodes + 1) / 2, weights / 2
    raise FwError(f"unknown integration method {method!r}",
                  hint="use 'gausslegendre' or 'riemann_trapezoid'")


def _integrated_gradients(model, x, index, like, baseline=0.0, n_steps: int = 50,
                          integration: str = "gausslegendre",
                          internal_batch_size: int | None = None):
    if n_steps < 2:
        raise FwError(f"n_steps must be >= 2, got {n_steps}", hint="50 is the usual default")
    baseline = np.broadcast_to(_host(baseline, x.dtype), x.shape)
    alphas, weights = _alphas(n_steps, integration)
    n, span = len(x), (x - baseline)[None]
    total = np.zeros(x.shape, dtype=np.float64)
    for lo, hi in _chunks(n_steps, n, internal_batch_size):
        path = baseline[None] + alphas[lo:hi].reshape(-1, *[1] * x.ndim) * span
        grads, _ = _gradient(model, *_stack(path.astype(x.dtype), index), like)
        total += np.tensordot(weights[lo:hi], grads.reshape(hi - lo, *x.shape), axes=1)
    attributions = (x - baseline) * total
    ends = _scores(model, *_stack(np.stack([x, baseline.astype(x.dtype)]), index), like)
    delta = attributions.reshape(n, -1).sum(axis=1) - (ends[:n] - ends[n:])
    return attributions.astype(x.dtype), {"delta": delta, "alphas": alphas, "weights": weights}


def _smoothgrad(model, x, index, like, nt_samples: int = 25, stdevs: float = 0.15,
                internal_batch_size: int | None = None):
    total = np.zeros(x.shape, dtype=np.float64)
    for lo, hi in _chunks(nt_samples, len(x), internal_batch_size):
        noisy = x[None] + fw.randn(hi - lo, *x.shape, dtype="float64").numpy() * stdevs
        grads, _ = _gradient(model, *_stack(noisy.astype(x.dtype), index), like)
        total += np.abs(grads).reshape(hi - lo, *x.shape).sum(axis=0)
    return total / nt_samples, {"nt_samples": nt_samples}


def _windows(shape, window, strides):
    """Every window position as a tuple of slices over the non-batch dimensions."""
    window = tuple(window) if np.ndim(window) else (int(window),) * len(shape)
    strides = tuple(strides) if np.ndim(strides) else (int(strides),) * len(shape)
    if len(window) != len(shape) or len(strides) != len(shape):
        raise FwError(f"sliding_window_shapes {window} / strides {strides} must have one entry "
                      f"per non-batch dimension of x {shape}",
                      hint="e.g. sliding_window_shapes=(1, 3, 3) for (N, 1, H, W) images")
    starts = [range(0, max(s - w, 0) + 1, st) for s, w, st in zip(shape, window, strides)]
    for corner in np.ndindex(*[len(r) for r in starts]):
        yield tuple(slice(r[c], r[c] + w) for r, c, w in zip(starts, corner, window))


def _occlusion(model, x, index, like, sliding_window_shapes=1, strides=1, baseline=0.0,
               internal_batch_size: int | None = None):
    windows = list(_windows(x.shape[1:], sliding_window_shapes, strides))
    fill = np.broadcast_to(_host(baseline, x.dtype), x.shape)
    reference = _scores(model, x, index, like)
    drops = np.empty((len(windows), len(x)))
    for lo, hi in _chunks(len(windows), len(x), internal_batch_size):
        copies = np.repeat(x[None], hi - lo, axis=0)
        for k, where in enumerate(windows[lo:hi]):
            copies[k][(slice(None), *where)] = fill[(slice(None), *where)]
        drops[lo:hi] = reference[None] - _scores(model, *_stack(copies, index), like
                                                 ).reshape(hi - lo, len(x))
    total = np.zeros(x.shape, dtype=np.float64)
    count = np.zeros(x.shape[1:], dtype=np.float64)
    for k, where in enumerate(windows):
        total[(slice(None), *where)] += drops[k].reshape(-1, *[1] * (x.ndim - 1))
        count[where] += 1
    return (total / np.maximum(count, 1)).astype(x.dtype), {"windows": len(windows)}


def _layer(model, layer):
    if not isinstance(layer, str):
        return layer
    modules = dict(getattr(model, "module", model).named_modules())
    if layer not in modules:
        raise FwError(f"no layer {layer!r} in the model",
                      hint=f"layers: {', '.join(p for p in modules if p)}")
    return modules[layer]


def _gradcam(model, x, index, like, layer=None, interpolate_mode: str = "bilinear"):
    if layer is None:
        raise FwError("gradcam needs layer=<a conv module or its path>",
                      hint="usually the last conv layer, e.g. layer='features.4'")
    module = _layer(model, layer)
    seen = []
    handle = module.register_forward_hook(lambda mod, args, out: seen.append(out))
    try:
        xs = fw.tensor(x, dtype=like.dtype, device=like.device)
        with fw.enable_grad():
            score = _score(model, xs, index)
            if not seen:
                raise FwError(f"layer {layer!r} did not run in the model's forward",
                              hint="pass a layer the model calls")
            activation = seen[-1]
            if activation.ndim != 4:
                raise FwError(f"gradcam needs a conv layer's (N, C, H, W) output; layer "
                              f"{layer!r} gave shape {tuple(activation.shape)}",
                              module=getattr(module, "path", None),
                              hint="pick a conv layer (or the activation after one)")
            (grad,) = fw.autograd.grad(score.sum(), [activation])
    finally:
        handle.remove()
    weights = grad.mean(dim=(2, 3), keepdim=True).detach()
    cam = fw.relu((weights * activation.detach()).sum(dim=1, keepdim=True))
    values = cam
    if tuple(cam.shape[2:]) != tuple(x.shape[2:]):
        values = fw.nn.functional.interpolate(cam, size=tuple(x.shape[2:]), mode=interpolate_mode)
    return values, {"layer_cam": cam, "weights": weights.reshape(*weights.shape[:2])}


METHODS = {"saliency": _saliency, "input_x_gradient": _input_x_gradient,
           "integrated_gradients": _integrated_gradients, "smoothgrad": _smoothgrad,
           "occlusion": _occlusion, "gradcam": _gradcam}


def _host(value, dtype) -> np.ndarray:
    if isinstance(value, fw.Tensor):
        return value.detach().numpy().astype(dtype)
    return np.asarray(value, dtype=dtype)


def explain(model, x, target=None, method: str = "saliency", **options) -> Attribution:
    """Attribute ``model(x)[n, target]`` to the elements of ``x``.

    Args:
        model: a callable from an (N, ...) batch to (N, classes) or (N,) outputs (an nn.Module,
            a training Model, or a function).
        x: the input batch (fw tensor or array).
        target: the output index to explain: an int, or one per sample; None for (N,) outputs.
        method: one of :data:`METHODS`.
        options: the method's options: ``abs`` (saliency); ``baseline``, ``n_steps`` (50),
            ``integration`` ("gausslegendre" or "riemann_trapezoid"), ``internal_batch_size`` (IG);
            ``nt_samples``, ``stdevs``, ``internal_batch_size`` (smoothgrad);
            ``sliding_window_shapes``, ``strides``, ``baseline``, ``internal_batch_size``
            (occlusion); ``layer`` (gradcam: a module or its path), ``interpolate_mode``.
    """
    if method not in METHODS:
        raise FwError(f"unknown attribution method {method!r}",
                      hint=f"methods: {', '.join(METHODS)}")
    like = x if isinstance(x, fw.Tensor) else fw.tensor(x)
    host = like.detach().numpy().copy()
    index = _targets(target, len(host))
    accepted = list(inspect.signature(METHODS[method]).parameters)[4:]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise FwError(f"{method} takes no option {', '.join(unknown)}",
                      hint=f"its options: {', '.join(accepted) or 'none'}")
    values, extras = METHODS[method](model, host, index, like, **options)
    delta = extras.pop("delta", None)
    if not isinstance(values, fw.Tensor):
        values = fw.tensor(values, dtype=like.dtype, device=like.device)
    if delta is not None:
        delta = fw.tensor(delta, dtype="float64")
    return Attribution(values, method, None if index is None else index.tolist(), delta, extras)
