"""Which of two equivalent runs of a plan is faster here and now: NumPy's BLAS threads as they
are, or one thread (:func:`fw_edge.blas.one_thread`). Both compute the same products (up to
OpenBLAS's rounding, which may differ with the thread count by about 1e-6); their speed
differs, and which wins depends on the machine's load, not on the program: on this project's
2-core machine MiniLM at sequence 16 ran 1.2-1.3x faster on two BLAS threads while the other
core was idle, and 2x to 35x slower on them while other processes kept it busy.

So a plan of few-row products (:func:`fw_edge.blas.prefers_one_thread`) starts on one thread
(the mode that is never far off) and times its calls: every so often one call runs the other
mode, and the plan switches when that call beats the median of its mode's recent calls. The
interval between such probes doubles each time the probe loses (up to :data:`LONGEST`), so a
mode 35x slower costs a few percent on average, and is back to one call after a switch.

The choice is visible (``mode``, ``times``) and can be frozen (:meth:`ThreadChoice.freeze`):
a frozen plan runs every call in one mode and times nothing.
"""

from __future__ import annotations

import statistics
import time

from .errors import EdgeError

#: recent call times kept per mode
WINDOW = 5
#: the most calls between two probes of the other mode
LONGEST = 256


class ThreadChoice:
    """``choice(args)``: ``runs[mode](args)`` for the mode chosen as the module says.

    Attributes:
        mode: the mode calls run in now (0: BLAS threads as NumPy has them, 1: one thread).
        times: the recent call times of each mode, seconds.
    """

    def __init__(self, runs, clock=time.perf_counter):
        self.runs, self.clock = tuple(runs), clock
        self.mode = 1
        self.times: tuple[list[float], list[float]] = ([], [])
        self._interval = 1
        self._wait = WINDOW  # calls in this mode before the first probe
        self.frozen = False

    def freeze(self, mode: int | None = None) -> None:
        """Run every later call in ``mode`` (0: BLAS threads, 1: one thread; default: the
        mode chosen so far), with no more timing or probes."""
        if mode not in (None, 0, 1):
            raise EdgeError(f"ThreadChoice.freeze: mode must be 0 (BLAS threads) or 1 (one "
                            f"thread), got {mode!r}")
        self.mode = self.mode if mode is None else mode
        self.frozen = True

    def __call__(self, args):
        if self.frozen:
            return self.runs[self.mode](args)
        probe = self._wait == 0
        mode = 1 - self.mode if probe else self.mode
        start = self.clock()
        result = self.runs[mode](args)
        elapsed = self.clock() - start
        recent = self.times[mode]
        recent.append(elapsed)
        if len(recent) > WINDOW:
            del recent[0]
        if not probe:
            self._wait -= 1
        elif elapsed < statistics.median(self.times[self.mode]):
            self.mode, self._interval, self._wait = mode, 1, 1
        else:
            self._interval = min(2 * self._interval, LONGEST)
            self._wait = self._interval
        return result
