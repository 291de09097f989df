"""Decision time of a policy (default ``backfill-sjf-1``) on the thesis platform.

Platform: SimGrid dragonfly 3 groups x 4 chassis x 3 routers x 3 nodes, one BB node per
chassis (96 compute + 12 BB nodes of 40 GB), built directly with
:meth:`coburst.core.cluster.Cluster.dragonfly`.

For every queue length (default 20, 100, 500) the benchmark draws ``--states`` random
scheduler states -- a busy cluster (running jobs packed until >= 90 % of the nodes are
taken, random remaining walltimes) plus the waiting queue -- and times one complete
``make_decisions`` call per state, availability profile construction included (best of
``--repeat`` calls, to shed noise of a shared machine).  It prints the median over states.

``fast`` is the policy as it runs (the bit-mask profile, :class:`coburst.core.maskprofile.
MaskProfile`, for FCFS / filling / EASY / conservative); ``numpy`` the same policy on the
numpy :class:`coburst.core.profile.Profile` (``bit_masks = False``, the former path), timed
on the same states; ``--sizes`` adds larger dragonflies (240 = 3x10x3x3, 1000 = 5x25x9x1,
as benchmarks/bench_optimisers.py).

Baseline, measured in the same run: the same policy code on
:class:`coburst.core.profile.ReferenceProfile` (pure-Python lists and sets, every query
rescans all occupations).  Both must take identical decisions; the benchmark checks it.

Jobs: width ``2**(6.6 U**1.7)`` nodes, U uniform (KTH-like: median 4, powers of two dominate), walltime log-uniform
in [5 min, 36 h], BB request per node from the thesis' lognormal (Kopański 2020, Table 2.3,
KiB per node), at least 100 MB, at most what an empty platform can place.

    python benchmarks/bench_decisions.py [--states 50] [--queues 20 100 500] [--seed 0]
                                         [--sizes 96 240 1000]
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

from coburst import policies  # noqa: E402
from coburst.core.cluster import Cluster  # noqa: E402
from coburst.core.profile import Profile, ReferenceProfile  # noqa: E402
from coburst.core.state import Job, RunningJob, SchedulerState  # noqa: E402

GB = 1_000_000_000
PLATFORMS = {96: (3, 4, 3, 3), 240: (3, 10, 3, 3), 1000: (5, 25, 9, 1)}


def draw_job(rng: np.random.Generator, cluster: Cluster, jid: str, subtime: float) -> Job:
    res = int(min(cluster.n_compute, max(1, round(2 ** (6.6 * rng.random() ** 1.7)))))
    if rng.random() < 0.6:  # powers of two dominate
        res = 1 << int(math.log2(res))
    wall = float(round(math.exp(rng.uniform(math.log(300), math.log(36 * 3600)))))
    kib = -150361 + 2714115 * math.exp(1.09725 * rng.standard_normal())
    bb = max(int(kib * 1024), 100_000_000)
    per_bb = math.ceil(res / cluster.n_bb)
    bb = min(bb, int(cluster.bb_capacity.min()) // per_bb)
    return Job(jid, subtime, res, wall, bb)


def random_state(rng: np.random.Generator, cluster: Cluster, queue: int, now: float = 1e6) -> SchedulerState:
    state = SchedulerState(cluster, now)
    prof = Profile(cluster, now)
    k = 0
    busy = 0
    tries = 0
    while busy < 0.9 * cluster.n_compute and tries < 1000:
        tries += 1
        job = draw_job(rng, cluster, f"r{k}", now - rng.uniform(0, 3600))
        alloc = prof.alloc_now(job.res, job.walltime, job.bb)
        if alloc is None:
            continue
        elapsed = rng.uniform(0, job.walltime * 0.95)
        start = now - elapsed
        prof.occupy(now, start + job.walltime, alloc)
        state.running[job.id] = RunningJob(job, start, alloc)
        busy += job.res
        k += 1
    for i in range(queue):
        state.submit(draw_job(rng, cluster, f"q{i}", now - (queue - i)))
    return state


class NaiveState(SchedulerState):
    """Same state, profile answered by the brute-force ReferenceProfile."""

    def profile(self):
        return ReferenceProfile.from_running(
            self.cluster, self.now, ((r.expected_end, r.alloc) for r in self.running.values()))


def naive_copy(state: SchedulerState) -> NaiveState:
    new = NaiveState(state.cluster, state.now)
    new._queue = dict(state._queue)
    new.running = dict(state.running)
    return new


def time_decision(policy, state, repeat: int) -> tuple[float, object]:
    best, decisions = math.inf, None
    for _ in range(repeat):
        state._profile = state._mprofile = None  # rebuild the profile: part of a decision's cost
        t0 = time.perf_counter()
        decisions = policy.make_decisions(state)
        best = min(best, time.perf_counter() - t0)
    return best, decisions


def signature(decisions) -> tuple:
    return (tuple((s.job.id, tuple(s.alloc.nodes.tolist()), tuple(s.alloc.bb_nodes.tolist()))
                  for s in decisions.starts),
            tuple((r.job.id, r.start, tuple(r.alloc.nodes.tolist())) for r in decisions.reservations))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="backfill-sjf-1")
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--naive-states", type=int, default=None,
                    help="states timed with the naive baseline (default: all, 10 for queues >= 500)")
    ap.add_argument("--queues", type=int, nargs="+", default=[20, 100, 500])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replay", type=int, default=2000, metavar="N",
                    help="also time every decision of a replay of N random jobs (0: skip)")
    ap.add_argument("--sizes", type=int, nargs="+", choices=sorted(PLATFORMS), default=[96],
                    help="compute nodes of the dragonflies to run on")
    args = ap.parse_args(argv)
    for i, size in enumerate(args.sizes):
        if i:
            print()
        code = bench_size(args, Cluster.dragonfly(*PLATFORMS[size]), replay=args.replay if size == 96 else 0)
        if code:
            return code
    return 0


def bench_size(args, cluster: Cluster, replay: int) -> int:
    policy = policies.get(args.policy)
    numpy_policy = policies.get(args.policy)
    numpy_policy.bit_masks = False  # the same policy on the numpy Profile
    rng = np.random.default_rng(args.seed)
    print(f"{policy.name} on {cluster!r}, median over {args.states} random states "
          f"(best of {args.repeat} calls each), seed {args.seed}")
    print(f"{'queue':>6} {'fast ms':>9} {'p90 ms':>8} {'numpy ms':>9} {'fast/numpy':>10} {'naive ms':>9} "
          f"{'speed-up':>9} {'started':>8} {'running':>8} {'earliest() us':>14}")
    for q in args.queues:
        states = [random_state(rng, cluster, q) for _ in range(args.states)]
        fast, numpy_t, naive, started, running = [], [], [], [], []
        n_naive = args.naive_states if args.naive_states is not None else (args.states if q < 500 else 10)
        for i, st in enumerate(states):
            # interleaved: the numpy path, then the fast one, on the same state
            tn, decn = time_decision(numpy_policy, st, args.repeat)
            t, dec = time_decision(policy, st, args.repeat)
            if signature(dec) != signature(decn):
                print(f"MISMATCH between fast and numpy decisions (queue {q}, state {i})")
                return 1
            fast.append(t)
            numpy_t.append(tn)
            started.append(len(dec.starts))
            running.append(len(st.running))
            if i < n_naive:
                tn, decn = time_decision(policy, naive_copy(st), 1)
                naive.append(tn)
                if signature(dec) != signature(decn):
                    print(f"MISMATCH between fast and naive decisions (queue {q}, state {i})")
                    return 1
        # raw query speed: earliest start of every queued job on one state's profile
        prof = states[0].profile()
        jobs = states[0].queue
        t0 = time.perf_counter()
        for job in jobs:
            prof.earliest(job.res, job.walltime, job.bb)
        per_query = (time.perf_counter() - t0) / len(jobs)
        med = statistics.median(fast)
        p90 = sorted(fast)[int(0.9 * (len(fast) - 1))]
        npmed = statistics.median(numpy_t)
        nmed = statistics.median(naive) if naive else float("nan")
        print(f"{q:>6} {med * 1e3:>9.3f} {p90 * 1e3:>8.3f} {npmed * 1e3:>9.3f} {med / npmed:>9.2f}x "
              f"{nmed * 1e3:>9.2f} {nmed / med:>8.1f}x "
              f"{statistics.median(started):>8.0f} {statistics.median(running):>8.0f} {per_query * 1e6:>14.1f}")
    print("fast = the policy (bit-mask profile); numpy = the same on the numpy Profile; naive = "
          "ReferenceProfile (same policy code, same decisions: checked); earliest() on the numpy Profile")
    if replay:
        replay_section(cluster, policy, replay, rng)
    return 0


def replay_section(cluster: Cluster, policy, n_jobs: int, rng: np.random.Generator) -> None:
    """Decision times along a whole reference replay (states as they really occur)."""
    from coburst.core.replay import replay
    jobs, t = [], 0.0
    runtimes = {}
    for i in range(n_jobs):
        job = draw_job(rng, cluster, f"j{i}", t)
        jobs.append(job)
        runtimes[job.id] = float(max(1.0, round(job.walltime * rng.beta(0.6, 1.2))))
        t += rng.exponential(210.0)  # offered load above 1: the queue builds up
    t0 = time.perf_counter()
    res = replay(cluster, jobs, policy, runtimes)
    total = time.perf_counter() - t0
    buckets: dict[str, list[float]] = {}
    for d in res.decisions:
        b = "<20" if d.queue < 20 else "20-99" if d.queue < 100 else "100-499" if d.queue < 500 else ">=500"
        buckets.setdefault(b, []).append(d.seconds)
    print(f"replay of {n_jobs} jobs: {len(res.decisions)} decisions in {total:.2f} s, "
          f"max queue {max(d.queue for d in res.decisions)}")
    for b in ("<20", "20-99", "100-499", ">=500"):
        if b in buckets:
            v = buckets[b]
            print(f"  queue {b:>7}: {len(v):>5} decisions, median {statistics.median(v) * 1e3:.3f} ms, "
                  f"max {max(v) * 1e3:.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
