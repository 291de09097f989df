"""Stochastic search strategies for co-scheduling (Kuchumov & Korkhov 2021, §5).

The strategy does not know the speeds a_{i,j} of the instance.  It learns them by running
combinations: every combination it *tries* runs for a measuring interval (10 time units in
§8) during which its tasks progress at their true speeds and those speeds are measured
exactly (§5: "measurements are not noisy").  From the measurements it bounds and
interpolates the speeds it has not measured (§5.1, eq. (24)), turns the bounds into a
normal belief (Δ (25), σ (26)) and picks the next combination with an acquisition
function (§5.2): probability of improvement PI (27), expected improvement EI (28) or upper
confidence bound UCB (29).  A combination whose speeds are known exactly (σ_j = 0) that
wins the acquisition runs until one of its tasks completes: §5 turns FCS (§4.2) into "a
searching algorithm that finds the combination with the largest speed and then executes it
until the completion of any of its tasks".  Then the search goes on over the tasks left.

Rules taken from the text
-------------------------
* Candidates are the non-empty combinations of the tasks not yet completed.
* Bounds (§5.1): for task i in S_j, S_p is a *measured* combination with
  i ∈ S_p ⊂ S_j of the largest size and S_q a measured S_q ⊃ S_j of the smallest size; among
  those of the same size the pair with the narrowest interval a_{i,p} - a_{i,q}, i.e. the
  S_p with the smallest and the S_q with the largest measured a_i (the paper's rule for
  the ambiguity of its Figure 3).  Upper bound ā_{i,j} = a_{i,p}, lower bound
  a̲_{i,j} = a_{i,q}, mean ã_{i,j} by (24).  A measured S_j is its own S_p and S_q: mean =
  the measured speed, Δ = 0.  Measurements of combinations holding tasks that have since
  completed stay valid bounds for the tasks still running (the model is stationary, §3).
* Δ_{i,j} = min(ā - ã, ã - a̲) (25), σ_{i,j} = Δ_{i,j} / Φ^{-1}(k) (26), 0.5 < k < 1;
  ã_j = Σ ã_{i,j}, σ_j² = Σ σ_{i,j}² (independent normal task speeds, §5.2).
* PI (27), EI (28), UCB (29) exactly as printed, including their σ_j = 0 branches.

Decisions where §5 is silent (each switchable through :class:`Readings`)
------------------------------------------------------------------------
* ``prior`` — **starting information**.  ``"ideal"`` (default): the speed of every task
  alone is known at time 0 (§3 takes the speed in ideal conditions as the unit of speed,
  §8 fixes it to 1), nothing else.  ``"none"``: nothing is measured at the start ("no
  information is available at start", §10); the only prior knowledge is §3's range
  0 <= a_{i,j} <= 1, placed as a virtual upper anchor a = 1 at size 0, so that even a task
  alone must be measured before it is known.
* ``floor`` — **the bound when no larger combination was measured**.  The lower bound is
  then 0 (§3: speeds are >= 0); for (24) it needs a size.  ``"beyond"`` (default): a virtual
  S_q with a = 0 one task larger than the instance (|S_q| = n + 1), so even the full
  combination has a positive mean and a non-zero Δ.  ``"active"``: the same anchor one task
  larger than the set of tasks still running (|S_q| = |active| + 1): the belief is
  re-stretched over the combinations still possible after each completion.  ``"mid"``: no
  interpolation without S_q: ã = ā / 2, the centre of [0, ā] (Δ = ā / 2).
* ``a_plus`` — **a⁺, "the estimated maximum value from the previous iteration"**.
  ``"mean"`` (default): max_j ã_j over the current candidates, the largest speed the
  knowledge gathered up to the previous iteration estimates (measured combinations count
  with their measured speed).  ``"best"``: the best *measured* combination speed among the
  candidates (the incumbent of Bayesian optimisation); with ``prior="none"`` and nothing
  measured it is 0.  ``"last"``: the measured speed (over the tasks still running) of the
  combination run in the previous iteration, "the improvement ... relative to the value
  from the previous iteration" (§5.2); ``"best"`` at the first iteration and when none of
  that combination's tasks runs any more.
* ``after`` — **the update after a measurement**.  ``"search"`` (default): the
  measurement is added to the knowledge and the acquisition is evaluated again over all
  candidates; the measured combination keeps running only if it wins again (it is then
  known, σ = 0, and runs until a task completes).  ``"commit"``: when the measured speed
  is at least the a⁺ the choice was made against (an improvement), the combination keeps
  running until one of its tasks completes without asking the acquisition again (never
  a combination that makes no progress).

Further decisions (fixed)
-------------------------
* Ties of the acquisition go to the larger ã_j, then to the smaller mask (task i = bit i,
  as everywhere in :mod:`coburst.theory`).  Values and means are compared rounded to a
  grid of 1e-12 (:data:`TIE_GRID`), so that the order in which a float sum was taken never
  decides between combinations the formulas rank equal (an EI that underflows below the
  grid counts as 0).  PI is compared through its argument u = (ã_j - a⁺)/σ_j: Φ is
  strictly increasing, so this is PI's own order, without Φ(u) rounding to 1.0 for large u
  and tying with a known combination's PI = 1.  Deterministic: no random draw anywhere.
* A measuring run is cut short when a task of the combination completes before the
  interval ends; its speeds are measured all the same (no noise).  Tasks of the running
  combination that finish at the same instant (relative tolerance 1e-12) complete
  together.
* A combination known to make no progress (σ_j = 0, ã_j = 0) is never chosen (it would
  run for ever).  The search ends: every iteration either measures a new combination or
  completes a task.
* Consecutive segments of the same combination are merged.

Implementation
--------------
The search is one numba kernel (:func:`_search`, ``cache=True``).  The anchors S_p / S_q of
every (combination, task) are kept incrementally: a measurement of S_x can only change the
anchors of the super-combinations of S_x (as S_p) and of its sub-combinations (as S_q), so
only those rows are re-estimated; a decision scans the candidates once for a⁺ and once for
the acquisition.  ``tests/search_support.py`` is a straightforward reference (anchors
re-derived from every measurement at every step, plain Python); the tests check that the
kernel's decisions equal it, ``benchmarks/bench_theory_search.py`` times both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from numba import njit

from coburst.errors import InputError
from coburst.theory.model import Instance, Schedule, Segment, check_instance

STRATEGIES = ("pi", "ei", "ucb")
PRIORS = ("ideal", "none")
FLOORS = ("beyond", "active", "mid")
A_PLUS = ("mean", "best", "last")
AFTERS = ("search", "commit")

#: relative tolerance of simultaneous completions
COMPLETE_RTOL = 1e-12
#: acquisition values (PI: its argument) and means are compared on this grid (float noise
#: is not a preference)
TIE_GRID = 1e-12
_NO_Q = 32767  # size sentinel: no measured super-combination yet
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# reading codes of the kernel (index in the tuples above)
_IDEAL, _BEYOND, _ACTIVE, _MID = 0, 0, 1, 2
_MEAN, _BEST, _LAST = 0, 1, 2
_PI, _EI, _UCB = 0, 1, 2


@dataclass(frozen=True)
class Readings:
    """The readings of what §5 leaves open (see the module docstring)."""

    prior: str = "ideal"
    floor: str = "beyond"
    a_plus: str = "mean"
    after: str = "search"

    def __post_init__(self):
        for name, allowed in (("prior", PRIORS), ("floor", FLOORS), ("a_plus", A_PLUS), ("after", AFTERS)):
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"readings.{name}", None, f"{value!r} is not one of {', '.join(allowed)}")

    def label(self) -> str:
        """``"prior=ideal floor=beyond a_plus=mean after=search"``."""
        return " ".join(f"{k}={getattr(self, k)}" for k in ("prior", "floor", "a_plus", "after"))

    def differences(self) -> str:
        """Only the readings that differ from the defaults (``"default"`` when none)."""
        base = Readings()
        diff = [f"{k}={getattr(self, k)}" for k in ("prior", "floor", "a_plus", "after")
                if getattr(self, k) != getattr(base, k)]
        return " ".join(diff) if diff else "default"

    def codes(self) -> tuple[int, int, int, int]:
        return (PRIORS.index(self.prior), FLOORS.index(self.floor), A_PLUS.index(self.a_plus),
                AFTERS.index(self.after))


# ---------------------------------------------------------------------------------------
# Knowledge: anchors S_p / S_q per (combination, task), estimates (24)-(26)  (§5.1-§5.2)
# ---------------------------------------------------------------------------------------

@njit(cache=True)
def _task_estimate(j, i, size, n, p_size, p_a, q_size, q_a, floor, n_active):
    """(ã_{i,j} (24), Δ_{i,j} (25), lower a̲_{i,j}, upper ā_{i,j}) for task i in combination j."""
    ps = p_size[j, i]
    pa = p_a[j, i]
    if ps == size:  # S_j itself measured
        return pa, 0.0, pa, pa
    qs = q_size[j, i]
    qa = q_a[j, i]
    if qs == _NO_Q:
        qa = 0.0
        if floor == _MID:
            return pa / 2.0, pa / 2.0, 0.0, pa
        qs = n + 1 if floor == _BEYOND else max(n_active, size) + 1
    mu = qa + (pa - qa) / (ps - qs) * (size - qs)
    d = min(pa - mu, mu - qa)
    return mu, max(d, 0.0), qa, pa


@njit(cache=True)
def _refresh(j, n, popc, p_size, p_a, q_size, q_a, floor, n_active, mean, var):
    """Row sums ã_j = Σ ã_{i,j} and Σ Δ_{i,j}² of combination j."""
    m = 0.0
    v = 0.0
    for i in range(n):
        if (j >> i) & 1:
            mu, d, lo, hi = _task_estimate(j, i, popc[j], n, p_size, p_a, q_size, q_a, floor, n_active)
            m += mu
            v += d * d
    mean[j] = m
    var[j] = v


@njit(cache=True)
def _record(x, a_row, n, popc, p_size, p_a, q_size, q_a, measured, floor, n_active, mean, var):
    """Add the exact measurement ``a_row`` of combination ``x``: it becomes a candidate S_p of
    every super-combination (for its own tasks) and a candidate S_q of every
    sub-combination; only those rows are re-estimated."""
    measured[x] = True
    full = (1 << n) - 1
    s = popc[x]
    j = x
    while True:  # S_j ⊇ S_x
        changed = False
        for i in range(n):
            if (x >> i) & 1:
                if s > p_size[j, i] or (s == p_size[j, i] and a_row[i] < p_a[j, i]):
                    p_size[j, i] = s
                    p_a[j, i] = a_row[i]
                    changed = True
        if changed:
            _refresh(j, n, popc, p_size, p_a, q_size, q_a, floor, n_active, mean, var)
        if j == full:
            break
        j = (j + 1) | x
    j = x
    while j > 0:  # S_j ⊆ S_x
        changed = False
        for i in range(n):
            if (j >> i) & 1:
                if s < q_size[j, i] or (s == q_size[j, i] and a_row[i] > q_a[j, i]):
                    q_size[j, i] = s
                    q_a[j, i] = a_row[i]
                    changed = True
        if changed:
            _refresh(j, n, popc, p_size, p_a, q_size, q_a, floor, n_active, mean, var)
        j = (j - 1) & x


@njit(cache=True)
def _new_state(n, floor):
    size = 1 << n
    popc = np.zeros(size, dtype=np.int64)
    for j in range(1, size):
        popc[j] = popc[j >> 1] + (j & 1)
    p_size = np.zeros((size, n), dtype=np.int64)  # virtual S_p: a = 1 at size 0 (§3)
    p_a = np.ones((size, n))
    q_size = np.full((size, n), _NO_Q, dtype=np.int64)
    q_a = np.zeros((size, n))
    measured = np.zeros(size, dtype=np.bool_)
    mean = np.zeros(size)
    var = np.zeros(size)
    for j in range(1, size):
        _refresh(j, n, popc, p_size, p_a, q_size, q_a, floor, n, mean, var)
    return popc, p_size, p_a, q_size, q_a, measured, mean, var


class Knowledge:
    """What a search knows (Kuchumov & Korkhov 2021, §5.1): measured combinations and, for
    every (combination j, task i in j), the anchors S_p / S_q of the paper's rule, giving
    ã_{i,j} (24) and Δ_{i,j} (25).  The same compiled functions as :func:`search`; this
    class exists for inspection and tests.  It starts with nothing measured (the prior
    ``"none"``); :func:`search` records the speeds alone first under ``"ideal"``.
    ``n_active`` (tasks still running) matters only to the ``"active"`` floor."""

    def __init__(self, n: int, floor: str = "beyond"):
        Readings(floor=floor)
        self.n = n
        self.floor = FLOORS.index(floor)
        self.n_active = n
        (self.popc, self.p_size, self.p_a, self.q_size, self.q_a, self.measured, self.mean,
         self.var) = _new_state(n, self.floor)

    def record(self, mask: int, speeds) -> None:
        """Add the exact measurement of combination ``mask`` (speeds (n,), zero outside)."""
        _record(int(mask), np.asarray(speeds, dtype=np.float64), self.n, self.popc, self.p_size, self.p_a,
                self.q_size, self.q_a, self.measured, self.floor, self.n_active, self.mean, self.var)

    def estimate(self, mask: int, task: int) -> tuple[float, float, float, float]:
        """(ã (24), Δ (25), lower bound, upper bound) of ``task`` in combination ``mask``."""
        return tuple(float(v) for v in _task_estimate(int(mask), int(task), int(self.popc[mask]), self.n,
                                                      self.p_size, self.p_a, self.q_size, self.q_a,
                                                      self.floor, self.n_active))

    def anchors(self, mask: int, task: int) -> tuple[int, float, int, float]:
        """(|S_p|, a_{i,p}, |S_q|, a_{i,q}) used for ``task`` in ``mask`` (|S_q| = 32767: none)."""
        return (int(self.p_size[mask, task]), float(self.p_a[mask, task]),
                int(self.q_size[mask, task]), float(self.q_a[mask, task]))


# ---------------------------------------------------------------------------------------
# Acquisition functions (27)-(29)
# ---------------------------------------------------------------------------------------

@njit(cache=True)
def _acquisition(strategy, mean, sigma, a_plus):
    """PI (27), EI (28) or UCB (29) of a combination with mean ã_j and deviation σ_j."""
    if strategy == _UCB:
        return mean + sigma
    d = mean - a_plus
    if strategy == _PI:
        if sigma > 0:
            return 0.5 * math.erfc(-(d / sigma) / _SQRT2)
        return 1.0 if d >= 0 else 0.0
    if sigma > 0:
        u = d / sigma
        return d * 0.5 * math.erfc(-u / _SQRT2) + sigma * math.exp(-0.5 * u * u) * _INV_SQRT_2PI
    return d


@njit(cache=True)
def _key(strategy, mean, sigma, a_plus):
    """What the choice compares: the acquisition itself, except for PI its argument
    u = (ã_j - a⁺)/σ_j (Φ is strictly increasing, so the order is PI's; in floating point
    Φ(u) rounds to 1.0 above u ≈ 8.3 and would tie with a known combination's PI = 1);
    a known combination's PI of 1 or 0 is +inf or -inf."""
    if strategy == _PI:
        d = mean - a_plus
        if sigma > 0:
            return d / sigma
        return math.inf if d >= 0 else -math.inf
    return _acquisition(strategy, mean, sigma, a_plus)


def acquisition(strategy: str, mean: float, sigma: float, a_plus: float) -> float:
    """PI (27), EI (28) or UCB (29) (``strategy`` "pi", "ei", "ucb") of one combination."""
    if strategy not in STRATEGIES:
        raise InputError("strategy", None, f"{strategy!r} is not one of {', '.join(STRATEGIES)}")
    return float(_acquisition(STRATEGIES.index(strategy), float(mean), float(sigma), float(a_plus)))


# ---------------------------------------------------------------------------------------
# The search (§5), FCS's run-until-completion step (§4.2) once a choice is known
# ---------------------------------------------------------------------------------------

@njit(cache=True)
def _advance(x, until_completion, speeds, remaining, n, interval):
    """Run combination x for the measuring interval (or until a task completes, whichever is
    first), or until a task completes; returns (duration, mask of completed tasks)."""
    first = math.inf
    for i in range(n):
        if (x >> i) & 1 and speeds[x, i] > 0:
            first = min(first, remaining[i] / speeds[x, i])
    dt = first if until_completion else min(interval, first)
    done = 0
    if not math.isfinite(dt):
        return dt, done
    for i in range(n):
        if (x >> i) & 1 and speeds[x, i] > 0:
            if remaining[i] / speeds[x, i] <= dt * (1.0 + COMPLETE_RTOL):
                remaining[i] = 0.0
                done |= 1 << i
            else:
                remaining[i] -= speeds[x, i] * dt
    return dt, done


@njit(cache=True)
def _grid(v):
    """``v`` on the grid of :data:`TIE_GRID` (ties of the choice: module docstring)."""
    if not math.isfinite(v):
        return v
    return math.floor(v / TIE_GRID + 0.5)


@njit(cache=True)
def _search(speeds, b, strategy, z, interval, prior, floor, a_plus_mode, after):
    n = b.shape[0]
    full = (1 << n) - 1
    popc, p_size, p_a, q_size, q_a, measured, mean, var = _new_state(n, floor)
    n_active = n
    if prior == _IDEAL:
        for i in range(n):
            _record(1 << i, speeds[1 << i], n, popc, p_size, p_a, q_size, q_a, measured, floor, n_active,
                    mean, var)
    remaining = b.copy()
    active = full
    t = 0.0
    limit = full + n + 2
    seg = np.zeros((2 * limit, 3))
    nseg = 0
    st_i = np.zeros((limit, 3), dtype=np.int64)   # mask, kind (0 measure, 1 run), done mask
    st_f = np.zeros((limit, 6))                   # value, a_plus, mean, sigma, start, end
    nst = 0
    last_speed = -1.0
    while active != 0:
        if nst >= limit:
            return seg[:nseg], st_i[:nst], st_f[:nst], 1
        # a⁺ (see Readings)
        max_mean = -math.inf
        max_exact = -math.inf
        j = active
        while j > 0:
            if mean[j] > max_mean:
                max_mean = mean[j]
            if var[j] == 0 and mean[j] > max_exact:
                max_exact = mean[j]
            j = (j - 1) & active
        if a_plus_mode == _MEAN:
            ap = max_mean
        elif a_plus_mode == _LAST and last_speed >= 0:
            ap = last_speed
        else:
            ap = max_exact if max_exact > -math.inf else 0.0
        # the choice: largest acquisition, ties to the larger mean, then the smaller mask
        best = -1
        bv = -math.inf   # the best key (PI: its argument u, see _key)
        bm = -math.inf
        bs = 0.0
        kv = -math.inf
        km = -math.inf
        j = active
        while j > 0:
            mu = mean[j]
            sg = math.sqrt(var[j]) / z
            if sg == 0 and mu <= 0:
                val = -math.inf
            elif strategy == _EI and sg > 0 and max(mu - ap, 0.0) + sg * _INV_SQRT_2PI + 2.0 * TIE_GRID < bv:
                # EI <= max(d, 0) + σ φ(0): it cannot win, skip Φ and φ
                val = -math.inf
            else:
                val = _key(strategy, mu, sg, ap)
            if best < 0 or val + 2.0 * TIE_GRID >= bv:  # else it can neither win nor tie
                qv = _grid(val)
                qm = _grid(mu)
                if best < 0 or qv > kv or (qv == kv and (qm > km or (qm == km and j < best))):
                    best, bv, bm, bs, kv, km = j, val, mu, sg, qv, qm
            j = (j - 1) & active
        x = best
        start = t
        known = bs == 0
        dt, done = _advance(x, known, speeds, remaining, n, interval)
        if not math.isfinite(dt):
            return seg[:nseg], st_i[:nst], st_f[:nst], 2
        if not measured[x]:
            _record(x, speeds[x], n, popc, p_size, p_a, q_size, q_a, measured, floor, n_active, mean, var)
        if not known and after == 1 and done == 0:
            total = 0.0
            for i in range(n):
                total += speeds[x, i]
            if total > 0 and total >= ap:
                dt2, done = _advance(x, True, speeds, remaining, n, interval)
                dt += dt2
        t = start + dt
        if nseg > 0 and seg[nseg - 1, 0] == x and seg[nseg - 1, 2] == start:
            seg[nseg - 1, 2] = t
        else:
            seg[nseg, 0] = x
            seg[nseg, 1] = start
            seg[nseg, 2] = t
            nseg += 1
        active &= ~done
        last_speed = -1.0  # none of x's tasks left: "best" next time
        for i in range(n):
            if (x >> i) & 1 and (active >> i) & 1:
                last_speed = max(last_speed, 0.0) + speeds[x, i]
        st_i[nst, 0] = x
        st_i[nst, 1] = 1 if known else 0
        st_i[nst, 2] = done
        st_f[nst, 0] = _acquisition(strategy, bm, bs, ap)
        st_f[nst, 1] = ap
        st_f[nst, 2] = bm
        st_f[nst, 3] = bs
        st_f[nst, 4] = start
        st_f[nst, 5] = t
        nst += 1
        if done != 0:
            n_active = popc[active]
            if floor == _ACTIVE:  # only the candidates from now on are ever read
                j = active
                while j > 0:
                    _refresh(j, n, popc, p_size, p_a, q_size, q_a, floor, n_active, mean, var)
                    j = (j - 1) & active
    return seg[:nseg], st_i[:nst], st_f[:nst], 0


@dataclass(frozen=True)
class Step:
    """One decision of the search: combination ``mask`` chosen with acquisition ``value``
    against ``a_plus`` (its belief: ``mean`` ã_j, ``sigma`` σ_j); ``kind`` is ``"measure"``
    (not known before: it runs for the measuring interval) or ``"run"`` (known: it runs
    until a task completes); it ran from ``start`` to ``end`` and completed the tasks of
    the mask ``done``."""

    mask: int
    kind: str
    value: float
    a_plus: float
    mean: float
    sigma: float
    start: float
    end: float
    done: int


@dataclass
class SearchRun:
    """A search's schedule and its decisions."""

    schedule: Schedule
    steps: list[Step] = field(default_factory=list)

    @property
    def measurements(self) -> int:
        return sum(1 for s in self.steps if s.kind == "measure")


def _check_args(strategy: str, k: float, interval: float) -> float:
    if strategy not in STRATEGIES:
        raise InputError("strategy", None, f"{strategy!r} is not one of {', '.join(STRATEGIES)}")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not 0.5 < float(k) < 1.0:
        raise InputError("k", None, f"{k!r}: the k-quantile parameter must satisfy 0.5 < k < 1 (§5.2, (26))")
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not (
            math.isfinite(interval) and interval > 0):
        raise InputError("interval", None, f"{interval!r}: the measuring interval must be a finite number > 0")
    return NormalDist().inv_cdf(float(k))


def search(inst: Instance, strategy: str, *, k: float = 0.9, interval: float = 10.0,
           readings: Readings | None = None, check: bool = True) -> SearchRun:
    """Run §5's search strategy ``strategy`` ("pi", "ei" or "ucb") on ``inst`` with the
    k-quantile parameter ``k`` (26) and a measuring interval of ``interval`` time units;
    return its schedule and its decisions (every rule: the module docstring).  ``check``
    checks the instance against §3 first (:func:`coburst.theory.model.check_instance`)."""
    z = _check_args(strategy, k, interval)
    readings = readings or Readings()
    if check:
        check_instance(inst)
    prior, floor, a_plus, after = readings.codes()
    seg, st_i, st_f, status = _search(np.ascontiguousarray(inst.speeds, dtype=np.float64),
                                      np.ascontiguousarray(inst.b, dtype=np.float64),
                                      STRATEGIES.index(strategy), z, float(interval), prior, floor, a_plus, after)
    if status:  # pragma: no cover - excluded by construction (see the module docstring)
        raise AssertionError(f"search {strategy} on instance {inst.id!r} did not end (status {status})")
    schedule = Schedule([Segment(int(m), float(s), float(e)) for m, s, e in seg])
    steps = [Step(int(i[0]), "run" if i[1] else "measure", float(f[0]), float(f[1]), float(f[2]), float(f[3]),
                  float(f[4]), float(f[5]), int(i[2])) for i, f in zip(st_i, st_f)]
    return SearchRun(schedule, steps)


def run(inst: Instance, strategy: str, *, k: float = 0.9, interval: float = 10.0,
        readings: Readings | None = None, check: bool = True) -> Schedule:
    """The schedule of §5's search strategy ``strategy`` ("pi", "ei" or "ucb"): see
    :func:`search`."""
    return search(inst, strategy, k=k, interval=interval, readings=readings, check=check).schedule
