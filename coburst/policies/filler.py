"""Greedy filling without reservations (Kopański 2020, Algorithm 2; ``filler-sjf`` §4.7)."""

from __future__ import annotations

from coburst.policies.backfill import Backfill, BackfillSJF

__all__ = ["Filler", "FillerSJF"]


class Filler(Backfill):
    """Kopański 2020, Alg. 2: start every waiting job whose compute nodes and burst buffers
    are available now, in submission order, skipping those that do not fit.  Not fair: wide
    jobs may starve.  Same decisions as ``backfill-0`` (§4.7)."""

    family = "filler"
    source = "Kopański 2020, Alg. 2"
    params = ()
    depth = 0


class FillerSJF(BackfillSJF):
    """Kopański 2020, §4.7 ``filler-sjf``: FCFS, then greedy filling by ascending walltime,
    without any reservation (``backfill-sjf-0``)."""

    family = "filler-sjf"
    source = "Kopański 2020, §4.7"
    params = ()
    depth = 0
