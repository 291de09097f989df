"""The §8 instance generator and the nested-stall family (Kuchumov & Korkhov 2021, §8, §4.3)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from coburst.theory.generate import section8_instance, section8_instances
from coburst.theory.model import check_instance, membership, popcounts
from coburst.theory.worst_case import nested_caps_for, nested_limit, nested_stall_instance


@pytest.mark.parametrize("n, alpha", [(1, (0.1, 0.2)), (4, (0.05, 0.15)), (7, (0.85, 0.95)), (9, (0.45, 0.55))])
def test_section8_instances_follow_the_recipe(n, alpha):
    lo, hi = alpha
    for inst in section8_instances(n, alpha, 5, seed=n):
        check_instance(inst)  # constraint (1) by construction
        assert ((inst.b >= 100) & (inst.b <= 200)).all()
        member = membership(n)
        sizes = popcounts(n)
        for i in range(n):
            assert inst.speeds[1 << i, i] == 1.0
        # every speed is the minimum over its sub-combinations times a factor in [alpha_i, 1],
        # alpha_i in [lo, hi]: the factor is in [lo, 1]
        for j in range(1, 1 << n):
            if sizes[j] < 2:
                continue
            for i in np.flatnonzero(member[j]):
                low = min(inst.speeds[j ^ (1 << l), i] for l in np.flatnonzero(member[j]) if l != i)
                assert lo * low * (1 - 1e-12) <= inst.speeds[j, i] <= low


def test_section8_is_seeded():
    a = section8_instance(6, (0.3, 0.4), np.random.default_rng(3))
    b = section8_instance(6, (0.3, 0.4), np.random.default_rng(3))
    c = section8_instance(6, (0.3, 0.4), np.random.default_rng(4))
    assert np.array_equal(a.speeds, b.speeds) and np.array_equal(a.b, b.b)
    assert not np.array_equal(a.speeds, c.speeds)


def test_nested_stall_family_shape():
    assert nested_caps_for(8) == [1, 3]
    assert nested_limit([1, 3]) == Fraction(21, 10)  # 1 + 1/2 + 3/5
    inst = nested_stall_instance([1, 2])  # L, 2 tasks of group 1, 4 of group 2
    check_instance(inst)
    assert inst.n == 7
    # group 2 alone is the unique fastest combination (speed 4); with 3 of its tasks the lower
    # groups stall
    speeds = inst.combination_speeds()
    assert speeds.argmax() == 0b1111000 and (speeds == speeds.max()).sum() == 1
    assert inst.speeds[0b0111001, 0] == 0.0
    with pytest.raises(ValueError):
        nested_stall_instance([])
