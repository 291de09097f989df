"""Maximising system utilisation by job permutation search (Kopański 2020, Alg. 6, §3.2).

``maxutil-beta-D``: the queue's compute load ``L_c = sum(size)/M`` and storage load
``L_s = sum(size * bb)/B`` choose the lexicographic objective (compute, storage, mean wait)
when ``L_s <= beta L_c``, else (storage, compute, mean wait), over the jobs a greedy filling
(Alg. 2) of a permutation starts now.  The first ``D`` jobs are started (FCFS) or reserved;
the others are permuted: all permutations when at most 6 of them, otherwise hill climbing
from the best of the 9 candidate orderings.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Sequence

from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.plan import NowFiller, candidate_orders
from coburst.core.state import Job, SchedulerState
from coburst.policies.base import Param, Policy, fits_any_now
from coburst.policies.plan import reserve_head

__all__ = ["MaxUtil", "compute_first", "util_score", "hill_climb"]


def compute_first(cluster: Cluster, queue: Sequence[Job], beta: float) -> bool:
    """Kopański 2020, Alg. 6 lines 2-7: True when ``L_storage <= beta * L_compute``
    (objective (compute, storage, mean wait)), False for (storage, compute, mean wait).
    A platform without burst buffers has no storage load."""
    lc = sum(j.res for j in queue) / cluster.n_compute
    ls = sum(j.res * j.bb for j in queue) / cluster.total_bb_capacity if cluster.total_bb_capacity else 0.0
    return ls <= beta * lc


def util_score(jobs: Sequence[Job], started: Sequence[int], now: float, cfirst: bool) -> tuple:
    """The objective tuple of the jobs ``started`` (indices into ``jobs``): sums of
    requested nodes and of BB bytes, and their mean waiting time (``math.fsum``: exact,
    order-independent; 0 when none starts)."""
    c = s = 0
    for i in started:
        j = jobs[i]
        c += j.res
        s += j.res * j.bb
    w = math.fsum(now - jobs[i].subtime for i in started) / len(started) if started else 0.0
    return (c, s, w) if cfirst else (s, c, w)


def hill_climb(evaluate, n: int, perm: list[int], best: tuple, last: int, steps: int):
    """Kopański 2020, Alg. 6 lines 16-31: swaps at distance 1, 2, ... of positions
    ``0..min(last, n - distance - 1)``; an improving swap is kept and the climb restarts
    at distance 1; at most ``steps`` swaps are tried.  ``evaluate(perm)`` -> ``(score, accept)``,
    ``accept()`` keeping that permutation and returning its last launched position.  Returns ``(perm, score, steps tried)``."""
    tried = 0
    restart = True
    while restart:
        restart = False
        for dist in range(1, n):
            for idx in range(0, min(last, n - dist - 1) + 1):
                tried += 1
                if tried > steps:
                    return perm, best, steps
                perm[idx], perm[idx + dist] = perm[idx + dist], perm[idx]
                score, accept = evaluate(perm)
                if score > best:
                    best, last = score, accept()
                    restart = True
                    break
                perm[idx], perm[idx + dist] = perm[idx + dist], perm[idx]
            if restart:
                break
    return perm, best, tried


class MaxUtil(Policy):
    """Kopański 2020, Alg. 6, §3.2: ``maxutil-beta-D``.

    Choices left open by the text:

    * loads are computed over the whole waiting queue (before the ``D`` jobs are taken);
      ``M`` = compute nodes, ``B`` = total BB capacity; the normalisations do not change
      the comparisons, so the score tuple holds plain sums;
    * "could be launched immediately" is greedy filling (Alg. 2) of the permutation at now
      on the profile holding the ``D`` reservations: exactly what FILLER(P) then does;
      mean wait = mean of ``now - submission time`` over the started jobs (0 if none);
    * exhaustive search when at most ``exhaustive`` (6) jobs are permuted: permutations in
      lexicographic order of positions, the first with the highest score wins;
    * hill climbing starts from the first best of the 9 candidate orderings
      (:func:`~coburst.core.plan.candidate_orders`); ``last`` = position of the last
      started job (-1 if none: no swap can help); ``steps`` (N = 5000) counts tried swaps
      over all restarts (:func:`hill_climb`).

    ``last_tried``: permutations evaluated in the last decision (0 when no job after the
    reserved ones fits now: the search is skipped, ``skip_unfit``).
    """

    family = "maxutil"
    source = "Kopański 2020, Alg. 6"
    params = (
        Param("beta", (int, float), 1.0, lambda b: b > 0 and math.isfinite(b), "balance factor beta, > 0"),
        Param("depth", int, 1, lambda d: d >= 0, "reservation depth D, an integer >= 0"),
        Param("steps", int, 5000, lambda n: n >= 0, "hill-climbing steps N, an integer >= 0"),
        Param("exhaustive", int, 6, lambda k: 0 <= k <= 8, "exhaustive search up to this queue length (0-8)"),
    )

    last_tried: int = 0
    #: skip the search when no job after the reserved ones can start now: every permutation
    #: fills nothing then, so the decision is the same (``last_tried`` is then 0); False:
    #: the former path (the tests' reference)
    skip_unfit: ClassVar[bool] = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from coburst.core.plan import warm_kernel

        warm_kernel()  # compiled or loaded here, not inside the first decision's time-out

    @property
    def name(self) -> str:
        return f"{self.family}-{float(self.beta)}-{self.depth}"

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        profile = state.profile()
        queue = state.queue
        cfirst = compute_first(state.cluster, queue, float(self.beta))
        rest = reserve_head(profile, queue, self.depth, decisions)
        self.last_tried = 0
        if not rest or (self.skip_unfit and not fits_any_now(profile, rest)):
            return decisions
        nf = NowFiller(profile, rest)
        perm = self.search(nf, rest, state.now, cfirst)
        nf.start(profile, perm, decisions)   # FILLER(P), as fill() decides it
        return decisions

    def search(self, nf: NowFiller, jobs: list[Job], now: float, cfirst: bool) -> list[int]:
        n = len(jobs)
        if n <= self.exhaustive:
            best, best_perm = None, list(range(n))
            for perm in itertools.permutations(range(n)):
                sc = util_score(jobs, nf.evaluate(perm), now, cfirst)
                nf.accept()
                if best is None or sc > best:
                    best, best_perm = sc, list(perm)
            self.last_tried = nf.evals
            return best_perm
        best, best_perm, best_started = None, None, None
        for cand in candidate_orders(jobs):
            started = nf.evaluate(cand)
            sc = util_score(jobs, started, now, cfirst)
            if best is None or sc > best:
                best, best_perm, best_started = sc, list(cand), started
        nf.evaluate(best_perm)
        nf.accept()

        def last_of(perm, started):
            ss = set(started)
            return max((p for p, i in enumerate(perm) if i in ss), default=-1)

        def evaluate(perm):
            started = nf.evaluate(perm)

            def accept():
                nf.accept()
                return last_of(perm, started)
            return util_score(jobs, started, now, cfirst), accept

        perm, best, _ = hill_climb(evaluate, n, best_perm, best, last_of(best_perm, best_started), self.steps)
        self.last_tried = nf.evals
        return perm
