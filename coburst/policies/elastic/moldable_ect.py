"""Moldable jobs sized by their expected completion time.

Source: Cirne & Berman, "Using moldability to improve the performance of supercomputer jobs",
J. Parallel Distrib. Comput. 62(10), 2002: a moldable job, rather than asking for one size,
takes the size with which it is expected to *complete* first, given the machine's state (the
time it would wait for that many nodes plus its run time on them).  The rules below are this
reading of it, first come first served, on coburst's elastic job model:

1. the head of the queue is sized: for every size ``n`` it may start on, its expected start is
   the earliest date at which ``n`` resources are free, by the expected ends of the running jobs,
   and its expected completion that date plus its expected run time on ``n``; it takes the size
   with the earliest completion (the smaller on a tie), and starts if that size is free now;
   otherwise it waits (and is sized again at the next message), and so do the jobs behind it;
2. expected run times come from the jobs' models: the time of the analytic tasks of an elastic
   job's model on ``n`` nodes of ``speed`` flop/s (its ``on_init`` and every iteration; the
   network's share is not foreseen), a plain job's ``delay`` profile, else its walltime; a
   running job without any of them never ends, for this estimate;
3. the simulator tells the models when it forwards the profiles on submission, which ``coburst
   run`` and :func:`coburst.adapter.elastic.run_elastic` ask for this policy
   (:attr:`MoldableECT.needs_profiles`).

Malleable jobs are sized the same way and never resized (no job is resized by this policy:
evolving jobs' requests are refused).
"""

from __future__ import annotations

import math
from typing import ClassVar

from coburst.policies.base import Param
from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState

__all__ = ["MoldableECT"]


class MoldableECT(ElasticPolicy):
    """First come first served; each job takes the size that completes it first."""

    family: ClassVar[str] = "moldable-ect"
    source: ClassVar[str] = "Cirne & Berman 2002 (J. Parallel Distrib. Comput. 62(10)), submit-time moldability"
    params = (Param("speed", (int, float), 1e9, lambda v: 0 < v < math.inf,
                    "flop/s of a node, for the models' flops (a number > 0)"),)
    #: the simulator forwards the profiles on submission (the jobs' models)
    needs_profiles: ClassVar[bool] = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._times: dict[tuple[str, int], float] = {}

    def runtime(self, job: EJob, n: int) -> float:
        """The expected run time of ``job`` on ``n`` resources (inf: unknown)."""
        key = (job.id, n)
        known = self._times.get(key)
        if known is None:
            spec = job.model
            if spec is not None:
                known = spec.cost(spec.app.on_init, n, n, self.speed) + spec.model_work(
                    [(p, i, n) for p, count in enumerate(spec.iterations) for i in range(count)], self.speed)
            elif job.delay is not None:
                known = job.delay
            else:
                known = job.walltime if job.walltime >= 0 else math.inf
            self._times[key] = known
        return known

    def schedule(self, state: ElasticState, d: Decisions) -> None:
        if len(self._times) > 4096:  # (forget the jobs that ended)
            live = {j.id for j in state.queue} | set(state.running)
            self._times = {k: v for k, v in self._times.items() if k[0] in live}
        n_total = len(state.compute)
        for job in state.too_wide():
            d.reject(job)
        ends = sorted((job.start + self.runtime(job, job.size), job.size) for job in state.running.values())
        while state.queue:
            head = state.queue[0]
            lo, hi = head.start_sizes()
            best = None
            for n in range(lo, min(hi, n_total) + 1):
                start = self._free_at(state, ends, n)
                done = start + self.runtime(head, n)
                if best is None or done < best[0]:
                    best = (done, n, start)
            _, n, start = best
            if start > state.now or len(state.free) < n:
                return
            d.start(head, sorted(state.free)[:n])
            ends = sorted(ends + [(state.now + self.runtime(head, n), n)])

    @staticmethod
    def _free_at(state: ElasticState, ends: list[tuple[float, int]], n: int) -> float:
        free = len(state.free)
        if free >= n:
            return state.now
        for end, size in ends:
            free += size
            if free >= n:
                return max(end, state.now)
        return math.inf
