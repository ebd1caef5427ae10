"""L-BFGS: a quasi-Newton method that re-evaluates the loss through a closure, with an
optional strong-Wolfe line search."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from .. import capture
from ..autograd import enable_grad, no_grad
from ..errors import StateDictError
from ..ops.meta import describe
from ..tensor import Tensor
from ..tensor_methods import bump_version
from .optimizer import ArgumentError, Optimizer, check_number, copy_state

_wrap = Tensor._wrap


class LBFGS(Optimizer):
    """L-BFGS (after minFunc), iterate for iterate as PyTorch.

    Each :meth:`step` runs up to ``max_iter`` iterations: a search direction from the last
    ``history_size`` gradient and parameter changes (two-loop recursion), then a move along
    it by ``lr`` (``line_search_fn=None``; the first move is scaled by ``1 / sum|g|``) or by a
    step length satisfying the strong Wolfe conditions (``"strong_wolfe"``). It stops early
    when the gradient, the loss or the parameters stop changing by more than the tolerances.

    Args:
        params: the tensors to optimize, as one group (L-BFGS works on their concatenation).
        lr: learning rate (>= 0), the step length tried first.
        max_iter: iterations per :meth:`step`.
        max_eval: closure evaluations per :meth:`step` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this.
        tolerance_change: stop when the loss or the parameters change by less than this.
        history_size: how many past updates approximate the inverse Hessian.
        line_search_fn: None or ``"strong_wolfe"``.

    Raises:
        ArgumentError: parameter groups (L-BFGS has one), a bad ``lr`` or line search, or
            :meth:`step` without a closure.

    The state (search direction, history, step count) lives under the first parameter, as in
    PyTorch. A compiled function that calls :meth:`step` runs eagerly (the reason is in its
    ``explain()``): the closure runs a data-dependent number of times.

    >>> opt = fw.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
    >>> opt.step(closure)
    """

    def __init__(self, params: Iterable, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ArgumentError(
                f"L-BFGS takes one parameter group, got {len(self.param_groups)}", op="LBFGS",
                inputs=describe(groups=len(self.param_groups)),
                hint="pass all parameters as one list: LBFGS(model.parameters())")

    @property
    def _params(self) -> list[Tensor]:
        """The parameters, in the order of the flat vectors (the one group's)."""
        return self.param_groups[0]["params"]

    def _check(self, group):
        check_number(self, group, "lr", hint="a learning rate is >= 0, usually 1")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ArgumentError(
                f"line_search_fn must be None or 'strong_wolfe', got "
                f"{group['line_search_fn']!r}", op="LBFGS",
                inputs=describe(line_search_fn=group["line_search_fn"]),
                hint="line_search_fn='strong_wolfe' (or None for fixed steps of lr)")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ArgumentError("L-BFGS takes one parameter group; it cannot add another",
                                op="LBFGS", hint="build the optimizer with every parameter")
        super().add_param_group(param_group)

    def step(self, closure: Callable[[], Any] | None = None):  # type: ignore[override]
        """Run up to ``max_iter`` iterations; ``closure`` clears the gradients, computes the
        loss, calls ``backward()`` and returns the loss. Returns the loss of the first call."""
        if closure is None:
            raise ArgumentError("L-BFGS needs a closure: it evaluates the loss several times "
                                "per step", op="LBFGS.step",
                                hint="def closure(): opt.zero_grad(); loss = ...; "
                                "loss.backward(); return loss  — then opt.step(closure)")
        # how often the closure runs depends on the data, and a replayed step would call the
        # closure of the recorded call (its inputs): the step runs unrecorded
        capture.cannot_replay("LBFGS.step(closure) evaluates the closure a data-dependent "
                              "number of times", "call opt.step(closure) outside the compiled "
                              "function, and compile the model (or the closure's loss) instead")
        with capture.paused():
            return self._iterate(closure)

    # -- the flat view of the parameters -------------------------------------------------------
    def _xp(self):
        return self._params[0]._device.xp

    def _flat_grad(self):
        xp = self._xp()
        return xp.concatenate([xp.zeros(p._data.size, dtype=p._data.dtype) if p.grad is None
                               else p.grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, t, d) -> None:
        offset = 0
        for p in self._params:
            size = p._data.size
            p._data += (d[offset:offset + size] * t).reshape(p._data.shape)
            bump_version(p)
            offset += size

    def _evaluate(self, closure) -> float:
        with enable_grad():
            return float(closure())

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p._data[...] = saved
            bump_version(p)
        return loss, flat_grad

    def _iterate(self, closure):
        with no_grad():
            loss = self._run(closure)
        self._step_calls += 1
        return loss

    def _run(self, closure):
        xp = self._xp()
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if xp.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        raw = _unwrap_all(state)
        d, t = raw.get("d"), raw.get("t")
        old_dirs, old_stps, ro = raw.get("old_dirs"), raw.get("old_stps"), raw.get("ro")
        h_diag, prev_flat_grad = raw.get("H_diag"), raw.get("prev_flat_grad")
        prev_loss = raw.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = [p._data.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    xp, obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        p0 = self._params[0]
        state.update({"d": copy_state(p0, d), "t": t, "old_dirs": [copy_state(p0, v) for v in
                                                                   old_dirs],
                      "old_stps": [copy_state(p0, v) for v in old_stps], "ro": ro,
                      "H_diag": h_diag, "prev_flat_grad": copy_state(p0, prev_flat_grad),
                      "prev_loss": prev_loss})
        return orig_loss

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As :meth:`Optimizer.load_state_dict`; the flat vectors of the state (direction,
        history) are copied and cast to the parameters' dtype and device."""
        saved = dict(state_dict) if isinstance(state_dict, dict) else state_dict
        flat = {}
        if isinstance(saved, dict) and isinstance(saved.get("state"), dict):
            flat = dict(saved["state"])
            saved["state"] = {}
        super().load_state_dict(saved)
        if len(flat) > 1:
            raise StateDictError(f"an L-BFGS state dict keeps its state under one parameter, "
                                 f"this one has {len(flat)}",
                                 hint="pass what LBFGS.state_dict() returned")
        for values in flat.values():
            self.state[self._params[0]] = {k: _restored(v, self._params[0])
                                           for k, v in values.items()}


def _restored(value, p: Tensor):
    if isinstance(value, Tensor):
        return copy_state(p, value.to(p._device)._data.astype(p._data.dtype))
    if isinstance(value, list):
        return [_restored(v, p) for v in value]
    return copy.deepcopy(value)


def _unwrap_all(state: dict) -> dict:
    """The state with its tensors as raw arrays (lists of them as lists), for one step."""
    out = {}
    for key, value in state.items():
        if isinstance(value, Tensor):
            value = value._data
        elif isinstance(value, list):
            value = [v._data if isinstance(v, Tensor) else v for v in value]
        out[key] = value
    return out


def _cubic_interpolate(xp, x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through two points with their values and slopes, clamped
    to ``bounds`` (the points' interval by default)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = xp.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(xp, obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length along ``d`` meeting the strong Wolfe conditions: bracket, then zoom
    (minFunc's ``lswolfe``, as PyTorch ports it). Returns (loss, flat gradient, step,
    evaluations)."""
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(xp, t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point in it meets the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(xp, bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        # a trial too close to an end of the bracket moves 10% of its length inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
