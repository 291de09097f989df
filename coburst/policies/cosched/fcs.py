"""FCS, the Fastest Combination Speed strategy, online on a node-sharing cluster.

Kuchumov & Korkhov 2021, §4.2, Listing 1: on one node, among the active tasks, run the
*combination* whose total speed ``a_j = sum_i a_ij`` is the largest, until one of its tasks
completes; then choose again.  The amount of work of a task is unknown (non-clairvoyant), its
speed in every combination is known.

**On the cluster** (:class:`FCS`).  A decision point is every batch of job ends and arrivals
(the adapter calls the policy once per batch; the paper's tasks are all there at time 0, here
an arrival is a decision point too).  There, among the placements the node-sharing
model offers (:mod:`coburst.core.nodeshare`) to the *waiting* jobs, FCS starts the set whose
total speed -- the sum over every job on the machine of its speed *as the heatmap hook will
apply it* (:mod:`coburst.simulator.speedup`), weighted by its width -- is the largest:

* **compact**: a job ``a`` of ``m`` nodes alone on ``m`` idle nodes, speed 1;
* **spread alone**: ``a`` on ``2m`` idle nodes without neighbour, speed ``alone(a)`` (the
  hook's default: the best value of ``a``'s heatmap row; offered only when above 1, else
  compact does as much on half the nodes);
* **pair**: waiting jobs spread on the same idle nodes: a host ``b`` on ``2 m_b`` idle nodes
  and next to it one guest ``a`` (the narrower of the two, ``m_a <= m_b``), or as many guests
  of one class as its nodes hold (``q = m_b // m_a``, side by side); speeds ``s(a, b)`` for
  each guest and ``s(b, a)`` for the host;
* **join**: waiting jobs ``a`` spread next to a running spread job ``h``, on nodes where ``h``
  is alone: one guest, or as many of one class as those nodes hold; speeds ``s(a, h)`` for
  each guest and ``min(speed(h), s(h, a))`` for ``h`` (the hook's minimum over neighbours),
  so a join can lower the total and is then not taken.

``s`` is the hook's pair speed (measured, else the row mean; a job without application runs
at 1 and counts as a missing pair for its neighbour), so the sum FCS maximises is the sum the
hook applies right after the decision.

Speeds are summed **weighted by width** (``weights="nodes"``, default): ``sum_j m_j s_j``,
the work of compact node-seconds done per second, because the paper models a cluster as "a
single-node environment containing combined resources of multiple nodes" (§3) and a
``m``-node job at speed ``s`` does ``m`` times the work of a one-node job at ``s``.
``weights="jobs"`` sums the speeds unweighted, Listing 1's ``r`` literally (it prefers many
narrow jobs).  With node weights, two jobs of ``m`` nodes share ``2m`` nodes only when
``s(a, b) + s(b, a) > 2`` if those nodes could hold both compact instead: FCS co-locates the
pairs that gain together and, while nodes are short, runs the others compact.

**Choosing the combination.**  Jobs of the same application and width are interchangeable
for the total speed (FCS ignores walltimes: the work is unknown to it), so the choice is an
integer program over *classes*: how many jobs of each class run compact, spread alone, in a
pair with each class, or join each class of host (same application, width, speed and
half-free nodes), under the idle-node count, the jobs waiting in each class and one join
per host; every option with a positive gain is a column (but a pair, or a spread job alone,
whose jobs would do as much compact on fewer nodes: dropping it keeps the maximum), the
objective the total speed gained.  It is solved exactly (scipy's HiGHS, ``mip_rel_gap =
0``; absolute gap 1e-6; a deterministic ``node_limit`` of branch-and-bound nodes, default
10000, after which the best combination found is taken).  The jobs of a class are taken oldest first (submission
order: the paper breaks ties by the order of the combinations, ``j = 1..m``); combinations
of equal total speed within the solver's tolerance are broken as HiGHS returns them
(deterministic for the same inputs).  The search is repeated on the board it leaves
("rounds"): a job started spread in this decision becomes a host the next round may add a
neighbour to; the decision ends when a round starts nothing and leaves out no job.

**How this departs from the paper's FCS** (decided here, tested in tests/test_cosched_fcs.py):

* no preemption or migration (Batsim cannot suspend or move a job): the paper re-chooses
  among *all* active tasks and may stop some of them; here the running jobs keep their
  nodes and only the waiting jobs are chosen, given them.  Between decisions the speeds
  change only when a neighbour arrives or leaves (the hook), never by FCS's choice;
* the speed of a combination is not an arbitrary ``a_ij`` but what the hook derives from
  the pairwise heatmap (a job's speed is the minimum over its neighbours);
* placements are limited to the four above: a node holds at most two jobs (the heatmaps are
  pairwise); a guest has all its nodes next to one host; a host gets, per round, one guest
  or a full set of guests of one class (other mixes only over several rounds);
* no reservation: like Listing 1, FCS maximises the speed now, so a wide job waits while
  narrower ones make the machine faster (every job still runs: an idle machine always
  starts one, and a finite workload drains);
* burst buffers are not in the integer program: a chosen job whose burst-buffer request does
  not fit now is left waiting for this decision, and the choice is made again without it
  (its pair partner included in the next round);
* the hook's ``--heatmap-alone FACTOR`` is not known to the policy: it assumes the default
  (row best) for spread jobs without neighbour.

**How it differs from** ``pair-greedy`` (:mod:`.pair_greedy`): Pair-Greedy is EASY-Co
(submission order, every job spread, EASY backfilling behind the head) whose only heatmap
use is the *node* choice of each job, one job at a time; FCS chooses *which* jobs start and
*how* (compact, spread alone, paired, joined) by the total speed of the whole combination,
ignores submission order and walltimes, and never backfills.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from coburst.core.nodeshare import COMPACT, SPREAD, Board, CoJob, NodeSharingState, Placement, PlacementDecisions
from coburst.policies.base import Param
from coburst.policies.cosched.base import AppSpeeds, CoPolicy, HeatmapParam, load_heatmap_param

__all__ = ["FCS", "HookSpeeds", "Option"]

WEIGHTS = Param("weights", str, "nodes", lambda v: v in ("nodes", "jobs"),
                "how job speeds are summed: 'nodes' (each weighted by its compact node count) or 'jobs'")
NODE_LIMIT = Param("node_limit", int, 10000, lambda v: v >= 1,
                   "branch-and-bound nodes HiGHS may explore per choice (an integer >= 1)")


class HookSpeeds(AppSpeeds):
    """:class:`~coburst.policies.cosched.base.AppSpeeds` with the hook's rule for a neighbour
    without application (:mod:`coburst.simulator.speedup`): a missing pair, i.e. the row
    mean (1.0 for an empty row), not 1.0.  A job without application runs at 1.0."""

    def __init__(self, heatmap):
        super().__init__(heatmap)
        for i, a in enumerate(heatmap.apps):
            mean = heatmap.row_mean(a)
            self.eff[i, -1] = 1.0 if mean is None else mean


@dataclass(frozen=True)
class Option:
    """One column of the choice: ``kind`` (``compact``, ``alone``, ``pair``, ``join``), the
    job class ``k`` it starts (the guests' class of a pair or join), ``q`` jobs of it, the
    host's class ``l`` of a pair (a waiting job) or ``g`` of a join (a running job), the idle
    nodes it takes and the total speed it adds."""

    kind: str
    k: int
    l: int = -1
    g: int = -1
    idle: int = 0
    gain: float = 0.0
    q: int = 1

    def uses(self) -> dict[int, int]:
        """Waiting jobs taken from each class."""
        if self.kind != "pair":
            return {self.k: self.q}
        return {self.k: self.q + 1} if self.l == self.k else {self.k: self.q, self.l: 1}


class FCS(CoPolicy):
    """Fastest Combination Speed first on a node-sharing cluster (Kuchumov & Korkhov 2021,
    §4.2, Listing 1), module doc."""

    family = "fcs"
    source = "Kuchumov & Korkhov 2021, §4.2, Listing 1 (FCS), on a node-sharing cluster"
    co = True
    backfilling = False
    params = (HeatmapParam, WEIGHTS, NODE_LIMIT)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.speeds = HookSpeeds(load_heatmap_param(self.family, self.heatmap))
        self.last_rounds = 0  # rounds of the last decision (tests, profiling)

    # ------------------------------------------------------------------ the hook's speeds
    def weight(self, job: CoJob) -> float:
        return float(job.nodes) if self.weights == "nodes" else 1.0

    def job_speed(self, handle: int, on: dict[int, tuple[CoJob, Placement]], lo: np.ndarray,
                  hi: np.ndarray) -> float:
        """Speed the hook gives job ``handle`` on a board whose nodes hold ``lo``/``hi``
        (the smallest / largest job handle per node, -1 for none)."""
        job, pl = on[handle]
        a = self.speeds.of(job)
        if pl.mode == COMPACT or a < 0:
            return 1.0
        nodes = np.asarray(pl.nodes)
        neigh = set(lo[nodes].tolist()) | set(hi[nodes].tolist())
        neigh.discard(handle)
        neigh.discard(-1)
        if not neigh:
            return float(self.speeds.alone[a])
        return float(min(self.speeds.eff[a, self.speeds.of(on[h][0])] for h in neigh))

    def total_speed(self, board: Board, on: dict[int, tuple[CoJob, Placement]]) -> float:
        """Sum of the weighted speeds of every job on ``board`` (what FCS maximises)."""
        lo, hi = residents(board)
        return math.fsum(self.weight(on[h][0]) * self.job_speed(h, on, lo, hi) for h in sorted(on))

    # ------------------------------------------------------------------ decision
    def make_decisions(self, state: NodeSharingState) -> PlacementDecisions:
        decisions = PlacementDecisions(state.now)
        board = state.board()
        on = {r.job.seq: (r.job, r.placement) for r in state.running.values()}
        waiting = list(state.queue)
        skipped: set[int] = set()
        self.last_rounds = 0
        while True:
            pool = [j for j in waiting if j.seq not in skipped]
            if not pool:
                break
            self.last_rounds += 1
            before = len(skipped)
            started = self.choose(pool, board, on, state, decisions, skipped)
            if not started and len(skipped) == before:
                break
            waiting = [j for j in waiting if j.seq not in on]
        if not on and waiting:  # the solver found nothing on an idle machine: never stall
            job = waiting[0]
            pl = board.place(job.seq, COMPACT, job.nodes, None, job.bb)
            if pl is not None:
                decisions.start(job, pl)
        return decisions

    def choose(self, pool: list[CoJob], board: Board, on: dict, state: NodeSharingState,
              decisions: PlacementDecisions, skipped: set[int]) -> int:
        """One choice of the combination to add (module doc); returns the jobs it started."""
        cluster = state.cluster
        classes: dict[tuple[int, int], list[CoJob]] = {}
        for job in pool:  # submission order: each class oldest first
            classes.setdefault((self.speeds.of(job), job.nodes), []).append(job)
        keys = list(classes)
        hosts = self.hosts(board, on)
        host_keys = list(hosts)
        options = self.options(keys, classes, host_keys, hosts, cluster)
        if not options:
            return 0
        counts = self.solve(options, [len(classes[k]) for k in keys], [len(hosts[g]) for g in host_keys],
                            board.n_compact)
        # jobs of each class, oldest first, to the chosen options in this order
        queue = {k: list(classes[key]) for k, key in enumerate(keys)}
        host_queue = {g: list(hosts[key]) for g, key in enumerate(host_keys)}
        idle_order = None
        n = 0
        for kind in ("join", "pair", "alone", "compact"):
            for opt, count in zip(options, counts):
                if opt.kind != kind:
                    continue
                for _ in range(count):
                    if kind == "join":  # q guests side by side on the host's nodes where it is alone
                        guests = [queue[opt.k].pop(0) for _ in range(opt.q)]
                        free = np.asarray(host_queue[opt.g].pop(0)[1])
                        n += self.start(decisions, board, on, skipped, [(j, free) for j in guests])
                        continue
                    if idle_order is None:  # joins took no idle node; pairs and alone take them in index order
                        idle_order = np.flatnonzero(board.jobs_on == 0)
                    if kind == "pair":  # the host first (of two single jobs the wider, the older on
                        # equal widths), then each guest on the first host nodes still alone
                        guests = [queue[opt.k].pop(0) for _ in range(opt.q)]
                        host = queue[opt.l].pop(0)
                        if opt.q == 1 and (-guests[0].nodes, guests[0].seq) < (-host.nodes, host.seq):
                            host, guests = guests[0], [host]
                        nodes = idle_order[: 2 * host.nodes]
                        idle_order = idle_order[2 * host.nodes:]
                        n += self.start(decisions, board, on, skipped, [(host, nodes)] + [(j, nodes) for j in guests])
                    elif kind == "alone":
                        job = queue[opt.k].pop(0)
                        nodes = idle_order[: 2 * job.nodes]
                        idle_order = idle_order[2 * job.nodes:]
                        n += self.start(decisions, board, on, skipped, [(job, nodes)])
                    else:  # compact: the first idle nodes in index order
                        job = queue[opt.k].pop(0)
                        pl = board.place(job.seq, COMPACT, job.nodes, None, job.bb)
                        if pl is None:
                            skipped.add(job.seq)
                            continue
                        decisions.start(job, pl)
                        on[job.seq] = (job, pl)
                        n += 1
        return n

    @staticmethod
    def start(decisions: PlacementDecisions, board: Board, on: dict, skipped: set[int],
              group: list[tuple[CoJob, np.ndarray]]) -> int:
        """Place a group of spread jobs on the given node orders, all or none: a job whose
        burst-buffer request does not fit now is left out of this decision (``skipped``), its
        partner stays in the pool of the next round."""
        placed = []
        for job, nodes in group:
            if len(nodes) < 2 * job.nodes:  # cannot happen: the choice counted the nodes
                raise AssertionError(f"FCS: {len(nodes)} nodes for a spread job of {job.nodes}")
            pl = board.place(job.seq, SPREAD, job.nodes, np.asarray(nodes, dtype=np.int64), job.bb)
            if pl is None:
                for _, p in reversed(placed):
                    board.give(p)
                skipped.add(job.seq)
                return 0
            placed.append((job, pl))
        for job, pl in placed:
            decisions.start(job, pl)
            on[job.seq] = (job, pl)
        return len(placed)

    def hosts(self, board: Board, on: dict) -> dict[tuple, list[tuple[int, list[int]]]]:
        """Spread jobs alone on some of their nodes, by class (application, width, current
        speed, nodes alone): ``[(handle, those nodes), ...]`` in handle order."""
        lo, hi = residents(board)
        out: dict[tuple, list] = {}
        for h in sorted(on):
            job, pl = on[h]
            if pl.mode != SPREAD:
                continue
            nodes = np.asarray(pl.nodes)
            single = nodes[lo[nodes] == hi[nodes]]
            if len(single) < 2:
                continue
            key = (self.speeds.of(job), job.nodes, self.job_speed(h, on, lo, hi), len(single))
            out.setdefault(key, []).append((h, single.tolist()))
        return out

    def options(self, keys: list[tuple[int, int]], classes: dict, host_keys: list[tuple], hosts: dict,
                cluster) -> list[Option]:
        """The columns with a positive gain (module doc)."""
        sp = self.speeds
        opts: list[Option] = []
        w = [self.weight(classes[key][0]) for key in keys]
        spread_ok = [cluster.spread_possible(m) for _, m in keys]
        for k, (a, m) in enumerate(keys):
            opts.append(Option("compact", k, idle=m, gain=w[k]))
            if not spread_ok[k]:
                continue
            if sp.alone[a] > 1.0:  # else dominated by compact: twice the nodes, no more speed
                opts.append(Option("alone", k, idle=2 * m, gain=w[k] * float(sp.alone[a])))
            for l, (b, mb) in enumerate(keys):
                if not spread_ok[l] or (l == k and len(classes[keys[k]]) < 2):
                    continue
                for q in sorted({1, mb // m}):  # one guest, or as many as the host's nodes hold
                    if q < 1 or (q == 1 and l < k) or (q > 1 and l == k):
                        continue  # a single pair is listed once; a class does not host itself
                    gain = q * w[k] * float(sp.eff[a, b]) + w[l] * float(sp.eff[b, a])
                    if gain <= q * w[k] + w[l]:
                        continue  # dominated: the same jobs compact do as much on fewer nodes
                    opts.append(Option("pair", k, l, idle=2 * max(m, mb), gain=gain, q=q))
            for g, (hb, hm, cur, free) in enumerate(host_keys):
                hw = float(hm) if self.weights == "nodes" else 1.0
                host_speed = 1.0 if hb < 0 else min(cur, float(sp.eff[hb, a]))
                most = free // (2 * m)  # guests those nodes hold
                for q in sorted({1, most}) if most >= 1 else ():
                    gain = q * w[k] * float(sp.eff[a, hb]) + hw * (host_speed - cur)
                    opts.append(Option("join", k, g=g, gain=gain, q=q))
        return [o for o in opts if o.gain > 0]

    def solve(self, options: list[Option], jobs: list[int], host_counts: list[int], idle: int) -> list[int]:
        """How many times each option runs: maximise the total gain (module doc)."""
        from scipy.optimize import Bounds, LinearConstraint, milp  # imported on first use (import time)
        from scipy.sparse import coo_array

        nv = len(options)
        rows, cols, vals = [], [], []
        ub = np.zeros(nv)
        nk, ng = len(jobs), len(host_counts)
        for v, o in enumerate(options):
            uses = o.uses()
            for k, c in uses.items():
                rows.append(k)
                cols.append(v)
                vals.append(c)
            ub[v] = min(jobs[k] // c for k, c in uses.items())
            if o.idle:
                rows.append(nk)
                cols.append(v)
                vals.append(o.idle)
                ub[v] = min(ub[v], idle // o.idle)
            if o.kind == "join":
                rows.append(nk + 1 + o.g)
                cols.append(v)
                vals.append(1)
                ub[v] = min(ub[v], host_counts[o.g])
        a = coo_array((vals, (rows, cols)), shape=(nk + 1 + ng, nv)).tocsr()
        cap = np.array(list(jobs) + [idle] + list(host_counts), dtype=float)
        gain = np.array([o.gain for o in options])
        res = milp(-gain, integrality=np.ones(nv), bounds=Bounds(np.zeros(nv), ub),
                   constraints=LinearConstraint(a, -np.inf, cap),
                   options={"mip_rel_gap": 0.0, "node_limit": self.node_limit, "presolve": True})
        if res.x is None:
            return [0] * nv
        return [int(round(x)) for x in res.x]


def residents(board: Board) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest job handle on each node (-1: idle); equal when one job is there."""
    c = board.cluster
    own = board.owner.reshape(c.n, -1)
    hi = own.max(axis=1)
    lo = np.where(own >= 0, own, np.iinfo(np.int64).max).min(axis=1)
    lo = np.where(hi >= 0, lo, -1)
    return lo, hi
