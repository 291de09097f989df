"""ELiSE-style co-scheduling workloads: jobs drawn from an application seed.

``generate(seed_apps, n, ...)`` draws ``n`` jobs from the applications of a seed
(:func:`coburst.models.heatmap.load_seed` / ``bundled_seed``):

* **which application**: ``"random"`` (uniform), ``"frequency"`` (the seed's ``frequency``
  column as weights; uniform where absent), or an explicit list of names (cycled);
* **size**: a job of ``p`` processes needs ``nodes = ceil(p / cores_per_node)`` whole nodes
  when it runs compact; it requests ``res = nodes x units_per_node`` Batsim resources (the
  allocatable units of ``coburst platform cosched``): the same count covers a compact
  allocation (every unit of ``nodes`` nodes) and a spread one (half of every socket on twice
  the nodes), so the scheduler chooses;
* **duration**: a ``delay`` profile of the application's compact time (the speedup hook
  stretches or shrinks it), ``walltime = walltime_factor x compact time`` (ELiSE: 1.4);
* **arrivals**: ``"zero"`` (all at t = 0, ELiSE's published setting), ``"constant"`` (every
  ``interarrival`` s), ``"uniform"`` (uniform in [0, 2 x interarrival]), ``"poisson"``
  (exponential gaps of mean ``interarrival``) or ``"weibull"`` (gaps ``interarrival x
  Weibull(shape)/Gamma(1 + 1/shape)``, mean ``interarrival``), integer seconds (rounded).

Every draw comes from ``numpy.random.default_rng(seed)``: same arguments, same bytes.
Jobs carry ``app`` (for ``--heatmap``), ``processes`` and ``compact_nodes``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from coburst.errors import InputError
from coburst.models.heatmap import WALLTIME_FACTOR, AppSeed

ARRIVALS = ("zero", "constant", "uniform", "poisson", "weibull")


def generate(apps: Sequence[AppSeed], n: int, *, cores_per_node: int, units_per_node: int,
             pick: str | Sequence[str] = "random", arrival: str = "zero", interarrival: float = 10.0,
             weibull_shape: float = 1.5, walltime_factor: float = WALLTIME_FACTOR, seed: int = 0,
             max_nodes: int | None = None, description: str = "") -> dict:
    """A Batsim workload document (see the module docstring)."""
    if n < 1:
        raise InputError("--jobs", str(n), "must be >= 1")
    if cores_per_node < 1 or units_per_node < 1:
        raise InputError("platform", f"{cores_per_node} cores, {units_per_node} units per node",
                         "need >= 1 core and >= 1 unit per node")
    if arrival not in ARRIVALS:
        raise InputError("--arrival", arrival, f"expected one of {', '.join(ARRIVALS)}")
    if not (math.isfinite(interarrival) and interarrival >= 0):
        raise InputError("--interarrival", str(interarrival), "must be a finite number >= 0")
    if not (math.isfinite(weibull_shape) and weibull_shape > 0):
        raise InputError("--weibull-shape", str(weibull_shape), "must be a finite number > 0")
    if not (math.isfinite(walltime_factor) and walltime_factor >= 1):
        raise InputError("--walltime-factor", str(walltime_factor), "must be a finite number >= 1")
    usable = [a for a in apps if a.processes and (max_nodes is None or _nodes(a, cores_per_node) <= max_nodes)]
    if not usable:
        raise InputError("seed", None, "no application with a process count"
                         + (f" fits on {max_nodes} nodes" if max_nodes is not None else ""))
    by_name = {a.name: a for a in usable}
    rng = np.random.default_rng(seed)
    if isinstance(pick, str) and pick in ("random", "frequency"):
        weights = None
        if pick == "frequency":
            w = np.array([a.frequency if a.frequency is not None else 1.0 for a in usable], dtype=float)
            if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
                raise InputError("seed", "frequency", "frequencies must be finite, >= 0 and not all 0")
            weights = w / w.sum()
        chosen = [usable[i] for i in rng.choice(len(usable), size=n, p=weights)]
    else:
        names = [pick] if isinstance(pick, str) else list(pick)
        unknown = [x for x in names if x not in by_name]
        if not names or unknown:
            known = ", ".join(sorted(by_name)) or "none fits the platform"
            raise InputError("--pick", ",".join(unknown) or "(empty)",
                             f"not an application of the seed that fits the platform (known: {known}); give "
                             "random, frequency or a comma list of these names")
        chosen = [by_name[names[i % len(names)]] for i in range(n)]
    subtimes = _arrivals(rng, n, arrival, interarrival, weibull_shape)
    jobs, profiles = [], {}
    for i, (app, sub) in enumerate(zip(chosen, subtimes)):
        nodes = _nodes(app, cores_per_node)
        prof = f"{app.name}"
        profiles[prof] = {"type": "delay", "delay": float(app.compact_time)}
        jobs.append({"id": i, "subtime": int(sub), "walltime": round(walltime_factor * app.compact_time, 6),
                     "res": nodes * units_per_node, "profile": prof, "app": app.name,
                     "processes": int(app.processes), "compact_nodes": nodes})
    doc = {"nb_res": max(j["res"] for j in jobs), "jobs": jobs, "profiles": dict(sorted(profiles.items()))}
    if description:
        doc = {"description": description, **doc}
    return doc


def _nodes(app: AppSeed, cores_per_node: int) -> int:
    return max(1, math.ceil(app.processes / cores_per_node))


def _arrivals(rng: np.random.Generator, n: int, kind: str, mean: float, shape: float) -> list[int]:
    if kind == "zero":
        return [0] * n
    if kind == "constant":
        gaps = np.full(n, mean)
    elif kind == "uniform":
        gaps = rng.uniform(0.0, 2.0 * mean, size=n)
    elif kind == "poisson":
        gaps = rng.exponential(mean, size=n)
    else:  # weibull, scaled to the requested mean
        gaps = mean * rng.weibull(shape, size=n) / math.gamma(1.0 + 1.0 / shape)
    gaps[0] = 0.0  # the first job arrives at 0
    return [int(round(t)) for t in np.cumsum(gaps)]


def from_job_list(jobs, apps: Sequence[AppSeed], *, cores_per_node: int, units_per_node: int,
                  max_nodes: int | None = None, source: str = "job list", description: str = "") -> dict:
    """A Batsim workload from an ELiSE job list (:func:`coburst.analysis.elise.read_job_list`),
    as ELiSE builds its jobs from it (``framework/realsim/generators/keyslist.py``,
    ``KeysListGenerator.generate_jobs_set``, then ``framework/realsim/compengine.py``,
    ``ComputeEngine.setup_preloaded_jobs``):

    * the application (field 14) is looked up in the seed: its process count and its compact
      (median) time, the ``delay`` of the job's profile;
    * the walltime is the list's (field 9), the submit time the list's (field 2);
    * jobs are stably sorted by submit time, the times shifted so that the first job arrives
      at 0, and numbered 0, 1, ... in that order (ELiSE's job ids, the ``Job Number`` of its
      results): the workload's order is the list's order among jobs submitted together.

    Errors name the file, the line and the problem: an application the seed does not know, a
    process count (field 8, when given) other than the seed's, a job wider than the machine."""
    if not jobs:
        raise InputError(source, None, "no job")
    by_name = {a.name: a for a in apps}
    rows = []
    for job in jobs:
        app = by_name.get(job.app)
        if app is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise InputError(source, f"line {job.line}, field 14 (Executable Number)",
                             f"application {job.app!r} is not in the seed (known: {known})")
        if not app.processes:
            raise InputError(source, f"line {job.line}", f"the seed gives no process count for {job.app!r}")
        if job.processes is not None and job.processes != app.processes:
            raise InputError(source, f"line {job.line}, field 8 (Requested Number of Processors)",
                             f"{job.processes} processes, the seed's {job.app!r} has {app.processes}")
        nodes = _nodes(app, cores_per_node)
        if max_nodes is not None and nodes > max_nodes:
            raise InputError(source, f"line {job.line}", f"{job.app!r} needs {nodes} nodes, the platform has "
                             f"{max_nodes}")
        rows.append((job, app, nodes))
    rows.sort(key=lambda r: r[0].submit)  # stable, as ELiSE's list.sort
    first = rows[0][0].submit
    out, profiles = [], {}
    for i, (job, app, nodes) in enumerate(rows):
        profiles[app.name] = {"type": "delay", "delay": float(app.compact_time)}
        sub = job.submit - first
        out.append({"id": i, "subtime": int(sub) if sub.is_integer() else sub, "walltime": job.walltime,
                    "res": nodes * units_per_node, "profile": app.name, "app": app.name,
                    "processes": int(app.processes), "compact_nodes": nodes})
    doc = {"nb_res": max(j["res"] for j in out), "jobs": out, "profiles": dict(sorted(profiles.items()))}
    if description:
        doc = {"description": description, **doc}
    return doc
