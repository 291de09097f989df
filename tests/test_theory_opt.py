"""OPT, LP (3) of Kuchumov & Korkhov 2021, §4.1: against brute force over the bases, the LP
dual, column generation and exact rational certificates; OPT <= FCS on random instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coburst.theory.exact import certify_opt
from coburst.theory.fcs import fcs
from coburst.theory.generate import example1_instance, section8_instance
from coburst.theory.model import Instance, check_feasible, check_instance
from coburst.theory.opt import solve_dual, solve_opt
from coburst.theory.worst_case import monotone_closure
from theory_support import valid_instances


def random_instance(rng: np.random.Generator, n: int, zero_share: float = 0.2, id: str = "r") -> Instance:
    """A random instance satisfying (1): random speeds (some exactly 0, some exactly equal),
    closed under (1) by :func:`monotone_closure`; speeds alone in (0, 1]."""
    raw = rng.uniform(0, 1, size=(1 << n, n))
    raw[rng.uniform(size=raw.shape) < zero_share] = 0.0
    raw[rng.uniform(size=raw.shape) < 0.1] = 0.5
    for i in range(n):
        raw[1 << i, i] = 1.0 if rng.uniform() < 0.7 else rng.uniform(0.05, 1.0)
    b = np.round(rng.uniform(0.1, 10.0, size=n), int(rng.integers(0, 3)))
    b = np.maximum(b, 0.1)
    inst = Instance(id, b, monotone_closure(raw))
    check_instance(inst)
    return inst


def brute_force_opt(inst: Instance) -> float:
    """min sum x over every basic solution: n independent columns, x = A_B^-1 b >= 0."""
    n = inst.n
    cols = inst.speeds[1:]
    best = np.inf
    for basis in itertools.combinations(range(cols.shape[0]), n):
        a_b = cols[list(basis)].T
        if abs(np.linalg.det(a_b)) < 1e-12:
            continue
        x = np.linalg.solve(a_b, inst.b)
        if (x >= -1e-9).all():
            best = min(best, x.sum())
    return best


@pytest.mark.parametrize("seed", range(12))
def test_lp_matches_brute_force_and_dual(seed):
    rng = np.random.default_rng(seed)
    n = 2 + seed % 3  # 2..4 tasks: at most C(15, 4) = 1365 bases
    inst = random_instance(rng, n)
    res = solve_opt(inst, method="full")
    assert res.makespan == pytest.approx(brute_force_opt(inst), rel=1e-8)
    dual_value, y = solve_dual(inst)
    assert dual_value == pytest.approx(res.makespan, rel=1e-8)  # strong duality
    # the duals HiGHS returns with the primal are dual feasible and complementary
    slack = 1.0 - inst.speeds[1:] @ res.duals
    assert slack.min() >= -1e-8
    for mask, x in res.times.items():
        assert abs(1.0 - inst.speeds[mask] @ res.duals) < 1e-7, (mask, x)
    assert float(inst.b @ res.duals) == pytest.approx(res.makespan, rel=1e-8)
    check_feasible(inst, res.schedule())


@pytest.mark.parametrize("n, lo", [(6, 0.05), (8, 0.45), (10, 0.85), (11, 0.25)])
def test_column_generation_matches_full_enumeration(n, lo):
    rng = np.random.default_rng(n)
    for k in range(3):
        inst = section8_instance(n, (lo, lo + 0.1), rng)
        full = solve_opt(inst, method="full")
        cg = solve_opt(inst, method="colgen")
        assert cg.makespan == pytest.approx(full.makespan, rel=1e-9)
        check_feasible(inst, cg.schedule())
        check_feasible(inst, full.schedule())
    inst = random_instance(np.random.default_rng(3), 7)
    assert solve_opt(inst, method="colgen").makespan == pytest.approx(solve_opt(inst, "full").makespan, rel=1e-9)


def test_exact_certificate_brackets_the_float_answer():
    for inst in (random_instance(np.random.default_rng(11), 4), section8_instance(6, (0.45, 0.55),
                                                                                   np.random.default_rng(1))):
        res = solve_opt(inst)
        cert = certify_opt(inst, res)
        assert cert.exact is not None
        assert float(cert.exact) == pytest.approx(res.makespan, rel=1e-12)
    cert = certify_opt(example1_instance(6))
    assert cert.exact == 1  # (21): C_max^OPT = b_1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_instances())
def test_opt_never_above_fcs_hypothesis(inst):
    check_instance(inst)
    res = solve_opt(inst)
    sched = fcs(inst)
    check_feasible(inst, sched)
    check_feasible(inst, res.schedule(), rtol=1e-7)
    # the LP is solved to HiGHS's feasibility tolerance (1e-7, as the check above): a speed
    # of 1e-9 in a combination moves FCS's makespan by less than that (found by hypothesis:
    # OPT 12.0, FCS 11.999999984)
    assert res.makespan <= sched.makespan * (1 + 1e-7)
    # a lower bound of OPT: the total work at the top combination speed
    top = inst.combination_speeds().max()
    assert res.makespan >= inst.b.sum() / top * (1 - 1e-9)


def test_opt_never_above_fcs_seeded_batch():
    """1600 more random instances (seeded, with zeros and repeated speeds): OPT <= FCS."""
    rng = np.random.default_rng(2024)
    for k in range(1600):
        inst = random_instance(rng, int(rng.integers(1, 6)), zero_share=float(rng.choice([0.0, 0.2, 0.5])))
        sched = fcs(inst)
        opt = solve_opt(inst).makespan
        assert opt <= sched.makespan * (1 + 1e-9), k
        if k % 10 == 0:
            check_feasible(inst, sched)
