"""Worst cases of co-scheduling strategies against OPT (Kuchumov & Korkhov 2021,
§4.3, Theorem 1).

Theorem 1 claims C_max^FCS <= 2 C_max^OPT.  It does not hold: :func:`nested_stall_instance`
builds instances satisfying (1) where FCS takes more than twice the optimum (first above 2
at n = 8), and the ratio grows without bound with the number of nested groups.  The proof's
step (10) assumes that once FCS's first combination is done, every combination of the
remaining tasks runs at speed <= 1 (the Lemma's a_u = 1); in these instances the remaining
tasks are themselves a hard instance for FCS, and the losses of the levels add up.

**The nested-stall family.**  Group 0 is one task L (work 1).  Group k >= 1 has p_k tasks
and a cap c_k >= 1, with p_k = c_k + p_{k-1} (p_0 = 1).  In a combination S, a task of
group g

* stalls (speed 0) when some higher group k > g has more than c_k of its tasks in S;
* otherwise runs at (1 - ε)^(number of other groups with a task in S).

Both rules only lower a speed when a task joins, so (1) holds; every task alone runs at 1.
The fastest combination of the tasks of groups 0..k is group k alone (speed p_k; any
combination with at most c_k of its tasks reaches at most c_k + (1-ε) p_{k-1} < p_k, and
more than c_k stall the lower groups), so FCS runs group K until it completes, then group
K-1, ..., then L alone — no ties anywhere.  With b = c_k T_k / p_k for a group-k task
(T_k = (1-ε)^-k) and b = 1 for L, each group completes at once and

    C_max^FCS = 1 + sum_k c_k T_k / p_k  >=  1 + sum_k c_k / p_k.

OPT can instead run, at every instant, c_k tasks of every group k next to L (rotating
inside each group): nobody stalls, everybody runs at (1-ε)^K, L completes after
(1-ε)^-K and group k after T_k (1-ε)^-K, so C_max^OPT <= (1-ε)^-2K.  Hence
C_max^FCS / C_max^OPT >= (1-ε)^2K (1 + sum_k c_k / p_k) -> 1 + sum_k c_k / p_k as ε -> 0:
2.1 at n = 8 (caps 1, 3), 2.5 at n = 15 (caps 1, 2, 4); with c_k = p_{k-1} every level
adds 1/2 while n doubles, so the ratio grows without bound, at least like (log2 n)/2.

**Search.**  :func:`worst_case` starts from the best of these structured instances
(FCS), Example 1 and §8 instances, then improves by local search: random changes of one
speed or one task's work, followed by :func:`monotone_closure` (every speed lowered to the
minimum over its sub-combinations, so (1) holds) and accepted when the ratio does not
decrease.  The winner's ratio is then checked with exact arithmetic
(:mod:`coburst.theory.exact`; for FCS :func:`coburst.theory.fcs.fcs_exact`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from coburst.theory.exact import certify_opt
from coburst.theory.fcs import fcs, fcs_exact
from coburst.theory.generate import example1_instance, section8_instance
from coburst.theory.model import Instance, make_instance, membership, popcounts
from coburst.theory.opt import solve_opt

STRATEGIES = ("fcs", "pi", "ei", "ucb")
#: default slow-down per other group of the nested-stall family (a power of 2: exact in floats)
EPS = Fraction(1, 1024)


# ---------------------------------------------------------------- the nested-stall family
def nested_stall_instance(caps: list[int], eps: Fraction = EPS, id: str | None = None) -> Instance:
    """The nested-stall instance with caps c_1..c_K (module docstring), exact numbers.
    Task 0 is L; then group 1's tasks, group 2's, ..."""
    if not caps or any(int(c) < 1 for c in caps):
        raise ValueError("caps must be a non-empty list of integers >= 1")
    sizes = [1]
    for c in caps:
        sizes.append(int(c) + sizes[-1])
    group = [g for g, p in enumerate(sizes) for _ in range(p)]
    n = len(group)
    if n > 20:
        raise ValueError(f"{n} tasks: at most 20")
    caps_by_group = [0] + [int(c) for c in caps]
    one = Fraction(1)
    rows = {}
    for mask in range(1, 1 << n):
        members = [i for i in range(n) if mask >> i & 1]
        count = [0] * len(sizes)
        for i in members:
            count[group[i]] += 1
        present = sum(1 for c in count if c)
        row = [Fraction(0)] * n
        for i in members:
            g = group[i]
            stalled = any(count[k] > caps_by_group[k] for k in range(g + 1, len(sizes)))
            row[i] = Fraction(0) if stalled else (one - eps) ** (present - 1)
        rows[mask] = row
    b = []
    for g, p in enumerate(sizes):
        t_g = (one - eps) ** -g
        work = one if g == 0 else caps_by_group[g] * t_g / p
        b.extend([work] * p)
    name = id or ("nested-" + "-".join(str(c) for c in caps))
    return make_instance(name, b, rows, exact=True)


def nested_limit(caps: list[int]) -> Fraction:
    """1 + sum_k c_k / p_k: the FCS/OPT ratio of the family as ε -> 0 (a lower bound on
    OPT's advantage: OPT may do better than the schedule of the module docstring)."""
    p, total = 1, Fraction(1)
    for c in caps:
        p += c
        total += Fraction(c, p)
    return total


def nested_caps_for(n: int) -> list[int]:
    """The caps with exactly n tasks maximising :func:`nested_limit` (exhaustive over
    compositions; n >= 2)."""
    best: tuple[Fraction, list[int]] | None = None

    def rec(caps: list[int], p: int, used: int):
        nonlocal best
        left = n - used
        if left == 0 and caps:
            val = nested_limit(caps)
            if best is None or val > best[0]:
                best = (val, list(caps))
            return
        for c in range(1, left - p + 1):
            if p + c <= left:
                rec(caps + [c], p + c, used + p + c)

    rec([], 1, 1)
    if best is None:
        raise ValueError(f"no nested-stall instance has exactly {n} tasks")
    return best[1]


# ---------------------------------------------------------------- local search
def monotone_closure(raw: np.ndarray) -> np.ndarray:
    """The largest speeds <= ``raw`` satisfying (1): by increasing combination size,
    a_{i,j} = min(raw_{i,j}, a_{i,j minus T_l} for every other task l of j); clipped to [0, 1],
    zero outside the masks."""
    n = raw.shape[1]
    a = np.clip(raw, 0.0, 1.0) * membership(n)
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = popcounts(n)
    for k in range(2, n + 1):
        level = masks[sizes == k]
        cur = a[level]
        for l in range(n):
            bit = np.int64(1 << l)
            has = (level & bit) != 0
            sub = a[level[has] ^ bit].copy()
            sub[:, l] = np.inf
            cur[has] = np.minimum(cur[has], sub)
        a[level] = cur
    return a


def strategy_makespan(inst: Instance, strategy: str, k: float = 0.9, interval: float = 10.0) -> float:
    """Makespan of one strategy: FCS (ties to the first mask) or a §5 search strategy
    (:func:`coburst.theory.search.run`, imported when first needed)."""
    if strategy == "fcs":
        return fcs(inst).makespan
    from coburst.theory.search import run  # written by the §5 module's owner

    return run(inst, strategy, k=k, interval=interval).makespan


def ratio(inst: Instance, strategy: str, **kw) -> float:
    return strategy_makespan(inst, strategy, **kw) / solve_opt(inst).makespan


@dataclass
class WorstCase:
    inst: Instance
    strategy: str
    ratio: float                     # floating point, as searched
    start: str                       # which starting instance the search improved
    evaluations: int
    makespan_exact: Fraction | None  # FCS only: exact makespan of the written instance
    opt_upper: Fraction | None       # exact feasible schedule's makespan
    opt_lower: Fraction              # exact dual bound
    proven_ratio: Fraction | None    # makespan_exact / opt_upper: a proven lower bound on the ratio

    @property
    def opt_exact(self) -> Fraction | None:
        return self.opt_upper if self.opt_upper is not None and self.opt_upper == self.opt_lower else None


def starting_points(n: int, strategy: str, rng: np.random.Generator) -> list[Instance]:
    out = []
    # the §5 strategies measure for fixed intervals: their starting points get the §8 scale
    scale = 1.0 if strategy == "fcs" else 150.0
    if n >= 3:
        nested = nested_stall_instance(nested_caps_for(n))
        out.append(nested if scale == 1 else Instance(nested.id, nested.b * scale, nested.speeds))
        out.append(example1_instance(n, b1=int(scale)))
    for lo in (0.05, 0.45, 0.85):
        out.append(section8_instance(n, (lo, lo + 0.1), rng, id=f"sec8-alpha{lo:g}"))
    return out


def _float_copy(inst: Instance, id: str) -> Instance:
    return Instance(id, inst.b.copy(), inst.speeds.copy())


def worst_case(n: int, strategy: str = "fcs", seed: int = 0, iterations: int = 300, time_limit: float | None = None,
               k: float = 0.9, interval: float = 10.0) -> WorstCase:
    """Search instances of n tasks maximising ``strategy``'s makespan / OPT (module doc)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    rng = np.random.default_rng(seed)
    kw = {"k": k, "interval": interval}
    starts = starting_points(n, strategy, rng)
    scored = [(ratio(s, strategy, **kw), idx, s) for idx, s in enumerate(starts)]
    best_r, _, best = max(scored, key=lambda t: (t[0], -t[1]))
    start_name = best.id
    cur = best
    evaluations = len(starts)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    member = membership(n)
    for _ in range(iterations):
        if deadline is not None and time.monotonic() > deadline:
            break
        raw, b = cur.speeds.copy(), cur.b.copy()
        move = rng.integers(3)
        if move == 0:
            i = int(rng.integers(n))
            b[i] *= float(np.exp(rng.normal(0.0, 0.3)))
        else:
            j = int(rng.integers(1, 1 << n))
            inside = np.flatnonzero(member[j])
            i = int(inside[rng.integers(inside.size)])
            if j == 1 << i:
                continue  # speeds alone stay 1 (§3's normalisation)
            if move == 1:  # lower one speed (to 0 three times in ten)
                raw[j, i] = 0.0 if rng.random() < 0.3 else raw[j, i] * float(rng.uniform(0.5, 1.0))
            else:  # raise one speed (the closure may lower it again)
                raw[j, i] = min(1.0, raw[j, i] + float(rng.uniform(0.0, 0.5)))
        cand = Instance(f"worst-{strategy}-n{n}", b, monotone_closure(raw))
        evaluations += 1
        r = ratio(cand, strategy, **kw)
        if r >= best_r:
            best_r, cur = r, cand
    final = cur if cur is not best else _float_copy(best, f"worst-{strategy}-n{n}")
    cert = certify_opt(final)
    if strategy == "fcs":
        exact_ms = fcs_exact(final).makespan
        proven = exact_ms / cert.upper if cert.upper else None
    else:
        exact_ms, proven = None, None
    return WorstCase(final, strategy, best_r, start_name, evaluations, exact_ms, cert.upper, cert.lower, proven)
