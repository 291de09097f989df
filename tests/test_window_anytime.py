"""window-D always decides: the burst-buffer check and ``launch`` share one
answer, the search is anytime within a deterministic step budget, and a slow in-process
decision is reported as such (not as a dead scheduler)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst import policies
from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.state import Job, SchedulerState
from coburst.errors import InputError
from coburst.policies.window import (BBFit, StepPool, _Budget, bb_assign, bb_key, first_fit_decreasing, launch,
                                     search_window)
from opt_support import NOW, states
from simharness import CLUSTER4, workload

GB = 1_000_000_000

# Found by a random search over 30-BB-node states (five or six 4..16-node jobs filling > 85 %
# of the free BB bytes): first-fit decreasing places the set (the check accepts it), the
# thesis' placement in window order does not, and the exact search from scratch -- what the
# former launch() did, then Z3 -- needs more than 200,000 steps.  The former launch took
# 2.8 s on it (and on a similar state with 12-node jobs, RuntimeError "the combination does
# not fit the burst buffers" after Z3 gave up).
HARD_REQS = [(12, 5546476307), (12, 22670510100), (4, 13723244300), (16, 5068854729), (16, 18833453528)]
HARD_AVAIL = [34325871688, 7237780991, 40000000000, 40000000000, 29128691459, 2954229822, 7167018548,
              7955475523, 7938215842, 40000000000, 37150651976, 40000000000, 40000000000, 40000000000,
              3808990897, 39611534602, 40000000000, 40000000000, 27697526789, 40000000000, 7854774672,
              40000000000, 24127201378, 40000000000, 9172608041, 2162769298, 40000000000, 40000000000,
              39608604829, 40000000000]

# Another such state, where the former launch() (exact search from scratch up to 10^6 steps,
# then Z3 within its resource limit) took 338 s before placing the set.
SLOW_REQS = [(8, 18417841009), (8, 4056914049), (12, 19348045598), (8, 5864295528), (12, 11120495521),
             (12, 11931906006)]
SLOW_AVAIL = [8716848706, 40000000000, 26144221965, 40000000000, 40000000000, 31293184292, 40000000000,
              40000000000, 37048218683, 33295031322, 10593547340, 313320546, 40000000000, 16630880629,
              40000000000, 40000000000, 40000000000, 28758985631, 2093003964, 16066570304, 8421007781,
              9034525166, 1399475752, 34691626868, 10061675031, 38479897843, 38041591121, 17014810732,
              40000000000, 28826919282]


def _bb_counts_of(alloc, n_bb):
    return np.bincount(alloc.bb_nodes, minlength=n_bb).tolist() if len(alloc.bb_nodes) else [0] * n_bb


@pytest.mark.parametrize("reqs, avail", [(HARD_REQS, HARD_AVAIL), (SLOW_REQS, SLOW_AVAIL)], ids=["hard", "slow"])
def test_launch_uses_the_checked_placement_on_the_hard_state(reqs, avail):
    """Regression: the check accepted a set that launch(), re-solving from
    scratch, could not place (or placed after minutes of Z3).  Now launch takes the check's
    placement: no search, the launched BB counts are the checked ones, every BB node within
    its capacity."""
    with pytest.raises(_Budget):  # what re-solving from scratch would face
        bb_assign(reqs, avail, budget=50_000)
    cluster = Cluster.build(sum(r for r, _ in reqs), avail)
    state = SchedulerState(cluster, 0.0)
    jobs = [Job(f"j{i}", 0.0, r, 100.0, b) for i, (r, b) in enumerate(reqs)]
    for job in jobs:
        state.submit(job)
    fit = BBFit(avail, StepPool(5_000))
    key = bb_key(jobs)
    x = fit.placement(key)
    assert x is not None and fit.solver_calls == 0  # accepted by first-fit decreasing
    d = Decisions(0.0)
    assert launch(state.profile(), jobs, d, x) == "checked"
    _assert_launched_equals_checked(d, key, x, cluster.n_bb)
    state.apply(d)  # validates every node and BB capacity


def _assert_launched_equals_checked(decisions, key, x, n_bb, ids=None):
    launched = sorted((s.job.res, s.job.bb, tuple(_bb_counts_of(s.alloc, n_bb))) for s in decisions.starts
                      if s.job.bb and (ids is None or s.job.id in ids))
    checked = sorted((c, b, tuple(row)) for (c, b), row in zip(key, x))
    assert launched == checked


def test_launch_without_a_placement_checks_within_a_bound():
    cluster = Cluster.build(4, [10])
    state = SchedulerState(cluster, 0.0)
    with pytest.raises(ValueError, match="do not fit"):
        launch(state.profile(), [Job("a", 0.0, 2, 10.0, 6)], Decisions(0.0))


def test_budget_parameter_is_validated():
    assert policies.get("window-1").budget == 300_000
    for bad in (0, 999, -5, 1.5, True, "1e6", 10**10):
        with pytest.raises(InputError, match="budget"):
            policies.get("window-1", budget=bad)


def test_the_pool_bounds_the_search_and_the_answer_still_fits():
    """The search stops once its steps are spent and returns a fitting combination (the
    greedy one at worst); an unbounded search may find a better one, never a misfit."""
    rng = np.random.default_rng(3)
    avail = [int(a) for a in rng.integers(5 * GB, 40 * GB, 30)]
    jobs = [Job(f"j{i}", float(i), int(r), 100.0, int(b)) for i, (r, b) in
            enumerate(zip(rng.choice([4, 8, 12, 16], 16), rng.integers(GB, 20 * GB, 16)))]
    pool = StepPool(1_000)
    fit = BBFit(avail, pool)
    best, _ = search_window(jobs, [], 240, avail, 100.0, True, fit)
    assert pool.exhausted and best
    x = fit.cache[bb_key([jobs[i] for i in best])]
    assert x is not None and sum(jobs[i].res for i in best) <= 240
    for j, a in enumerate(avail):
        assert sum(row[j] * b for row, (_, b) in zip(x, bb_key([jobs[i] for i in best]))) <= a
    # the same inputs give the same answer (a step budget, not a clock)
    assert search_window(jobs, [], 240, avail, 100.0, True, BBFit(avail, StepPool(1_000)))[0] == best


@st.composite
def platforms(draw):
    """Random platforms up to a few hundred nodes, BB capacities tight or loose."""
    n_compute = draw(st.integers(4, 300))
    n_bb = draw(st.integers(1, 30))
    tight = draw(st.booleans())
    hi = 4 * GB if tight else 40 * GB
    caps = draw(st.lists(st.integers(GB // 2, hi), min_size=n_bb, max_size=n_bb))
    routers = max(1, n_compute // 8)
    topo_c = [(i // (4 * 8), i // 8 % 4, i // 8) for i in range(n_compute)]
    topo_b = [(j // 4, j % 4, j * routers // n_bb) for j in range(n_bb)]
    cluster = Cluster.build(n_compute, caps, compute_topology=topo_c, bb_topology=topo_b)
    seed = draw(st.integers(0, 2**32 - 1))
    return cluster, tight, seed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(platforms(), st.sampled_from([2_000, 20_000, 300_000]), st.integers(4, 12))
def test_every_decision_places_within_capacity_and_launches_the_checked_placement(plat, budget, window):
    """Random busy states and queues: every started job's BB request is within every BB
    node's free capacity (the state validates each start), a decision never raises, and
    when launch did not use the thesis' placement the launched BB counts are the ones the
    check found for that very set."""
    cluster, tight, seed = plat
    rng = np.random.default_rng(seed)
    pol = policies.get("window-0", budget=budget, window=window)
    state = SchedulerState(cluster, 0.0)
    max_bb = int(cluster.bb_capacity.max())
    k = checked = 0
    for now in (0.0, 10.0, 20.0):
        state.advance(now)
        for _ in range(int(rng.integers(1, 3 * window))):
            res = int(min(cluster.n_compute, rng.integers(1, max(2, cluster.n_compute // 4))))
            per = -(-res // cluster.n_bb)
            bb = int(rng.integers(0, max(2, max_bb // per))) if rng.random() < 0.8 else 0
            if cluster.never_fits(res, bb) is None:
                state.submit(Job(f"j{k}", now, res, float(rng.integers(50, 500)), bb))
            k += 1
        d = pol.make_decisions(state)
        if pol.last_placement == "checked":
            key, x = pol.last_checked
            _assert_launched_equals_checked(d, key, x, cluster.n_bb, set(pol.last_chosen))
            checked += 1
        assert pol.last_steps <= budget + window + 1
        state.apply(d)  # raises on a busy node or a BB node over capacity


def test_hard_state_decision_is_bounded_by_the_budget():
    """The hard state as a window decision: with a small budget the decision ends within it
    (steps counted, not seconds) and starts a fitting set."""
    cluster = Cluster.build(sum(r for r, _ in HARD_REQS) + 8, HARD_AVAIL)
    state = SchedulerState(cluster, 0.0)
    for i, (r, b) in enumerate(HARD_REQS + [(8, 30 * GB)]):
        state.submit(Job(f"j{i}", 0.0, r, 100.0, b))
    pol = policies.get("window-0", budget=20_000)
    d = pol.make_decisions(state)
    assert d.starts and pol.last_steps <= 20_000 + 8
    state.apply(d)


def test_first_fit_decreasing_matrix_is_a_solution():
    x = first_fit_decreasing(HARD_REQS, HARD_AVAIL)
    assert [sum(r) for r in x] == [c for c, _ in HARD_REQS]
    for j, a in enumerate(HARD_AVAIL):
        assert sum(row[j] * b for row, (_, b) in zip(x, HARD_REQS)) <= a


# ------------------------------------------------------------- in-process time-out messages
SLOW_ENTRY = """
import time
from coburst.adapter import CoburstScheduler
from coburst.policies.window import Window


class SlowWindow(Window):
    def make_decisions(self, state):
        if state.queue:
            time.sleep(120)  # a policy computing past --timeout
        return super().make_decisions(state)


class SlowDecision(CoburstScheduler):
    default_policy = "window-1"

    def __init__(self, options=None):
        super().__init__(options)
        self.policy = SlowWindow(**self.policy.get_params())
"""


def _run(tmp_path, entry):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "walltime": 10, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    return subprocess.run([sys.executable, "-m", "coburst", "run", str(entry), "-p", str(CLUSTER4), "-w", str(w),
                           "-e", str(tmp_path / "o"), "--timeout", "2"], capture_output=True, text=True, timeout=90)


def test_a_slow_in_process_decision_is_reported_as_such(tmp_path):
    entry = tmp_path / "slowDecision.py"
    entry.write_text(SLOW_ENTRY)
    proc = _run(tmp_path, entry)
    assert proc.returncode == 4, proc.stderr
    err = proc.stderr
    assert "slow decision" in err and "'window-1'" in err and "queue 1 jobs" in err and "4 compute nodes" in err
    assert "budget=300000" in err and "simulated time 1.000000" in err
    assert "hung" not in err and "did not answer" not in err
    assert not list(tmp_path.glob("o_*"))


def test_a_hung_scheduler_is_not_called_a_slow_decision(tmp_path):
    entry = tmp_path / "hanging.py"
    entry.write_text("import time\nfrom batsim.batsim import BatsimScheduler\n\n"
                     "class Hanging(BatsimScheduler):\n"
                     "    def onJobSubmission(self, job):\n"
                     "        while True:\n"
                     "            time.sleep(0.01)\n")
    proc = _run(tmp_path, entry)
    assert proc.returncode == 4, proc.stderr
    assert "did not answer within 2 s" in proc.stderr and "hung in its own code" in proc.stderr
    assert "slow decision" not in proc.stderr


@settings(max_examples=40, deadline=None)
@given(states(max_queue=7), st.integers(0, 3), st.data())
def test_within_the_default_budget_the_search_is_alg7_as_written(state, depth, data):
    """With the default budget (small states never reach it) the anytime search returns the
    combination of Alg. 7 as written (Z3 on every combination), and its cached placement is
    a solution of the integer program."""
    from coburst.policies.maxutil import compute_first
    from coburst.policies.window import DEFAULT_BUDGET, search_window_literal
    jobs = state.queue
    mand = [i for i in range(min(depth, len(jobs))) if data.draw(st.booleans())]
    free, avail = state.profile().free_at(NOW)
    cfirst = compute_first(state.cluster, jobs, 1.0)
    pool = StepPool(DEFAULT_BUDGET)
    fit = BBFit(avail.tolist(), pool)
    fast, _ = search_window(jobs, mand, int(free.sum()), avail.tolist(), NOW, cfirst, fit)
    lit, _ = search_window_literal(jobs, mand, int(free.sum()), avail.tolist(), NOW, cfirst)
    assert fast == lit and not pool.exhausted
    if fast:
        key = bb_key([jobs[i] for i in fast])
        x = fit.cache[key]
        assert [sum(r) for r in x] == [c for c, _ in key]
        for j, a in enumerate(avail.tolist()):
            assert sum(row[j] * b for row, (_, b) in zip(x, key)) <= a
