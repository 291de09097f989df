"""Decision time of the heterogeneous-cluster mapping policies on one 512-job batch, 16 nodes.

    .venv/bin/python benchmarks/bench_hetero.py [--repeat N] [--seeds 5]

The instance of Sánchez Sousa 2023, §5.1.1: 512 single-task jobs with requested times of
100-3000 s on the slowest node, all at t = 0, on the 16 single-core nodes of the low
heterogeneity platform (Table 2: 6 nodes at 1-5 GHz, 5 at 5.01-7.5, 3 at 7.51-10, 2 above
10 GHz -- drawn uniformly, 10-12.5 for the last class; one flop per cycle).

Measured (wall and CPU time of the process), each the median of ``--repeat`` runs (default 5)
per seed, then the median over the seeds:

* ``min-min`` / ``max-min``: one policy decision (``make_decisions`` on a
  :class:`~coburst.core.hetero.HeteroState` with the 512 jobs waiting: ETC matrix, mapping,
  node queues, starts) with the vectorised :func:`~coburst.policies.hetero.minmin.batch_map`,
  against the straightforward pure-Python O(J^2 m) loop
  (:func:`~coburst.policies.hetero.minmin.batch_map_reference`) on the same ETC matrix in the
  same run (target: <= 50 ms);
* ``duplex`` (both, then the better);
* ``astar`` with the default pruning limit (128 vertices; target <= 1 s), and its makespan
  next to min-min's and max-min's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coburst.core.hetero import HeteroCluster, HeteroState, HJob
from coburst.policies import hetero
from coburst.policies.hetero.minmin import batch_map_reference, makespan

TABLE2 = [(6, 1.0, 5.0), (5, 5.01, 7.5), (3, 7.51, 10.0), (2, 10.0, 12.5)]   # count, GHz range
TARGETS = {"min-min": 0.050, "max-min": 0.050, "astar": 1.0}


def instance(seed: int, n_jobs: int = 512) -> HeteroState:
    rng = np.random.default_rng(seed)
    ghz = np.concatenate([rng.uniform(lo, hi, count) for count, lo, hi in TABLE2])
    resources = [{"id": i, "name": f"n{i:02d}_c00", "properties": {"node": str(i), "core": "0", "speed": repr(float(g) * 1e9)}}
                 for i, g in enumerate(ghz)]
    cluster = HeteroCluster.from_resources(resources)
    state = HeteroState(cluster, 0.0)
    req = rng.uniform(100, 3000, n_jobs)
    for i, r in enumerate(req):
        state.submit(HJob(f"w0!{i}", 0.0, 1, float(r) * cluster.min_speed, seq=i, req_time=float(r)))
    return state


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU (process) seconds of ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    rows: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    spans: dict[str, list[float]] = {}
    for seed in range(args.seeds):
        state = instance(seed)
        jobs = state.queue
        etc = state.etc_matrix(jobs).tolist()
        for name in ("min-min", "max-min", "duplex", "astar"):
            policy = hetero.get(name)
            t, c = timed(lambda: policy.make_decisions(state), args.repeat)
            rows.setdefault(name, []).append(t)
            cpus.setdefault(name, []).append(c)
            avail = state.availability()
            policy.plan(state, jobs, avail)
            spans.setdefault(name, []).append(makespan(avail))
        for pick in ("min", "max"):
            ref_repeat = max(1, min(args.repeat, 3))
            t, c = timed(lambda: batch_map_reference(etc, [1] * len(jobs), [[0.0]] * len(state.cluster), 0.0, pick),
                         ref_repeat)
            rows.setdefault(f"{pick}-min reference", []).append(t)
            cpus.setdefault(f"{pick}-min reference", []).append(c)
    print(f"512 jobs x 16 single-core nodes (Sánchez Sousa 2023 §5.1.1, Table 2), {args.seeds} seeds, "
          f"median of {args.repeat} runs each")
    print(f"{'policy':<20}{'wall (ms)':>11}{'cpu (ms)':>10}{'target (ms)':>13}{'vs reference (cpu)':>20}"
          f"{'makespan (s)':>14}")
    for name in ("min-min", "max-min", "duplex", "astar", "min-min reference", "max-min reference"):
        t, c = statistics.median(rows[name]), statistics.median(cpus[name])
        target = TARGETS.get(name)
        ref = cpus.get(f"{name} reference")
        ratio = f"{statistics.median(ref) / c:.0f}x faster" if ref else ""
        span = f"{statistics.median(spans[name]):.1f}" if name in spans else ""
        ok = "" if target is None else (" ok" if min(t, c) <= target else " SLOW")
        print(f"{name:<20}{t * 1e3:>11.1f}{c * 1e3:>10.1f}{'' if target is None else f'{target * 1e3:.0f}':>13}"
              f"{ratio:>20}{span:>14}{ok}")
    print("(target met when the wall or the CPU time is within it: the CPU time is what a loaded shared machine "
          "does not inflate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
