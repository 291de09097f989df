"""The optimal strategy OPT (Kuchumov & Korkhov 2021, §4.1, LP (3)).

    minimise  sum_j x_j   subject to  A x = b,  x >= 0

where column j of A is combination j's speeds (a_{1,j}, ..., a_{n,j}) and x_j the time it
runs.  Solved with scipy's HiGHS (:func:`scipy.optimize.linprog`).  Two ways:

* ``"full"``: all 2**n - 1 columns at once (``"auto"`` up to n = :data:`FULL_MAX_N`);
* ``"colgen"``: column generation (``"auto"`` beyond).  The restricted master starts from the n singletons
  (always feasible: every task runs alone at a positive speed, see
  :func:`coburst.theory.model.check_instance`); its duals y price every combination at
  once, reduced cost ``1 - a_j . y`` (one matrix-vector product over the (2**n, n) speed
  array), and the :data:`BATCH` most negative columns join the master until none is below
  ``-tol``.  At that point y is feasible for the dual ``max b.y s.t. A^T y <= 1`` up to
  ``tol``, so the master's optimum is the LP's (weak duality) — the same answer as
  ``"full"``.

The dual of (3), ``max b.y  s.t.  a_j . y <= 1 for every j``, is returned as ``duals``;
``b.y`` equals the makespan (strong duality), which the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from coburst.theory.model import Instance, Schedule, schedule_from_times

#: largest n solved by enumerating every combination when ``method="auto"`` (measured:
#: column generation is faster from n = 10 on, 18x at n = 16; benchmarks/bench_theory.py)
FULL_MAX_N = 9
#: columns added per column-generation round
BATCH = 64


@dataclass
class OptResult:
    """OPT's answer: ``makespan`` C_max^OPT, ``times`` {mask: x_j > 0}, the dual vector
    ``duals`` (y of ``max b.y, A^T y <= 1``), the method used and the LP iterations."""

    makespan: float
    times: dict[int, float]
    duals: np.ndarray
    method: str
    rounds: int = 1

    def schedule(self) -> Schedule:
        """Each combination with x_j > 0 run for x_j, in increasing mask order (§4.1)."""
        return schedule_from_times(self.times)


def _solve(columns: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve (3) restricted to the given columns ((k, n) speed rows); return (x, y)."""
    # dense for small masters (less overhead in scipy), sparse beyond
    a_eq = columns.T if columns.size <= 20_000 else sparse.csc_array(columns.T)
    # HiGHS's presolve costs more than it saves on the wide LP of every combination (n = 16:
    # 0.7 s instead of 1.5 s on a loaded machine); it stays on for small LPs
    options = {"presolve": columns.shape[0] <= 10_000}
    res = linprog(np.ones(columns.shape[0]), A_eq=a_eq, b_eq=b, bounds=(0, None), method="highs", options=options)
    if res.status != 0:  # pragma: no cover - check_instance guarantees feasibility
        raise RuntimeError(f"HiGHS could not solve LP (3): {res.message}")
    return np.asarray(res.x), np.asarray(res.eqlin.marginals)


def _polish(columns: np.ndarray, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Re-solve A_J x_J = b on the support J by least squares (removes HiGHS's ~1e-9 slack
    so that the schedule completes each task's work to ~1e-12); keep x when that fails."""
    support = np.flatnonzero(x > 0)
    if support.size == 0:
        return x
    xs, *_ = np.linalg.lstsq(columns[support].T, b, rcond=None)
    old = np.abs(columns[support].T @ x[support] - b).max()
    new = np.abs(columns[support].T @ xs - b).max()
    if (xs >= 0).all() and new <= old:
        out = np.zeros_like(x)
        out[support] = xs
        return out
    return x


def solve_opt(inst: Instance, method: str = "auto", tol: float = 1e-9, max_rounds: int = 10_000) -> OptResult:
    """C_max^OPT of ``inst`` by LP (3); ``method`` is ``"auto"``, ``"full"`` or ``"colgen"``."""
    n = inst.n
    if method == "auto":
        method = "full" if n <= FULL_MAX_N else "colgen"
    b = inst.b
    if method == "full":
        masks = np.arange(1, 1 << n, dtype=np.int64)
        cols = inst.speeds[1:]
        x, y = _solve(cols, b)
        x = _polish(cols, x, b)
        times = {int(masks[k]): float(x[k]) for k in np.flatnonzero(x > 0)}
        return OptResult(float(sum(times.values())), times, y, "full")
    if method != "colgen":
        raise ValueError(f"unknown method {method!r}")
    speeds = inst.speeds
    chosen = [1 << i for i in range(n)]
    # also seed with the fastest combination (FCS's first choice): it is usually in OPT
    csum = speeds.sum(axis=1)
    chosen.append(int(np.argmax(csum)))
    chosen = sorted(set(chosen))
    in_master = np.zeros(1 << n, dtype=bool)
    in_master[chosen] = True
    rounds = 0
    while True:
        rounds += 1
        masks = np.array(chosen, dtype=np.int64)
        x, y = _solve(speeds[masks], b)
        reduced = 1.0 - speeds @ y
        reduced[0] = np.inf
        reduced[in_master] = np.inf
        k = min(BATCH, reduced.size - 1)
        best = np.argpartition(reduced, k)[:k]
        best = best[reduced[best] < -tol]
        if best.size == 0 or rounds >= max_rounds:
            break
        in_master[best] = True
        chosen.extend(int(j) for j in best)
    masks = np.array(chosen, dtype=np.int64)
    cols = speeds[masks]
    x = _polish(cols, x, b)
    times = {int(masks[k]): float(x[k]) for k in np.flatnonzero(x > 0)}
    return OptResult(float(sum(times.values())), dict(sorted(times.items())), y, "colgen", rounds)


def solve_dual(inst: Instance) -> tuple[float, np.ndarray]:
    """The dual of (3) solved on its own: ``max b.y s.t. a_j . y <= 1`` (y free)."""
    cols = inst.speeds[1:]
    res = linprog(-inst.b, A_ub=sparse.csr_array(cols), b_ub=np.ones(cols.shape[0]), bounds=(None, None),
                  method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"HiGHS could not solve the dual of LP (3): {res.message}")
    return float(-res.fun), np.asarray(res.x)
