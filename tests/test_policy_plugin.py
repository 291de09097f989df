"""The example policy plugin (examples/policy-plugin) end to end: laid out in a folder as an
installer leaves it (tests/plugin_support.py), on the PYTHONPATH of coburst's processes, it is
listed by ``coburst policies``, runs by ``coburst run`` (in process and over ZeroMQ), in a
two-policy campaign whose report names it, through ``schedulers/coburstPolicy.py`` against
``coburst sim`` over ZeroMQ (and the real Batsim when ``BATSIM`` is set).  Its own tests:
test_policy_plugin_selftest.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plugin_support import EXAMPLE as PLUGIN
from plugin_support import install_example, plugin_env
from simharness import BATSIM, CLUSTER4, run_sim, workload

ROOT = Path(__file__).resolve().parents[1]
NAME = "smallest-area-first"
#: a machine that frees at 10 s: the small jobs (areas 4 and 8) pass the wide one (area 400)
JOBS = [{"id": 0, "subtime": 0, "res": 4, "walltime": 20, "profile": "d10"},
        {"id": 1, "subtime": 1, "res": 4, "walltime": 100, "profile": "d50"},
        {"id": 2, "subtime": 2, "res": 1, "walltime": 4, "profile": "d3"},
        {"id": 3, "subtime": 2, "res": 2, "walltime": 4, "profile": "d3"}]
PROFILES = {f"d{t}": {"type": "delay", "delay": t} for t in (3, 10, 50)}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install_example(tmp_path_factory.mktemp("site"))


@pytest.fixture
def env(site, monkeypatch) -> dict[str, str]:
    """The plugin on the PYTHONPATH of every process the test starts (run_sim's scheduler too)."""
    return plugin_env(site, monkeypatch)


def coburst(env, *args, cwd=None, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "coburst", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=240)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def starts(jobs_csv: Path) -> dict[str, float]:
    import csv

    with open(jobs_csv, newline="") as fh:
        return {r["job_id"]: round(float(r["starting_time"]), 1) for r in csv.DictReader(fh)}


SAF_STARTS = {"0": 0.0, "1": 13.0, "2": 10.0, "3": 10.0}


def test_listed_and_described(env):
    out = coburst(env, "policies").stdout
    line = next(line for line in out.splitlines() if line.startswith(NAME))
    assert line.split()[1:4] == ["bb", "plugin", "coburst-saf"] and "Lifka 1995" in line
    detail = coburst(env, "policies", NAME).stdout
    assert "plugin: distribution coburst-saf 0.1.0, entry point smallest-area-first = coburst_saf:SmallestAreaFirst" \
        in detail
    assert "  depth   int" in detail and "  ageing  int | float  0.0" in detail
    doc = json.loads(coburst(env, "policies", "--json").stdout)
    mine = [d for d in doc["policies"] if d["name"] == NAME]
    assert len(mine) == 1 and mine[0]["origin"] == "plugin" and doc["problems"] == []


def test_coburst_run_in_process_and_over_zmq(env, tmp_path):
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    for transport in ("inprocess", "zmq"):
        coburst(env, "run", NAME, "-p", CLUSTER4, "-w", wl, "-e", tmp_path / transport, "-q", "--transport", transport,
                "-o", '{"depth": 1}')
        assert starts(Path(f"{tmp_path / transport}_jobs.csv")) == SAF_STARTS, transport
    bad = coburst(env, "run", NAME, "-p", CLUSTER4, "-w", wl, "-e", tmp_path / "bad", "-q", "-o", '{"depth": -1}',
                  check=False)
    assert bad.returncode == 2 and "depth" in bad.stderr and "Traceback" not in bad.stderr


def test_a_two_policy_campaign_and_its_report(env, tmp_path):
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    spec = tmp_path / "c.toml"
    spec.write_text(f'''
platforms = ["{CLUSTER4}"]
workloads = ["{wl}"]
[[schedulers]]
scheduler = "{NAME}"
[[schedulers]]
scheduler = "backfill-1"
''')
    out = tmp_path / "camp"
    coburst(env, "campaign", spec, "--out", out, "--jobs", "2")
    runs = {json.loads((d / "params.json").read_text())["scheduler"]: d for d in (out / "runs").iterdir()}
    assert set(runs) == {NAME, "backfill-1"}
    assert starts(runs[NAME] / "out_jobs.csv") == SAF_STARTS
    assert starts(runs["backfill-1"] / "out_jobs.csv")["1"] == 10.0  # FCFS order first
    report = tmp_path / "report.html"
    coburst(env, "report", out, "-o", report, "--baseline", "backfill-1", "--kinds", "boxen")
    assert NAME in report.read_text()


def test_the_generic_entry_file_over_zmq(env, tmp_path):
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    run = run_sim(tmp_path, workloads=[wl], scheduler=str(ROOT / "schedulers" / "coburstPolicy.py"),
                  options={"policy": NAME}, timeout=30, wait=120).check()
    assert {k.split("!")[1]: round(float(r["starting_time"]), 1) for k, r in run.jobs().items()} == SAF_STARTS
    assert "Traceback" not in run.sched_output


@pytest.mark.batsim_live
@pytest.mark.skipif(not BATSIM, reason="needs the real Batsim 4.2.1 binary (BATSIM=/path/to/batsim)")
def test_the_generic_entry_file_on_the_real_batsim(env, tmp_path):
    """The plugin through schedulers/coburstPolicy.py against the real Batsim 4.2.1 and against
    coburst sim: the same jobs, starts and allocations (on a flat cluster Batsim accepts)."""
    from coburst.platforms.cluster import ClusterSpec, render_xml

    platform = tmp_path / "cluster4.xml"
    platform.write_text(render_xml(ClusterSpec(nodes=4)))
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    runs = {engine: run_sim(tmp_path, workloads=[wl], platform=platform, options={"policy": NAME}, timeout=30,
                            scheduler=str(ROOT / "schedulers" / "coburstPolicy.py"), wait=120, prefix=engine,
                            engine=engine).check() for engine in ("coburst", "batsim")}
    rows = {engine: {k: (r["final_state"], round(float(r["starting_time"]), 5), r["allocated_resources"])
                     for k, r in run.jobs().items()} for engine, run in runs.items()}
    assert rows["batsim"] == rows["coburst"]
    assert {k.split("!")[1]: round(v[1], 1) for k, v in rows["batsim"].items()} == SAF_STARTS
