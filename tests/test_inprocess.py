"""In-process schedulers (``coburst run --transport inprocess``, the default): the unchanged
pybatsim scheduler file runs inside the simulator's process and gets the same Batsim
messages through memory — its decisions, hence every output, must equal the ZeroMQ path's
(``--transport zmq``: a separate pybatsim process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from simharness import CLUSTER4, DATA, REPO, SCHEDULERS, workload

pytestmark = pytest.mark.timeout(300)

OUTPUTS = ("_jobs.csv", "_machine_states.csv", "_schedule.trace")


def coburst_run(tmp_path: Path, transport: str, scheduler: str, workloads: list[Path], platform: Path,
                options: dict | None = None, args: tuple[str, ...] = ()) -> Path:
    prefix = tmp_path / transport
    cmd = [sys.executable, "-m", "coburst", "run", scheduler, "--transport", transport, "-q",
           "-o", json.dumps(options or {}), "-p", str(platform), "-e", str(prefix), *args]
    for w in workloads:
        cmd += ["-w", str(w)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                          env={"PYTHONPATH": str(SCHEDULERS), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return prefix


def assert_same_outputs(tmp_path: Path, **kwargs) -> None:
    a = coburst_run(tmp_path, "inprocess", **kwargs)
    b = coburst_run(tmp_path, "zmq", **kwargs)
    for suffix in OUTPUTS:
        assert Path(f"{a}{suffix}").read_text() == Path(f"{b}{suffix}").read_text(), suffix
    sa = Path(f"{a}_schedule.csv").read_text().splitlines()
    sb = Path(f"{b}_schedule.csv").read_text().splitlines()
    keys = sa[0].split(",")
    wall = {"scheduling_time", "simulation_time"}
    assert [v for k, v in zip(keys, sa[1].split(",")) if k not in wall] == \
        [v for k, v in zip(keys, sb[1].split(",")) if k not in wall]


def test_pybatsim_easy_backfill_on_kth(tmp_path):
    doc = json.loads((REPO / "workloads" / "kth_sp2_delay_5000.json").read_text())
    doc["jobs"] = doc["jobs"][:600]
    w = tmp_path / "kth600.json"
    w.write_text(json.dumps(doc))
    assert_same_outputs(tmp_path, scheduler="easyBackfill", workloads=[w], platform=REPO / "platforms" / "kth_sp2.xml")


def test_coburst_entry_file_with_burst_buffers(tmp_path):
    assert_same_outputs(tmp_path, scheduler=str(REPO / "schedulers" / "coburstBackfill.py"),
                        options={"policy": "backfill-sjf-1"},
                        workloads=[REPO / "workloads" / "kth_alloc_only_sample.json"],
                        platform=REPO / "platforms" / "dragonfly_small.xml")


def test_kills_calls_metadata_rejections(tmp_path):
    profiles = {"d10": {"type": "delay", "delay": 10}, "d2": {"type": "delay", "delay": 2},
                "seq": {"type": "composed", "seq": ["d2", "d10"]},
                "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 1e6}}
    w = workload(tmp_path / "w.json", [
        {"id": "delay", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "seq", "subtime": 1, "res": 1, "profile": "seq"},
        {"id": "ptask", "subtime": 1, "res": 1, "profile": "p10"},
        {"id": "rej", "subtime": 2, "res": 1, "profile": "d2"},
        {"id": "late", "subtime": 2, "res": 1, "profile": "d2"},
    ], profiles)
    options = {"allocs": {"w0!delay": "0", "w0!seq": "1", "w0!ptask": "2", "w0!late": "3"},
               "kill": [[6, ["w0!delay", "w0!seq", "w0!ptask"]]], "reject": ["w0!rej"],
               "metadata": {"w0!late": "x=1"}, "start_at": {"w0!late": 3.5}, "calls": [20]}
    assert_same_outputs(tmp_path, scheduler=str(SCHEDULERS / "fixed.py"), workloads=[w], platform=CLUSTER4,
                        options=options)


def test_dynamic_jobs(tmp_path):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    options = {"allocs": {"w0!1": "0"}, "profiles": {"p5": {"type": "delay", "delay": 5}},
               "jobs": [{"id": "dyn!a", "res": 2, "walltime": 10, "profile": "p5", "alloc": "1-2"}]}
    assert_same_outputs(tmp_path, scheduler=str(SCHEDULERS / "dynamic.py"), workloads=[w], platform=CLUSTER4,
                        options=options, args=("--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"))


def test_a_failing_in_process_scheduler_is_reported(tmp_path):
    """The scheduler's own exception ends the run with exit status 4 and its traceback."""
    bad = tmp_path / "crashing.py"
    bad.write_text("from batsim.batsim import BatsimScheduler\n\n"
                   "class Crashing(BatsimScheduler):\n"
                   "    def onJobSubmission(self, job):\n"
                   "        raise RuntimeError('boom in the scheduler')\n")
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", str(bad), "-p", str(CLUSTER4), "-w", str(w),
                           "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stderr
    assert "boom in the scheduler" in proc.stderr and "RuntimeError" in proc.stderr
    assert not list(tmp_path.glob("o_*")) and not list(tmp_path.glob(".o_*"))


def test_unknown_scheduler_is_an_input_error(tmp_path):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "noSuchScheduler", "-p", str(CLUSTER4),
                           "-w", str(w), "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "noSuchScheduler" in proc.stderr and "Traceback" not in proc.stderr
    assert DATA.is_dir()


def test_a_hanging_in_process_scheduler_is_stopped(tmp_path):
    """A scheduler stuck in its own code: past --timeout the run stops with status 4 and a
    clear message, and leaves no output behind (never a hang)."""
    bad = tmp_path / "hanging.py"
    bad.write_text("import time\nfrom batsim.batsim import BatsimScheduler\n\n"
                   "class Hanging(BatsimScheduler):\n"
                   "    def onJobSubmission(self, job):\n"
                   "        while True:\n"
                   "            time.sleep(0.01)\n")
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", str(bad), "-p", str(CLUSTER4), "-w", str(w),
                           "-e", str(tmp_path / "o"), "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr
    assert "did not answer within 2 s" in proc.stderr and "simulated time 1.000000" in proc.stderr
    assert not list(tmp_path.glob("o_*")) and not list(tmp_path.glob(".o_*"))
