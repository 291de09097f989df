"""Step functions over time: queue load and utilisation of a run.

A run's jobs define, for each job ``i``, intervals with a weight: waiting ``[submit_i,
start_i)`` (the queue) and running ``[start_i, finish_i)``.  The weights are the job's
requested nodes (compute) or its burst-buffer request in bytes (storage, ``res x bb``).

* queue compute load ``Q_c(t)`` = sum of the requested nodes of the jobs waiting at ``t``;
* queue storage load ``Q_s(t)`` = sum of the burst-buffer bytes requested by the jobs
  waiting at ``t``;
* compute utilisation ``U_c(t)`` = nodes of the running jobs / compute nodes of the platform;
* burst-buffer utilisation ``U_bb(t)`` = bytes held by the running jobs / total BB capacity.

Load curves are divided by the platform's capacity (nodes, BB bytes) when it is known, so
that 1.0 means "one whole machine's worth of requests is waiting" (Kopański 2020, §4.1).
The time mean of a sum of weighted intervals over ``[t0, t1]`` that contains them is
``sum(w_i * d_i) / (t1 - t0)`` (:func:`interval_mean`), which is how the run table gets its
means without building the curves.
"""

from __future__ import annotations

import numpy as np


def step(on, off, weight) -> tuple[np.ndarray, np.ndarray]:
    """The step function ``f(t) = sum of weight_i for on_i <= t < off_i``.

    Returns ``(times, values)``: ``values[k]`` holds on ``[times[k], times[k+1])``; the last
    value is 0 (after every interval closed).  NaN weights count as 0; intervals with
    ``off <= on`` are ignored."""
    on = np.asarray(on, dtype=float)
    off = np.asarray(off, dtype=float)
    w = np.nan_to_num(np.asarray(weight, dtype=float), nan=0.0)
    keep = (off > on) & np.isfinite(on) & np.isfinite(off)
    on, off, w = on[keep], off[keep], w[keep]
    if on.size == 0:
        return np.zeros(1), np.zeros(1)
    times = np.concatenate([on, off])
    delta = np.concatenate([w, -w])
    order = np.argsort(times, kind="stable")
    times, delta = times[order], delta[order]
    values = np.cumsum(delta)
    # one point per distinct time: the value after every event at that time
    last = np.r_[times[1:] != times[:-1], True]
    values = values[last]
    values[np.abs(values) < 1e-9 * max(1.0, float(np.abs(w).max()))] = 0.0
    return times[last], values


def step_max(on, off, weight) -> float:
    """Maximum of :func:`step` (0 without intervals)."""
    return float(step(on, off, weight)[1].max())


def interval_mean(on, off, weight, t0: float, t1: float) -> float:
    """Time mean of :func:`step` over ``[t0, t1]`` (intervals assumed inside it)."""
    if not t1 > t0:
        return float("nan")
    on, off = np.asarray(on, dtype=float), np.asarray(off, dtype=float)
    w = np.nan_to_num(np.asarray(weight, dtype=float), nan=0.0)
    return float(np.sum(w * np.clip(off - on, 0, None)) / (t1 - t0))


def resample(times: np.ndarray, values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Values of the step function at the points of ``grid`` (0 before the first time)."""
    idx = np.searchsorted(times, grid, side="right") - 1
    out = np.where(idx >= 0, values[np.clip(idx, 0, None)], 0.0)
    return out
