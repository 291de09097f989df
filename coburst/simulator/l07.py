"""SimGrid 3.32's ``ptask_L07`` host model and its ``FairBottleneck`` solver, in Python.

Batsim 4.2.1 runs on SimGrid 3.32 with ``--cfg=host/model:ptask_L07``: every parallel task,
every 1-byte message and every sleep is an ``L07Action`` (``src/surf/ptask_L07.cpp``), whose
lmm variable the ``fairbottleneck`` solver (``src/kernel/lmm/fair_bottleneck.cpp``) shares
among host CPUs and network links.  This module reproduces that arithmetic, operation for
operation, so that coburst's kernel (:mod:`coburst.simulator.kernel`) counts parallel tasks
down to SimGrid 3.32's dates bit for bit without running any SimGrid activity (SimGrid 4.1 is
still the platform parser: hosts, links and routes come from its Python binding).

What is reproduced, and where it comes from:

* **Constraints** (``System::constraint_new``): one per host CPU, bound ``core_count x
  speed`` (``CpuImpl::seal``), shared; one per link, bound its bandwidth (``LinkL07``),
  ``FATPIPE`` links unshared (a route's ``SPLITDUPLEX`` link appears as its ``_UP`` or
  ``_DOWN`` half, each an ordinary shared link, as SimGrid builds them); the network
  model's ``__loopback__`` link (FATPIPE, 10 GB/s) on a Full zone's undeclared self-route.
* **Variables** (``L07Action::L07Action``): weight ``flops[i]`` on host ``i``'s CPU (a new
  element per host, ``force_creation``) and, per communication ``k`` with ``bytes[k] > 0``,
  weight ``bytes[k]`` on each link of the route (one element per link: summed over the
  communications crossing a shared link, their maximum on a FATPIPE link).  The action's
  *latency* is the largest route latency among its communications; while it is paid the
  variable is disabled (penalty 0).  Its bound (``update_bound``, set once the latency is
  paid): ``min(speed x 1.0 x 1.0 / flops[i])`` over the hosts that compute and
  ``TCP-gamma / (2 x max(latency(route) x bytes))``.  An action with nothing to compute and
  no link is over as soon as it is enabled (``set_remains(0)``).
* **The solver** (``FairBottleneck::do_solve``), including its quirks: every enabled
  element of a shared constraint subtracts ``weight x mu`` from what is left at *every*
  pass, the ``mu`` of a variable saturated at an earlier pass included; a FATPIPE
  constraint subtracts the smallest ``weight x mu`` of its elements; ``double_update``
  with ``maxmin/precision`` (1e-5) after each subtraction.  Elements are visited in
  SimGrid's order: the most recently enabled variable first (``enabled_element_set_``
  push_front).  The order of variables and of constraints does not change any value (each
  variable's increment depends only on its own constraints; each constraint's remaining
  only on its own elements), so it is not kept.

Elements of weight 0 (the CPUs of a message, or of a host that does not compute) are left
out: in a shared constraint they subtract ``0 x mu`` (nothing: what is left is either 0 or
at least the precision after every update) and they never count in ``nb``; CPU constraints
are never FATPIPE, where a zero weight would matter.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter
from itertools import accumulate, chain, compress, repeat
from operator import attrgetter, itemgetter
from typing import Any

#: ``network/TCP-gamma`` (SimGrid's default; Batsim does not change it)
TCP_GAMMA = 4194304.0
#: ``maxmin/precision``
MAXMIN_PRECISION = 1e-5
#: ``network/loopback-bw`` and ``network/loopback-lat``
LOOPBACK_BANDWIDTH = 10e9
LOOPBACK_LATENCY = 0.0
DBL_MAX = sys.float_info.max


class Constraint:
    """An lmm constraint: a host's CPU or a link."""

    __slots__ = ("name", "bound", "fatpipe", "elems", "remaining", "usage", "nb", "alive", "mark")

    def __init__(self, name: str, bound: float, fatpipe: bool):
        self.name = name
        self.bound = bound
        self.fatpipe = fatpipe
        #: enabled elements ``[variable, weight]``, oldest first (SimGrid's enabled_element_set_
        #: is this list reversed: each newly enabled variable is pushed at its front)
        self.elems: list = []
        self.remaining = 0.0
        self.usage = 0.0
        self.nb = 0
        self.alive = False
        self.mark = 0  # the last component search that met it (FairBottleneck._component)

    def load(self) -> float:
        """``Constraint::get_usage``: what the enabled variables take of it."""
        result = 0.0
        if not self.fatpipe:
            for var, weight in reversed(self.elems):
                result += weight * var.value
        else:
            for var, weight in reversed(self.elems):
                result = max(result, weight * var.value)
        return result


class Variable:
    """An lmm variable (one L07 action's share): ``value`` is its rate, in fractions of the
    action per second."""

    __slots__ = ("elems", "bound", "value", "mu", "sat", "owner", "mark", "solved", "undo", "visit")

    def __init__(self, elems: list, bound: float, owner: Any = None):
        self.elems = elems  # [(constraint, weight > 0)] in SimGrid's expansion order
        self.bound = bound  # <= 0: none
        self.value = 0.0
        self.mu = 0.0
        self.sat = False
        self.owner = owner
        self.mark = 0  # the last component search that met it (FairBottleneck._component)
        self.solved = 0  # the number of the last solve that gave it its value
        #: (number of the solve that enabled it, [(variable, value, solved)] of the others of
        #: its component just before): see FairBottleneck.solve
        self.undo: tuple | None = None
        self.visit: list = elems  # the elements the passes of a solve visit (_solve_together)


#: numbers of the component searches (one sequence for every system: a constraint met by two
#: systems' searches never carries another search's number)
_searches = itertools.count(1)
#: numbers of the solves (Variable.solved), one sequence for every system as well
_solves = itertools.count(1)


class FairBottleneck:
    """SimGrid 3.32's ``FairBottleneck`` system over the enabled variables.

    A solve only gives new values to the variables connected (through shared constraints) to
    what changed since the last one: the solver's passes never mix two such components (a
    variable's increment reads only its own constraints, a constraint's remaining only its
    own elements, and a component whose variables are all done drops out), so solving a
    component alone gives its variables the values, bit for bit, that solving all of them
    would; an untouched component would get the values it already has.

    **Undo**: when a variable ``v`` is enabled into a component ``C`` with
    nothing else changed since the last solve, ``C``'s values then are the values a solve of
    ``C`` gives, and they are kept on ``v``.  When ``v`` leaves with nothing else changed,
    ``C`` is again what it was (the same variables, bounds, constraints and, once ``v``'s
    elements are taken out, the same elements in the same order): a solve would give those
    values again, bit for bit, so they are put back instead.  "Nothing else changed" is
    checked, not assumed: ``v`` left alone (one removal, nothing touched) and the component
    found then is exactly ``C`` with every variable last solved by the solve that enabled
    ``v`` (any change in between — a variable enabled or gone, a bound — solves it again;
    values put back get back their solve numbers too, so that undos nest: a message over,
    then the task it crossed).  Typically a message crossing the links of running parallel
    tasks.  ``undo = False``: always solve (the reference path, for the tests)."""

    undo = True

    def __init__(self):
        self.variables: dict[int, Variable] = {}  # id -> enabled variable (insertion order)
        self.modified = False
        self._gone: list[Variable] = []  # removed since the last solve (see remove)
        self._touched: list = []  # enabled or re-bounded variables, changed constraints

    def enable(self, var: Variable) -> None:
        """``System::enable_var`` (or the creation of an enabled variable): its elements go to
        the front of their constraints' enabled sets."""
        self.variables[id(var)] = var
        for cnst, weight in var.elems:
            cnst.elems.append([var, weight])
        self._touched.append(var)
        self.modified = True

    def touch(self, item) -> None:
        """A variable's bound or a constraint's bound changed: solve its component again."""
        self._touched.append(item)
        self.modified = True

    def remove(self, var: Variable) -> None:
        """``System::variable_free`` of an enabled variable.  Its elements stay in their
        constraints, with its last value, until the next solve: SimGrid frees the variable of a
        finished or cancelled action after the callbacks of its end ran (the energy plugin reads
        the hosts' load, this action included, see :meth:`Constraint.load`)."""
        if self.variables.pop(id(var), None) is None:
            return
        self._gone.append(var)
        self.modified = True

    def _purge(self) -> list:
        """Take the removed variables' elements out; return the constraints they left.  A gone
        variable's ``owner`` is dropped too: the kernel's owner holds the action that holds
        the variable, a cycle that only the garbage collector would break, keeping every
        task's elements alive (and counted towards a collection) until it ran."""
        left = []
        for var in self._gone:
            var.owner = None
            for cnst, _ in var.elems:
                left.append(cnst)
                elems = cnst.elems
                for k in range(len(elems) - 1, -1, -1):
                    if elems[k][0] is var:
                        del elems[k]
                        break
        self._gone.clear()
        return left

    def _component(self, seeds: list) -> list:
        """The enabled variables connected to ``seeds`` (variables and constraints), in the
        order they are met (what was met is marked with the search's number).  A constraint
        of a variable that holds one element (that variable's: most of a parallel task's
        links and CPUs) leads nowhere else and is not queued (the same variables in the same
        order)."""
        variables = self.variables
        mark = next(_searches)
        found: list[Variable] = []
        todo = []
        for item in seeds:
            if type(item) is Variable:
                if item.mark != mark and id(item) in variables:
                    item.mark = mark
                    found.append(item)
                    for cnst, _ in item.elems:
                        if cnst.mark != mark and len(cnst.elems) > 1:
                            cnst.mark = mark
                            todo.append(cnst)
            elif item.mark != mark:
                item.mark = mark
                todo.append(item)
        while todo:
            for var, _ in todo.pop().elems:
                if var.mark != mark:
                    var.mark = mark
                    found.append(var)
                    for cnst, _ in var.elems:
                        if cnst.mark != mark and len(cnst.elems) > 1:
                            cnst.mark = mark
                            todo.append(cnst)
        return found

    def solve(self) -> list:
        """``FairBottleneck::do_solve`` on the variables whose values may change; returns
        them."""
        seeds = self._touched
        self._touched = []
        undo = None
        gone = self._gone
        if gone:
            if len(gone) == 1 and not seeds:
                undo = gone[0].undo
            for var in gone:
                var.undo = None  # (a variable's record holds no freed variable's record)
            seeds.extend(self._purge())
        self.modified = False
        for item in seeds:
            if type(item) is Variable or item.elems:
                break
        else:  # only constraints left empty (a message over): nothing to share
            return []
        number = next(_solves)
        if len(seeds) == 1 and type(seeds[0]) is Variable:  # most often: one message enabled
            var = seeds[0]
            if id(var) not in self.variables:
                return []
            for cnst, _ in var.elems:
                if len(cnst.elems) != 1:
                    break
            else:  # alone on each of its constraints (listed once each): its own component
                _solve_alone(var)
                var.solved = number
                return [var]
            variables = self._component(seeds)
            if self.undo:  # the others' values now are a solve's of their component alone
                var.undo = (number, [(other, other.value, other.solved) for other in variables if other is not var])
        else:
            variables = self._component(seeds)
            if undo is not None and self.undo and len(variables) == len(undo[1]):
                enabled = undo[0]
                for other in variables:
                    if other.solved != enabled:
                        break
                else:  # the component the gone variable joined, unchanged: its values back
                    for other, value, solved in undo[1]:
                        other.value = value
                        other.solved = solved
                    return variables
        for var in variables:
            var.solved = number
        if len(variables) == 1:  # e.g. a message whose ended neighbour was purged just now
            var = variables[0]
            for cnst, _ in var.elems:
                if len(cnst.elems) != 1:
                    break
            else:
                _solve_alone(var)
                return variables
        _solve_together(variables)
        return variables


def _solve_together(variables: list) -> None:
    """``FairBottleneck::do_solve``'s passes over ``variables`` (a whole component).

    A constraint whose only element is one variable's (a link or a CPU only one task uses:
    most of a parallel task's) goes through the passes as a function of its bound, that
    element's weight and FATPIPE flag and the variable's ``mu`` alone: two such constraints
    of a variable with the same three go through the same operations on the same numbers.
    The passes visit one of each kind (``Variable.visit``); the others would give the same
    increments and the same "reached 0" at the same pass, i.e. the same values bit for bit
    (their ``remaining``, ``usage`` and ``nb``, never read outside a solve, are left as they
    are).  A bound of 0 is not grouped (0.0 and -0.0 are equal as keys)."""
    sat = []
    cnsts = {}
    for var in variables:
        var.value = 0.0
        if var.elems:
            var.sat = True
            sat.append(var)
            visit = None
            kinds = None
            for k, elem in enumerate(var.elems):
                cnst = elem[0]
                if len(cnst.elems) == 1 and cnst.bound:  # this variable's alone
                    key = (cnst.bound, elem[1], cnst.fatpipe)
                    if kinds is None:
                        kinds = {key}
                    elif key in kinds:
                        if visit is None:
                            visit = var.elems[:k]
                        continue
                    else:
                        kinds.add(key)
                if visit is not None:
                    visit.append(elem)
                cnsts[id(cnst)] = cnst
            var.visit = var.elems if visit is None else visit
        else:  # no non-zero weight: value 1 (its work is 0 anyway)
            var.sat = False
            var.value = 1.0
    cnst_list = list(cnsts.values())
    for cnst in cnst_list:
        cnst.remaining = cnst.bound
        cnst.usage = 0.0
        cnst.nb = 0
    for var in sat:
        for cnst, _ in var.visit:
            cnst.nb += 1
    precision = MAXMIN_PRECISION
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
            min_inc = DBL_MAX
            for cnst, weight in var.visit:
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
                _unsaturate(var)
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
                        _unsaturate(var)
            else:
                kept.append(cnst)
        cnst_list = kept
        sat = [var for var in left if var.sat]


def _solve_alone(var: Variable) -> None:
    """:meth:`FairBottleneck.solve` for a variable that is the only element of each of its
    constraints (each listed once in ``var.elems``): the same passes, the same operations in
    the same order, on one variable (each constraint's ``nb`` is 1, so its ``usage`` is its
    remaining, ``x / 1 == x``; a constraint that reaches 0 or the variable's bound ends the
    passes).  What the general loop leaves in the constraints (``remaining``, ``usage``,
    ``nb``) is never read outside a solve, which sets it again first."""
    elems = var.elems
    var.value = 0.0
    if not elems:  # no non-zero weight: value 1 (its work is 0 anyway)
        var.sat = False
        var.value = 1.0
        return
    bound = var.bound
    precision = MAXMIN_PRECISION
    remaining = [cnst.bound for cnst, _ in elems]
    value = 0.0
    while True:
        min_inc = DBL_MAX
        for (cnst, weight), left in zip(elems, remaining):
            inc = left / weight
            if inc < min_inc:
                min_inc = inc
        if bound > 0:
            inc = bound - value
            if inc < min_inc:
                min_inc = inc
        var.mu = min_inc
        value += min_inc
        if value == bound:
            break
        done = False
        for k, (cnst, weight) in enumerate(elems):
            left = remaining[k]
            used = weight * min_inc
            if not cnst.fatpipe:
                left -= used
            else:  # usage (= remaining) against the smallest weight x mu of its one element
                left -= used if used < left else left
            if left < precision:
                left = 0.0
            remaining[k] = left
            if left <= 0.0:
                done = True
        if done:
            break
    var.value = value
    var.sat = False


def _unsaturate(var: Variable) -> None:
    var.sat = False
    for cnst, _ in var.visit:
        cnst.nb -= 1


class Route:
    """A route as ``L07Action`` uses it: its link constraints, in order, and its latency."""

    __slots__ = ("links", "latency", "messages", "kinds")

    def __init__(self, links: list, latency: float):
        self.links = links
        self.latency = latency
        self.messages: dict = {}  # size -> (elements, network bound) of a message (see message)
        self.kinds: dict = {}  # size -> MessageKind (see message_kind)


class Network:
    """The constraints of a SimGrid platform (CPUs and links, built when first used) and its
    routes, read from SimGrid 4.1's Python binding.

    Hosts are also numbered as first seen (by object: the network keeps a reference to each,
    so an ``id`` is never reused) so that a parallel task finds its routes by number, a row
    of routes per source host, without asking SimGrid's binding for host names."""

    def __init__(self):
        self.cpus: dict[str, Constraint] = {}
        self.links: dict[str, Constraint] = {}
        self.routes: dict[tuple[str, str], Route] = {}
        self._numbers: dict[int, int] = {}  # id(host) -> number
        self._hosts: list = []  # number -> host
        self._cpus: list = []  # number -> CPU constraint (None until used)
        self._rows: list[dict[int, Route]] = []  # number -> {destination number: route}
        self._table: PairTable | None = None  # link numbers per host pair (see pair_links)

    def number(self, host) -> int:
        number = self._numbers.get(id(host))
        if number is None:
            number = self._numbers[id(host)] = len(self._hosts)
            self._hosts.append(host)
            self._cpus.append(None)
            self._rows.append({})
        return number

    def cpu(self, host) -> Constraint:
        """The CPU constraint of ``host``, bound ``core_count x speed`` (``CpuImpl::seal``)."""
        cnst = self.cpus.get(host.name)
        if cnst is None:
            cnst = self.cpus[host.name] = Constraint(host.name, host.core_count * float(host.speed), False)
        return cnst

    def link(self, name: str, bandwidth: float, fatpipe: bool) -> Constraint:
        cnst = self.links.get(name)
        if cnst is None:
            cnst = self.links[name] = Constraint(name, bandwidth, fatpipe)
        return cnst

    def route(self, a, b) -> Route:
        """``Host::route_to``: SimGrid 4.1 gives the same links and latency sum as 3.32 (a Full
        zone's undeclared self-route included: the ``__loopback__`` link)."""
        key = (a.name, b.name)
        route = self.routes.get(key)
        if route is None:
            links, latency = a.route_to(b)
            known = self.links
            cnsts = []
            for link in links:
                name = link.name  # (a link already known: no need to ask the binding more)
                cnst = known.get(name)
                if cnst is None:
                    # (SimGrid's Link, or a platform_cache.CachedLink: no SimGrid import for it)
                    fatpipe = type(link).SharingPolicy.FATPIPE
                    cnst = self.link(name, float(link.bandwidth), link.get_sharing_policy() == fatpipe)
                cnsts.append(cnst)
            route = self.routes[key] = Route(cnsts, float(latency))
        return route

    def cached_link(self, host, name: str) -> Constraint:
        """The constraint of link ``name`` of a cached platform (``host``'s), made as
        :meth:`route` makes it from the entry's ``CachedLink``."""
        link = host._platform.link(name)
        return self.link(name, float(link.bandwidth), link.get_sharing_policy() == type(link).SharingPolicy.FATPIPE)

    def set_route(self, a, b, route: Route) -> None:
        """Give the route between two hosts (where SimGrid 4.1's ``route_to`` cannot)."""
        self.routes[(a.name, b.name)] = route
        self._rows[self.number(a)][self.number(b)] = route
        self._table = None  # (built again from the rows when next needed)

    def pair_links(self, numbers: list[int]) -> tuple | None:
        """The links crossed by the communications between every two different positions of
        ``numbers`` (host numbers; the same host at two positions communicates with itself),
        counted, and the largest latency among those routes: ``([(constraint, crossings)],
        latency, (constraints, crossings, largest crossings, any FATPIPE))``, constraints in
        the order of their first use on this platform.  None when
        the platform has too many hosts for the table or a host is listed twice
        (:class:`PairTable`)."""
        if len(self._hosts) > PairTable.MAX_HOSTS:
            return None
        table = self._table
        if table is None:
            table = self._table = PairTable(self)
        return table.count(numbers)

    def _row(self, i: int, numbers: list, get, amounts: list) -> list:
        """The routes from host number ``i`` to the hosts ``numbers`` (``get`` is
        ``itemgetter(*numbers)``) to which ``amounts`` (the bytes sent to each) is not <= 0,
        in order; those not known yet are asked from SimGrid (a row holds None for a host
        seen but not asked for yet)."""
        row = self._rows[i]
        try:
            routes = list(compress(get(row), map(_POSITIVE, amounts)))
            if None not in routes:
                return routes
        except KeyError:
            pass
        hosts = self._hosts
        for j, amount in zip(numbers, amounts):
            if row.get(j) is None:
                row[j] = self.route(hosts[i], hosts[j]) if not amount <= 0 else None
        return list(compress(get(row), map(_POSITIVE, amounts)))


class PairTable:
    """The routes between host pairs as numpy tables, filled as pairs are first used: for
    hosts ``i != j`` the numbers of the links of ``route(i, j)`` plus one (padded with 0) and
    its latency; the diagonal holds no link and latency 0 (a host listed twice is left to
    the routes one by one, :meth:`count`).  A ``parallel_homogeneous`` task on ``n``
    distinct hosts crosses the routes of its ``n (n - 1)`` pairs; counting their links is
    then one gather and one ``bincount`` instead of a Python loop over every crossing (the
    same counts, hence the same weights).  What a list of hosts gave is remembered (up to
    ``MEMO`` lists, then forgotten at once): the routes of known pairs never change, so the
    same hosts give the same counts (an allocation comes back often on a busy machine).
    Only for platforms of up to ``MAX_HOSTS`` hosts (the table holds hosts^2 x longest
    route link numbers: 512 hosts and 8 links = 8 MB)."""

    MAX_HOSTS = 512
    MEMO = 1024  # (a long log: the memo is emptied now and then, its memory stays a few MB)

    def __init__(self, network: Network):
        import numpy as np

        self.np = np
        self.network = network
        self.size = 0
        self.width = 1
        self.links = np.zeros((0, 0, 1), dtype=np.int32)  # link number + 1 (0: none)
        self.latency = np.zeros((0, 0))
        self.known = np.zeros((0, 0), dtype=bool)
        self.index: dict[int, int] = {}  # id(constraint) -> link number
        self.by_name: dict[str, int] = {}  # link name -> link number (routes read by names)
        self.constraints: list[Constraint] = []  # link number -> constraint
        self.memo: dict[tuple, tuple] = {}  # host numbers -> what count gave them

    def _grow(self, size: int, width: int) -> None:
        np = self.np
        size = max(size, self.size)
        width = max(width, self.width)
        if size > self.size:
            size = max(size, min(2 * self.size, PairTable.MAX_HOSTS))
        links = np.zeros((size, size, width), dtype=np.int32)
        links[:self.size, :self.size, :self.width] = self.links
        latency = np.zeros((size, size))
        latency[:self.size, :self.size] = self.latency
        known = np.zeros((size, size), dtype=bool)
        known[:self.size, :self.size] = self.known
        np.fill_diagonal(known, True)  # (no link, latency 0: never counted)
        self.links, self.latency, self.known = links, latency, known
        self.size, self.width = size, width

    def _fill(self, pairs: list) -> None:
        """Enter the routes of host pairs ``[(i, j)]`` (in that order: links are numbered as
        first met), read through :meth:`Network.route`, into the tables at once."""
        np = self.np
        network = self.network
        hosts = network._hosts
        index = self.index
        constraints = self.constraints
        rows, latencies = [], []
        width = self.width
        # a platform from coburst.simulator.platform_cache: each pair's link names read from
        # its table (no link objects, no Route; the same constraints, numbered in the same
        # order as through Network.route, which would make them from the same entry)
        names_of = getattr(getattr(hosts[0], "_platform", None), "route_names", None) if hosts else None
        by_name = self.by_name
        for i, j in pairs:
            row = network._rows[i]
            route = row.get(j)
            names = None
            if route is None:
                if names_of is not None:
                    names = names_of(hosts[i], hosts[j])
                if names is None:
                    route = row[j] = network.route(hosts[i], hosts[j])
            numbers = []
            if names is not None:
                names, latency = names
                for name in names:
                    k = by_name.get(name)
                    if k is None:
                        cnst = network.links.get(name) or network.cached_link(hosts[i], name)
                        k = index.get(id(cnst))
                        if k is None:
                            k = index[id(cnst)] = len(constraints)
                            constraints.append(cnst)
                        by_name[name] = k
                    numbers.append(k + 1)
                if len(numbers) > width:
                    width = len(numbers)
                rows.append(numbers)
                latencies.append(latency)
                continue
            for cnst in route.links:
                k = index.get(id(cnst))
                if k is None:
                    k = index[id(cnst)] = len(constraints)
                    constraints.append(cnst)
                numbers.append(k + 1)
            if len(numbers) > width:
                width = len(numbers)
            rows.append(numbers)
            latencies.append(route.latency)
        if width > self.width:
            self._grow(self.size, width)
        table = np.zeros((len(rows), self.width), dtype=np.int32)
        for r, numbers in enumerate(rows):
            table[r, :len(numbers)] = numbers
        ii, jj = np.array(pairs).T
        self.links[ii, jj] = table
        self.latency[ii, jj] = latencies
        self.known[ii, jj] = True

    def count(self, numbers: list[int]) -> tuple | None:
        """``([(constraint, crossings)], latency)`` of the pairs of ``numbers`` (see
        :meth:`Network.pair_links`); None when a host is listed twice (it then communicates
        with itself: the caller takes the routes one by one)."""
        key = tuple(numbers)
        found = self.memo.get(key)
        if found is not None:
            return found
        n = len(numbers)
        if len(set(numbers)) != n:
            return None
        np = self.np
        if max(numbers) >= self.size:
            self._grow(max(numbers) + 1, self.width)
        idx = np.array(numbers)
        grid = np.ix_(idx, idx)
        missing = ~self.known[grid]
        if missing.any():  # the pairs first used, in the order of the task's rows
            a, b = missing.nonzero()
            self._fill(list(zip(idx[a].tolist(), idx[b].tolist())))
        counts = np.bincount(self.links[grid].ravel())
        counts[0] = 0
        used = counts.nonzero()[0]
        constraints = self.constraints
        cnsts = [constraints[k - 1] for k in used.tolist()]
        crossings = counts[used].tolist()
        found = (list(zip(cnsts, crossings)), float(self.latency[grid].max()),
                 (cnsts, crossings, max(crossings, default=0), any(cnst.fatpipe for cnst in cnsts)))
        memo = self.memo
        if len(memo) >= self.MEMO:
            memo.clear()
        memo[key] = found
        return found


class Action:
    """What ``L07Action``'s constructor makes of a parallel task: its latency, its variable's
    elements, what its bound depends on, and whether it has anything to do at all."""

    __slots__ = ("latency", "var", "empty", "computing", "net_bound")

    def __init__(self, latency: float, var: Variable, empty: bool, computing: list, net_bound: float):
        self.latency = latency
        self.var = var
        self.empty = empty  # no link and nothing to compute: over as soon as enabled
        self.computing = computing  # [(host, flops > 0)]
        self.net_bound = net_bound  # calculate_network_bound()

    def update_bound(self) -> None:
        """``L07Action::update_bound`` (once the latency is paid, and when a host's speed
        changes): ``min(calculate_network_bound(), calculate_cpu_bound())``, ``-1`` (none)
        while that is ``DBL_MAX``."""
        bound = DBL_MAX
        for host, amount in self.computing:
            # CpuImpl::get_speed(1.0) * get_speed_ratio() / flops (min(bound, x), inlined)
            x = 1.0 * float(host.speed) * 1.0 / amount
            if x < bound:
                bound = x
        bound = min(self.net_bound, bound)
        self.var.bound = bound if bound < DBL_MAX else -1.0


def ptask(network: Network, hosts: list, flops: list[float], bytes_: list[float], owner: Any = None) -> Action:
    """``L07Action::L07Action`` + ``update_bound`` for ``exec_init(hosts, flops, bytes)``.

    On one host SimGrid runs a sequential execution (``ExecImpl::start``:
    ``CpuL07::execution_start(flops[0])``): the bytes are ignored, a self-communication
    included.

    A link's weight is the sum, in the order of the communications, of the bytes of those
    crossing it (their maximum on a FATPIPE link).  When every communication has the same
    size ``com`` (``parallel_homogeneous``), that sum over ``m`` crossings is ``com`` added
    ``m`` times one after the other (the same float), the largest ``latency x com`` is the
    largest latency times ``com`` (rounding is monotonic), and the links' first-use order is
    that of their first crossing: the links are counted (``Counter``) instead of summed."""
    n = len(hosts)
    numbers_of = network._numbers
    numbers = [numbers_of.get(id(host)) for host in hosts]
    if None in numbers:
        numbers = [network.number(host) for host in hosts]
    cpus = network._cpus
    elems: list = []
    computing = []
    for host, number, amount in zip(hosts, numbers, flops):
        if amount > 0:
            computing.append((host, amount))
            cnst = cpus[number]
            if cnst is None:
                cnst = cpus[number] = network.cpu(host)
            elems.append((cnst, amount))
    latency = 0.0
    lat_current = 0.0
    links = 0
    if n > 1 and bytes_:
        counted = None
        homogeneous = False
        diagonal = bytes_[::n + 1]
        if len(bytes_) == n * n and bytes_[1] > 0 and all(amount <= 0 for amount in diagonal):
            # parallel_homogeneous? (every pair sends the same, no host to itself): counted in
            # C, without building the matrix it would be (the diagonal, all <= 0,
            # holds no ``com`` > 0, so the n (n - 1) others are all ``com`` exactly when the
            # count is that: what comparing with that matrix, item by item, found)
            com = bytes_[1]
            homogeneous = bytes_.count(com) == n * n - n
        if homogeneous:
            sizes = [com]
            counted = network.pair_links(numbers)
        else:
            sizes = [size for size in set(bytes_) if not size <= 0]
        if len(sizes) == 1 and sizes[0] == sizes[0]:  # one size (not NaN): count the crossings
            com = sizes[0]
            if not homogeneous and bytes_.count(com) == n * n - n and not any(amount > 0 for amount in diagonal):
                # every pair communicates, no host with itself (parallel_homogeneous): the table
                counted = network.pair_links(numbers)
            if counted is not None:
                counts, latency, spread = counted
            else:
                get = itemgetter(*numbers)
                row_of = network._row
                crossed: list = []
                extend = crossed.extend
                for i in range(n):
                    routes = row_of(numbers[i], numbers, get, bytes_[i * n:i * n + n])
                    if routes:
                        extend(chain.from_iterable(map(_LINKS, routes)))
                        latency = max(latency, max(map(_LATENCY, routes)))
                counts = list(Counter(crossed).items())
            lat_current = latency * com
            if counts:
                # sums[m]: com added m times, one addition after the other (in C: a link of a
                # wide task is crossed by up to n^2 / 4 pairs)
                sums = _running_sums(com, spread[2] if counted is not None else max(m for _, m in counts))
                if counted is not None and not spread[3]:  # (no FATPIPE link: zipped in C)
                    elems.extend(zip(spread[0], map(sums.__getitem__, spread[1])))
                else:
                    elems.extend((cnst, com if cnst.fatpipe else sums[m]) for cnst, m in counts)
            links = len(counts)
        elif sizes:
            weights: dict[int, list] = {}  # constraint id -> [constraint, weight], first-use order
            if all(size == size for size in sizes):  # no NaN: the routes by rows
                get = itemgetter(*numbers)
                row_of = network._row
                pairs = chain.from_iterable(
                    zip(row_of(numbers[i], numbers, get, bytes_[i * n:i * n + n]),
                        [amount for amount in bytes_[i * n:i * n + n] if amount > 0]) for i in range(n))
            else:
                pairs = ((network.route(hosts[k // n], hosts[k % n]), amount)
                         for k, amount in enumerate(bytes_) if not amount <= 0)  # a NaN is not
            for route, amount in pairs:
                latency = max(latency, route.latency)
                lat_current = max(lat_current, route.latency * amount)
                _add_weights(weights, route.links, amount)
            elems.extend((cnst, weight) for cnst, weight in weights.values())
            links = len(weights)
    net_bound = TCP_GAMMA / (2.0 * lat_current) if lat_current > 0 else DBL_MAX
    return Action(latency, Variable(elems, -1.0, owner), links + len(computing) == 0, computing, net_bound)


def _running_sums(com: float, m: int) -> list[float]:
    """``[0.0, com, com + com, (com + com) + com, ...]`` up to ``com`` added ``m`` times: the
    weight of a shared link crossed by ``m`` communications of ``com`` bytes, summed in the
    order of the communications (the same additions, in the same order)."""
    return list(accumulate(repeat(com, m), initial=0.0))


def _add_weights(weights: dict[int, list], links: list, amount: float) -> None:
    """``amount`` bytes over ``links`` added to a variable's per-link weights: summed on a
    shared link, their maximum on a FATPIPE link (``L07Action``'s constructor)."""
    for cnst in links:
        slot = weights.get(id(cnst))
        if slot is None:
            weights[id(cnst)] = [cnst, amount]
        elif cnst.fatpipe:
            slot[1] = max(slot[1], amount)
        else:
            slot[1] += amount


_POSITIVE = (0.0).__lt__  # "not <= 0" where no amount is NaN
_LINKS = attrgetter("links")
_LATENCY = attrgetter("latency")


def message(route: Route, size: float = 1.0, owner: Any = None) -> Action:
    """``NetworkL07Model::communicate(src, dst, size)``: a two-host task sending ``size`` bytes
    from the first to the second (nothing to compute).  Its elements are worked out once per
    route and size (a variable only reads them)."""
    known = route.messages.get(size)
    if known is None:
        weights: dict[int, list] = {}
        _add_weights(weights, route.links, size)
        lat_current = max(0.0, route.latency * size)
        net_bound = TCP_GAMMA / (2.0 * lat_current) if lat_current > 0 else DBL_MAX
        known = route.messages[size] = ([(cnst, weight) for cnst, weight in weights.values()], net_bound)
    elems, net_bound = known
    return Action(route.latency, Variable(elems, -1.0, owner), not elems, [], net_bound)


class MessageKind:
    """What every ``size``-byte message over one route has in common (:func:`message_kind`):
    the kernel counts a message down from this alone while it is alone on its links, and
    makes its :class:`Action` (:meth:`action`) only when it must enter the solver."""

    __slots__ = ("latency", "elems", "net_bound", "bound", "empty", "solved")

    def __init__(self, latency: float, elems: list, net_bound: float):
        self.latency = latency
        self.elems = elems
        self.net_bound = net_bound
        #: the variable's bound once ``update_bound`` ran (no CPU: the network bound, -1 for none)
        self.bound = net_bound if net_bound < DBL_MAX else -1.0
        self.empty = not elems
        #: (value, mu) of the variable solved alone on its links (worked out when first needed)
        self.solved: tuple | None = None

    def action(self, owner: Any = None) -> Action:
        """The message's ``L07Action`` as :func:`message` makes it, its bound updated (as at
        the end of its latency)."""
        action = Action(self.latency, Variable(self.elems, -1.0, owner), self.empty, [], self.net_bound)
        action.update_bound()
        return action

    def solve_alone(self) -> tuple:
        """(value, mu) the solver gives the variable alone on its links (:func:`_solve_alone`)."""
        if self.solved is None:
            var = Variable(self.elems, self.bound)
            _solve_alone(var)
            self.solved = (var.value, var.mu)
        return self.solved


def message_kind(route: Route, size: float = 1.0) -> MessageKind:
    """The :class:`MessageKind` of ``size``-byte messages over ``route`` (kept with the route)."""
    kind = route.kinds.get(size)
    if kind is None:
        message(route, size)  # (its elements, worked out once)
        elems, net_bound = route.messages[size]
        kind = route.kinds[size] = MessageKind(route.latency, elems, net_bound)
    return kind


def private_route(latency: float, bandwidth: float) -> Route:
    """A route known only by its latency and bottleneck bandwidth: one link of its own
    (none when the bandwidth is infinite: no link at all)."""
    links = [] if math.isinf(bandwidth) else [Constraint("route", bandwidth, False)]
    return Route(links, latency)
