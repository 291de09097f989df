"""Support of the optimiser tests (tests/test_opt_*.py): random scheduler states and the
straightforward reference implementations the fast evaluators must agree with."""

from __future__ import annotations

import math
from itertools import permutations

from hypothesis import strategies as st

from coburst.core.decisions import Decisions
from coburst.core.profile import Profile, ReferenceProfile
from coburst.core.state import Job, RunningJob, SchedulerState
from coburst.policies.base import fill
from coburst.testing.strategies import UNIT, clusters

NOW = 100.0


@st.composite
def states(draw, max_queue: int = 9, max_running: int = 6, min_bb: int = 1):
    """A scheduler state at ``NOW``: running jobs packed greedily, then a queue."""
    cluster = draw(clusters(max_compute=10, max_bb=3, min_bb=min_bb))
    state = SchedulerState(cluster, NOW)
    prof = Profile(cluster, NOW)
    for k in range(draw(st.integers(0, max_running))):
        res = draw(st.integers(1, cluster.n_compute))
        bb = draw(st.integers(0, 4)) * UNIT // 2 if cluster.n_bb else 0
        end = NOW + draw(st.integers(1, 40))
        alloc = prof.alloc_now(res, end - NOW, bb)
        if alloc is None:
            continue
        job = Job(f"r{k}", 0.0, res, end - 10.0, bb)
        prof.occupy(NOW, end, alloc)
        state.running[job.id] = RunningJob(job, 10.0, alloc)
    n = draw(st.integers(1, max_queue))
    for i in range(n):
        res = draw(st.integers(1, cluster.n_compute))
        wall = float(draw(st.integers(1, 30)))
        bb = 0
        if cluster.n_bb and draw(st.booleans()):
            bb = draw(st.integers(1, 2 * cluster.max_bb_capacity // UNIT)) * UNIT // 2
        if cluster.never_fits(res, bb):
            bb = 0
        state.submit(Job(f"q{i}", float(draw(st.integers(0, int(NOW)))), res, wall, bb))
    return state


def reference_plan_brute(state: SchedulerState, jobs, perm, reserved=()):
    """The same plan on :class:`ReferenceProfile` (pure Python, every query rescans)."""
    prof = ReferenceProfile.from_running(state.cluster, state.now,
                                         ((r.expected_end, r.alloc) for r in state.running.values()))
    for s, job, alloc in reserved:
        prof.occupy(s, s + job.walltime, alloc)
    out = []
    for i in perm:
        j = jobs[i]
        found = prof.earliest(j.res, j.walltime, j.bb)
        if found is None:
            out.append((math.inf, None))
            continue
        s, a = found
        prof.occupy(s, s + j.walltime, a)
        out.append((s, a))
    return out


def plan_score(objective: str, jobs, perm, plan) -> float:
    score = 0.0
    for i, (s, _) in zip(perm, plan):
        w = s - jobs[i].subtime
        if objective == "start":
            score = max(score, s)
        else:
            score += w if objective == "sum" else w * w if objective == "square" else w * w * w
    return score


def reference_fill(profile: Profile, jobs, perm) -> list[str]:
    """Straightforward greedy filling (Alg. 2) of a permutation on a copy of the profile."""
    d = Decisions(profile.now)
    fill(profile.copy(), [jobs[i] for i in perm], d)
    return d.started_ids


def brute_force_best(score, n):
    """First permutation (lexicographic order) with the lowest ``score(perm)``."""
    best, arg = math.inf, None
    for p in permutations(range(n)):
        s = score(p)
        if s < best:
            best, arg = s, list(p)
    return arg, best
