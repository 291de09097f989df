"""The co-scheduling model of Kuchumov & Korkhov 2021, §3: input checks and feasibility."""

from __future__ import annotations

import numpy as np
import pytest

from coburst.errors import InputError
from coburst.theory.generate import section8_instance
from coburst.theory.model import (Instance, InfeasibleSchedule, Schedule, Segment, check_feasible, check_instance,
                                  make_instance, show_mask, tasks_of)
from coburst.theory.worst_case import monotone_closure


def two_tasks(a_pair, alone=(1.0, 1.0), b=(1.0, 2.0)) -> Instance:
    return make_instance("x", list(b), {1: [alone[0], 0], 2: [0, alone[1]], 3: list(a_pair)})


def test_masks_name_tasks_by_bit():
    assert tasks_of(0b1011) == [0, 1, 3]
    assert show_mask(5) == "5 {T0,T2}"


def test_valid_instance_passes():
    check_instance(two_tasks([0.5, 0.7]))
    check_instance(section8_instance(6, (0.05, 0.15), np.random.default_rng(1)))


def test_constraint1_reversed_print_is_read_as_the_text_says():
    """(1) is printed a_ip <= a_iq for S_p ⊂ S_q; the text means speeds never rise when a task
    joins.  A rise is refused, naming the task and both combinations."""
    with pytest.raises(InputError) as err:
        check_instance(two_tasks([0.5, 0.7], alone=(1.0, 0.6)))
    msg = str(err.value)
    assert "constraint (1)" in msg and "task 1" in msg
    assert "2 {T1}" in msg and "3 {T0,T1}" in msg and "instance 'x'" in msg


def test_constraint1_relative_tolerance():
    check_instance(two_tasks([0.5, 0.6 * (1 + 5e-10)], alone=(1.0, 0.6)))  # within 1e-9
    with pytest.raises(InputError, match="constraint"):
        check_instance(two_tasks([0.5, 0.6 * (1 + 3e-9)], alone=(1.0, 0.6)))
    # a task at speed 0 stays at 0: any positive speed in a larger combination breaks (1)
    inst = make_instance("z", [1, 1, 1], {1: [1, 0, 0], 2: [0, 1, 0], 4: [0, 0, 1], 3: [0, 1, 0], 5: [1, 0, 1],
                                          6: [0, 1, 1], 7: [1e-300, 0.5, 0.5]})
    with pytest.raises(InputError, match=r"task 0 .* 3 \{T0,T1\} .* 7 \{T0,T1,T2\}"):
        check_instance(inst)


def test_deep_violation_found_through_immediate_supersets():
    inst = section8_instance(5, (0.4, 0.5), np.random.default_rng(2))
    speeds = inst.speeds.copy()
    speeds[0b11111, 2] = speeds[0b00111, 2] * 1.01  # 3 tasks joined at once in the data
    with pytest.raises(InputError, match="task 2"):
        check_instance(Instance("d", inst.b, speeds))


@pytest.mark.parametrize("pair, alone, b, pattern", [
    ([1.2, 0.5], (1.0, 1.0), (1, 1), r"> 1"),
    ([-0.1, 0.5], (1.0, 1.0), (1, 1), r"< 0"),
    ([0.5, 0.5], (0.0, 1.0), (1, 1), r"speed 0 alone"),
    ([0.5, 0.5], (1.0, 1.0), (0, 1), r"work b"),
    ([0.5, float("nan")], (1.0, 1.0), (1, 1), r"not finite"),
])
def test_range_errors(pair, alone, b, pattern):
    with pytest.raises(InputError, match=pattern):
        check_instance(two_tasks(pair, alone, b))


def test_speed_outside_its_combination_refused():
    inst = make_instance("o", [1, 1], {1: [1, 0.3], 2: [0, 1], 3: [0.5, 0.5]})
    with pytest.raises(InputError, match="task 1 is not in combination 1"):
        check_instance(inst)


def test_feasibility_checker():
    inst = two_tasks([0.5, 0.5], b=(1.0, 1.0))
    check_feasible(inst, Schedule([Segment(3, 0.0, 2.0)]))
    check_feasible(inst, Schedule([Segment(1, 0.0, 1.0), Segment(2, 1.0, 2.0)]))
    with pytest.raises(InfeasibleSchedule, match="task 1 completes"):
        check_feasible(inst, Schedule([Segment(1, 0.0, 1.0)]))
    with pytest.raises(InfeasibleSchedule, match="exceeds"):
        check_feasible(inst, Schedule([Segment(3, 0.0, 3.0)]))
    with pytest.raises(InfeasibleSchedule, match="starts at"):
        check_feasible(inst, Schedule([Segment(1, 0.0, 1.0), Segment(2, 1.5, 2.5)]))
    with pytest.raises(InfeasibleSchedule, match="not a combination"):
        check_feasible(inst, Schedule([Segment(4, 0.0, 1.0)]))


def test_monotone_closure_satisfies_constraint1():
    rng = np.random.default_rng(5)
    n = 6
    raw = rng.uniform(0, 1, size=(1 << n, n))
    raw[rng.uniform(size=raw.shape) < 0.1] = 0.0
    for i in range(n):
        raw[1 << i, i] = 1.0
    a = monotone_closure(raw)
    check_instance(Instance("c", np.ones(n), a))
    assert (a <= np.clip(raw, 0, 1) + 0).all()
