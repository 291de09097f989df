"""A straightforward reference of §5's search (Kuchumov & Korkhov 2021) for tests and
benchmarks: every iteration re-derives every candidate's anchors S_p / S_q by scanning all
measurements (no incremental state), in plain Python, with the rules documented in
:mod:`coburst.theory.search`.  Same arithmetic in the same order, so its decisions must be
the compiled kernel's exactly."""

from __future__ import annotations

import math
from statistics import NormalDist

from coburst.theory.model import Instance
from coburst.theory.search import TIE_GRID, Readings

INF = math.inf


def _anchor(measured: dict, j: int, i: int, n: int, n_active: int, r: Readings):
    size = bin(j).count("1")
    p = (0, 1.0)  # virtual: a = 1 at size 0 (§3)
    q = None
    for m, a in measured.items():
        s = bin(m).count("1")
        if (m >> i) & 1 and m & ~j == 0:  # S_m ⊆ S_j holding i
            if s > p[0] or (s == p[0] and a[i] < p[1]):
                p = (s, a[i])
        if j & ~m == 0:  # S_m ⊇ S_j
            if q is None or s < q[0] or (s == q[0] and a[i] > q[1]):
                q = (s, a[i])
    ps, pa = p
    if ps == size:
        return pa, 0.0
    if q is None:
        if r.floor == "mid":
            return pa / 2.0, pa / 2.0
        qs, qa = (n + 1 if r.floor == "beyond" else max(n_active, size) + 1), 0.0
    else:
        qs, qa = q
    mu = qa + (pa - qa) / (ps - qs) * (size - qs)
    return mu, max(min(pa - mu, mu - qa), 0.0)


def _acq(strategy: str, mu: float, sg: float, ap: float) -> float:
    if strategy == "ucb":
        return mu + sg
    d = mu - ap
    if strategy == "pi":  # compared through its argument (see the module docstring)
        return d / sg if sg > 0 else (INF if d >= 0 else -INF)
    if sg > 0:
        u = d / sg
        return d * 0.5 * math.erfc(-u / math.sqrt(2.0)) + sg * math.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)
    return d


def _grid(v: float) -> float:
    return v if not math.isfinite(v) else math.floor(v / TIE_GRID + 0.5)


def reference_search(inst: Instance, strategy: str, k: float = 0.9, interval: float = 10.0,
                     readings: Readings | None = None) -> tuple[list[tuple[int, str, int]], float]:
    """Decisions ``[(mask, "measure"|"run", completed mask), ...]`` and the makespan."""
    r = readings or Readings()
    z = NormalDist().inv_cdf(k)
    n = inst.n
    a = inst.speeds
    measured: dict[int, list[float]] = {}
    if r.prior == "ideal":
        for i in range(n):
            measured[1 << i] = list(a[1 << i])
    rem = [float(x) for x in inst.b]
    active, t, last, steps = inst.full, 0.0, None, []
    while active:
        n_active = bin(active).count("1")
        cands = [j for j in range(1, inst.full + 1) if j & ~active == 0]
        est = {}
        for j in cands:
            mu = var = 0.0
            for i in range(n):
                if (j >> i) & 1:
                    m_i, d_i = _anchor(measured, j, i, n, n_active, r)
                    mu += m_i
                    var += d_i * d_i
            est[j] = (mu, math.sqrt(var) / z)
        exact = [est[j][0] for j in cands if est[j][1] == 0]
        best_exact = max(exact) if exact else 0.0
        if r.a_plus == "mean":
            ap = max(est[j][0] for j in cands)
        elif r.a_plus == "last" and last is not None:
            ap = last
        else:
            ap = best_exact
        keys = []
        for j in cands:
            mu, sg = est[j]
            v = -INF if (sg == 0 and mu <= 0) else _acq(strategy, mu, sg, ap)
            keys.append((_grid(v), _grid(mu), -j))
        x = -max(keys)[2]
        known = est[x][1] == 0

        def advance(until: bool) -> tuple[float, int]:
            run = [i for i in range(n) if (x >> i) & 1 and a[x, i] > 0]
            first = min((rem[i] / a[x, i] for i in run), default=INF)
            dt = first if until else min(interval, first)
            done = 0
            for i in run:
                if rem[i] / a[x, i] <= dt * (1.0 + 1e-12):
                    rem[i] = 0.0
                    done |= 1 << i
                else:
                    rem[i] -= a[x, i] * dt
            return dt, done

        dt, done = advance(known)
        measured.setdefault(x, list(a[x]))
        if not known and r.after == "commit" and done == 0:
            total = sum(a[x])
            if total > 0 and total >= ap:
                dt2, done = advance(True)
                dt += dt2
        t += dt
        active &= ~done
        left = [i for i in range(n) if (x >> i) & 1 and (active >> i) & 1]
        last = sum(a[x, i] for i in left) if left else None
        steps.append((x, "run" if known else "measure", done))
    return steps, t
