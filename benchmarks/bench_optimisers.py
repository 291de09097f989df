"""Decision time of the optimising policies (Kopański 2020, Alg. 6-8) against straightforward
implementations measured in the same run.

    .venv/bin/python benchmarks/bench_optimisers.py [--states 50] [--queues 20 50 100 500]
                                                    [--naive-states 3] [--seed 0]
                                                    [--only plan maxutil window] [--windows 10 16 20]
                                                    [--sizes 96 240 1000]

States: random busy states of dragonflies (``--sizes``, default 96: the thesis' dragonfly,
96 compute + 12 BB nodes; 240 = 3x10x3x3 with 30 BB nodes, the mid-size target platform;
1000 = 5x25x9x1 with 125 BB nodes: the platforms of benchmarks/bench_window_scale.py), as in
benchmarks/bench_decisions.py.  Median over ``--states`` states per queue length of:

* ``plan``: one execution plan of a random permutation -- fast = :meth:`PlanEvaluator.evaluate`
  on a new evaluator (the compiled kernel from the base profile, no reuse: starts, nodes and
  BB placement of every job, and the score); straightforward = earliest/occupy on a copy of
  the numpy :class:`Profile`, job after job;
* ``plan-square-0``: a whole decision (9 candidates + 30 x 6 annealing steps, no time
  cap) -- fast = the policy (prefix reuse, bounded plans, searches started where the
  reference plan shows nothing fits earlier); straightforward = the same annealing with
  every plan rebuilt from scratch on the numpy profile (no reuse, no bound); ``tried`` =
  plans evaluated, ``placed`` = earliest-start searches the fast evaluator ran;
* ``maxutil-1.0-1``: a whole decision (up to 5000 hill-climbing steps) -- fast = the
  policy; straightforward = every permutation scored by greedy filling on a profile copy;
* ``window-1`` with N = 10, 16, 20 -- fast = the policy; straightforward = Alg. 7 as
  written (Z3 on every combination checked).

Straightforward runs are slow: they are timed on the first ``--naive-states`` states only
(and skipped where one decision would take minutes: window N >= 16, maxutil and plan at
queue 500).  Decisions of both are checked equal on those states.  ``--only`` restricts
the rows (``plan``: the execution plan and plan-square-0 rows).  Times are wall-clock
(``time.perf_counter``) with ``--clock wall``; by default process CPU time, which the
machine's load disturbs less.
"""

from __future__ import annotations

import argparse
import math
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
from coburst.core.decisions import Decisions  # noqa: E402
from coburst.core.plan import OBJECTIVES, PlanEvaluator, candidate_orders  # noqa: E402
from coburst.policies.base import fill  # noqa: E402
from coburst.policies.maxutil import compute_first  # noqa: E402
from coburst.policies.plan import anneal, decision_rng, reserve_head  # noqa: E402
from coburst.policies.window import search_window_literal  # noqa: E402


#: compute nodes -> Cluster.dragonfly(groups, chassis, routers, nodes) (one BB node per chassis)
PLATFORMS = {96: (3, 4, 3, 3), 240: (3, 10, 3, 3), 1000: (5, 25, 9, 1)}


class SlowPlans:
    """Straightforward plan evaluation: the whole plan on a copy of the numpy profile."""

    def __init__(self, profile, jobs, objective):
        self.profile, self.jobs, self.step, self.plans = profile, jobs, OBJECTIVES[objective], 0

    def plan(self, perm):
        prof = self.profile.copy()
        out = []
        for i in perm:
            j = self.jobs[i]
            s, a = prof.earliest(j.res, j.walltime, j.bb)
            prof.occupy(s, s + j.walltime, a)
            out.append(s)
        return out

    def evaluate(self, perm, bound=math.inf):
        self.plans += 1
        score = 0.0
        for i, s in zip(perm, self.plan(perm)):
            score = self.step(score, s - self.jobs[i].subtime, s)
        return score

    def accept(self):
        pass


class SlowFiller:
    """Straightforward maxutil scoring: greedy filling on a copy of the profile."""

    def __init__(self, profile, jobs):
        self.profile, self.jobs, self.evals = profile, jobs, 0
        self.ids = {j.id: i for i, j in enumerate(jobs)}

    def evaluate(self, perm):
        self.evals += 1
        d = Decisions(self.profile.now)
        fill(self.profile.copy(), [self.jobs[i] for i in perm], d)
        return [self.ids[x] for x in d.started_ids]

    def accept(self):
        pass


#: the clock of every figure: process CPU time by default (the 2 cores of the machine are
#: shared, so wall time measures the load as much as the code); ``--clock wall`` for wall time
CLOCK = time.process_time


def timed(fn):
    t0 = CLOCK()
    out = fn()
    return CLOCK() - t0, out


def slow_plan_decision(state, pol):
    prof = state.profile()
    d = Decisions(state.now)
    rest = reserve_head(prof, state.queue, pol.depth, d)
    ev = SlowPlans(prof, rest, pol.objective)
    perm = anneal(ev, len(rest), decision_rng(pol.seed, state), exhaustive=pol.exhaustive,
                  cooling_steps=pol.cooling_steps, temperature_steps=pol.temperature_steps,
                  cooling_rate=pol.cooling_rate, candidates=candidate_orders(rest))
    fill(prof, [rest[i] for i in perm], d)
    return d


def slow_maxutil_decision(state, pol):
    prof = state.profile()
    d = Decisions(state.now)
    cfirst = compute_first(state.cluster, state.queue, float(pol.beta))
    rest = reserve_head(prof, state.queue, pol.depth, d)
    perm = pol.search(SlowFiller(prof, rest), rest, state.now, cfirst)
    fill(prof, [rest[i] for i in perm], d)
    return d


def slow_window_search(state, n):
    win = state.queue[:n]
    free, avail = state.profile().free_at(state.now)
    return search_window_literal(win, [], int(free.sum()), avail.tolist(), state.now,
                                 compute_first(state.cluster, state.queue, 1.0))[0]


def med(v):
    return statistics.median(v) if v else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--naive-states", type=int, default=3)
    ap.add_argument("--queues", type=int, nargs="+", default=[20, 50, 100, 500])
    ap.add_argument("--windows", type=int, nargs="+", default=[10, 16, 20])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="+", choices=("plan", "maxutil", "window"),
                    default=["plan", "maxutil", "window"])
    ap.add_argument("--sizes", type=int, nargs="+", choices=sorted(PLATFORMS), default=[96],
                    help="compute nodes of the dragonflies to run on")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="process CPU time (default) or wall-clock time")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    # load the compiled kernels before timing (first use on a machine compiles them, ~20 s)
    from coburst.core.plan import warm_kernel
    warm_kernel()
    warm = random_state(np.random.default_rng(1), Cluster.dragonfly(), 8)
    PlanEvaluator(warm.profile(), warm.queue, "square").evaluate(list(range(8)))
    print(f"median over {args.states} states (straightforward: first {args.naive_states}); "
          f"{'CPU' if args.clock == 'cpu' else 'wall'} times in ms")
    print(f"{'nodes':>5} {'queue':>5} {'what':<22} {'fast':>10} {'straightfwd':>12} {'ratio':>7} {'tried':>7}")
    for size in args.sizes:
        bench_size(args, Cluster.dragonfly(*PLATFORMS[size]))
    return 0


def bench_size(args, cluster) -> None:
    rng = np.random.default_rng(args.seed)
    for q in args.queues:
        states = [random_state(rng, cluster, q) for _ in range(args.states)]
        rows = []
        if "plan" in args.only:  # one execution plan
            fast, slow = [], []
            for k, st in enumerate(states):
                prof = st.profile()
                perm = list(rng.permutation(q))
                ev = PlanEvaluator(prof, st.queue, "square")
                t, score = timed(lambda: ev.evaluate(perm))
                fast.append(t)
                if k < args.naive_states:
                    t2, splan = timed(lambda: SlowPlans(prof, st.queue, "square").plan(perm))
                    slow.append(t2)
                    assert [s for s, _ in ev.plan(perm)] == splan, "plans differ"
            rows.append(("execution plan", fast, slow, None))
        # decisions
        for label, make, slow_fn, skip_slow in (
                ("plan-square-0", lambda: policies.get("plan-square-0"), slow_plan_decision, q >= 500),
                ("maxutil-1.0-1", lambda: policies.get("maxutil-1.0-1"), slow_maxutil_decision, q >= 500)):
            if label.split("-")[0] not in args.only:
                continue
            fast, slow, tried = [], [], []
            for k, st in enumerate(states):
                pol = make()
                t, d = timed(lambda: pol.make_decisions(st))
                fast.append(t)
                tried.append(pol.last_tried)
                if k < args.naive_states and not skip_slow:
                    t2, d2 = timed(lambda: slow_fn(st, pol))
                    slow.append(t2)
                    assert d.started_ids == d2.started_ids, f"{label}: decisions differ"
            rows.append((label, fast, slow, med(tried)))
        for n in (args.windows if "window" in args.only else ()):
            fast, slow, tried = [], [], []
            for k, st in enumerate(states):
                pol = policies.get("window-0", window=n)  # depth 0: no mandatory job, search always runs
                t, d = timed(lambda: pol.make_decisions(st))
                fast.append(t)
                tried.append(pol.last_tried)
                if k < args.naive_states and n <= 10:
                    from coburst.policies.window import search_window
                    win = st.queue[:n]
                    free, avail = st.profile().free_at(st.now)
                    cf = compute_first(st.cluster, st.queue, 1.0)
                    t2, lit = timed(lambda: slow_window_search(st, n))
                    slow.append(t2)
                    assert lit == search_window(win, [], int(free.sum()), avail.tolist(), st.now, cf)[0]
            rows.append((f"window-0 N={n}", fast, slow, med(tried)))
        for label, fast, slow, tried in rows:
            f, s = med(fast) * 1e3, med(slow) * 1e3
            ratio = f"{s / f:6.0f}x" if slow else "      -"
            print(f"{cluster.n_compute:>5} {q:>5} {label:<22} {f:>10.2f} {s if slow else float('nan'):>12.1f} "
                  f"{ratio} {'' if tried is None else f'{tried:.0f}':>7}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
