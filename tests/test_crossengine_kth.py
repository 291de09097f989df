"""The whole KTH-SP2 log on both engines: the Parallel Workloads Archive's log (read from
``$COBURST_SWF_DIR``, default ``../shared/data/swf``), converted by coburst, run by the real
Batsim 4.2.1 (live, or its recorded run) and by ``coburst sim``; every message the scheduler
receives, ``_jobs.csv``, ``_schedule.csv``, ``_machine_states.csv`` and the Pajé trace compared.

* the 28,467 jobs the log holds for 100 nodes, as delay jobs on ``platforms/kth_sp2.xml``,
  pybatsim's ``easyBackfill``;
* its first 2000 jobs as Alloc-Only ``parallel_homogeneous`` jobs on the thesis dragonfly
  (``platforms/dragonfly96.xml``: 96 compute nodes and 12 burst-buffer nodes), coburst's
  burst-buffer-aware EASY (``schedulers/coburstEasy.py``): parallel tasks, burst buffers and the
  network's contention;
* the whole log the same way (28,453 jobs fit the dragonfly): identical but for two sums of
  ``_schedule.csv``, ``time_computing`` and ``time_idle`` (machine-seconds over 96 machines and
  2.7e6 simulated seconds), which differ by one in the last printed digit (1e-6 of ~2e9): the
  test holds them to that and everything else to the byte.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from crossengine import assert_identical, differences, needs_batsim, run_both
from shared_data import need_swf
from simharness import REPO

KTH_SP2 = REPO / "platforms" / "kth_sp2.xml"
DRAGONFLY = REPO / "platforms" / "dragonfly96.xml"
EASY = str(REPO / "schedulers" / "coburstEasy.py")


def _log():
    return need_swf()


def _alloc_only(tmp_path, jobs: int | None):
    out = tmp_path / "kth_ph.json"
    cmd = [sys.executable, "-m", "coburst", "workload", "swf", str(_log()), "--model", "alloc-only",
           "-p", str(DRAGONFLY), "--seed", "0", "-q", "-o", str(out)]
    if jobs is not None:
        cmd += ["--max-jobs", str(jobs)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return out


@needs_batsim
@pytest.mark.timeout(1200)
def test_whole_kth_log_as_delay_jobs(tmp_path):
    from coburst.workloads.delay import write_delay_workload

    w = tmp_path / "kth_delay.json"
    write_delay_workload(_log(), w, 100, None)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=KTH_SP2, scheduler="easyBackfill",
                               timeout=600, wait=900))


@needs_batsim
@pytest.mark.timeout(1200)
def test_kth_2000_parallel_tasks_on_the_dragonfly(tmp_path):
    w = _alloc_only(tmp_path, 2000)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=DRAGONFLY, scheduler=EASY, timeout=600, wait=900))


@needs_batsim
@pytest.mark.timeout(2400)
def test_whole_kth_log_as_parallel_tasks_on_the_dragonfly(tmp_path):
    w = _alloc_only(tmp_path, None)
    batsim, coburst = run_both(tmp_path, workloads=[w], platform=DRAGONFLY, scheduler=EASY, timeout=1200, wait=1800)
    sums = ("time_computing", "time_idle")
    diffs = [d for d in differences(batsim, coburst) if not d.startswith(tuple(f"_schedule.csv {k}:" for k in sums))]
    assert not diffs, "coburst differs from Batsim 4.2.1:\n" + "\n".join(diffs)
    a, b = batsim.schedule(), coburst.schedule()
    for key in sums:
        assert abs(float(a[key]) - float(b[key])) <= 1.5e-6, (key, a[key], b[key])
