"""``coburst run`` (in-process) counting live job objects: prints a JSON line
``{"rows": R, "peak": P}`` (P: the peak, sampled at every ``_jobs.csv`` row, of the live
instances of the simulator's ``Job`` and ``SimJob``, pybatsim's ``Job`` and the scheduling
core's ``Job``).  ``--whole`` first: the workload read whole, not streamed.

Usage: ``python live_jobs.py [--whole] coburst-run-args...`` (one SimGrid engine per process).
"""

import json
import sys

import batsim.batsim as pybatsim

from coburst.core.job import Job as CoreJob
from coburst.simulator import accounting
from coburst.simulator import workload as simworkload
from coburst.simulator.jobs import SimJob

count = {"live": 0, "peak": 0, "rows": 0}


def _counted(cls):
    init = cls.__init__

    def counted_init(obj, *args, **kwargs):
        init(obj, *args, **kwargs)
        count["live"] += 1

    def gone(obj):
        count["live"] -= 1

    cls.__init__ = counted_init
    cls.__del__ = gone


for cls in (simworkload.Job, SimJob, pybatsim.Job, CoreJob):
    _counted(cls)
_record = accounting.JobAccounting.record


def _sampled(sim, rec):
    _record(sim, rec)
    count["rows"] += 1
    count["peak"] = max(count["peak"], count["live"])


accounting.JobAccounting.record = _sampled
args = sys.argv[1:]
if args and args[0] == "--whole":
    args = args[1:]
    simworkload.scan_workload = lambda *a: None

from coburst.cli.main import main  # noqa: E402

status = main(["run", *args])
print(json.dumps({"rows": count["rows"], "peak": count["peak"]}))
sys.exit(status)
