"""Synthetic moldable and malleable jobs under Downey's speedup model (``coburst workload downey``).

Downey ("A parallel workload model and its implications for processor allocation", HPDC 1997)
describes a job by its sequential time ``T1``, its average parallelism ``A`` and the variance of
its parallelism ``sigma``; its time on ``n`` nodes is ``T1 / S(n)`` with his speedup function
:func:`coburst.models.perf.downey_speedup`.  He fits ``T1`` and ``A`` with log-uniform
distributions; Cirne & Berman ("A model for moldable supercomputer jobs", IPDPS 2001) draw
``sigma`` uniformly.  The generator draws, job by job, with a seeded generator:

* arrivals: a Poisson process of mean gap ``gap`` seconds (the first job at 0);
* ``T1`` log-uniform in ``[t1_min, t1_max]`` seconds, ``A`` log-uniform in ``[1, a_max]``
  (default: the platform's nodes), ``sigma`` uniform in ``[0, sigma_max]``;
* a kind: malleable with probability ``malleable``, else moldable;
* bounds: ``num_nodes_min = 1``, ``num_nodes_max = min(nodes, ceil(2 A))`` (past ``2A - 1``
  Downey's speedup is flat), ``res`` = ``round(A)`` (the size Batsim runs it rigid on);
* the application: ``iterations`` of one compute task of ``T1 / iterations`` seconds on one
  node under Downey's model (a scheduling point after each); its profile's ``delay`` is the
  model's time on ``res`` nodes (what the real Batsim runs); walltime: none, or ``walltime``
  times the time on one node.

The constants are parameters, not the fitted values of either paper.  Same parameters and seed:
the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from coburst.errors import InputError
from coburst.models.perf import downey

__all__ = ["DowneyWorkload", "generate"]


@dataclass(frozen=True)
class DowneyWorkload:
    jobs: int = 100
    nodes: int = 16
    gap: float = 60.0
    t1_min: float = 60.0
    t1_max: float = 36000.0
    a_max: float | None = None
    sigma_max: float = 2.0
    malleable: float = 0.5
    iterations: int = 10
    walltime: float | None = None
    seed: int = 0

    def __post_init__(self):
        checks = (("jobs", 1 <= self.jobs <= 10**7, "an integer in [1, 10000000]"),
                  ("nodes", 1 <= self.nodes <= 10**7, "an integer in [1, 10000000]"),
                  ("gap", 0 <= self.gap < math.inf, "a number of seconds >= 0"),
                  ("t1_min", 0 < self.t1_min <= self.t1_max < math.inf, "0 < t1_min <= t1_max"),
                  ("a_max", self.a_max is None or 1 <= self.a_max <= self.nodes, "in [1, nodes]"),
                  ("sigma_max", 0 <= self.sigma_max < math.inf, "a number >= 0"),
                  ("malleable", 0 <= self.malleable <= 1, "a share in [0, 1]"),
                  ("iterations", 1 <= self.iterations <= 10**6, "an integer in [1, 1000000]"),
                  ("walltime", self.walltime is None or 1 <= self.walltime < math.inf, "a factor >= 1"))
        for name, ok, what in checks:
            if not ok:
                raise InputError("downey workload", name, f"expected {what}, got {getattr(self, name)!r}")


def generate(p: DowneyWorkload) -> dict[str, Any]:
    """The Batsim workload of ``p`` (elastic jobs carrying their own application models)."""
    rng = np.random.default_rng(p.seed)
    a_max = p.a_max or float(p.nodes)
    jobs, profiles, t = [], {}, 0.0
    for k in range(p.jobs):
        gap, u_t1, u_a, u_sigma, u_kind = rng.random(5)
        if k:
            t += -math.log1p(-gap) * p.gap
        t1 = math.exp(math.log(p.t1_min) + u_t1 * (math.log(p.t1_max) - math.log(p.t1_min)))
        a = math.exp(u_a * math.log(a_max))
        sigma = u_sigma * p.sigma_max
        hi = max(1, min(p.nodes, math.ceil(2 * a)))
        res = min(max(1, round(a)), hi)
        kind = "malleable" if u_kind < p.malleable else "moldable"
        app = {"phases": [{"iterations": p.iterations, "tasks": [
            {"type": "compute", "seconds": t1 / p.iterations, "model": "downey", "A": a, "sigma": sigma}]}]}
        name = f"j{k}"
        profiles[name] = {"type": "delay", "delay": downey(t1, res, a, sigma), "elastic": app}
        jobs.append({"id": k, "subtime": round(t, 6), "walltime": math.ceil(p.walltime * t1) if p.walltime else -1,
                     "res": res, "profile": name, "elastic": {"type": kind, "num_nodes_min": 1, "num_nodes_max": hi}})
    return {"nb_res": p.nodes, "description": f"{p.jobs} jobs under Downey's speedup model (coburst workload downey, "
                                              f"seed {p.seed})", "jobs": jobs, "profiles": profiles}
