"""Rigid jobs of a log made malleable, by the recipe of trace-based malleability studies.

Studies of malleable scheduling on production traces evaluated with ElastiSim (Özden et al.,
ICPP 2022) turn the logged rigid jobs into malleable ones by a speedup model fitted to the
logged size; coburst applies that recipe, with every constant a parameter, to a Batsim workload
of ``delay`` jobs (``coburst workload swf --model delay``).  (The constants are the ones this
recipe is usually given with; no published text of it was at hand to check them against.)

* a job of ``p > 1`` nodes and run time ``T`` follows **Amdahl's law** with the serial fraction
  that gives it **efficiency** ``e`` (default 0.8) at its logged size:
  ``s = (1/e - 1) / (p - 1)``, and a time on one node ``T1 = T / (s + (1 - s) / p)``;
* its bounds: **minimum** ``ceil(f p)`` nodes (``f`` default 0.2), **maximum** the largest size
  whose efficiency ``1 / (n s + 1 - s)`` stays at or above ``e_min`` (default 0.5), at most the
  platform's nodes;
* a **share** of the jobs (default 0.5; drawn with the seed, job by job) becomes malleable;
  the others stay rigid (no ``elastic`` field), as do one-node jobs and jobs whose logged size
  cannot have efficiency ``e`` (``e < 1/p``: slower than serial);
* the application model: ``iterations`` (default 10) of one compute task of ``T1 /
  iterations`` seconds on one node under Amdahl's law, a scheduling point after each, and
  ``on_reconfiguration`` (default ``"0"``) as the cost of a resize;
* the walltime of a malleable job grows by ``T(min) / T(p)``: it may run on its minimum.

The Batsim side of each job (``res``, its ``delay`` profile) is unchanged: the real Batsim runs
the workload rigid, as logged.  Same input, options and seed: the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from coburst.errors import InputError

__all__ = ["MalleableRecipe", "make_malleable"]


@dataclass(frozen=True)
class MalleableRecipe:
    """The recipe's parameters (see the module's documentation)."""

    share: float = 0.5
    efficiency: float = 0.8
    min_fraction: float = 0.2
    min_efficiency: float = 0.5
    iterations: int = 10
    on_reconfiguration: str = "0"
    seed: int = 0

    def __post_init__(self):
        checks = (("share", 0.0 <= self.share <= 1.0, "in [0, 1]"),
                  ("efficiency", 0.0 < self.efficiency <= 1.0, "in (0, 1]"),
                  ("min_fraction", 0.0 < self.min_fraction <= 1.0, "in (0, 1]"),
                  ("min_efficiency", 0.0 < self.min_efficiency <= self.efficiency, "in (0, efficiency]"),
                  ("iterations", isinstance(self.iterations, int) and 1 <= self.iterations <= 10**6,
                   "an integer in [1, 1000000]"))
        for name, ok, what in checks:
            if not ok:
                raise InputError("malleable recipe", name, f"expected {what}, got {getattr(self, name)!r}")


def _bounds(p: int, s: float, recipe: MalleableRecipe, nb_res: int) -> tuple[int, int]:
    lo = max(1, math.ceil(recipe.min_fraction * p - 1e-9))
    hi = math.floor((1.0 / recipe.min_efficiency - 1.0 + s) / s + 1e-9) if s > 0 else nb_res
    return min(lo, p), max(p, min(hi, nb_res))


def make_malleable(doc: dict[str, Any], recipe: MalleableRecipe, source: str = "workload") -> dict[str, Any]:
    """``doc`` (a Batsim workload of ``delay`` jobs) with a share of its jobs malleable."""
    nb_res = int(doc["nb_res"])
    profiles = doc["profiles"]
    rng = np.random.default_rng(recipe.seed)
    jobs = []
    made = 0
    for i, job in enumerate(doc["jobs"]):
        draw = rng.random()  # (one draw a job, whatever it is: the choice of job k depends on k only)
        profile = profiles.get(job["profile"], {})
        if profile.get("type") != "delay":
            raise InputError(source, f"jobs[{i}].profile", f"job {job['id']!r} has a {profile.get('type')!r} profile: "
                                                           "the recipe takes delay jobs (coburst workload swf --model "
                                                           "delay)")
        p, runtime = int(job["res"]), float(profile["delay"])
        if p <= 1 or runtime <= 0 or draw >= recipe.share:
            jobs.append(dict(job))
            continue
        s = (1.0 / recipe.efficiency - 1.0) / (p - 1)
        if s > 1.0:  # (an efficiency below 1/p: slower than serial, no Amdahl job has it)
            jobs.append(dict(job))
            continue
        t1 = runtime / (s + (1.0 - s) / p)
        lo, hi = _bounds(p, s, recipe, nb_res)
        out = dict(job)
        walltime = float(job.get("walltime", -1))
        if walltime >= 0:
            stretch = (s + (1.0 - s) / lo) / (s + (1.0 - s) / p)
            out["walltime"] = math.ceil(walltime * stretch)
        out["elastic"] = {"type": "malleable", "num_nodes_min": lo, "num_nodes_max": hi, "application": {
            "on_reconfiguration": recipe.on_reconfiguration,
            "phases": [{"iterations": recipe.iterations,
                        "tasks": [{"type": "compute", "seconds": t1 / recipe.iterations, "model": "amdahl",
                                   "serial_fraction": s}]}]}}
        jobs.append(out)
        made += 1
    description = doc.get("description", "")
    note = (f"{made} of {len(jobs)} jobs malleable (coburst workload malleable: share {recipe.share}, efficiency "
            f"{recipe.efficiency}, min {recipe.min_fraction} x size, max at efficiency {recipe.min_efficiency}, "
            f"{recipe.iterations} iterations, seed {recipe.seed})")
    return {**doc, "description": f"{description}; {note}" if description else note, "jobs": jobs}
