"""The kernel's fast paths give the same floats as the paths they stand for.

* :class:`coburst.simulator.kernel.Clock` keeps its amounts in Python lists; until 2026-11-26
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
* ``Clock.advance`` (``next_delta`` and ``step`` in one call) on the same random
  operations; messages alone on their links counted down without an action
  (``Kernel._enable_message``, ``l07.MessageKind``) against every message through the solver;
  the solver's component search by marks against the search by ids; ``output.to_ld``
  against ``np.longdouble``; the server's JOB_COMPLETED / JOB_SUBMITTED texts against
  ``encode_value``; a row's allocation text given by the caller; ids from a ProcSet's
  intervals against ``list(alloc)``.

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
from coburst.simulator.traces import TraceRecorder, lf


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
    """Also :meth:`Clock.advance` (the kernel's main loop: ``next_delta`` and ``step`` in one
    call) against the two calls, on a third clock."""
    new, ref, fused = Clock(), _ArrayClock(), Clock()
    made = 0
    log_new, log_ref, log_fused = [], [], []
    for op in ops + [("step", 100)]:
        kind = op[0]
        if kind == "add":
            assert new.add(op[1], made) == ref.add(op[1], made) == fused.add(op[1], made)
            made += 1
        elif kind == "work":
            assert new.add_work(op[1], made, op[2]) == ref.add_work(op[1], made, op[2]) \
                == fused.add_work(op[1], made, op[2])
            made += 1
        elif kind == "rate":
            for clock in (new, ref, fused):
                clock.set_rate(op[1], op[2])
        elif kind == "cancel":
            for clock in (new, ref, fused):
                clock.cancel(op[1])
        else:
            for _ in range(op[1]):
                a, b = new.next_delta(), ref.next_delta()
                assert a == b or (math.isnan(a) and math.isnan(b))
                if a == math.inf:
                    assert fused.advance() is None
                    break
                if a != a:
                    break
                ended_new, ended_ref, ended_fused = new.step(a), ref.step(b), fused.advance()
                log_new.append((new.now.hex(), ended_new))
                log_ref.append((ref.now.hex(), ended_ref))
                log_fused.append((fused.now.hex(), ended_fused))
        assert new.n == ref.n == fused.n
        for number in range(made):
            left_new, left_ref, left_fused = new.remains(number), ref.remains(number), fused.remains(number)
            assert (left_new is None) == (left_ref is None) == (left_fused is None)
            assert left_new is None or left_new.hex() == left_ref.hex() == left_fused.hex()
    assert log_new == log_ref == log_fused


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


def _former_solve_together(variables: list) -> None:
    """The former ``l07._solve_together`` (every constraint visited): the reference."""
    sat = []
    cnsts = {}
    for var in variables:
        var.value = 0.0
        if var.elems:
            var.sat = True
            sat.append(var)
            for cnst, _ in var.elems:
                cnsts[id(cnst)] = cnst
        else:  # no non-zero weight: value 1 (its work is 0 anyway)
            var.sat = False
            var.value = 1.0
    cnst_list = list(cnsts.values())
    for cnst in cnst_list:
        cnst.remaining = cnst.bound
        cnst.usage = 0.0
        cnst.nb = 0
    for var in sat:
        for cnst, _ in var.elems:
            cnst.nb += 1
    precision = l07.MAXMIN_PRECISION
    while sat:
        kept = []
        for cnst in cnst_list:
            nb = cnst.nb
            if nb > 0 and cnst.fatpipe:
                nb = 1
            if nb == 0:
                cnst.remaining = 0.0
                cnst.usage = 0.0
            else:
                cnst.usage = cnst.remaining / nb
                kept.append(cnst)
        cnst_list = kept

        left = []
        for var in sat:
            min_inc = l07.DBL_MAX
            for cnst, weight in var.elems:
                inc = cnst.usage / weight
                if inc < min_inc:
                    min_inc = inc
            bound = var.bound
            if bound > 0:
                inc = bound - var.value
                if inc < min_inc:
                    min_inc = inc
            var.mu = min_inc
            var.value += min_inc
            if var.value == bound:
                _former_unsaturate(var)
            else:
                left.append(var)

        kept = []
        for cnst in cnst_list:
            if not cnst.fatpipe:
                remaining = cnst.remaining
                for var, weight in reversed(cnst.elems):
                    remaining -= weight * var.mu
                    if remaining < precision:
                        remaining = 0.0
                cnst.remaining = remaining
            else:
                usage = cnst.usage
                for var, weight in reversed(cnst.elems):
                    used = weight * var.mu
                    if used < usage:
                        usage = used
                cnst.usage = usage
                remaining = cnst.remaining - usage
                cnst.remaining = remaining = 0.0 if remaining < precision else remaining
            if remaining <= 0.0:
                for var, _ in cnst.elems:
                    if var.sat:
                        _former_unsaturate(var)
            else:
                kept.append(cnst)
        cnst_list = kept
        sat = [var for var in left if var.sat]


def _former_unsaturate(var) -> None:
    var.sat = False
    for cnst, _ in var.elems:
        cnst.nb -= 1


def _component_system(spec):
    """Variables ``[(bound, [(bound, fatpipe, weight)] of constraints of their own, [(shared
    constraint number, weight)])]`` over shared constraints ``[bound]``, every variable
    enabled (elements in their constraints)."""
    shared_specs, var_specs = spec
    shared = [l07.Constraint(f"s{k}", bound, False) for k, bound in enumerate(shared_specs)]
    variables = []
    for v, (bound, own, refs) in enumerate(var_specs):
        elems = [(l07.Constraint(f"v{v}c{k}", cbound, fatpipe), weight) for k, (cbound, fatpipe, weight) in enumerate(own)]
        if shared:
            elems += [(shared[k % len(shared)], weight) for k, weight in refs]
        var = l07.Variable(elems, bound)
        for cnst, weight in var.elems:
            cnst.elems.append([var, weight])
        variables.append(var)
    return variables


@st.composite
def components(draw):
    """Variables with constraints of their own from few bounds and weights (a task's links
    and CPUs: many alike), FATPIPE or not, and shared constraints (never FATPIPE: a FATPIPE
    link of several elements loses the smallest weight x mu of its elements at every pass, a
    finished variable's included, and may take billions of passes — SimGrid's
    fair_bottleneck.cpp does the same; see ``request`` below), some listed twice."""
    bounds = st.sampled_from([1.25e9, 1e9, 1.25e9, 5e9, 1e11, 0.0, -0.0, 7.0])
    weights = st.sampled_from([1e12, 88736148.0, 2 * 88736148.0, 3.0, 1.0, 11.0])
    shared = draw(st.lists(bounds, max_size=4))
    var_specs = draw(st.lists(st.tuples(st.sampled_from([-1.0, -1.0, 0.5, 3.0, 1e-3]),
                                        st.lists(st.tuples(bounds, st.booleans(), weights), max_size=12),
                                        st.lists(st.tuples(st.integers(0, 7), weights), max_size=4)),
                              min_size=1, max_size=5))
    return shared, var_specs


@settings(max_examples=500, deadline=None)
@given(components())
def test_solver_passes_visit_one_constraint_of_each_kind(spec):
    """``_solve_together`` visits one of a variable's constraints alone with the
    same bound, weight and FATPIPE flag (``Variable.visit``): the same values, ``mu`` and
    saturation, bit for bit, as the former passes over every constraint, on random
    components."""
    new, former = _component_system(spec), _component_system(spec)
    l07._solve_together(new)
    _former_solve_together(former)
    assert [(v.value.hex(), v.mu.hex(), v.sat) for v in new] == [(v.value.hex(), v.mu.hex(), v.sat) for v in former]


def test_the_passes_skip_constraints_alike():
    """The grouping is taken (else the test above compares the passes with themselves): a
    task's 8 CPUs and 3 links alike are visited as one CPU and one link."""
    spec = ([], [(-1.0, [(1e9, False, 1e12)] * 8 + [(1.25e9, False, 5e8)] * 3, [])])
    (var,) = _component_system(spec)
    l07._solve_together([var])
    assert len(var.visit) == 2 and var.value == 1e9 / 1e12


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
    """What :class:`coburst.simulator.l07.Network` reads of a SimGrid link (its class's
    ``SharingPolicy`` included, as on SimGrid's ``Link``)."""

    from coburst.simulator._simgrid import simgrid

    SharingPolicy = simgrid.Link.SharingPolicy
    del simgrid

    def __init__(self, name, bandwidth, fatpipe):
        self.name, self.bandwidth, self.fatpipe = name, bandwidth, fatpipe

    def get_sharing_policy(self):
        policy = self.SharingPolicy
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


@settings(max_examples=300, deadline=None)
@given(platforms(), st.data())
def test_parallel_homogeneous_links_from_the_table_as_from_the_routes(hosts, data):
    """The same elements (constraint and weight, as a set: their order in a variable changes
    no value), latency and bound through :class:`l07.PairTable` as through the routes one by
    one, over several tasks on one network (the table fills as pairs come; a task on hosts
    seen before is answered from its memo, also when the memo was just emptied).
    ``ptask`` recognises a ``parallel_homogeneous`` matrix by comparing it with the one it
    would be; matrices that are almost so (one entry changed: 0, another size, NaN, a host
    sending to itself, a negative or ``-0.0`` diagonal) take the general paths, with the same
    elements as the routes one by one."""
    names = sorted(hosts)
    with_table, by_routes = l07.Network(), l07.Network()
    saved, saved_memo = l07.PairTable.MAX_HOSTS, l07.PairTable.MEMO
    l07.PairTable.MEMO = data.draw(st.sampled_from([1, 2, saved_memo]))
    try:
        tasks = []
        for _ in range(data.draw(st.integers(1, 4))):
            chosen = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=7))
            com = data.draw(st.sampled_from([1.0, 88736148.0, 0.1, 3e9]))
            n = len(chosen)
            matrix = [0.0 if i == j else com for i in range(n) for j in range(n)]
            change = data.draw(st.sampled_from(["none", "none", "off", "diagonal"]))
            if change == "off":
                k = data.draw(st.sampled_from([k for k in range(n * n) if k % (n + 1)]))
                matrix[k] = data.draw(st.sampled_from([0.0, -1.0, 2 * com, math.nan]))
            elif change == "diagonal":
                k = data.draw(st.integers(0, n - 1)) * (n + 1)
                matrix[k] = data.draw(st.sampled_from([com, -0.0, -1.0, math.nan, 5.0]))
            tasks.append((chosen, matrix))
            if data.draw(st.booleans()):
                tasks.append((chosen, list(matrix)))  # the same hosts again (the memo)
        for chosen, matrix in tasks:
            n = len(chosen)
            flops = [1e9] * n
            a = l07.ptask(with_table, [hosts[h] for h in chosen], flops, matrix)
            try:
                l07.PairTable.MAX_HOSTS = -1  # the routes one by one
                b = l07.ptask(by_routes, [hosts[h] for h in chosen], flops, matrix)
            finally:
                l07.PairTable.MAX_HOSTS = saved
            assert by_routes._table is None

            def elements(action):
                return sorted((cnst.name, weight.hex()) for cnst, weight in action.var.elems)

            assert elements(a) == elements(b)
            assert len(a.var.elems) == len(b.var.elems)
            assert (a.latency.hex(), a.net_bound.hex(), a.empty) == (b.latency.hex(), b.net_bound.hex(), b.empty)
    finally:
        l07.PairTable.MEMO = saved_memo


def test_the_table_serves_parallel_homogeneous_tasks_on_distinct_hosts():
    """The fast path is taken where it should be (else the test above compares the routes
    one by one with themselves): a ``parallel_homogeneous`` task on distinct hosts is
    counted from the table and remembered; a host listed twice is not."""
    link = _Link("l0", 1e9, False)
    names = ["h0", "h1", "h2"]
    hosts = {a: _Host(a, {b: ([link], 1e-6) for b in names}) for a in names}
    net = l07.Network()
    matrix = [0.0 if i == j else 5.0 for i in range(3) for j in range(3)]
    action = l07.ptask(net, [hosts[h] for h in names], [1.0] * 3, matrix)
    assert net._table is not None and len(net._table.memo) == 1
    assert [(cnst.name, weight) for cnst, weight in action.var.elems][-1] == ("l0", 30.0)
    l07.ptask(net, [hosts[h] for h in ["h0", "h1", "h0"]], [1.0] * 3, matrix)
    assert len(net._table.memo) == 1


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
    # bytes per pair: none, or enough that every pass of the solver takes a good part of a
    # FATPIPE link.  (SimGrid's fair_bottleneck.cpp, and coburst with it, subtracts from a
    # FATPIPE link the smallest weight x mu of its elements at every pass, saturated ones
    # included: a 1-byte-per-pair task held at 0.2 by its CPUs next to a message with no
    # bound leaves a 1e8 B/s link 0.2 B/s per pass, i.e. some 5e8 passes: a hang in both.)
    st.tuples(st.just("run"), st.lists(st.integers(0, 8), min_size=1, max_size=4),
              st.sampled_from([0.0, 1e8, 3e8]), st.sampled_from([-1.0, 0.5, 2.0])),
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


def _component_by_ids(system, seeds: list) -> list:
    """``FairBottleneck._component`` as it was (ids in a dict and a set): the reference."""
    variables = system.variables
    found: dict[int, l07.Variable] = {}
    seen: set[int] = set()
    todo = []
    for item in seeds:
        if type(item) is l07.Variable:
            if id(item) in variables and id(item) not in found:
                found[id(item)] = item
                for cnst, _ in item.elems:
                    if id(cnst) not in seen:
                        seen.add(id(cnst))
                        todo.append(cnst)
        elif id(item) not in seen:
            seen.add(id(item))
            todo.append(item)
    while todo:
        for var, _ in todo.pop().elems:
            if id(var) not in found:
                found[id(var)] = var
                for cnst, _ in var.elems:
                    if id(cnst) not in seen:
                        seen.add(id(cnst))
                        todo.append(cnst)
    return list(found.values())


@settings(max_examples=200, deadline=None)
@given(platforms(), st.lists(st.lists(request, max_size=8), min_size=1, max_size=5))
def test_component_search_by_marks_as_by_ids(hosts, scripts):
    """The solver's component search marking what it met (``FairBottleneck._component``) finds
    the variables the former search by ids found, in the same order, at every solve of random
    mixes of messages and parallel tasks (both engines' paths for messages)."""
    searched = []
    by_marks = l07.FairBottleneck._component

    def both(self, seeds):
        reference = _component_by_ids(self, list(seeds))
        found = by_marks(self, seeds)
        assert [id(var) for var in found] == [id(var) for var in reference]
        searched.append(len(found))
        return found

    l07.FairBottleneck._component = both
    try:
        _kernel_log(hosts, scripts, lone=True)
        _kernel_log(hosts, scripts, lone=False)
    finally:
        l07.FairBottleneck._component = by_marks


def test_a_lone_message_joins_the_solver_when_a_task_crosses_its_link():
    """A message on a 1 B/s link (1 s long) alone, then a parallel task across that link half
    way: from then on they share it (the message ends later than alone), as through the
    solver all along."""
    link = _Link("l", 1.0, False)
    hosts = {"a": _Host("a", {"a": ([], 0.0), "b": ([link], 0.0)}),
             "b": _Host("b", {"a": ([link], 0.0), "b": ([], 0.0)})}
    scripts = [[("put", 0, 0, 1)], [("get", 0)], [("sleep", 0.5), ("run", [0, 1], 1.0, -1.0)]]  # (shared link)
    lone, reference = _kernel_log(hosts, scripts, lone=True), _kernel_log(hosts, scripts, lone=False)
    assert lone == reference
    ends = {p: float.fromhex(date) for p, _, date, _ in lone[0]}
    assert ends[0] > 1.0 and ends[2] > 1.0  # shared: both later than alone


@settings(max_examples=300, deadline=None)
@given(platforms(), st.lists(st.lists(request, max_size=8), min_size=1, max_size=5), st.booleans())
def test_solver_undo_as_solving_again(hosts, scripts, lone):
    """When the variable that joined a component leaves it with nothing else
    changed, the solver puts back the values the component had (``FairBottleneck.undo``)
    instead of solving it again: on random mixes of parallel tasks (timeouts included),
    messages (through the solver or not) and sleeps, every process resumes at the same
    dates, bit for bit, with the same values, as when every change is solved."""
    try:
        l07.FairBottleneck.undo = False
        reference = _kernel_log(hosts, scripts, lone=lone)
    finally:
        l07.FairBottleneck.undo = True
    assert _kernel_log(hosts, scripts, lone=lone) == reference


def test_the_undo_puts_back_the_values_a_solve_gives():
    """The undo is taken where it should be (else the test above compares the solver with
    itself): task A alone on a link, task B joins it and leaves; A's value is then put back
    (no solve), equal to what solving A alone gives, and a second undo nests (a message
    through the solver crossing both, over before B)."""
    system = l07.FairBottleneck()
    link = l07.Constraint("l", 10.0, False)
    a = l07.Variable([(link, 2.0)], -1.0)
    b = l07.Variable([(link, 3.0)], 4.0)
    m = l07.Variable([(link, 1.0)], -1.0)
    system.enable(a)
    assert system.solve() == [a]
    alone = a.value
    system.enable(b)
    assert set(map(id, system.solve())) == {id(a), id(b)}
    shared = (a.value, b.value)
    assert a.value != alone and b.undo is not None
    system.enable(m)
    system.solve()
    system.remove(m)
    calls = []
    together = l07._solve_together
    l07._solve_together = lambda variables: calls.append(variables)
    try:
        assert set(map(id, system.solve())) == {id(a), id(b)}
        assert (a.value, b.value) == shared
        system.remove(b)
        assert system.solve() == [a]
    finally:
        l07._solve_together = together
    assert calls == [] and a.value == alone
    fresh = l07.FairBottleneck()
    reference = l07.Variable([(l07.Constraint("l", 10.0, False), 2.0)], -1.0)
    fresh.enable(reference)
    fresh.solve()
    assert a.value.hex() == reference.value.hex()


# ---------------------------------------------------------------------- traces

class _FormerTraces(TraceRecorder):
    """``TraceRecorder.job_started`` / ``job_ended`` as they were (one call per machine line,
    the counts moved machine by machine): the reference."""

    def job_started(self, time, job_id, alloc, *, order_key=None, machines=None):
        if self._finished:
            raise RuntimeError("job_started after finish")
        key = self._keys.get(job_id)
        if key is None or order_key is not None:
            key = (0, order_key) if order_key is not None else (1, next(self._start_counter))
            self._keys[job_id] = key
        t = lf(time)
        running, computing, trace = self._running, self._state_is_computing, self.schedule_trace
        for mid in self._machines(alloc):
            jobs = running[mid]
            if not jobs:
                computing[mid] = True
                self.nb_idle -= 1
                self.nb_computing += 1
                jobs[job_id] = key
                if trace:
                    self._paje_computing(mid, job_id, time, t)
                continue
            previous = self._top(mid)
            if job_id in jobs:
                raise ValueError(f"job {job_id} is already running on machine {mid}")
            jobs[job_id] = key
            top = self._top(mid)
            if trace and previous != top:
                self._paje_computing(mid, top, time, t)
        self._write_states(time)

    def job_ended(self, time, job_id, alloc, *, kill_mark=False, machines=None):
        if self._finished:
            raise RuntimeError("job_ended after finish")
        ids = self._machines(alloc)
        if self.schedule_trace and kill_mark:
            t = lf(time)
            self._paje.append(f'8 {t} kk k "{job_id}"\n')
            for mid in ids:
                self._paje.append(f'8 {t} km m{mid} "{job_id}"\n')
        t = lf(time)
        paje = self._paje
        for mid in ids:
            jobs = self._running[mid]
            if not jobs:
                raise ValueError(f"job {job_id} ends on machine {mid}, which computes no job")
            previous = self._top(mid) if len(jobs) > 1 else job_id
            if job_id not in jobs:
                raise ValueError(f"job {job_id} ends on machine {mid}, which does not compute it")
            del jobs[job_id]
            if not jobs and mid in self._unavailable:
                self._state_is_computing[mid] = False
            elif not jobs:
                self._state_is_computing[mid] = False
                self.nb_idle += 1
                self.nb_computing -= 1
                if self.schedule_trace:
                    paje.append(f"6 {t} machine_state m{mid} w\n")
            else:
                top = self._top(mid)
                if top != previous and self.schedule_trace:
                    self._paje_computing(mid, top, time, t)
        self._keys.pop(job_id, None)
        self._paje_jobs.discard(job_id)
        self._write_states(time)


trace_call = st.one_of(
    st.tuples(st.just("start"), st.integers(0, 7), st.sets(st.integers(0, 5), min_size=1), st.booleans()),
    st.tuples(st.just("end"), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("bad-end"), st.integers(0, 7), st.sets(st.integers(0, 5), min_size=1)),
    st.tuples(st.just("unavailable"), st.integers(0, 5)),
    st.tuples(st.just("available"), st.integers(0, 5)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(trace_call, max_size=40), st.booleans(), st.integers(0, 3))
def test_traces_machine_loops_as_before(calls, trace, nb_keys):
    """Random starts (shared machines, order keys), ends (kill marks), ends on the wrong
    machines (errors), machines made unavailable: the same trace lines, machine-state rows,
    counts and errors as the former per-machine code, with and without the sorted ``machines``
    list the accounting passes."""
    from procset import ProcSet

    names = [f"m{k}" for k in range(6)]
    new = TraceRecorder(names, nb_compute=5, schedule_trace=trace, colors=["a", "b", "c"])
    old = _FormerTraces(names, nb_compute=5, schedule_trace=trace, colors=["a", "b", "c"])
    allocs: dict[str, ProcSet] = {}
    for step, call in enumerate(calls):
        time = float(step)
        outcomes = []
        for rec in (new, old):
            try:
                if call[0] == "start":
                    jid = f"w0!{call[1]}"
                    alloc = allocs.setdefault(jid, ProcSet(*call[2]))
                    key = (call[1] % nb_keys) if nb_keys and call[3] else None
                    rec.job_started(time, jid, alloc, order_key=key,
                                    machines=list(alloc) if rec is new and call[3] else None)
                elif call[0] == "end":
                    jid = f"w0!{call[1]}"
                    alloc = allocs.get(jid, ProcSet(0))
                    rec.job_ended(time, jid, alloc, kill_mark=call[2], machines=list(alloc) if rec is new else None)
                elif call[0] == "bad-end":
                    rec.job_ended(time, f"w0!{call[1]}", ProcSet(*call[2]))
                elif call[0] == "unavailable":
                    if call[1] not in rec._unavailable:
                        rec.machine_unavailable(call[1], rec._state_is_computing[call[1]])
                else:
                    if call[1] in rec._unavailable:
                        rec.machine_available(call[1], rec._state_is_computing[call[1]])
                outcomes.append(None)
            except ValueError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]
        assert (new.nb_idle, new.nb_computing) == (old.nb_idle, old.nb_computing)
        assert new._state_is_computing == old._state_is_computing
    assert new.schedule_trace_text() == old.schedule_trace_text()
    assert new.machine_states_text() == old.machine_states_text()


# ---------------------------------------------------------------------- _jobs.csv rows

def _former_csv_row(rec):
    from coburst.simulator.output import LD, f6, fmt_Lf, quote_metadata

    head = f"{rec.job_number},{rec.workload},{rec.profile},{f6(rec.subtime)},{rec.res},{f6(rec.walltime)}"
    if rec.final_state == "REJECTED":
        return f"{head},0,REJECTED,,,,,,,,,{quote_metadata(rec.metadata)}"
    start, runtime, completion = rec._compute_times()
    sub = LD(rec.subtime)
    turnaround = completion - sub
    return (f"{head},{rec.success},{rec.final_state},{f6(float(start))},{f6(float(runtime))},"
            f"{f6(float(completion))},{f6(float(start - sub))},{f6(float(turnaround))},"
            f"{f6(float(turnaround / runtime))},{rec.alloc},"
            f"{f6(-1) if rec.consumed_energy is None else fmt_Lf(rec.consumed_energy)},"
            f"{quote_metadata(rec.metadata)}")


def _former_sums(records):
    from coburst.simulator.output import LD

    zero = LD(0)
    sums = [zero, zero, zero, zero, zero, zero, zero]  # wait, turn, slow, makespan, max wait/turn/slow
    for rec in records:
        if rec.final_state == "REJECTED":
            continue
        start, runtime, completion = rec._compute_times()
        sub = LD(rec.subtime)
        wait, turn = start - sub, completion - sub
        slow = turn / runtime
        sums[0] += wait
        sums[1] += turn
        sums[2] += slow
        sums[3] = max(sums[3], completion) if completion > sums[3] else sums[3]
        sums[4] = wait if wait > sums[4] else sums[4]
        sums[5] = turn if turn > sums[5] else sums[5]
        sums[6] = slow if slow > sums[6] else sums[6]
    return sums


dates = st.one_of(st.floats(0.0, 1e10, allow_nan=False), st.sampled_from([0.0, 0.1, 1e-5, 3600.000001, 1e10 + 0.3]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(dates, dates, dates, st.sampled_from(["COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                                                                "COMPLETED_WALLTIME_REACHED", "REJECTED"]),
                          st.sampled_from([-1, 60, 3600.5]), st.sampled_from([None, 1.5, 1e7 / 3])),
                min_size=1, max_size=20))
def test_job_rows_and_sums_as_before(rows):
    """A row's long-double times worked out once (``JobRecord.derived``) for ``_jobs.csv`` and
    the ``_schedule.csv`` sums: the same text and the same long-double sums, byte for byte."""
    from procset import ProcSet

    from coburst.simulator.output import LD, JobRecord, ScheduleStats

    records = []
    stats = ScheduleStats()
    for k, (sub, wait, run, state, walltime, energy) in enumerate(rows):
        start = sub + wait
        alloc = ProcSet((0, 1), (3 + k, 3 + 2 * k))
        rec = JobRecord(job_number=str(k), workload="w0", profile="p", subtime=sub, res=2, walltime=walltime,
                        final_state=state, start=start, finish=start + run, alloc=alloc,
                        metadata='a "b"', consumed_energy=None if energy is None else LD(energy))
        assert rec.csv_row() == _former_csv_row(rec)
        # the allocation's text given by the caller (SimJob.alloc_text), as formatted
        given_text = JobRecord(job_number=str(k), workload="w0", profile="p", subtime=sub, res=2,
                               walltime=walltime, final_state=state, start=start, finish=start + run, alloc=alloc,
                               metadata='a "b"', consumed_energy=None if energy is None else LD(energy),
                               alloc_text=str(alloc))
        assert given_text.csv_row() == rec.csv_row()
        stats.add(rec)
        records.append(rec)
    new = [stats.sum_wait, stats.sum_turn, stats.sum_slow, stats.makespan, stats.max_wait, stats.max_turn,
           stats.max_slow]
    assert all(type(a) is type(b) and a == b for a, b in zip(new, _former_sums(records), strict=True))


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                 st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e308, 2.0**53 + 1, 0.1]),
                 st.integers(-2**70, 2**70)))
def test_to_ld_is_ld(value):
    """``output.to_ld`` (``-0.0 + x`` for a float) is ``np.longdouble(x)``, every bit (signed zeros,
    subnormals, infinities, NaN; integers go through ``np.longdouble`` itself)."""
    from coburst.simulator.output import LD, to_ld

    fast, reference = to_ld(value), LD(value)
    assert type(fast) is type(reference)
    assert np.array([fast]).tobytes()[:10] == np.array([reference]).tobytes()[:10]  # (the 80 bits used)


# ---------------------------------------------------------------------- the server's texts

job_ids = st.text(min_size=1, max_size=12).map(lambda t: "w0!" + t)
allocs = st.lists(st.integers(0, 300), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(job_ids, st.sampled_from(["COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                                 "COMPLETED_KILLED"]),
       st.one_of(st.integers(-3, 3), st.integers(-2**70, 2**70), st.just(True), st.just(0.5)), allocs)
def test_completed_and_submitted_texts_as_encode_value_makes_them(jid, state, code, ids):
    """JOB_COMPLETED's and JOB_SUBMITTED's data written as text directly
    (``handlers.completed_data``, ``submitted_data``) and the event around it
    (``ProtocolHandlers.append`` of a text): what :func:`encode_value` makes of the dicts,
    byte for byte (any id text, any return code: one of another type than ``int`` keeps the
    dict)."""
    from types import SimpleNamespace

    from procset import ProcSet

    from coburst.simulator.handlers import ProtocolHandlers, completed_data
    from coburst.simulator.jobs import SimJob
    from coburst.simulator.protocol import RawJSON, encode_text, encode_value

    alloc = ProcSet(*ids)
    sjob = SimJob(job=SimpleNamespace(id=jid, json_text=RawJSON('{"id":"1","subtime":0.000000}')),
                  state=state, alloc=alloc, return_code=code)
    as_dict = {"job_id": jid, "job_state": state, "return_code": code, "alloc": str(alloc)}
    assert encode_text(completed_data(jid, sjob)) == encode_text(as_dict)
    fake = SimpleNamespace(options={"forward_profiles_on_submission": False}, kernel=SimpleNamespace(now=12.25),
                           events=[])
    submitted = ProtocolHandlers.submitted_data(fake, sjob)
    assert encode_text(submitted) == encode_text({"job_id": jid, "job": sjob.job.json_text})
    for etype, data in (("JOB_COMPLETED", completed_data(jid, sjob)), ("JOB_SUBMITTED", submitted)):
        ProtocolHandlers.append(fake, etype, data)
        out = ['{"timestamp":', "%6f" % 12.25, ',"type":', encode_text(etype), ',"data":']  # (the general path)
        encode_value(data, out)
        assert fake.events.pop() == "".join(out) + "}"


@settings(max_examples=300, deadline=None)
@given(allocs)
def test_allocation_ids_from_intervals_as_listed(ids):
    """``SimJob.machine_ids`` (and EXECUTE_JOB's ids) from the ProcSet's intervals: ``list(alloc)``."""
    from types import SimpleNamespace

    from procset import ProcSet

    from coburst.simulator.jobs import SimJob

    alloc = ProcSet(*ids)
    assert SimJob(job=SimpleNamespace(id="w0!1"), alloc=alloc).machine_ids() == list(alloc) == sorted(set(ids))


# ---------------------------------------------------------------------- ZeroMQ monitor events

def test_monitor_events_read_as_pyzmq_reads_them():
    """``protocol.monitor_event_id`` (no import of ``zmq.utils.monitor``, which imports
    asyncio) on real monitor messages of a REQ socket connecting, then its peer going: the
    ids ``zmq.utils.monitor.parse_monitor_message`` reads, CONNECTED and DISCONNECTED among them."""
    import zmq
    from zmq.utils.monitor import parse_monitor_message

    from coburst.simulator.protocol import monitor_event_id

    ctx = zmq.Context()
    try:
        rep = ctx.socket(zmq.REP)
        port = rep.bind_to_random_port("tcp://127.0.0.1")
        req = ctx.socket(zmq.REQ)
        monitor = req.get_monitor_socket()
        req.connect(f"tcp://127.0.0.1:{port}")
        req.send(b"x")
        assert rep.recv() == b"x"
        rep.close(linger=0)
        seen = []
        while zmq.EVENT_DISCONNECTED not in seen:
            assert monitor.poll(5000), f"no more monitor events after {seen}"
            frames = monitor.recv_multipart()
            seen.append(monitor_event_id(frames))
            assert seen[-1] == parse_monitor_message(frames)["event"]
        assert zmq.EVENT_CONNECTED in seen
        monitor.close(linger=0)
        req.close(linger=0)
    finally:
        ctx.term()


# ---------------------------------------------------------------------- garbage collector

def test_kernel_main_sets_the_collector_aside_and_back():
    """While :meth:`Kernel.main` runs, what existed before is frozen and the youngest
    generation's threshold is at least ``GC_THRESHOLD``; after it (also when a process
    raises) the thresholds are back and nothing stays frozen."""
    import gc

    import pytest

    from coburst.simulator.kernel import Kernel, Sleep

    before = gc.get_threshold()
    seen = []

    def body(fail):
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        yield Sleep(1.0)
        if fail:
            raise RuntimeError("boom")

    for fail in (False, True):
        kernel = Kernel()
        kernel.spawn(body(fail), "p")
        if fail:
            with pytest.raises(RuntimeError, match="boom"):
                kernel.main()
        else:
            kernel.main()
            assert kernel.now == 1.0
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    assert all(threshold >= Kernel.GC_THRESHOLD and frozen > 0 for threshold, frozen in seen)


# ---------------------------------------------------------------------- parallel_homogeneous matrices

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.sampled_from([1.0, 88736148.0, 3e9, 0.1, 1e-300, math.inf, math.nan, -5.0]),
       st.sampled_from(["parallel_homogeneous", "parallel_homogeneous_total"]))
def test_homogeneous_matrix_as_the_former_comprehension(n, com, ptype):
    """``build_ptask`` writes a ``parallel_homogeneous`` matrix by repeating ``com`` and
    setting the diagonal instead of one comprehension over the ``n x n``
    entries: the same floats in the same places (and the same empty matrix for ``com`` 0)."""
    from coburst.simulator.ptasks import ParallelTasks
    from coburst.simulator.workload import Profile

    hosts = [object() for _ in range(n)]
    _, flops, matrix = ParallelTasks.build_ptask(None, None, Profile("p", ptype, {"cpu": 1e9, "com": com}), hosts)
    cpu, com = 1e9, float(com)
    if ptype == "parallel_homogeneous_total":
        cpu, com = cpu / n, com / n
    former = [] if com == 0 else [0.0 if i == j else com for i in range(n) for j in range(n)]
    assert [x.hex() for x in matrix] == [x.hex() for x in former]
    assert flops == [cpu] * n


# ---------------------------------------------------------------------- matrix test, sums, purge, cached routes

def _former_homogeneous(bytes_: list, n: int) -> bool:
    """``ptask``'s former test: the matrix compared with the one it would be."""
    diagonal = bytes_[::n + 1]
    if not (len(bytes_) == n * n and bytes_[1] > 0 and all(amount <= 0 for amount in diagonal)):
        return False
    same = [bytes_[1]] * (n * n)
    same[::n + 1] = diagonal
    return bytes_ == same


def _homogeneous_now(bytes_: list, n: int) -> bool:
    """What ``ptask`` decides today (the counting test), read from the path it takes: the
    pair table is asked for exactly the matrices it finds homogeneous."""
    asked = []

    class _Net(l07.Network):
        def pair_links(self, numbers):
            asked.append(numbers)
            return None  # (then the routes one by one: the hosts below have none)

    hosts = [_Host(f"h{k}", {}) for k in range(n)]
    for h in hosts:
        h.routes = {o.name: ([], 0.0) for o in hosts}
    l07.ptask(_Net(), hosts, [1.0] * n, bytes_)
    return bool(asked) and bytes_.count(bytes_[1]) == n * n - n


@settings(max_examples=400, deadline=None)
@given(st.integers(2, 9), st.sampled_from([1.0, 88736148.0, 0.1, 3e9, 5e-324]), st.data())
def test_homogeneous_matrix_recognised_as_the_former_comparison(n, com, data):
    """``ptask`` recognises a ``parallel_homogeneous`` matrix by counting ``com``
    instead of comparing with the matrix it would be: the same answer on matrices that are
    one or two entries away from it (0, -0.0, another size, the same size as another float
    object, NaN, a host sending to itself, an infinite entry)."""
    matrix = [0.0 if i == j else com for i in range(n) for j in range(n)]
    for _ in range(data.draw(st.integers(0, 2))):
        k = data.draw(st.integers(0, n * n - 1))
        matrix[k] = data.draw(st.sampled_from([0.0, -0.0, -1.0, 2 * com, float(repr(com)), math.nan, math.inf,
                                               com]))
    assert _homogeneous_now(matrix, n) == _former_homogeneous(matrix, n)


def test_the_counting_test_is_reached():
    """(The test above compares something: a homogeneous matrix is sent to the pair table, one
    with an entry changed is not.)"""
    matrix = [0.0 if i == j else 5.0 for i in range(3) for j in range(3)]
    assert _homogeneous_now(matrix, 3) and _former_homogeneous(matrix, 3)
    matrix[5] = 6.0
    assert not _homogeneous_now(matrix, 3) and not _former_homogeneous(matrix, 3)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=5e-324, max_value=1e300, allow_nan=False), st.integers(1, 3000))
def test_running_sums_as_the_former_loop(com, m):
    """``l07._running_sums`` (itertools.accumulate) against the loop it replaced: the same
    floats, bit for bit."""
    sums = [0.0, com]
    total = com
    for _ in range(m - 1):
        total += com
        sums.append(total)
    assert [x.hex() for x in l07._running_sums(com, m)] == [x.hex() for x in sums]


def test_a_gone_variable_leaves_no_cycle_to_collect():
    """A variable removed from the solver drops its ``owner`` at the next solve (the kernel's
    owner holds the action that holds the variable): with the collector off, the owner (and
    with it its action and variable) is freed by reference counting alone."""
    import gc
    import weakref

    link = _Link("l0", 1e9, False)
    names = ["h0", "h1"]
    hosts = [_Host(a, {b: ([link], 1e-6) for b in names}) for a in names]

    class Owner:
        pass

    system = l07.FairBottleneck()
    net = l07.Network()
    keep = l07.ptask(net, hosts, [1e9, 1e9], [0.0, 5.0, 5.0, 0.0])
    keep.var.owner = Owner()
    system.enable(keep.var)
    owner = Owner()
    owner.action = l07.ptask(net, hosts, [1e9, 1e9], [0.0, 5.0, 5.0, 0.0])
    owner.action.var.owner = owner  # (the kernel's cycle: flow -> action -> variable -> flow)
    system.enable(owner.action.var)
    system.solve()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        alive = weakref.ref(owner)
        system.remove(owner.action.var)
        del owner
        assert alive() is not None  # (its variable's elements stay until the next solve)
        system.solve()
        assert alive() is None
    finally:
        if was_enabled:
            gc.enable()


@settings(max_examples=200, deadline=None)
@given(platforms(), st.data())
def test_pair_table_reads_a_cached_platform_by_names_as_its_routes(hosts, data):
    """On a platform from the cache (``platform_cache.CachedPlatform``), the pair
    table reads each pair's link names from the entry (no link objects, no Route); the same
    elements in the same order, the same latency and bound, and the same links numbered in
    the same order as through the routes (the same platform given as route objects)."""
    from coburst.simulator.platform_cache import CachedPlatform

    names = sorted(hosts)
    links, routes = {}, {}
    for a in names:
        for b in names:
            chosen, latency = hosts[a].routes[b]
            for link in chosen:
                links[link.name] = (link.bandwidth, 0.0, "FATPIPE" if link.fatpipe else "SHARED")
            routes[(a, b)] = (tuple(link.name for link in chosen), latency)
    doc = {"hosts": [(n, 1e9, 1, 0, (1e9,), {}) for n in names], "zones": ("z", {}, names, []),
           "links": links, "routes": routes, "missing": []}
    cached = {h.name: h for h in CachedPlatform(doc, "unused.xml", []).all_hosts}
    by_names, by_routes = l07.Network(), l07.Network()
    only_table = True
    for _ in range(data.draw(st.integers(1, 4))):
        chosen = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=7))
        only_table &= len(set(chosen)) == len(chosen)
        com = data.draw(st.sampled_from([1.0, 88736148.0, 0.1]))
        n = len(chosen)
        matrix = [0.0 if i == j else com for i in range(n) for j in range(n)]
        a = l07.ptask(by_names, [cached[h] for h in chosen], [1e9] * n, matrix)
        b = l07.ptask(by_routes, [hosts[h] for h in chosen], [1e9] * n, matrix)
        assert [(c.name, c.bound, c.fatpipe, w.hex()) for c, w in a.var.elems] == \
            [(c.name, c.bound, c.fatpipe, w.hex()) for c, w in b.var.elems]
        assert (a.latency.hex(), a.net_bound.hex(), a.empty) == (b.latency.hex(), b.net_bound.hex(), b.empty)
        assert [c.name for c in by_names._table.constraints] == [c.name for c in by_routes._table.constraints]
        assert list(by_names.links) == list(by_routes.links)
    if only_table:
        assert not by_names.routes and by_routes.routes  # (the names were read, not routes)
