"""``coburst run`` (in-process) counting live job objects: prints a JSON line
``{"rows": R, "peak": P, "profiles": Q}`` (P: the peak, sampled at every ``_jobs.csv`` row, of
the live instances of the simulator's ``Job`` and ``SimJob``, pybatsim's ``Job`` and the
scheduling core's ``Job``; Q: the peak of the simulator's live ``Profile`` objects plus the
profiles pybatsim's ``Batsim.profiles`` holds).  ``--whole`` first: the workload read whole, not streamed.

Usage: ``python live_jobs.py [--whole] coburst-run-args...`` (one SimGrid engine per process).
"""

import json
import sys

import batsim.batsim as pybatsim

from coburst.core.job import Job as CoreJob
from coburst.simulator import accounting
from coburst.simulator import workload as simworkload
from coburst.simulator.jobs import SimJob

count = {"live": 0, "peak": 0, "rows": 0, "profiles": 0, "peak_profiles": 0}
schedulers = []


def _counted(cls, what="live"):
    init = cls.__init__

    def counted_init(obj, *args, **kwargs):
        init(obj, *args, **kwargs)
        count[what] += 1

    def gone(obj):
        count[what] -= 1

    cls.__init__ = counted_init
    cls.__del__ = gone


for cls in (simworkload.Job, SimJob, pybatsim.Job, CoreJob):
    _counted(cls)
_counted(simworkload.Profile, "profiles")
_bs_init = pybatsim.Batsim.__init__


def _bs_kept(obj, *args, **kwargs):
    _bs_init(obj, *args, **kwargs)
    schedulers.append(obj)


pybatsim.Batsim.__init__ = _bs_kept
_record = accounting.JobAccounting.record


def _sampled(sim, rec):
    _record(sim, rec)
    count["rows"] += 1
    count["peak"] = max(count["peak"], count["live"])
    held = sum(len(p) for bs in schedulers for p in (getattr(bs, "profiles", None) or {}).values())
    count["peak_profiles"] = max(count["peak_profiles"], count["profiles"] + held)


accounting.JobAccounting.record = _sampled
simworkload.STREAM_FROM_BYTES = 0  # every workload streamed unless --whole, however small
args = sys.argv[1:]
if args and args[0] == "--whole":
    args = args[1:]
    simworkload.scan_workload = lambda *a: None

from coburst.cli.main import main  # noqa: E402

status = main(["run", *args])
print(json.dumps({"rows": count["rows"], "peak": count["peak"], "profiles": count["peak_profiles"]}))
sys.exit(status)
