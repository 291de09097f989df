"""Exact (rational) certificates for LP (3) (Kuchumov & Korkhov 2021, §4.1).

HiGHS answers in floating point.  :func:`certify_opt` turns its answer into exact bounds
with :class:`fractions.Fraction` arithmetic over the instance's exact numbers:

* **upper bound** — the support J of HiGHS's x is solved exactly, A_J x_J = b; when the
  solution exists and x_J >= 0 it is a feasible schedule, so C_max^OPT <= sum x_J;
* **lower bound** — a basis B ⊇ J of n independent columns (J completed with the columns
  of smallest float reduced cost) gives y with A_B^T y = 1; scaled by the largest
  a_j . y over every combination j it is feasible for the dual (max b.y, A^T y <= 1), so
  C_max^OPT >= b.y / max_j a_j.y (weak duality).

When both bounds are equal the optimum is exact (``exact`` is then that Fraction).  Any
strategy makespan M computed exactly then gives the ratio exactly; ``M / upper`` is in any
case a proven lower bound on M / C_max^OPT.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from coburst.theory.model import Instance
from coburst.theory.opt import OptResult, solve_opt


@dataclass
class ExactOpt:
    upper: Fraction | None     # a feasible schedule's makespan (None if the support failed)
    lower: Fraction            # a dual bound
    times: dict[int, Fraction]  # the exact feasible schedule behind ``upper``

    @property
    def exact(self) -> Fraction | None:
        return self.upper if self.upper is not None and self.upper == self.lower else None


def _solve_exact(cols: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Solve sum_k cols[k] * x_k = rhs exactly (columns independent); None if inconsistent
    or the columns are dependent."""
    n, k = len(rhs), len(cols)
    m = [[cols[c][r] for c in range(k)] + [rhs[r]] for r in range(n)]
    row = 0
    pivots = []
    for c in range(k):
        piv = next((r for r in range(row, n) if m[r][c] != 0), None)
        if piv is None:
            return None
        m[row], m[piv] = m[piv], m[row]
        inv = 1 / m[row][c]
        m[row] = [v * inv for v in m[row]]
        for r in range(n):
            if r != row and m[r][c] != 0:
                f = m[r][c]
                m[r] = [a - f * b for a, b in zip(m[r], m[row])]
        pivots.append(row)
        row += 1
    if any(m[r][k] != 0 for r in range(row, n)):
        return None
    return [m[r][k] for r in pivots]


def _rank_extends(basis: list[list[Fraction]], col: list[Fraction]) -> bool:
    """Whether ``col`` is independent of the columns in ``basis`` (exact elimination)."""
    rows = [list(c) for c in basis] + [list(col)]
    n = len(col)
    rank, r0 = 0, 0
    mat = [r[:] for r in rows]
    for c in range(n):
        piv = next((r for r in range(r0, len(mat)) if mat[r][c] != 0), None)
        if piv is None:
            continue
        mat[r0], mat[piv] = mat[piv], mat[r0]
        for r in range(r0 + 1, len(mat)):
            if mat[r][c] != 0:
                f = mat[r][c] / mat[r0][c]
                mat[r] = [a - f * b for a, b in zip(mat[r], mat[r0])]
        r0 += 1
        rank += 1
    return rank == len(rows)


def certify_opt(inst: Instance, result: OptResult | None = None) -> ExactOpt:
    """Exact bounds on C_max^OPT around HiGHS's answer (see the module docstring)."""
    if result is None:
        result = solve_opt(inst)
    n = inst.n
    b = inst.fraction_b()
    support = sorted(result.times)
    cols = [inst.fraction_speeds(j) for j in support]
    x = _solve_exact(cols, b)
    upper, times = None, {}
    if x is not None and all(v >= 0 for v in x):
        times = {j: v for j, v in zip(support, x) if v > 0}
        upper = sum(times.values(), Fraction(0))
    # basis for the dual: the independent support columns, then by float reduced cost
    reduced = 1.0 - inst.speeds @ result.duals
    reduced[0] = np.inf
    basis, bmask = [], []
    for j in support + [int(j) for j in np.argsort(reduced, kind="stable")]:
        if len(basis) == n:
            break
        if j == 0 or j in bmask:
            continue
        col = inst.fraction_speeds(j)
        if _rank_extends(basis, col):
            basis.append(col)
            bmask.append(j)
    # y with a_j . y = 1 on the basis: solve A_B^T y = 1
    rows_t = [[basis[r][c] for r in range(n)] for c in range(n)]  # columns of A_B^T
    y = _solve_exact(rows_t, [Fraction(1)] * n)
    lower = Fraction(0)
    if y is not None:
        big = max(sum((a * v for a, v in zip(inst.fraction_speeds(j), y)), Fraction(0))
                  for j in range(1, 1 << n))
        if big > 0:
            lower = sum((bi * v for bi, v in zip(b, y)), Fraction(0)) / big
    return ExactOpt(upper, lower, times)
