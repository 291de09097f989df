"""§5's search strategies (Kuchumov & Korkhov 2021): the bounds and interpolation of §5.1
(eq. (24) and the rule for ambiguous S_p/S_q), Δ (25), σ (26), PI (27), EI (28), UCB (29),
hand-computed decisions on a three-task instance for each acquisition function, the open
readings, and feasibility on random instances (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.theory.generate import section8_instances
from coburst.theory.model import Instance, check_feasible, make_instance
from coburst.theory.opt import solve_opt
from coburst.theory.search import (
    A_PLUS,
    AFTERS,
    FLOORS,
    PRIORS,
    Knowledge,
    Readings,
    acquisition,
    run,
    search,
)

from search_support import reference_search
from theory_support import valid_instances


def Phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def phi(x):
    return math.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi)


def z(k):
    from statistics import NormalDist

    return NormalDist().inv_cdf(k)


# Three tasks, b = 20 each; speeds alone 1; pairs {T0,T1} 0.9, {T0,T2} 0.6, {T1,T2} 0.5;
# all three 0.4 (satisfies (1)).
SPEEDS = {1: [1, 0, 0], 2: [0, 1, 0], 4: [0, 0, 1], 3: [.9, .9, 0], 5: [.6, 0, .6], 6: [0, .5, .5],
          7: [.4, .4, .4]}


def three() -> Instance:
    return make_instance("hand", [20, 20, 20], SPEEDS)


# ----------------------------------------------------------------- §5.1 bounds, (24)-(26)

def test_interpolation_24_between_the_speed_alone_and_the_floor():
    kn = Knowledge(3)  # floor "beyond": 0 at size 4; the speeds alone recorded as under "ideal"
    for i in range(3):
        kn.record(1 << i, np.eye(3)[i])
    # pair: S_p = {T_i} (1 at size 1), S_q virtual (0 at size 4): 0 + (1-0)/(1-4)*(2-4) = 2/3
    mean, delta, lo, hi = kn.estimate(3, 0)
    assert mean == pytest.approx(2 / 3) and delta == pytest.approx(1 / 3) and (lo, hi) == (0.0, 1.0)
    mean, delta, _, _ = kn.estimate(7, 2)
    assert mean == pytest.approx(1 / 3) and delta == pytest.approx(1 / 3)
    # a measured combination is its own S_p and S_q: exact, Δ = 0
    kn.record(7, [.4, .4, .4])
    assert kn.estimate(7, 1) == (0.4, 0.0, 0.4, 0.4)
    # the pairs now interpolate between 1 (size 1) and 0.4 (size 3): 0.7, Δ = 0.3
    mean, delta, lo, hi = kn.estimate(5, 2)
    assert mean == pytest.approx(0.7) and delta == pytest.approx(0.3) and (lo, hi) == (0.4, 1.0)


def test_ambiguity_rule_of_figure_3_narrowest_interval():
    """T1 in {T1,T2} from {T1} and either {T1,T2,T3} or {T1,T2,T4}: the super-combination
    giving the smaller interval (the larger lower bound) is used (paper's Figure 3)."""
    kn = Knowledge(4)
    for i in range(4):
        kn.record(1 << i, np.eye(4)[i])
    kn.record(0b0111, [0.7, 0.7, 0.7, 0])
    kn.record(0b1011, [0.8, 0.8, 0, 0.8])
    assert kn.anchors(0b0011, 0) == (1, 1.0, 3, 0.8)
    mean, delta, lo, hi = kn.estimate(0b0011, 0)
    assert (lo, hi) == (0.8, 1.0) and mean == pytest.approx(0.9) and delta == pytest.approx(0.1)
    # the order of the measurements does not matter
    kn2 = Knowledge(4)
    kn2.record(0b1011, [0.8, 0.8, 0, 0.8])
    kn2.record(0b0111, [0.7, 0.7, 0.7, 0])
    assert kn2.anchors(0b0011, 0)[2:] == (3, 0.8)


def test_largest_sub_and_smallest_super_combination_first():
    """The rule ranks by size first: the largest measured S_p even when a smaller one is a
    tighter upper bound; among equal sizes the smaller a_{i,p}."""
    kn = Knowledge(4)
    kn.record(0b1001, [0.4, 0, 0, 0.4])        # size 2, a_0 = 0.4
    kn.record(0b0111, [0.7, 0.7, 0.7, 0])      # size 3, a_0 = 0.7 (not nested with the other)
    assert kn.anchors(0b1111, 0)[:2] == (3, 0.7)
    kn.record(0b0011, [0.9, 0.9, 0, 0])
    kn.record(0b0101, [0.75, 0, 0.75, 0])
    # for {T0,T1,T2}: itself measured
    assert kn.estimate(0b0111, 0)[:2] == (0.7, 0.0)
    # for {T0,T1,T2,T3}: S_p of size 3 still {T0,T1,T2}; S_q none (floor "beyond": 0 at size 5)
    mean, delta, lo, hi = kn.estimate(0b1111, 0)
    assert (lo, hi) == (0.0, 0.7) and mean == pytest.approx(0.7 / (3 - 5) * (4 - 5))
    # for {T0,T1} (measured 0.9): sub-combinations of equal size compete by the smaller a
    kn3 = Knowledge(3)
    kn3.record(0b011, [0.9, 0.9, 0])
    kn3.record(0b101, [0.6, 0, 0.6])
    assert kn3.anchors(0b111, 0)[:2] == (2, 0.6)
    # and super-combinations of equal size by the larger a
    assert kn3.anchors(0b001, 0)[2:] == (2, 0.9)
    kn3.record(0b001, [1.0, 0, 0])
    assert kn3.anchors(0b001, 0) == (1, 1.0, 1, 1.0)  # measured: its own anchors


@pytest.mark.parametrize("floor, mean, delta", [
    ("beyond", 1 - 1 / 4, 1 / 4),   # 0 at size n + 1 = 5: 1 + (0-1)/(5-1)... for size 2: 3/4
    ("active", 1 - 1 / 4, 1 / 4),   # all four tasks active: the same anchor
    ("mid", 0.5, 0.5),              # the centre of [0, 1]
])
def test_floor_readings(floor, mean, delta):
    kn = Knowledge(4, floor=floor)
    for i in range(4):
        kn.record(1 << i, np.eye(4)[i])
    m, d, lo, hi = kn.estimate(0b0011, 1)
    assert m == pytest.approx(mean) and d == pytest.approx(delta) and (lo, hi) == (0.0, 1.0)


def test_active_floor_follows_the_tasks_left():
    """With "active" the floor moves to one task beyond the tasks left: after completions the
    unmeasured combinations look slower than with "beyond", and the runs differ."""
    kn = Knowledge(4, floor="active")
    for i in range(4):
        kn.record(1 << i, np.eye(4)[i])
    kn.n_active = 2  # (search() tells it through its kernel; here by hand)
    assert kn.estimate(0b0011, 0)[0] == pytest.approx(0.5)  # 1 at size 1, 0 at size 3
    changed = 0
    for inst in section8_instances(5, (0.65, 0.95), 4, seed=1):
        a = run(inst, "pi", readings=Readings(floor="active"))
        check_feasible(inst, a)
        changed += a.segments != run(inst, "pi").segments
    assert changed


def test_prior_none_measures_a_task_alone_before_knowing_it():
    kn = Knowledge(2)
    m, d, lo, hi = kn.estimate(1, 0)   # virtual S_p: 1 at size 0; floor 0 at size 3
    assert (lo, hi) == (0.0, 1.0) and m == pytest.approx(2 / 3) and d == pytest.approx(1 / 3)
    kn.record(1, [1.0, 0])
    assert kn.estimate(1, 0)[:2] == (1.0, 0.0)


# ----------------------------------------------------------------- (27)-(29)

def test_acquisition_formulas():
    assert acquisition("ucb", 1.5, 0.25, 9.0) == 1.75
    assert acquisition("pi", 1.0, 0.5, 1.5) == pytest.approx(Phi(-1.0))
    assert acquisition("pi", 1.5, 0.0, 1.5) == 1.0 and acquisition("pi", 1.4, 0.0, 1.5) == 0.0
    assert acquisition("ei", 1.0, 0.5, 1.5) == pytest.approx(-0.5 * Phi(-1.0) + 0.5 * phi(-1.0))
    assert acquisition("ei", 1.2, 0.0, 1.5) == pytest.approx(-0.3)
    with pytest.raises(InputError, match="'poi' is not one of pi, ei, ucb"):
        acquisition("poi", 1, 1, 1)


# ----------------------------------------------------------------- hand-computed runs

def test_pi_by_hand():
    """k = 0.9.  Start: speeds alone known.  Pairs: ã = 2/3 + 2/3 = 4/3, σ = √2·(1/3)/z;
    all three: ã = 1, σ = √3·(1/3)/z.  a⁺ = max ã = 4/3: the pairs' PI = Φ(0) = 1/2, the
    triple's Φ((1 - 4/3)/σ) < 1/2, tasks alone (known, 1 < 4/3) 0: {T0,T1} (first pair) is
    measured for 10 (0.9 each: 9 done).  Then {T0,T1} is known at 1.8 = max ã: PI = 1, it runs
    until T0 and T1 complete together (11/0.9); T2 alone runs 20."""
    inst = three()
    r = search(inst, "pi", k=0.9)
    check_feasible(inst, r.schedule)
    assert [(s.mask, s.kind) for s in r.steps] == [(3, "measure"), (3, "run"), (4, "run")]
    s0, s1, s2 = r.steps
    assert s0.a_plus == pytest.approx(4 / 3) and s0.value == pytest.approx(0.5)
    assert s0.sigma == pytest.approx(math.sqrt(2) / 3 / z(0.9))
    assert s1.a_plus == pytest.approx(1.8) and s1.value == 1.0 and s1.done == 0b011
    assert s1.end == pytest.approx(10 + 11 / 0.9)
    assert r.schedule.makespan == pytest.approx(10 + 11 / 0.9 + 20, rel=1e-12)
    assert [(g.mask, g.start) for g in r.schedule.segments] == [(3, 0.0), (4, pytest.approx(10 + 11 / 0.9))]


def test_ucb_by_hand_small_k_explores():
    """k = 0.6 (z = Φ⁻¹(0.6) ≈ 0.253): UCB = ã + σ.  Triple 1 + √3/3/z beats a pair
    4/3 + √2/3/z: the triple is measured first (0.4 each).  The pairs then interpolate
    between 1 (size 1) and 0.4 (size 3): ã_i = 0.7, Δ = 0.3, UCB = 1.4 + √2·0.3/z, above
    {T0,T1,T2}'s exact 1.2: the three pairs are measured in mask order.  Then all is known:
    {T0,T1} (1.8) runs until T0 completes (1/0.9), T1 alone (1, ties of speed 1 go to the
    smaller mask), T2 alone (5)."""
    inst = three()
    zz = z(0.6)
    r = search(inst, "ucb", k=0.6)
    check_feasible(inst, r.schedule)
    assert [(s.mask, s.kind) for s in r.steps] == [(7, "measure"), (3, "measure"), (5, "measure"),
                                                   (6, "measure"), (3, "run"), (2, "run"), (4, "run")]
    assert r.steps[0].value == pytest.approx(1 + math.sqrt(3) / 3 / zz)
    assert r.steps[1].value == pytest.approx(1.4 + math.sqrt(2) * 0.3 / zz)
    assert r.steps[4].done == 0b001 and r.steps[4].end == pytest.approx(40 + 1 / 0.9)
    assert r.schedule.makespan == pytest.approx(40 + 1 / 0.9 + 1 + 5, rel=1e-12)
    # k = 0.9: σ is smaller, UCB behaves like PI here
    assert run(inst, "ucb", k=0.9).makespan == pytest.approx(10 + 11 / 0.9 + 20, rel=1e-12)


def test_ei_by_hand():
    """k = 0.9.  Step 1 as PI ({T0,T1}, EI = σφ(0)).  Step 2: a⁺ = 1.8 ({T0,T1} known,
    EI = 0); the triple (ã = 0.45 + 0.45 + 1/3, Δ = (0.45, 0.45, 1/3)) has EI > 0 and beats the
    pairs {T0,T2}, {T1,T2} (ã = 4/3): measured.  Steps 3-4: the two pairs (ã = 1.4, EI > 0).
    Then the known {T0,T1} (EI = 0 > the others' negative EI) until T0 completes, T1, T2."""
    inst = three()
    zz = z(0.9)
    r = search(inst, "ei", k=0.9)
    check_feasible(inst, r.schedule)
    assert [s.mask for s in r.steps] == [3, 7, 5, 6, 3, 2, 4]
    s0, s1, s2 = r.steps[:3]
    assert s0.value == pytest.approx(math.sqrt(2) / 3 / zz * phi(0))
    m, sg = 0.9 + 1 / 3, math.sqrt(2 * 0.45 ** 2 + 1 / 9) / zz
    assert (s1.mean, s1.sigma, s1.a_plus) == (pytest.approx(m), pytest.approx(sg), pytest.approx(1.8))
    d = m - 1.8
    assert s1.value == pytest.approx(d * Phi(d / sg) + sg * phi(d / sg))
    sg2 = math.sqrt(2) * 0.3 / zz
    assert s2.value == pytest.approx(-0.4 * Phi(-0.4 / sg2) + sg2 * phi(-0.4 / sg2))
    assert r.steps[4].value == 0.0
    assert r.schedule.makespan == pytest.approx(40 + 1 / 0.9 + 1 + 5, rel=1e-12)


def test_a_plus_best_makes_pi_run_the_best_known_combination():
    """a⁺ = the best measured speed: every task alone is known at 1 = a⁺, PI = 1: PI never
    measures and runs the tasks one after the other (20 + 20 + 20)."""
    r = search(three(), "pi", readings=Readings(a_plus="best"))
    assert [(s.mask, s.kind) for s in r.steps] == [(1, "run"), (2, "run"), (4, "run")]
    assert r.schedule.makespan == 60


def test_a_plus_last_by_hand():
    """a⁺ = the speed of the combination run just before.  EI, k = 0.9: first a⁺ = the best
    known (a task alone, 1): the pair {T0,T1} (ã 4/3) is measured at 1.8; a⁺ = 1.8: the
    triple as in test_ei_by_hand; a⁺ = the triple's 1.2: the known {T0,T1} has EI 0.6,
    above every unknown pair's: it runs until T0 and T1 complete; then T2 (a⁺ back to the
    best known, {T0,T1}'s tasks having all completed)."""
    inst = three()
    r = search(inst, "ei", k=0.9, readings=Readings(a_plus="last"))
    check_feasible(inst, r.schedule)
    assert [(s.mask, s.kind) for s in r.steps] == [(3, "measure"), (7, "measure"), (3, "run"), (4, "run")]
    assert [s.a_plus for s in r.steps] == pytest.approx([1.0, 1.8, 1.2, 1.0])
    assert r.steps[2].value == pytest.approx(0.6)
    # remaining after 20 units: T0, T1: 20 - 9 - 4 = 7 each, T2: 16
    assert r.schedule.makespan == pytest.approx(20 + 7 / 0.9 + 16, rel=1e-12)


def test_prior_none_by_hand():
    """Nothing known at the start: anchors 1 at size 0 and 0 at size 4.  Tasks alone:
    ã = 0.75; pairs 0.5 + 0.5 = 1 = a⁺ (PI 1/2, the first pair); the triple 0.75.  {T0,T1}
    measured at 1.8 is then the best known (PI = 1) and runs until T0, T1 complete; T2 alone
    is still unmeasured (ã = 0.75, Δ = 0.25): measured for 10, then run to its end."""
    inst = three()
    r = search(inst, "pi", readings=Readings(prior="none"))
    check_feasible(inst, r.schedule)
    assert [(s.mask, s.kind) for s in r.steps] == [(3, "measure"), (3, "run"), (4, "measure"), (4, "run")]
    assert r.steps[0].a_plus == pytest.approx(1.0) and r.steps[0].mean == pytest.approx(1.0)
    assert r.steps[2].mean == pytest.approx(0.75) and r.steps[2].sigma == pytest.approx(0.25 / z(0.9))
    assert r.schedule.makespan == pytest.approx(10 + 11 / 0.9 + 10 + 10, rel=1e-12)
    assert [g.mask for g in r.schedule.segments] == [3, 4]


def test_commit_by_hand():
    """after = "commit": a measured combination at least as fast as the a⁺ it was chosen
    against keeps running until a task completes.  PI: {T0,T1} measured at 1.8 >= 4/3: runs
    on (one merged segment).  UCB, k = 0.6: the triple (1.2 < a⁺ = 4/3) does not commit; the
    pair {T0,T1} (1.8 >= a⁺ = 1.4) does."""
    inst = three()
    p = search(inst, "pi", readings=Readings(after="commit"))
    assert [(s.mask, s.kind) for s in p.steps] == [(3, "measure"), (4, "run")]
    assert p.steps[0].done == 0b011 and p.schedule.makespan == pytest.approx(10 + 11 / 0.9 + 20)
    assert len(p.schedule.segments) == 2
    u = search(inst, "ucb", k=0.6, readings=Readings(after="commit"))
    check_feasible(inst, u.schedule)
    assert [(s.mask, s.kind, s.done) for s in u.steps] == [(7, "measure", 0), (3, "measure", 3), (4, "run", 4)]
    assert [s.a_plus for s in u.steps[:2]] == pytest.approx([4 / 3, 1.4])
    assert u.schedule.makespan == pytest.approx(10 + 10 + 7 / 0.9 + 16, rel=1e-12)


# ----------------------------------------------------------------- properties

def instances():
    # speeds 0 or >= 1e-3: a speed of 1e-16 stretches a measuring run to 1e15 time units,
    # where absolute float times cannot carry the later segments' lengths
    return valid_instances(min_speed=1e-3, works=(1.0, 10.0))


readings_st = st.builds(Readings, prior=st.sampled_from(PRIORS), floor=st.sampled_from(FLOORS),
                        a_plus=st.sampled_from(A_PLUS), after=st.sampled_from(AFTERS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(["pi", "ei", "ucb"]), st.sampled_from([0.51, 0.6, 0.9, 0.99, 0.999]),
       st.sampled_from([0.5, 10.0, 1e4]), readings_st)
def test_every_schedule_is_feasible(inst, strategy, k, interval, readings):
    r = search(inst, strategy, k=k, interval=interval, readings=readings)
    check_feasible(inst, r.schedule)  # each task completes exactly its work
    measured = [s.mask for s in r.steps if s.kind == "measure"]
    assert len(measured) == len(set(measured))  # a combination is measured once
    assert len(r.steps) <= inst.m + inst.n
    active = inst.full
    for s in r.steps:
        assert s.mask & ~active == 0  # only tasks still running
        if s.kind == "measure" and not (readings.after == "commit" and s.done):
            assert s.end - s.start <= interval * (1 + 1e-12)
        active &= ~s.done
    assert active == 0
    assert r.schedule.makespan >= solve_opt(inst).makespan * (1 - 1e-9)
    # deterministic
    assert run(inst, strategy, k=k, interval=interval, readings=readings).segments == r.schedule.segments


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(["pi", "ei", "ucb"]), st.sampled_from([0.6, 0.9, 0.99]), readings_st)
def test_kernel_decides_as_the_straightforward_reference(inst, strategy, k, readings):
    """The compiled search (incremental anchors) against tests/search_support.py (anchors
    re-derived from every measurement at every step, plain Python)."""
    r = search(inst, strategy, k=k, interval=10.0, readings=readings)
    steps, makespan = reference_search(inst, strategy, k, 10.0, readings)
    assert [(s.mask, s.kind, s.done) for s in r.steps] == steps
    assert r.schedule.makespan == pytest.approx(makespan, rel=1e-12)


def test_kernel_decides_as_the_reference_on_section8_instances():
    for inst in section8_instances(6, (0.05, 0.95), 3, seed=11):
        for strategy in ("pi", "ei", "ucb"):
            for readings in (Readings(), Readings(prior="none", floor="active", a_plus="last", after="commit")):
                steps, makespan = reference_search(inst, strategy, 0.8, 10.0, readings)
                r = search(inst, strategy, k=0.8, readings=readings)
                assert [(s.mask, s.kind, s.done) for s in r.steps] == steps


def test_section8_instances_feasible_and_pi_independent_of_k():
    """On §8 instances (n = 6): feasible, never better than OPT; with a⁺ = max ã, PI's order
    (ã_j - a⁺)/σ_j scales by Φ⁻¹(k) for every combination at once, so PI decides the same for
    every k."""
    for inst in section8_instances(6, (0.35, 0.65), 6, seed=3):
        opt = solve_opt(inst).makespan
        pis = []
        for strategy in ("pi", "ei", "ucb"):
            for k in (0.6, 0.99):
                sched = run(inst, strategy, k=k)
                check_feasible(inst, sched)
                assert sched.makespan >= opt * (1 - 1e-9)
                if strategy == "pi":
                    pis.append(sched.segments)
        assert pis[0] == pis[1]


def test_zero_speed_combinations_are_never_run_for_ever():
    # T1 stalls completely beside T0; the pair is measured once (10 units, T0 progresses)
    inst = make_instance("z", [5, 5], {1: [1, 0], 2: [0, 1], 3: [0.0, 0.0]})
    for strategy in ("pi", "ei", "ucb"):
        for readings in (Readings(), Readings(prior="none")):
            sched = run(inst, strategy, readings=readings)
            check_feasible(inst, sched)


# ----------------------------------------------------------------- errors

@pytest.mark.parametrize("kw, message", [
    ({"strategy": "fcs"}, "strategy: 'fcs' is not one of pi, ei, ucb"),
    ({"k": 0.5}, "k: 0.5: the k-quantile parameter must satisfy 0.5 < k < 1"),
    ({"k": 1.0}, "0.5 < k < 1"),
    ({"interval": 0.0}, "interval: 0.0: the measuring interval must be a finite number > 0"),
    ({"interval": math.inf}, "finite number > 0"),
])
def test_bad_arguments(kw, message):
    args = {"strategy": "pi", **kw}
    strategy = args.pop("strategy")
    with pytest.raises(InputError, match=message):
        run(three(), strategy, **args)


def test_bad_readings_and_instance():
    with pytest.raises(InputError, match="readings.floor: 'zero' is not one of beyond, active, mid"):
        Readings(floor="zero")
    bad = make_instance("bad", [1, 1], {1: [1, 0], 2: [0, 1], 3: [0.5, 1.0 + 1e-3]})
    with pytest.raises(InputError, match="instance 'bad'"):
        run(bad, "pi")


# ----------------------------------------------------------------- Figures 6-7 script

def test_kuchumov_figures_script_end_to_end(tmp_path, monkeypatch):
    """scripts/kuchumov_figures.py on a tiny setting (2 ranges, 2 instances of n = 4): the
    table and CSV hold the ratios recomputed here, the figures are PNGs, and the output does
    not depend on the number of processes."""
    import csv
    import importlib.util
    import sys
    from pathlib import Path

    from coburst.theory.fcs import fcs

    path = Path(__file__).resolve().parents[1] / "scripts" / "kuchumov_figures.py"
    spec = importlib.util.spec_from_file_location("kuchumov_figures", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "kuchumov_figures", mod)  # workers find solve_range by name
    spec.loader.exec_module(mod)
    args = ["--count", "2", "--n", "4", "--ranges", "0.45:0.55,0.85:0.95", "--ks", "0.6,0.99",
            "--reading-ks", "0.6,0.99", "--seed", "5"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert mod.main(args + ["--jobs", "1", "-o", str(a)]) == 0
    assert mod.main(args + ["--jobs", "2", "-o", str(b)]) == 0
    for name in ("kuchumov_table.md", "kuchumov_ratios.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    for name in ("kuchumov_fig6.png", "kuchumov_fig7.png", "kuchumov_readings.png"):
        data = (a / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    table = (a / "kuchumov_table.md").read_text()
    for heading in ("## Figure 6", "## Figure 7", "## The paper's reading and the measured one",
                    "## How the readings §5 leaves open move the results", "| [0.45,0.55] |", "| [0.85,0.95] |"):
        assert heading in table
    for rd in mod.variants():
        assert f"| {rd.differences()} |" in table
    rows = list(csv.DictReader((a / "kuchumov_ratios.csv").open()))
    assert len(rows) == 2 * (1 + 3 * 2) + 2 * 6 * 3 * 2  # default (FCS + 3 x 2 k) and 6 alternatives
    got = {(r["readings"], r["alpha_lo"], r["strategy"], r["k"]): float(r["mean_ratio"]) for r in rows}
    # recompute two entries independently
    for index, (lo, hi) in enumerate([(0.45, 0.55), (0.85, 0.95)]):
        insts = section8_instances(4, (lo, hi), 2, 5 + index)
        opts = [solve_opt(i).makespan for i in insts]
        f = np.mean([fcs(i).makespan / o for i, o in zip(insts, opts)])
        assert got[("default", f"{lo:.2f}", "fcs", "")] == pytest.approx(f, abs=1e-6)
        e = np.mean([run(i, "ei", k=0.99, readings=Readings(floor="mid")).makespan / o for i, o in zip(insts, opts)])
        assert got[("floor=mid", f"{lo:.2f}", "ei", "0.99")] == pytest.approx(e, abs=1e-6)
    assert f"{got[('default', '0.45', 'pi', '0.6')]:.3f}" in table
