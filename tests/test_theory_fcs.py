"""FCS (Kuchumov & Korkhov 2021, §4.2, Listing 1), Example 1 and Theorem 1 (§4.3)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from coburst.theory.exact import certify_opt
from coburst.theory.fcs import fcs, fcs_exact
from coburst.theory.generate import example1_closed_forms, example1_instance, section8_instances
from coburst.theory.io import load_instances
from coburst.theory.model import check_feasible, check_instance, make_instance
from coburst.theory.opt import solve_opt
from coburst.theory.worst_case import nested_caps_for, nested_limit, nested_stall_instance

FIXTURE = Path(__file__).parent / "data" / "theory" / "fcs_above_2_n8.json"
#: the nine α ranges of width 0.1
ALPHAS = [(round(0.05 + 0.1 * k, 2), round(0.15 + 0.1 * k, 2)) for k in range(9)]


@pytest.mark.parametrize("n", [3, 4, 5, 6, 8])
def test_example1_closed_forms_both_tie_breaks(n):
    inst = example1_instance(n, b1=3)
    check_instance(inst)
    forms = example1_closed_forms(n, b1=3)
    assert fcs_exact(inst, tie="last").makespan == forms["fcs_last"]   # (17), the paper's reading
    assert fcs_exact(inst, tie="first").makespan == forms["fcs_first"]  # ties to the first mask
    assert certify_opt(inst).exact == forms["opt"]                       # (21)
    assert fcs(inst, tie="last").makespan == pytest.approx(float(forms["fcs_last"]), rel=1e-12)
    assert fcs(inst, tie="first").makespan == pytest.approx(float(forms["fcs_first"]), rel=1e-12)
    # the adversarial tie-break finds nothing worse than the paper's choice
    assert fcs(inst, tie="worst").makespan == pytest.approx(float(forms["fcs_last"]), rel=1e-12)
    # (22): ratio 2 - 1/(n-1) in the paper's reading
    assert forms["fcs_last"] / forms["opt"] == 2 - Fraction(1, n - 1)
    first = fcs(inst, tie="last").segments[0]
    assert first.mask == inst.full ^ 1  # {T_2, ..., T_n}: all n-1 complete together
    for tie in ("first", "last", "worst"):
        check_feasible(inst, fcs(inst, tie=tie))


def test_fcs_within_twice_opt_on_section8_instances():
    """Theorem 1's bound does hold on the §8 generator's instances (9 α ranges x 12, n = 8)."""
    ratios = []
    for k, alpha in enumerate(ALPHAS):
        for inst in section8_instances(8, alpha, 12, seed=100 + k):
            sched = fcs(inst)
            check_feasible(inst, sched)
            ratios.append(sched.makespan / solve_opt(inst).makespan)
    assert 1 - 1e-9 <= min(ratios) and max(ratios) <= 2
    assert max(ratios) < 1.5  # far below 2 in practice


def test_fcs_above_twice_opt_fixture_exactly():
    """Theorem 1 is false: the fixture (written by ``coburst theory worst-case --n 8``)
    satisfies (1) and FCS takes more than 2 x OPT, in exact arithmetic on its numbers."""
    (inst,) = load_instances(FIXTURE)
    check_instance(inst)
    sched = fcs_exact(inst)
    cert = certify_opt(inst)
    assert cert.exact is not None
    assert sched.makespan > 2 * cert.exact
    assert float(sched.makespan / cert.exact) == pytest.approx(2.0947, abs=1e-4)
    # FCS's three steps: group 2 (T3..T7), group 1 (T1, T2), then T0 alone; no ties
    assert [s.mask for s in sched.segments] == [0b11111000, 0b110, 0b1]
    assert fcs(inst, tie="worst").makespan == pytest.approx(float(sched.makespan), rel=1e-12)
    check_feasible(inst, fcs(inst))
    opt = solve_opt(inst)
    check_feasible(inst, opt.schedule(), rtol=1e-8)
    assert fcs(inst).makespan / opt.makespan > 2.09


@pytest.mark.parametrize("n", [8, 11, 14])
def test_nested_stall_family_grows_past_two(n):
    caps = nested_caps_for(n)
    inst = nested_stall_instance(caps)
    check_instance(inst)
    sched = fcs_exact(inst)
    cert = certify_opt(inst)
    ratio = sched.makespan / cert.upper  # a proven lower bound on FCS / OPT
    assert ratio > 2
    assert ratio <= nested_limit(caps) + Fraction(1, 100)
    assert float(ratio) > float(nested_limit(caps)) - 0.02


def test_simultaneous_completion_and_stalled_tasks():
    # T0, T1 equal work and speed in {T0, T1}: they complete together, in one step
    inst = make_instance("s", [2, 2, 1], {1: [1, 0, 0], 2: [0, 1, 0], 4: [0, 0, 1], 3: [1, 1, 0], 5: [0.2, 0, 0.2],
                                          6: [0, 0.2, 0.2], 7: [0.1, 0.1, 0]})
    check_instance(inst)
    sched = fcs(inst)
    assert [(s.mask, s.end) for s in sched.segments] == [(3, 2.0), (4, 3.0)]
    assert [(s.mask, s.end) for s in fcs_exact(inst).segments] == [(3, 2), (4, 3)]
    check_feasible(inst, sched)


def test_tie_rules():
    # a stalled task in a tied combination: first keeps {T0}, last runs {T0,T1} with T1 at 0
    inst = make_instance("t", [1, 1], {1: [1, 0], 2: [0, 1], 3: [1, 0]})
    check_instance(inst)
    assert [s.mask for s in fcs(inst, "first").segments] == [1, 2]
    assert [s.mask for s in fcs(inst, "last").segments] == [3, 2]
    assert fcs(inst, "first").makespan == fcs(inst, "last").makespan == 2
    # speeds equal up to rounding are tied in floats (0.1 + 0.2 vs 0.3), not in the exact path
    inst = make_instance("r", [1, 1, 1], {1: [0.3, 0, 0], 2: [0, 0.1, 0], 4: [0, 0, 0.2], 6: [0, 0.1, 0.2]})
    check_instance(inst)
    assert fcs(inst).segments[0].mask == 1
    assert fcs_exact(inst).segments[0].mask == 6


def test_float_and_exact_fcs_agree_on_section8():
    for inst in section8_instances(6, (0.25, 0.35), 10, seed=9):
        a, b = fcs(inst), fcs_exact(inst)
        assert [s.mask for s in a.segments] == [s.mask for s in b.segments]
        assert a.makespan == pytest.approx(float(b.makespan), rel=1e-12)


def test_adversarial_ties_never_beat_by_first_or_last():
    """On tie-rich instances (speeds from {0, 1/2, 1}) ``tie="worst"`` is at least as long as
    the first and last choices, and every tie-break gives a feasible schedule."""
    from coburst.theory.worst_case import monotone_closure
    from coburst.theory.model import Instance

    rng = np.random.default_rng(1)
    strictly = 0
    for k in range(80):
        n = int(rng.integers(3, 6))
        raw = rng.choice([0.0, 0.5, 1.0], size=(1 << n, n), p=[0.2, 0.3, 0.5])
        for i in range(n):
            raw[1 << i, i] = 1.0
        inst = Instance(f"t{k}", rng.integers(1, 6, size=n).astype(float), monotone_closure(raw))
        check_instance(inst)
        runs = {tie: fcs(inst, tie=tie) for tie in ("first", "last", "worst")}
        for sched in runs.values():
            check_feasible(inst, sched)
        top = max(runs["first"].makespan, runs["last"].makespan)
        assert runs["worst"].makespan >= top * (1 - 1e-12)
        strictly += runs["worst"].makespan > top * (1 + 1e-9)
        assert fcs_exact(inst, "first").makespan == pytest.approx(runs["first"].makespan, rel=1e-12)
        assert fcs_exact(inst, "last").makespan == pytest.approx(runs["last"].makespan, rel=1e-12)
    assert strictly > 0  # the adversary finds worse choices than both fixed orders
