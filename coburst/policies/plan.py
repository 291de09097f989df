"""Plan-based scheduling with simulated annealing (Kopański 2020, Alg. 8, §3.4).

``plan-{sum,square,cube,start}-D``: the first ``D`` waiting jobs are started in FCFS order
or reserved (compute and burst buffers) at their earliest date; for the other jobs an
*execution plan* of a permutation gives each job, in order, its earliest start with compute
nodes and burst buffers reserved (:class:`~coburst.core.plan.PlanEvaluator`); the policy
searches the permutation minimising the plan's objective and then fills (Alg. 2) in that
order.  Objectives: the sum of waiting times raised to ``alpha`` = 1, 2, 3 (``sum``,
``square``, ``cube``) or the start of the latest job (``start``), over the permuted jobs.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import ClassVar, Sequence

import numpy as np

from coburst.core.decisions import Decisions
from coburst.core.plan import NowFiller, PlanEvaluator, candidate_orders
from coburst.core.profile import Profile
from coburst.core.state import Job, SchedulerState
from coburst.policies.base import Param, Policy, fits_any_now, reserve, start_in_order

__all__ = ["PlanSum", "PlanSquare", "PlanCube", "PlanStart", "reserve_head", "decision_rng", "anneal"]

INF = math.inf


def reserve_head(profile: Profile, queue: Sequence[Job], depth: int, decisions: Decisions) -> list[Job]:
    """Kopański 2020, Alg. 6 and 8, lines "J <- pop the first D jobs; FCFS(J); reserve
    the rest of J": start the first ``depth`` jobs in order while they fit, reserve the
    others of them (compute and BB; a reservation at now is a start).  Returns the jobs
    after the first ``depth``."""
    head = list(queue[:depth])
    for job in start_in_order(profile, head, decisions):
        reserve(profile, job, decisions)
    return list(queue[depth:])


def decision_rng(seed: int, state: SchedulerState) -> np.random.Generator:
    """Generator of one decision: a function of the seed, the date (to the microsecond)
    and the queue length only, so a decision does not depend on earlier ones."""
    return np.random.default_rng([seed, int(round(state.now * 1e6)), len(state._queue)])


def anneal(ev, n: int, rng: np.random.Generator, *, exhaustive: int, cooling_steps: int,
           temperature_steps: int, cooling_rate: float, time_cap: float = 0.0,
           candidates: list[list[int]] | None = None) -> list[int]:
    """Kopański 2020, Alg. 8, lines 6-31, over an evaluator ``ev`` (``evaluate(perm,
    bound)`` -> score, or inf once the score reaches ``bound``; ``accept()``).

    Choices left open by the text (documented here and in :class:`PlanSum`):

    * exhaustive search (``n <= exhaustive``): permutations in lexicographic order of
      positions, the first with the lowest score wins; a partial plan whose score reaches
      the best so far is abandoned (every objective only grows along a plan);
    * candidates: the 9 orderings of :func:`candidate_orders`; best = first with the lowest
      score, worst = first with the highest; equal scores (or a non-finite best): no
      annealing;
    * a step draws ``i`` uniform in ``[0, n)``, ``j`` uniform in ``[0, n) \\ {i}`` (one
      integer in ``[0, n-1)`` shifted past ``i``) and ``u`` uniform in ``[0, 1)``, always
      in that order; the Metropolis test ``u < exp((S - S')/T)`` is applied in its
      threshold form ``S' < S - T ln u`` (``u = 0``: accept), which also covers
      ``S' < S_best``, so a candidate plan is abandoned once its partial score reaches
      the threshold;
    * ``T <- r T`` after each block of ``temperature_steps`` steps; ``time_cap`` seconds
      (0: none) stops the annealing early (then decisions depend on the machine's speed).
    """
    if n <= exhaustive:
        best, best_perm = INF, None
        for perm in itertools.permutations(range(n)):
            s = ev.evaluate(perm, best)
            if s < best:
                best, best_perm = s, list(perm)
                ev.accept()
        return best_perm if best_perm is not None else list(range(n))
    cands = candidates if candidates is not None else [list(range(n))]
    scores = [ev.evaluate(c) for c in cands]
    b = min(range(len(cands)), key=lambda k: scores[k])
    w = max(range(len(cands)), key=lambda k: scores[k])
    best, worst = scores[b], scores[w]
    best_perm = list(cands[b])
    if best == worst or not math.isfinite(best):
        return best_perm
    ev.evaluate(best_perm)
    ev.accept()
    temp = worst - best
    cur, score = list(best_perm), best
    t_end = time.perf_counter() + time_cap if time_cap > 0 else None
    for _ in range(cooling_steps):
        for _ in range(temperature_steps):
            i = int(rng.integers(n))
            j = int(rng.integers(n - 1))
            if j >= i:
                j += 1
            u = float(rng.random())
            thr = score - temp * math.log(u) if u > 0 else INF
            cand = cur[:]
            cand[i], cand[j] = cand[j], cand[i]
            s = ev.evaluate(cand, thr)
            if s < thr:
                ev.accept()
                cur, score = cand, s
                if s < best:
                    best, best_perm = s, cand
            if t_end is not None and time.perf_counter() > t_end:
                return best_perm
        temp *= cooling_rate
    return best_perm


#: readings of Alg. 8 line 32 ("FILLER(P_best)") -- see :class:`PlanSum`
EXECUTE = ("fill", "plan")

DEPTH = Param("depth", int, 0, lambda d: d >= 0, "reservation depth D, an integer >= 0")
SEED = Param("seed", int, 0, lambda s: s >= 0, "random seed, an integer >= 0")


class PlanSum(Policy):
    """Kopański 2020, Alg. 8, §3.4: plan-based scheduling minimising the sum of waiting
    times (``plan-sum-D``; ``plan-square-D``, ``plan-cube-D``: squared, cubed;
    ``plan-start-D``: start of the latest job).

    Choices left open by the text:

    * the objective covers the permuted jobs (not the ``D`` reserved ones); a waiting time
      is ``planned start - submission time``; a job that never fits the plan (only with
      never-ending jobs) makes the score infinite;
    * the execution plan places each job at its earliest start (compute nodes and burst
      buffers, the placement rules of :mod:`coburst.core.placement`), as conservative
      backfilling does, after the ``D`` reservations;
    * after the search, FILLER(P_best) starts every job that fits now in the order of the
      best permutation (only the ``D`` reservations are protected, line 32); the
      reservations recorded in the decisions are those of the ``D`` jobs;
    * ``execute`` (Alg. 8 line 32 read two ways): ``fill`` (default) is FILLER(P_best) as
      written above; ``plan`` starts only the jobs whose start in P_best's execution plan
      is now (the plan's other jobs keep their planned places, as §3.4 describes an
      execution plan: "only a few jobs could be launched immediately.  Others are
      reserved"), with the plan's allocations -- conservative backfilling in P_best's
      order (the planned places are not recorded as reservations: the next decision plans
      again).  No other reading changes a decision with D = 0: keeping the plan's
      reservations while filling starts exactly the jobs planned at now;
    * search details: :func:`anneal`; random numbers: :func:`decision_rng`;
    * the thesis' 20 s annealing cap is ``time_cap`` (seconds), off by default (0), so
      that decisions are reproducible.

    ``last_tried``: execution plans evaluated (whole or abandoned) in the last decision.

    When no job after the ``D`` reserved ones fits now (``skip_unfit``, on by default), the
    search is skipped: both readings of line 32 start only jobs that fit now on the profile
    with the reservations (a plan's job starting now fits before the plan's other jobs are
    placed), so every permutation gives the same empty decision (``last_tried`` is then 0).
    IO-Aware runs call the policy at every I/O phase's end, mostly on a full machine.
    """

    family = "plan-sum"
    source = "Kopański 2020, Alg. 8"
    objective: ClassVar[str] = "sum"
    params = (
        DEPTH, SEED,
        Param("cooling_rate", (int, float), 0.9, lambda r: 0 < r < 1, "cooling rate r, in (0, 1)"),
        Param("cooling_steps", int, 30, lambda n: n >= 0, "cooling steps N, an integer >= 0"),
        Param("temperature_steps", int, 6, lambda m: m >= 1, "steps per temperature M, an integer >= 1"),
        Param("exhaustive", int, 5, lambda k: 0 <= k <= 8, "exhaustive search up to this queue length (0-8)"),
        Param("time_cap", (int, float), 0.0, lambda t: t >= 0, "annealing time cap in seconds, 0 = none"),
        Param("execute", str, "fill", lambda e: e in EXECUTE,
              "how P_best is executed (line 32): 'fill' (FILLER(P_best), as written) or 'plan' "
              "(only the jobs whose planned start is now)"),
    )

    last_tried: int = 0
    #: skip the search when no job can start now (class doc); False: the former path
    skip_unfit: ClassVar[bool] = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from coburst.core.plan import warm_kernel

        warm_kernel()  # compiled or loaded here, not inside the first decision's time-out

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        self.last_tried = 0
        queue = state.queue
        if not queue:  # nothing to start or reserve: no profile needed
            return decisions
        profile = state.profile()
        rest = reserve_head(profile, queue, self.depth, decisions)
        if not rest or (self.skip_unfit and not fits_any_now(profile, rest)):
            return decisions
        ev = PlanEvaluator(profile, rest, self.objective)
        perm = anneal(ev, len(rest), decision_rng(self.seed, state), exhaustive=self.exhaustive,
                      cooling_steps=self.cooling_steps, temperature_steps=self.temperature_steps,
                      cooling_rate=float(self.cooling_rate), time_cap=float(self.time_cap),
                      candidates=candidate_orders(rest) if len(rest) > self.exhaustive else None)
        self.last_tried = ev.plans
        if self.execute == "plan":
            now = profile.now
            for i, (start, alloc) in zip(perm, ev.plan(perm)):
                if start == now:
                    job = rest[i]
                    profile.occupy(now, now + job.walltime, alloc)
                    decisions.start(job, alloc)
        else:  # FILLER(P_best): fill() as the compiled filling decides it
            NowFiller(profile, rest).start(profile, perm, decisions)
        return decisions


class PlanSquare(PlanSum):
    """Kopański 2020, Alg. 8 with the sum of squared waiting times (alpha = 2); see
    :class:`PlanSum`."""

    family = "plan-square"
    objective = "square"


class PlanCube(PlanSum):
    """Kopański 2020, Alg. 8 with the sum of cubed waiting times (alpha = 3); see
    :class:`PlanSum`."""

    family = "plan-cube"
    objective = "cube"


class PlanStart(PlanSum):
    """Kopański 2020, Alg. 8 with the start of the latest job as objective; see
    :class:`PlanSum`."""

    family = "plan-start"
    objective = "start"
