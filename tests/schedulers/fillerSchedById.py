"""Test scheduler: pybatsim 3.2.1's ``fillerSched``, its code unchanged, with pybatsim's Job
objects hashed by their id (used by ``tests/test_batsim_corpus.py`` on both engines).

``fillerSched`` keeps its waiting jobs in a ``set`` of Job objects and tries them in the set's
order (``for job in set(self.openJobs)``).  pybatsim's ``Job`` has no ``__hash__`` of its own,
so that order follows memory addresses: with two or more jobs waiting, two runs on the same
engine may start them in another order (measured on Batsim 4.2.1 and on coburst alike,
``test_case_study1.json``).  Hashed by their id string (``PYTHONHASHSEED=0`` in the test
harness), the jobs come out of the set in an order fixed by the ids and the sequence of
submissions and completions: the same messages give the same decisions, on either engine.
Equality stays identity, as in pybatsim (a job is one object per run).
"""

from batsim.batsim import Job
from schedulers.fillerSched import FillerSched

Job.__hash__ = lambda self: hash(self.id)


class FillerSchedById(FillerSched):
    """pybatsim's ``FillerSched`` (``schedulers/fillerSched.py``), nothing overridden."""
