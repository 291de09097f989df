"""Instance families: the §8 generator and Example 1 (Kuchumov & Korkhov 2021).

§8 generator (:func:`section8_instance`): b_i ~ U(100, 200); the speed alone is 1; then,
by increasing combination size, a_{i,j} = min over the sub-combinations S_j \\ {T_l}
(l != i, so that T_i stays in them) of a_{i,·}, times U(α_i, 1), with α_i drawn once per
task from U(lo, hi).  The minimum over the immediate sub-combinations is the minimum over
all sub-combinations containing T_i, so every instance satisfies (1).  Draw order, for
determinism: α (n draws), b (n draws), then one (count, n) block of U(0, 1) per
combination size in increasing mask order, used only where the task is in the mask.

Example 1 (:func:`example1_instance`, eqs. (15)-(16)): a_{i,j} = 1 if T_i ∈ S_j and
|S_j| < n, else 0; b_1 = ``b1``, b_i = (n-2)/(n-1) b1.  Closed forms (n >= 3):

* OPT (21): C_max^OPT = b1;
* FCS as the paper reads it (17) (FCS picks {T_2..T_n}, i.e. ``tie="last"``):
  b1 (2n-3)/(n-1), ratio 2 - 1/(n-1) (22);
* FCS with ties to the first mask (``tie="first"``, picks {T_1..T_{n-1}}): the n-2 tasks
  T_2..T_{n-1} complete at b1 (n-2)/(n-1); T_1 and T_n then run together at speed 2 until
  T_1 completes (b1/(n-1) later; for n = 3 both complete then), and T_n alone finishes its
  remaining b1 (n-3)/(n-1): b1 (2n-4)/(n-1), ratio 2 - 2/(n-1).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit

from coburst.theory.model import Instance, make_instance, membership, popcounts

#: §8: b_i ~ U(B_LOW, B_HIGH)
B_LOW, B_HIGH = 100.0, 200.0


def section8_speeds(n: int, alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The (2**n, n) speed array of §8 for per-task α.  The uniforms are drawn level by level
    (combination size 2, 3, ..., n; increasing masks inside a level; an (count, n) block
    each), then the minima are taken in increasing mask order (a sub-combination's mask is
    smaller than its own) by a compiled loop."""
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = popcounts(n)
    u = np.zeros((1 << n, n), dtype=np.float64)
    for k in range(2, n + 1):
        level = masks[sizes == k]
        u[level] = rng.uniform(0.0, 1.0, size=(level.size, n))
    return _section8_fill(n, np.asarray(alpha, dtype=np.float64), u)


@njit(cache=True)
def _section8_fill(n, alpha, u):
    speeds = np.zeros((1 << n, n), dtype=np.float64)
    for i in range(n):
        speeds[1 << i, i] = 1.0
    low = np.empty(n, dtype=np.float64)
    for mask in range(1, 1 << n):
        if mask & (mask - 1) == 0:
            continue  # a single task: speed 1
        low[:] = np.inf
        for l in range(n):  # the sub-combination without T_l, one row at a time
            if (mask >> l) & 1:
                sub = mask ^ (1 << l)
                for i in range(n):
                    if i != l and (sub >> i) & 1 and speeds[sub, i] < low[i]:
                        low[i] = speeds[sub, i]
        for i in range(n):
            if (mask >> i) & 1:
                speeds[mask, i] = low[i] * (alpha[i] + (1.0 - alpha[i]) * u[mask, i])
    return speeds


def section8_instance(n: int, alpha_range: tuple[float, float], rng: np.random.Generator,
                      id: str = "") -> Instance:
    """One §8 instance drawn from ``rng`` (see the module docstring)."""
    lo, hi = alpha_range
    alpha = rng.uniform(lo, hi, size=n)
    b = rng.uniform(B_LOW, B_HIGH, size=n)
    speeds = section8_speeds(n, alpha, rng)
    return Instance(id, b, speeds)


def section8_instances(n: int, alpha_range: tuple[float, float], count: int, seed: int) -> list[Instance]:
    """``count`` §8 instances from one seeded generator, ids ``"s{seed}-{k}"``."""
    rng = np.random.default_rng(seed)
    return [section8_instance(n, alpha_range, rng, id=f"s{seed}-{k}") for k in range(count)]


def example1_instance(n: int, b1=1) -> Instance:
    """Example 1's instance, eqs. (15)-(16), with exact numbers (task 0 is the paper's T_1)."""
    if n < 3:
        raise ValueError("Example 1 needs n >= 3")
    b1 = Fraction(b1)
    b = [b1] + [b1 * (n - 2) / (n - 1)] * (n - 1)
    sizes = popcounts(n)
    member = membership(n)
    rows = {}
    for j in range(1, 1 << n):
        rows[j] = [Fraction(1) if (member[j, i] and sizes[j] < n) else Fraction(0) for i in range(n)]
    return make_instance(f"example1-n{n}", b, rows, exact=True)


def example1_closed_forms(n: int, b1=1) -> dict[str, Fraction]:
    """C_max^OPT (21), FCS under ``tie="last"`` (17) and under ``tie="first"`` (module doc)."""
    b1 = Fraction(b1)
    return {"opt": b1, "fcs_last": b1 * (2 * n - 3) / (n - 1), "fcs_first": b1 * (2 * n - 4) / (n - 1)}
