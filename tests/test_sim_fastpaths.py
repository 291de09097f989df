"""The kernel's fast paths give the same floats as the paths they stand for (issue 22, speed).

* :class:`coburst.simulator.kernel.Clock` keeps its amounts in Python lists; until session 8
  they were numpy arrays.  ``_ArrayClock`` below is that numpy clock, kept as the reference:
  on random mixes of sleeps, work at changing rates, cancellations and steps, both give the
  same step durations, the same dates and the same ended actions in the same order, bit for
  bit.
* :func:`coburst.simulator.l07._solve_alone` (a variable alone on each of its constraints:
  most solves, one message) against the solver's general passes
  (:func:`coburst.simulator.l07._solve_together`) on random variables: shared and FATPIPE
  links, bounds, weights, and bandwidths large enough that a constraint is left above
  ``maxmin/precision`` after the first pass (a second pass).
* :class:`coburst.simulator.l07.PairTable` (a ``parallel_homogeneous`` task's links counted
  from numpy tables of the host pairs' routes) against the routes taken one by one, on
  random platforms (links repeated in a route, FATPIPE links, hosts listed twice).

The kernel as a whole against SimGrid 3.32 and Batsim is tests/test_sim_l07.py and the
cross-engine suite; these tests pin the fast paths on inputs those do not reach.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coburst.simulator import l07
from coburst.simulator.kernel import PRECISION, WORK_PRECISION, Clock


class _ArrayClock:
    """The kernel's clock as it was (numpy arrays, swap-remove): the reference."""

    def __init__(self, capacity: int = 4):
        self.now = 0.0
        self.rem = np.empty(capacity)
        self.rate = np.empty(capacity)
        self.prec = np.empty(capacity)
        self.seq = np.empty(capacity, dtype=np.int64)
        self.owner: list = [None] * capacity
        self.n = 0
        self._counter = 0
        self._where: dict[int, int] = {}
        self._nonunit = 0

    def add(self, duration, owner, number=-1):
        return self._add(duration, 1.0, PRECISION, owner, number)

    def add_work(self, rate, owner, remains=1.0, number=-1):
        if rate != 1.0:
            self._nonunit += 1
        return self._add(remains, rate, WORK_PRECISION, owner, number)

    def _add(self, amount, rate, precision, owner, number=-1):
        n = self.n
        if n == len(self.rem):
            self.rem = np.resize(self.rem, 2 * n)
            self.rate = np.resize(self.rate, 2 * n)
            self.prec = np.resize(self.prec, 2 * n)
            self.seq = np.resize(self.seq, 2 * n)
            self.owner.extend([None] * n)
        self.rem[n] = amount
        self.rate[n] = rate
        self.prec[n] = precision
        if number < 0:
            number = self._counter
            self._counter += 1
        self.seq[n] = number
        self.owner[n] = owner
        self._where[number] = n
        self.n = n + 1
        return number

    def set_rate(self, number, rate):
        i = self._where.get(number)
        if i is None:
            return
        if self.rate[i] != 1.0:
            self._nonunit -= 1
        if rate != 1.0:
            self._nonunit += 1
        self.rate[i] = rate

    def remains(self, number):
        i = self._where.get(number)
        return None if i is None else float(self.rem[i])

    def cancel(self, number):
        i = self._where.get(number)
        if i is not None:
            self._remove(i)

    def _remove(self, i):
        if self.rate[i] != 1.0:
            self._nonunit -= 1
        last = self.n - 1
        del self._where[int(self.seq[i])]
        if i != last:
            self.rem[i] = self.rem[last]
            self.rate[i] = self.rate[last]
            self.prec[i] = self.prec[last]
            self.seq[i] = self.seq[last]
            self.owner[i] = self.owner[last]
            self._where[int(self.seq[i])] = i
        self.owner[last] = None
        self.n = last

    def next_delta(self):
        n = self.n
        if not n:
            return math.inf
        if not self._nonunit:
            return float(self.rem[0]) if n == 1 else float(np.minimum.reduce(self.rem[:n]))
        if n == 1:
            return float(self.rem[0]) / float(self.rate[0]) if self.rate[0] > 0 else math.inf
        # a paused action (rate 0) never ends, SimGrid skips it: rem / 0 is inf, and for an
        # action already at 0 the former clock's 0 / 0 gave NaN (a stalled run), not inf
        rate = self.rate[:n]
        with np.errstate(divide="ignore"):
            return float(np.minimum.reduce(np.where(rate > 0, self.rem[:n] / np.where(rate > 0, rate, 1.0), math.inf)))

    def step(self, delta):
        self.now = self.now + delta
        n = self.n
        if not n:
            return []
        rem = self.rem[:n]
        if not self._nonunit:
            rem -= delta
        else:
            rem -= self.rate[:n] * delta
        ended = (rem < self.prec[:n]).nonzero()[0]
        ended = ended[np.argsort(self.seq[ended], kind="stable")]
        owners = [self.owner[i] for i in ended]
        for i in sorted(ended.tolist(), reverse=True):
            self._remove(i)
        return owners


durations = st.one_of(st.floats(0.0, 1e7, allow_nan=False), st.sampled_from([0.0, 1e-10, 1e-9, 0.1, 3600.0]))
rates = st.one_of(st.floats(1e-6, 1e6, allow_nan=False), st.sampled_from([0.0, 1.0, 0.5, 1 / 3]))
operation = st.one_of(
    st.tuples(st.just("add"), durations),
    # remains a hair apart: a step leaves the other one between the two precisions
    st.tuples(st.just("work"), rates, st.one_of(st.floats(1e-3, 1.0), st.sampled_from([1.0, 1.0 - 1e-12, 1.0 - 1e-10]))),
    st.tuples(st.just("rate"), st.integers(0, 40), rates),
    st.tuples(st.just("cancel"), st.integers(0, 40)),
    st.tuples(st.just("step"), st.integers(1, 4)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(operation, max_size=80))
@example(ops=[("add", 0.0), ("add", 0.0), ("rate", 0, 0.0)])  # a paused action already at 0 (found in CI)
def test_list_clock_is_the_array_clock_bit_for_bit(ops):
    new, ref = Clock(), _ArrayClock()
    made = 0
    log_new, log_ref = [], []
    for op in ops + [("step", 100)]:
        kind = op[0]
        if kind == "add":
            assert new.add(op[1], made) == ref.add(op[1], made)
            made += 1
        elif kind == "work":
            assert new.add_work(op[1], made, op[2]) == ref.add_work(op[1], made, op[2])
            made += 1
        elif kind == "rate":
            new.set_rate(op[1], op[2])
            ref.set_rate(op[1], op[2])
        elif kind == "cancel":
            new.cancel(op[1])
            ref.cancel(op[1])
        else:
            for _ in range(op[1]):
                a, b = new.next_delta(), ref.next_delta()
                assert a == b or (math.isnan(a) and math.isnan(b))
                if a == math.inf or a != a:
                    break
                ended_new, ended_ref = new.step(a), ref.step(b)
                log_new.append((new.now.hex(), ended_new))
                log_ref.append((ref.now.hex(), ended_ref))
        assert new.n == ref.n
        for number in range(made):
            left_new, left_ref = new.remains(number), ref.remains(number)
            assert (left_new is None) == (left_ref is None)
            assert left_new is None or left_new.hex() == left_ref.hex()
    assert log_new == log_ref


# ---------------------------------------------------------------------- the solver

def _system(links, bound):
    """One variable over fresh constraints ``links`` = [(bandwidth, fatpipe, weight)]."""
    elems = [(l07.Constraint(f"l{k}", bandwidth, fatpipe), weight) for k, (bandwidth, fatpipe, weight) in enumerate(links)]
    var = l07.Variable(elems, bound)
    for cnst, weight in elems:
        cnst.elems.append([var, weight])
    return var


link = st.tuples(
    st.one_of(st.floats(1.0, 1e12), st.sampled_from([1.25e8, 1.25e9, 1.25e10, 1e11, 3e11, 7.3e11, 1e12 / 3])),
    st.booleans(),
    st.one_of(st.floats(1e-3, 1e9), st.sampled_from([1.0, 3.0, 7.0, 1e-1])),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(link, max_size=5),
       st.one_of(st.just(-1.0), st.floats(1e-6, 1e12), st.sampled_from([4194304.0 / 2e-4, 1.0])))
def test_one_variable_solved_as_the_general_passes_do(links, bound):
    alone, together = _system(links, bound), _system(links, bound)
    l07._solve_alone(alone)
    l07._solve_together([together])
    assert alone.value.hex() == together.value.hex()
    assert alone.sat == together.sat
    if links:
        assert alone.mu.hex() == together.mu.hex()


def test_a_second_pass_is_reached_and_matched():
    """100 GB/s over a weight of 11: the first pass leaves 1.5e-5 (>= maxmin/precision) on the
    link, so the general passes run a second time and add a last sliver; the fast path too."""
    bandwidth, weight = 1e11, 11.0
    assert bandwidth - weight * (bandwidth / weight) >= l07.MAXMIN_PRECISION
    alone, together = _system([(bandwidth, False, weight)], -1.0), _system([(bandwidth, False, weight)], -1.0)
    l07._solve_together([together])
    assert together.value != bandwidth / weight  # a second pass happened
    l07._solve_alone(alone)
    assert alone.value.hex() == together.value.hex() and alone.mu.hex() == together.mu.hex()


def test_solve_uses_the_fast_path_for_a_lone_message_and_the_general_one_otherwise():
    """Through :meth:`FairBottleneck.solve`: a lone variable, then a second one on the same link
    (a component of two: general passes, fair shares)."""
    system = l07.FairBottleneck()
    shared = l07.Constraint("shared", 10.0, False)
    a = l07.Variable([(shared, 1.0)], -1.0)
    system.enable(a)
    assert system.solve() == [a] and a.value == 10.0
    b = l07.Variable([(shared, 1.0)], -1.0)
    system.enable(b)
    assert set(map(id, system.solve())) == {id(a), id(b)} and a.value == b.value == 5.0
    system.remove(a)
    assert system.solve() == [b] and b.value == 10.0
    system.remove(b)  # the link left empty: nothing to solve
    assert system.solve() == [] and not shared.elems and not system.modified


# ---------------------------------------------------------------------- parallel tasks' links

class _Link:
    def __init__(self, name, bandwidth, fatpipe):
        self.name, self.bandwidth, self.fatpipe = name, bandwidth, fatpipe

    def get_sharing_policy(self):
        from coburst.simulator._simgrid import simgrid

        policy = simgrid.Link.SharingPolicy
        return policy.FATPIPE if self.fatpipe else policy.SHARED


class _Host:
    """What :class:`coburst.simulator.l07.Network` reads of a SimGrid host."""

    def __init__(self, name, routes):
        self.name, self.routes = name, routes
        self.core_count, self.speed = 1, 1e9

    def route_to(self, other):
        return self.routes[other.name]


@st.composite
def platforms(draw):
    """Hosts whose routes are random link sequences (repeats allowed, FATPIPE or shared)."""
    nb_links = draw(st.integers(1, 12))
    links = [_Link(f"l{k}", draw(st.sampled_from([1e8, 1.25e9, 1e10])), draw(st.booleans())) for k in range(nb_links)]
    names = [f"h{k}" for k in range(draw(st.integers(2, 9)))]
    routes = {}
    for a in names:
        for b in names:
            chosen = draw(st.lists(st.sampled_from(links), max_size=6))
            routes[(a, b)] = (chosen, draw(st.sampled_from([0.0, 1e-6, 2.5e-5, 1e-4, 3e-4])))
    hosts = {name: _Host(name, {b: routes[(name, b)] for b in names}) for name in names}
    return hosts


@settings(max_examples=200, deadline=None)
@given(platforms(), st.data())
def test_parallel_homogeneous_links_from_the_table_as_from_the_routes(hosts, data):
    """The same elements (constraint and weight, as a set: their order in a variable changes
    no value), latency and bound through :class:`l07.PairTable` as through the routes one by
    one, over several tasks on one network (the table fills as pairs come)."""
    names = sorted(hosts)
    with_table, by_routes = l07.Network(), l07.Network()
    saved = l07.PairTable.MAX_HOSTS
    for _ in range(data.draw(st.integers(1, 4))):
        chosen = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=7))
        com = data.draw(st.sampled_from([1.0, 88736148.0, 0.1, 3e9]))
        n = len(chosen)
        matrix = [0.0 if i == j else com for i in range(n) for j in range(n)]
        flops = [1e9] * n
        a = l07.ptask(with_table, [hosts[h] for h in chosen], flops, matrix)
        try:
            l07.PairTable.MAX_HOSTS = -1  # the routes one by one
            b = l07.ptask(by_routes, [hosts[h] for h in chosen], flops, matrix)
        finally:
            l07.PairTable.MAX_HOSTS = saved
        assert with_table._table is not None and by_routes._table is None

        def elements(action):
            return sorted((cnst.name, weight.hex()) for cnst, weight in action.var.elems)

        assert elements(a) == elements(b)
        assert len(a.var.elems) == len(b.var.elems)
        assert (a.latency.hex(), a.net_bound, a.empty) == (b.latency.hex(), b.net_bound, b.empty)


# ---------------------------------------------------------------------- lone messages

def _kernel_log(hosts, scripts, lone):
    """Run ``scripts`` (one list of requests per process) on a kernel over ``hosts``; the log
    of every process's resumptions: (process, step, date as hex, what it got back)."""
    from coburst.simulator.kernel import Get, Kernel, Mailbox, Put, Run, Sleep

    kernel = Kernel()
    kernel.lone_messages = lone
    network = kernel.network
    names = sorted(hosts)
    boxes = [Mailbox(f"b{k}") for k in range(3)]
    log = []

    def body(p, script):
        for step, (kind, *args) in enumerate(script):
            if kind == "sleep":
                got = yield Sleep(args[0])
            elif kind == "put":
                box, src, dst = args
                got = yield Put(boxes[box], (p, step), route=network.route(hosts[names[src % len(names)]],
                                                                          hosts[names[dst % len(names)]]))
            elif kind == "get":
                got = yield Get(boxes[args[0]])
            else:  # run
                chosen, com, timeout = args
                task_hosts = [hosts[names[k % len(names)]] for k in chosen]
                n = len(task_hosts)
                matrix = [0.0 if i == j else com for i in range(n) for j in range(n)]
                got = yield Run(task_hosts, [1e9] * n, matrix, timeout)
            log.append((p, step, kernel.now.hex(), got))

    for p, script in enumerate(scripts):
        kernel.spawn(body(p, script), f"p{p}")
    kernel.main()
    return log, kernel.now.hex()


request = st.one_of(
    st.tuples(st.just("sleep"), st.sampled_from([0.0, 1e-6, 2.5e-5, 0.3, 1.0, 7.5])),
    st.tuples(st.just("put"), st.integers(0, 2), st.integers(0, 8), st.integers(0, 8)),
    st.tuples(st.just("get"), st.integers(0, 2)),
    st.tuples(st.just("run"), st.lists(st.integers(0, 8), min_size=1, max_size=4),
              st.sampled_from([0.0, 1.0, 1e5, 3e8]), st.sampled_from([-1.0, 0.5, 2.0])),
)


@settings(max_examples=300, deadline=None)
@given(platforms(), st.lists(st.lists(request, max_size=8), min_size=1, max_size=5))
def test_lone_messages_outside_the_solver_as_through_it(hosts, scripts):
    """A message alone on its links counts down at the value of its lone solve without
    entering the solver (``Kernel._enable_lone``), and enters it when another variable comes:
    on random mixes of messages on shared links, parallel tasks crossing them (with and
    without timeouts) and sleeps, every process resumes at the same dates, bit for bit, with
    the same values, as when every message goes through the solver."""
    assert _kernel_log(hosts, scripts, lone=True) == _kernel_log(hosts, scripts, lone=False)


def test_a_lone_message_joins_the_solver_when_a_task_crosses_its_link():
    """A message on a 1 B/s link (1 s long) alone, then a parallel task across that link half
    way: from then on they share it (the message ends later than alone), as through the
    solver all along."""
    link = _Link("l", 1.0, False)
    hosts = {"a": _Host("a", {"a": ([], 0.0), "b": ([link], 0.0)}),
             "b": _Host("b", {"a": ([link], 0.0), "b": ([], 0.0)})}
    scripts = [[("put", 0, 0, 1)], [("get", 0)], [("sleep", 0.5), ("run", [0, 1], 1.0, -1.0)]]
    lone, reference = _kernel_log(hosts, scripts, lone=True), _kernel_log(hosts, scripts, lone=False)
    assert lone == reference
    ends = {p: float.fromhex(date) for p, _, date, _ in lone[0]}
    assert ends[0] > 1.0 and ends[2] > 1.0  # shared: both later than alone
