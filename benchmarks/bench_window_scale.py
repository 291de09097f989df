"""window-D decision times on dragonflies of 96, 240 and 1000 compute nodes.

    .venv/bin/python benchmarks/bench_window_scale.py [--states 30] [--queues 20 100]
                                                      [--sizes 96 240 1000] [--seed 0]
                                                      [--clock cpu|wall]

Platforms (:meth:`Cluster.dragonfly`, one BB node of 40 GB per chassis, the first host of
each chassis): 96 = the thesis' 3x4x3x3 (12 BB nodes), 240 = 3x10x3x3 (30 BB nodes, the
mid-size target platform), 1000 = 5x25x9x1 (125 BB nodes).  States: random busy states as in
benchmarks/bench_decisions.py (running jobs until >= 90 % of the nodes are taken, KTH-like
widths, the thesis' lognormal BB requests), queue of ``--queues`` jobs.

For each platform and queue length, the median (and maximum) time of one ``window-1``
decision (N = 10) with the default step budget, next to the same decision with an
unlimited budget (``budget`` = 10^9: the exact search, the baseline) measured in the same
run on the same states; ``steps`` = median steps spent, ``exhausted`` = decisions that
reached the default budget, ``same`` = decisions equal to the exact ones (starts and
allocations).  Times are process CPU time by default (the 2 cores are shared).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decisions import random_state  # noqa: E402
from coburst import policies  # noqa: E402
from coburst.core.cluster import Cluster  # noqa: E402

PLATFORMS = {96: (3, 4, 3, 3), 240: (3, 10, 3, 3), 1000: (5, 25, 9, 1)}


def signature(decisions):
    return [(s.job.id, s.alloc.nodes.tolist(), s.alloc.bb_nodes.tolist()) for s in decisions.starts]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=30)
    ap.add_argument("--queues", type=int, nargs="+", default=[20, 100])
    ap.add_argument("--sizes", type=int, nargs="+", choices=sorted(PLATFORMS), default=sorted(PLATFORMS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(args.seed)
    default_budget = policies.get("window-1").budget
    warm = random_state(np.random.default_rng(1), Cluster.dragonfly(), 20)  # imports (scipy's HiGHS) before timing
    policies.get("window-1").make_decisions(warm)
    print(f"window-1 (N = 10), default budget {default_budget} steps vs exact (budget 10^9); median over "
          f"{args.states} states; {'CPU' if args.clock == 'cpu' else 'wall'} times in ms")
    print(f"{'nodes':>5} {'BB':>4} {'queue':>5} {'default med':>11} {'max':>8} {'exact med':>10} {'max':>8} "
          f"{'steps':>7} {'exhausted':>9} {'same':>6}")
    for size in args.sizes:
        cluster = Cluster.dragonfly(*PLATFORMS[size])
        for q in args.queues:
            fast, exact, steps, exhausted, same = [], [], [], 0, 0
            for _ in range(args.states):
                st = random_state(rng, cluster, q)
                pol = policies.get("window-1")
                t0 = clock()
                d = pol.make_decisions(st)
                fast.append(clock() - t0)
                steps.append(pol.last_steps)
                exhausted += pol.last_exhausted
                ref = policies.get("window-1", budget=10**9)
                t0 = clock()
                d2 = ref.make_decisions(st)
                exact.append(clock() - t0)
                same += signature(d) == signature(d2)
            print(f"{cluster.n_compute:>5} {cluster.n_bb:>4} {q:>5} {statistics.median(fast) * 1e3:>11.2f} "
                  f"{max(fast) * 1e3:>8.1f} {statistics.median(exact) * 1e3:>10.2f} {max(exact) * 1e3:>8.1f} "
                  f"{statistics.median(steps):>7.0f} {exhausted:>5}/{args.states:<3} {same:>3}/{args.states}",
                  flush=True)
    hard(clock)
    return 0


def hard(clock) -> None:
    """The hard 30-BB-node state of tests/test_window_anytime.py (five jobs of 4-16 nodes
    that first-fit decreasing places, the thesis placement does not, and the exact search
    needs > 200,000 steps for; plus an 8-node job) as a window-0 decision, at several budgets."""
    from coburst.core.state import Job, SchedulerState
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_window_anytime import HARD_AVAIL, HARD_REQS
    cluster = Cluster.build(sum(r for r, _ in HARD_REQS) + 8, HARD_AVAIL)
    print("hard state (30 BB nodes, 6 jobs): budget, time (ms), steps, exhausted, placement launched")
    for budget in (20_000, 300_000, 3_000_000):
        st = SchedulerState(cluster, 0.0)
        for i, (r, b) in enumerate(HARD_REQS + [(8, 30_000_000_000)]):
            st.submit(Job(f"j{i}", 0.0, r, 100.0, b))
        pol = policies.get("window-0", budget=budget)
        t0 = clock()
        pol.make_decisions(st)
        print(f"  {budget:>9} {(clock() - t0) * 1e3:>9.1f} {pol.last_steps:>9} {pol.last_exhausted!s:>5} "
              f"{pol.last_placement}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
