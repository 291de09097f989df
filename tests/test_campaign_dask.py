"""``coburst campaign --scheduler-address``: the same campaign on a Dask distributed cluster
started here (a ``dask scheduler`` and two ``dask worker`` processes on localhost, sharing
this file system) gives the same ``_jobs.csv`` bytes as the local run; and a resumed Dask
campaign runs only what is missing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from campaign_support import MARKED, ROOT, jobs_files, marked_campaign, marks_of, run_campaign
from proc_support import matching

DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    with _cluster(tmp_path_factory.mktemp("dask")) as (address, _procs):
        yield address


@contextlib.contextmanager
def _cluster(folder: Path, workers: int = 2):
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes (each in its own session:
    procs[1 + i] is worker i) on localhost; (address, procs)."""
    folder.mkdir(parents=True, exist_ok=True)
    sched_file = folder / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], cwd=folder, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=open(folder / "scheduler.log", "w"))]
    try:
        deadline = time.monotonic() + 30
        while not sched_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for i in range(workers):
            procs.append(subprocess.Popen([str(DASK), "worker", address, "--nworkers", "1", "--nthreads", "1",
                                           "--no-dashboard", "--name", f"w{i}", "--local-directory",
                                           str(folder / f"w{i}")], cwd=folder, env=env, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=open(folder / f"w{i}.log", "w")))
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield address, procs
    finally:
        for proc in reversed(procs):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_dask_campaign_matches_the_local_run(tmp_path, dask_cluster):
    marks = tmp_path / "marks.txt"
    spec = marked_campaign(tmp_path, [20, 40], ["fcfs", "backfill-1"], marks)
    # resume on Dask too: a part first (--only), then the rest
    part = run_campaign(spec, "--out", tmp_path / "dask", "--scheduler-address", dask_cluster, "--only", "n=20")
    assert part.returncode == 0, part.stderr
    assert "2/2 done" in part.stdout
    full = run_campaign(spec, "--out", tmp_path / "dask", "--scheduler-address", dask_cluster)
    assert full.returncode == 0, full.stderr
    assert "4/4 done, 0 failed, 0 pending; ran 2 in" in full.stdout
    ids = marks_of(marks)
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 4  # each run executed once
    workers = [json.loads((d / "status.json").read_text()).get("worker") for d in (tmp_path / "dask" / "runs").iterdir()]
    assert set(workers) <= {"w0", "w1"} and None not in workers, workers  # executed by the Dask workers

    local = run_campaign(spec, "--out", tmp_path / "local", "--jobs", "2")
    assert local.returncode == 0, local.stderr
    dask_jobs, local_jobs = jobs_files(tmp_path / "dask"), jobs_files(tmp_path / "local")
    assert sorted(dask_jobs) == sorted(local_jobs) and len(local_jobs) == 4
    assert dask_jobs == local_jobs
    for name in local_jobs:  # the same parameters published
        p_d = json.loads((tmp_path / "dask" / "runs" / name / "params.json").read_text())
        p_l = json.loads((tmp_path / "local" / "runs" / name / "params.json").read_text())
        assert p_d == p_l


def test_unreachable_dask_scheduler_is_a_clear_error(tmp_path):
    spec = marked_campaign(tmp_path, [20], ["fcfs"], tmp_path / "marks.txt")
    res = run_campaign(spec, "--out", tmp_path / "o", "--scheduler-address", "tcp://127.0.0.1:9", timeout=60,
                       env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"})
    assert res.returncode == 2, res.stderr
    assert "--scheduler-address: tcp://127.0.0.1:9: cannot reach the Dask scheduler" in res.stderr
    assert "Traceback" not in res.stderr
    # nothing ran: all pending
    assert not [d for d in (tmp_path / "o" / "runs").iterdir() if not d.name.startswith(".")]
    _ = ROOT


#: a scheduler that never answers: its run lasts until the campaign stops it
SILENT = '''
import time
from coburst.adapter import CoburstScheduler


class Silent(CoburstScheduler):
    def onSimulationBegins(self):
        time.sleep(600)
'''


def _run_children(out: Path) -> set[int]:
    """pids of the campaign children simulating into ``out``."""
    return matching(b"coburst.campaign.child", str(out).encode())


@pytest.mark.timeout(180)
def test_ctrl_c_stops_the_runs_on_the_dask_workers(tmp_path, dask_cluster):
    """SIGINT to a Dask campaign: the runs already running on the workers stop too (stop file
    on the shared file system), publish nothing and leave no simulation running; status 130;
    the next invocation starts clean."""
    from campaign_support import campaign_cmd, delay_workloads, write_spec

    (wl,) = delay_workloads(tmp_path / "wl", [20])
    (tmp_path / "silent.py").write_text(SILENT)
    spec = write_spec(tmp_path / "silent.toml", {"name": "silent", "timeout": 600},
                      {"scheduler": "silent.py", "grid": {"policy": ["fcfs", "backfill-1"]}}, {"path": str(wl)})
    out = tmp_path / "o"
    proc = subprocess.Popen(campaign_cmd(spec, "--out", out, "--scheduler-address", dask_cluster), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while len(_run_children(out)) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        time.sleep(1)
        assert len(_run_children(out)) == 2  # both runs simulating (their scheduler silent), one per worker
        proc.send_signal(signal.SIGINT)
        _o, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (err, _o)
    deadline = time.monotonic() + 20
    while _run_children(out) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _run_children(out) == set()  # the workers stopped their simulations
    runs = out / "runs"
    while [d for d in runs.iterdir() if d.name.startswith(".tmp-")] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [d for d in runs.iterdir() if d.name.startswith(".tmp-")]  # the workers removed their folders
    time.sleep(1)
    assert not [d for d in runs.iterdir() if not d.name.startswith(".")]  # nothing published
    assert len(list(out.glob(".stop-*"))) == 1  # the stop file, removed by the next invocation:
    from coburst.campaign import executors
    from coburst.campaign.spec import load_campaign

    executors.open_output(load_campaign(spec, out=out))
    assert not list(out.glob(".stop-*"))


#: a marked scheduler (campaign_support.MARKED) whose every run lasts a few seconds
SLOW_MARKED = MARKED + """

import time


class Slow(Marked):
    def onSimulationBegins(self):
        time.sleep(4)
        super().onSimulationBegins()
"""


def _slow_campaign(tmp_path: Path, policies: list[str]) -> Path:
    from campaign_support import delay_workloads, write_spec

    (wl,) = delay_workloads(tmp_path / "wl", [20])
    (tmp_path / "slow.py").write_text(SLOW_MARKED)
    return write_spec(tmp_path / "slow.toml", {"name": "slow", "timeout": 120},
                      {"scheduler": "slow.py", "options": {"mark": str(tmp_path / "marks.txt"), "run": "{prefix}"},
                       "grid": {"policy": policies}}, {"path": str(wl)})


@pytest.mark.timeout(240)
def test_sigterm_of_a_dask_worker_mid_run_loses_nothing(tmp_path):
    """A worker killed (SIGTERM to its process group) while it runs a simulation: Dask runs
    the task again on the other worker; every run ends published and complete, with the
    bytes of an uninterrupted local campaign."""
    from campaign_support import campaign_cmd

    policies = ["fcfs", "backfill-1", "backfill-2", "backfill-sjf-1"]
    spec = _slow_campaign(tmp_path, policies)
    out = tmp_path / "o"
    marks = tmp_path / "marks.txt"
    with _cluster(tmp_path / "cluster") as (address, procs):
        proc = subprocess.Popen(campaign_cmd(spec, "--out", out, "--scheduler-address", address, "-q"), cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 90
            while len(marks_of(marks)) < 2 and time.monotonic() < deadline:  # a run started on each worker
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.1)
            assert len(marks_of(marks)) >= 2
            published_before = {d.name for d in (out / "runs").iterdir() if not d.name.startswith(".")}
            os.killpg(procs[1].pid, signal.SIGTERM)  # worker 0, mid-run
            _o, err = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, (err, _o)
    runs = {d.name: d for d in (out / "runs").iterdir() if not d.name.startswith(".")}
    assert len(runs) == len(policies), sorted(runs)
    for d in runs.values():
        assert json.loads((d / "status.json").read_text())["state"] == "done"
    assert len(published_before) < len(policies)  # the kill did land mid-campaign
    assert len(marks_of(marks)) > len(policies)  # the killed run started again elsewhere
    ref = run_campaign(spec, "--out", tmp_path / "ref", "--jobs", "2", timeout=240)
    assert ref.returncode == 0, ref.stderr
    assert jobs_files(out) == jobs_files(tmp_path / "ref")


@pytest.mark.timeout(240)
def test_two_campaigns_on_one_folder_never_run_a_run_twice(tmp_path):
    """Two `coburst campaign` processes started together on the same folder: one runs, the
    other is refused by the lock (status 2) and touches nothing; every run is published once,
    complete; a third invocation runs nothing."""
    from campaign_support import campaign_cmd

    policies = ["fcfs", "backfill-1", "backfill-2"]
    spec = _slow_campaign(tmp_path, policies)
    out = tmp_path / "o"
    marks = tmp_path / "marks.txt"
    procs = [subprocess.Popen(campaign_cmd(spec, "--out", out, "--jobs", "2", "-q"), cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=200) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], (codes, results)
    refused = results[[p.returncode for p in procs].index(2)][1]
    assert "another campaign is running in this folder" in refused
    assert sorted(marks_of(marks)) == sorted({*marks_of(marks)})  # no run started twice
    assert len(marks_of(marks)) == len(policies)
    runs = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    assert len(runs) == len(policies)
    for d in runs:
        assert json.loads((d / "status.json").read_text())["state"] == "done"
    again = run_campaign(spec, "--out", out, "--jobs", "2")
    assert again.returncode == 0, again.stderr
    assert len(marks_of(marks)) == len(policies)  # nothing ran again

