"""The library API (coburst/api.py): RunConfig checked when made, run() equal to ``coburst run``
byte for byte, the result's paths and metrics, analyze/report through the API."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from coburst import api
from coburst.errors import InputError
from simharness import CLUSTER4, COBURST, workload

pytestmark = pytest.mark.timeout(180)


def _jobs(tmp_path: Path) -> Path:
    return workload(tmp_path / "w.json", [
        {"id": 0, "subtime": 0, "walltime": 20, "res": 4, "profile": "d10"},
        {"id": 1, "subtime": 1, "walltime": 30, "res": 2, "profile": "d20"},
        {"id": 2, "subtime": 2, "walltime": 10, "res": 1, "profile": "d5"},
    ], {"d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20},
        "d5": {"type": "delay", "delay": 5}})


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """One run through the API (easy backfilling, in process) and its inputs."""
    tmp = tmp_path_factory.mktemp("api")
    w = _jobs(tmp)
    config = api.RunConfig(policy="easy", platform=CLUSTER4, workloads=[w], out=tmp / "lib" / "easy")
    return tmp, w, api.run(config)


def test_run_equals_the_command_line(ran):
    tmp, w, result = ran
    out = tmp / "cli" / "easy"
    proc = subprocess.run([str(COBURST), "run", "easy", "-p", str(CLUSTER4), "-w", str(w), "-e", str(out), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert result.jobs_csv.read_bytes() == Path(f"{out}_jobs.csv").read_bytes()


def test_run_with_params_and_options_equals_the_command_line(tmp_path):
    w = _jobs(tmp_path)
    config = api.RunConfig(policy="backfill-sjf-1", platform=str(CLUSTER4), workloads=[str(w)],
                           out=tmp_path / "lib", params={"decision_log": str(tmp_path / "d.csv")},
                           schedule_tracing=False, energy=False, mmax=4)
    result = api.run(config)
    assert result.schedule_trace is None and not Path(f"{tmp_path / 'lib'}_schedule.trace").exists()
    assert result.scheduler_options["policy"] == "backfill-sjf-1"
    proc = subprocess.run([str(COBURST), "run", "backfill-sjf-1", "-o", f'{{"decision_log": "{tmp_path / "e.csv"}"}}',
                           "-p", str(CLUSTER4), "-w", str(w), "-e", str(tmp_path / "cli"),
                           "--disable-schedule-tracing", "--mmax", "4", "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert result.jobs_csv.read_bytes() == (tmp_path / "cli_jobs.csv").read_bytes()


def test_result_paths_and_metrics(ran):
    tmp, _, result = ran
    prefix = tmp / "lib" / "easy"
    assert result.prefix == prefix
    assert result.jobs_csv == Path(f"{prefix}_jobs.csv") and result.jobs_csv.is_file()
    assert result.schedule_csv == Path(f"{prefix}_schedule.csv") and result.schedule_csv.is_file()
    assert result.machine_states_csv == Path(f"{prefix}_machine_states.csv") and result.machine_states_csv.is_file()
    assert result.schedule_trace == Path(f"{prefix}_schedule.trace") and result.schedule_trace.is_file()
    assert result.consumed_energy_csv is None and result.pstate_changes_csv is None
    assert result.nb_compute == 4
    assert result.scheduler_options == {"policy": "easy"}
    m = result.metrics()
    assert m.nb_jobs == 3
    # job 0 holds the 4 nodes for 10 s; jobs 1 and 2 then start together
    assert math.isclose(m.makespan, result.jobs().finish_time.max(), rel_tol=1e-9)
    assert m.mean_waiting > 0 and 0 < m.utilisation <= 1
    assert m.mean_bounded_slowdown >= 1
    assert int(result.sim.schedule["nb_jobs"]) == 3
    with pytest.raises(InputError, match="did not simulate energy"):
        result.energy()


def test_analyze_and_report_through_the_api(ran, tmp_path):
    _, _, result = ran
    runs, jobs = api.analyze([result.prefix])
    assert len(runs) == 1 and len(jobs) == 3
    assert math.isclose(runs["makespan"].iloc[0], result.metrics().makespan, rel_tol=1e-9)
    same, _ = api.analyze(result)  # a RunResult stands for its prefix
    assert same["makespan"].iloc[0] == runs["makespan"].iloc[0]
    assert len(result.table()) == 1
    written = api.write_analysis([result], tmp_path / "tables")
    assert {p.name for p in written} >= {"runs.csv", "runs.parquet", "jobs.csv", "jobs.parquet"}
    html = api.report([result.prefix], tmp_path / "r" / "report.html", title="API report", kinds=["boxen"])
    assert html == tmp_path / "r" / "report.html"
    assert "API report" in html.read_text()
    with pytest.raises(InputError, match="kinds"):
        api.report([result.prefix], tmp_path / "r2.html", kinds=["no-such-figure"])
    with pytest.raises(InputError, match="not a Batsim output"):
        api.analyze([tmp_path / "nothing"])


@pytest.mark.parametrize("change, field", [
    ({"policy": 3}, "RunConfig.policy"),
    ({"platform": None}, "RunConfig.platform"),
    ({"workloads": "w.json"}, "RunConfig.workloads"),
    ({"workloads": ["w.json", 5]}, "RunConfig.workloads[1]"),
    ({"params": {"a": object()}}, "RunConfig.params"),
    ({"params": [1]}, "RunConfig.params"),
    ({"transport": "tcp"}, "RunConfig.transport"),
    ({"energy": "yes"}, "RunConfig.energy"),
    ({"timeout": 0}, "RunConfig.timeout"),
    ({"timeout": math.inf}, "RunConfig.timeout"),
    ({"heatmap_alone": -1.0}, "RunConfig.heatmap_alone"),
    ({"mmax": -1}, "RunConfig.mmax"),
    ({"mmax": 2.5}, "RunConfig.mmax"),
    ({"roles": {"h1": "boss"}}, "RunConfig.roles"),
    ({"sched_cfg": "a", "sched_cfg_file": "b"}, "RunConfig.sched_cfg_file"),
    ({"verbosity": "loud"}, "RunConfig.verbosity"),
    ({"workflow_starts": [("wf.dax",)]}, "RunConfig.workflow_starts[0]"),
])
def test_config_errors_name_the_field(change, field):
    kwargs = {"policy": "easy", "platform": "p.xml", "workloads": ["w.json"], "out": "o", **change}
    with pytest.raises(InputError) as info:
        api.RunConfig(**kwargs)
    assert info.value.source == field


def test_config_is_frozen_and_checked_inputs_fail_before_a_run(tmp_path):
    config = api.RunConfig(policy="easy", platform=CLUSTER4, workloads=[tmp_path / "missing.json"],
                           out=tmp_path / "o")
    with pytest.raises(AttributeError):
        config.policy = "fcfs"
    with pytest.raises(InputError, match="missing.json"):
        api.run(config)
    assert not list(tmp_path.glob("o_*"))
    with pytest.raises(InputError, match="unknown policy|neither a coburst policy"):
        api.run(api.RunConfig(policy="no-such-policy", platform=CLUSTER4, workloads=[_jobs(tmp_path)],
                              out=tmp_path / "o"))
    with pytest.raises(InputError, match="RunConfig"):
        api.run({"policy": "easy"})


def test_roles_mapping_reaches_the_simulator_as_batsim_spells_it():
    config = api.RunConfig(policy="easy", platform="p.xml", roles={"h1": "storage", "h2": "master"})
    assert config.namespace().add_role_to_hosts == ["h1:storage", "h2:master"]
    assert config.namespace().heatmap_alone == "best"
    assert api.RunConfig(policy="easy", platform="p.xml", heatmap_alone=2).namespace().heatmap_alone == "2.0"


@pytest.mark.parametrize("argv", [
    ["easy", "-p", "p.xml", "-w", "w.json", "-e", "o", "-q"],
    ["backfill-1", "-p", "p.xml", "-w", "a.json", "-w", "b.json", "-E", "--mmax", "3", "-r", "h1,h2:storage",
     "--WS", "c.dax", "5", "--disable-schedule-tracing", "--sched-cfg", "x", "--sg-cfg", "a:b", "--timeout", "7",
     "--heatmap", "aris-nas", "--heatmap-alone", "1.5", "--transport", "zmq", "--enable-dynamic-jobs"],
])
def test_command_line_options_round_trip_through_the_config(argv):
    """``coburst run``'s parsed options -> RunConfig -> the options the runner reads: unchanged."""
    import argparse

    from coburst.runner import add_run_arguments

    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    back = vars(api.RunConfig.from_args(args, {}).namespace())
    assert back.pop("options") is None
    assert back == {k: v for k, v in vars(args).items() if k != "options"}


def test_runs_leave_no_thread_behind(tmp_path):
    """The in-process scheduler's watchdog ends with its run: a process that runs many
    simulations (a study, a training loop) does not gather one sleeping thread per run."""
    import threading
    import time

    def watchdogs() -> int:
        return sum(t.name == "coburst-scheduler-watchdog" for t in threading.enumerate())

    w = _jobs(tmp_path)
    for i in range(3):
        api.run(api.RunConfig(policy="easy", platform=CLUSTER4, workloads=[w], out=tmp_path / f"r{i}" / "easy"))
    deadline = time.monotonic() + 5
    while watchdogs() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert watchdogs() == 0


def test_campaign_equals_the_command_and_resumes(tmp_path):
    """api.campaign runs what ``coburst campaign`` runs (same run ids, same bytes), keeps
    the failures in its result, resumes without running anything again, filters and
    dry-runs like the options."""
    from campaign_support import PLATFORM, delay_workloads, run_campaign

    delay_workloads(tmp_path / "wl", [20, 30])
    spec = tmp_path / "c.toml"
    spec.write_text(f'''platforms = ["{PLATFORM}"]
[campaign]
name = "small"
[[schedulers]]
name = "sjf"
scheduler = "backfill-sjf-1"
[[schedulers]]
name = "broken"
scheduler = "easy"
options = {{ no_such_option = 1 }}
[[workloads]]
path = "wl/d{{n}}.json"
vary = {{ n = [20, 30] }}
''')
    plan = api.campaign(spec, out=tmp_path / "lib", dry_run=True, only=["scheduler=sjf"])
    assert plan.pending == plan.runs and len(plan.runs) == 2 and plan.ran == 0
    assert not (tmp_path / "lib").exists()

    result = api.campaign(spec, out=tmp_path / "lib", jobs=2)
    assert result.name == "small" and len(result.runs) == 4 and not result.ok and result.ran == 4
    assert sorted(result.failed) == [r for r in result.runs if "broken" in r]
    assert all("no_such_option" in e for e in result.failed.values())
    assert result.done == [r for r in result.runs if "sjf" in r] and result.pending == []
    assert (result.run_folder(result.done[0]) / "out_jobs.csv").is_file()

    proc = run_campaign(spec, "--out", tmp_path / "cli", "--jobs", "2", "-q")
    assert proc.returncode == 1, proc.stderr
    for run_id in result.runs:
        cli_run, lib_run = tmp_path / "cli" / "runs" / run_id, result.run_folder(run_id)
        assert (cli_run / "status.json").is_file()
        if run_id in result.done:
            assert (cli_run / "out_jobs.csv").read_bytes() == (lib_run / "out_jobs.csv").read_bytes()

    again = api.campaign(tmp_path / "lib")  # the output folder: its stored campaign, resumed
    assert again.ran == 0 and again.done == result.done and sorted(again.failed) == sorted(result.failed)
    retried = api.campaign(spec, out=tmp_path / "lib", retry_failed=True, only=["n=20"])
    assert retried.ran == 1 and len(retried.runs) == 2

    for kwargs, name in (({"jobs": 0}, "jobs"), ({"engine": "simgrid"}, "engine"), ({"only": "n=20"}, "only")):
        with pytest.raises(InputError, match=f"campaign\\({name}="):
            api.campaign(spec, out=tmp_path / "x", **kwargs)
    with pytest.raises(InputError, match="unknown parameter 'colour'"):
        api.campaign(spec, out=tmp_path / "x", only=["colour=red"])
    with pytest.raises(InputError):
        api.campaign(tmp_path / "missing.toml")
