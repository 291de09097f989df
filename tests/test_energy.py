"""Energy (``coburst sim -E``) against integrals computed by hand, without Batsim.

Platform (written below): two hosts ``h0``, ``h1`` of a cluster, pstates 0 (100 Mf/s,
``100:120:200`` W = Idle:Epsilon:AllCores), 1 (50 Mf/s, ``90:100:150``), 2 (sleep, 5 W),
3 (switch-off virtual pstate, 0.5 f/s: 1 flop = 2 s at 150 W), 4 (switch-on virtual
pstate, 0.25 f/s: 4 s at 160 W); the master in a ``routing="None"`` zone, so the
scheduler's decisions take effect at once and a job starts at its submission date.

SimGrid's model (``host_energy.cpp``): power = Idle without load, else
Epsilon + load x (AllCores - Epsilon), load = flops/s computed / pstate speed.
"""

from __future__ import annotations

import csv
import io

import pytest

from coburst.analysis.tables import load
from simharness import run_cli, run_sim, workload

pytestmark = pytest.mark.timeout(120)

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="h" suffix="" radical="0-1" speed="100Mf, 50Mf, 1e-9Mf, 0.5f, 0.25f"
             bw="1250MBps" lat="50us" bb_bw="2500MBps" bb_lat="500us">
      <prop id="wattage_per_state" value="100:120:200, 90:100:150, 5:5:5, 150:150:150, 160:160:160"/>
      <prop id="wattage_off" value="3"/>
      <prop id="sleep_pstates" value="2:3:4"/>
    </cluster>
    <zone id="mz" routing="None">
      <host id="master_host" speed="1Gf"/>
    </zone>
    <link id="ml" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="hc_router">
      <link_ctn id="ml"/>
    </zoneRoute>
  </zone>
</platform>
"""


@pytest.fixture()
def platform(tmp_path):
    path = tmp_path / "energy2.xml"
    path.write_text(PLATFORM)
    return path


def energy_rows(run) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(open(f"{run.prefix}_consumed_energy.csv").read())))


def run_probe(tmp_path, platform, jobs, profiles, options, args=("-E",)):
    wl = workload(tmp_path / "w.json", jobs, profiles, nb_res=2)
    return run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe",
                   options={"query": True, **options}, args=list(args), record=True, wait=60).check()


def test_delay_and_compute_jobs(tmp_path, platform):
    """A delay job (no CPU load: Idle power) and a compute job (full load: AllCores) side by side."""
    run = run_probe(tmp_path, platform,
                    [{"id": 1, "subtime": 1, "res": 1, "profile": "delay"},
                     {"id": 2, "subtime": 1, "res": 1, "profile": "compute"}],
                    {"delay": {"type": "delay", "delay": 10},
                     "compute": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}, {})
    jobs = run.jobs()
    assert (jobs["w0!1"]["starting_time"], jobs["w0!1"]["finish_time"]) == ("1.000000", "11.000000")
    assert (jobs["w0!2"]["starting_time"], jobs["w0!2"]["finish_time"]) == ("1.000000", "11.000000")
    assert jobs["w0!1"]["consumed_energy"] == "1000.000000"  # 100 W x 10 s
    assert jobs["w0!2"]["consumed_energy"] == "2000.000000"  # 200 W x 10 s
    rows = energy_rows(run)
    # at t = 1 both hosts were idle since 0: 2 x 100 W x 1 s; wattmin = 2 x Epsilon(pstate 0)
    assert [(r["time"], r["energy"], r["event_type"], r["wattmin"], r["epower"]) for r in rows] == [
        ("1.000000", "200.000000", "s", "240.000000", "200.000000"),
        ("1.000000", "200.000000", "s", "240.000000", "NA"),
        ("11.000000", "3200.000000", "e", "240.000000", "300.000000"),
        ("11.000000", "3200.000000", "e", "240.000000", "NA"),
    ]
    # consumed_joules: last job end minus first submission (t = 1)
    assert run.schedule()["consumed_joules"] == "3000.000000"
    answers = run.events("ANSWER")
    assert answers and answers[0]["timestamp"] == 1.0 and answers[0]["data"] == {"consumed_energy": 200.0}
    assert open(f"{run.prefix}_pstate_changes.csv").read() == "time,machine_id,new_pstate\n0,0-1,0\n"
    # the analysis reads it: the run's energy (consumed_joules, and from time 0), each job's
    runs, jobs = load([run.jobs_csv])
    assert (runs.loc[0, "energy"], runs.loc[0, "energy_total"]) == (3000.0, 3200.0)
    assert sorted(jobs["energy"]) == [1000.0, 2000.0]


def test_pstates_and_partial_load(tmp_path, platform):
    """h1 in pstate 1 (50 Mf/s): a task of 1 Gflop per host runs at h1's pace (20 s), h1 is
    fully loaded (150 W), h0 half loaded: Epsilon + 0.5 x (AllCores - Epsilon) = 160 W."""
    run = run_probe(tmp_path, platform,
                    [{"id": 1, "subtime": 1, "res": 2, "profile": "compute"}],
                    {"compute": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
                    {"initial": [["1", 1]]})
    row = run.jobs()["w0!1"]
    assert (row["starting_time"], row["finish_time"]) == ("1.000000", "21.000000")
    assert row["consumed_energy"] == "6200.000000"  # 20 s x (160 + 150) W
    changed = run.events("RESOURCE_STATE_CHANGED")
    assert [(e["timestamp"], e["data"]) for e in changed] == [(0.0, {"resources": "1", "state": "1"})]
    assert open(f"{run.prefix}_pstate_changes.csv").read() == \
        "time,machine_id,new_pstate\n0,0-1,0\n0,1,-1\n0,1,1\n"
    rows = energy_rows(run)
    assert [(r["time"], r["energy"], r["event_type"], r["wattmin"]) for r in rows] == [
        ("0.000000", "0.000000", "p", "240.000000"), ("0.000000", "0.000000", "p", "220.000000"),
        ("1.000000", "190.000000", "s", "220.000000"), ("21.000000", "6390.000000", "e", "220.000000")]
    sched = run.schedule()
    assert (sched["consumed_joules"], sched["nb_grouped_switches"], sched["nb_machine_switches"]) == \
        ("6200.000000", "1", "1")


def test_sleep_switch_off_and_on(tmp_path, platform):
    """Sleep pstates: a switch off runs 1 flop at pstate 3 (2 s, 150 W), a switch on 1 flop at
    pstate 4 (4 s, 160 W); a sleeping host draws 5 W."""
    run = run_probe(tmp_path, platform,
                    [{"id": 1, "subtime": 10, "res": 1, "profile": "d5"},
                     {"id": 2, "subtime": 30, "res": 2, "profile": "d5"}],
                    {"d5": {"type": "delay", "delay": 5}}, {"sleep": [2, 0]})
    jobs = run.jobs()
    assert jobs["w0!1"]["starting_time"] == "10.000000"
    assert jobs["w0!1"]["consumed_energy"] == "500.000000"
    assert jobs["w0!2"]["consumed_energy"] == "1000.000000"
    changed = [(e["timestamp"], e["data"]["resources"], e["data"]["state"])
               for e in run.events("RESOURCE_STATE_CHANGED")]
    # h1 sleeps from 12, h0 after job 1 (its end is reported dj later), both woken at 30
    assert [c[1:] for c in changed] == [("1", "2"), ("0", "2"), ("0-1", "0"), ("0-1", "2")]
    dj = changed[0][0] - 12
    assert 0 < dj < 1e-3
    completed = {e["data"]["job_id"]: e["timestamp"] for e in run.events("JOB_COMPLETED")}
    assert changed[1][0] == pytest.approx(completed["w0!1"] + 2 + dj, abs=2e-6)
    sched = run.schedule()
    assert (sched["nb_grouped_switches"], sched["nb_machine_switches"]) == ("4", "6")
    assert float(sched["time_switching_off"]) == pytest.approx(8, abs=1e-6)
    assert float(sched["time_switching_on"]) == pytest.approx(8, abs=1e-6)
    # sleeping time counted when a machine leaves the state: h1 [12, 30], h0 [off end, 30]
    h0_asleep = changed[1][0] - dj
    assert float(sched["time_sleeping"]) == pytest.approx(18 + 30 - h0_asleep, abs=2e-6)
    states = open(f"{run.prefix}_machine_states.csv").read().splitlines()
    assert states[0] == "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
    assert "10,0,0,1,0,1" in states and "30,0,2,0,0,0" in states
    # energy at the first submission (t = 10): both hosts idle since 0
    rows = energy_rows(run)
    first = next(r for r in rows if r["event_type"] == "s")
    assert (first["time"], first["energy"]) == ("10.000000", "2000.000000")  # 2 x 100 W x 10 s


def test_without_energy_the_columns_stay_batsims_defaults(tmp_path, platform):
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                  {"d": {"type": "delay", "delay": 3}}, nb_res=2)
    run = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe").check()
    assert run.jobs()["w0!1"]["consumed_energy"] == "-1.000000"
    assert run.schedule()["consumed_joules"] == "0.000000"
    assert not (tmp_path / "out_consumed_energy.csv").exists()
    runs, jobs = load([run.jobs_csv])
    assert runs["energy"].isna().all() and jobs["energy"].isna().all()
    failed = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe",
                     options={"query": True}, prefix="q")
    assert failed.returncode != 0 and "-E/--energy" in failed.stderr and "QUERY" in failed.stderr


def test_platform_without_power_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text(PLATFORM.replace('<prop id="wattage_per_state" value="100:120:200, 90:100:150, 5:5:5, '
                                    '150:150:150, 160:160:160"/>', ""))
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                  {"d": {"type": "delay", "delay": 3}}, nb_res=2)
    proc = run_cli(tmp_path, ["-p", str(bad), "-w", str(wl), "-E"])
    assert proc.returncode == 2
    assert "wattage_per_state" in proc.stderr and "h0" in proc.stderr and "Traceback" not in proc.stderr
    short = tmp_path / "short.xml"
    short.write_text(PLATFORM.replace("100:120:200, 90:100:150, 5:5:5, 150:150:150, 160:160:160", "100:200"))
    proc = run_cli(tmp_path, ["-p", str(short), "-w", str(wl), "-E"])
    assert proc.returncode == 2 and "1 entries for 5 pstates" in proc.stderr


def test_read_energy_checks_the_files(tmp_path):
    from coburst.analysis.metrics import read_energy
    from coburst.errors import InputError

    prefix = tmp_path / "r"
    assert all(v != v for v in read_energy(prefix).values())  # no energy file: NaN
    (tmp_path / "r_consumed_energy.csv").write_text(
        "time,energy,event_type,wattmin,epower\n0.000000,0.000000,s,240.000000,NA\n5.000000,1200.500000,e,240,240\n")
    (tmp_path / "r_schedule.csv").write_text("batsim_version,consumed_joules\n4.2.1,1200.500000\n")
    assert read_energy(prefix) == {"energy": 1200.5, "energy_total": 1200.5}
    (tmp_path / "r_consumed_energy.csv").write_text("time,energy,event_type,wattmin,epower\n1.0,abc,s,1,NA\n")
    with pytest.raises(InputError) as err:
        read_energy(prefix)
    assert "line 2, column energy" in str(err.value) and "abc" in str(err.value)


def test_coburst_run_with_energy(tmp_path, platform):
    """``coburst run -E`` (the engine in-process, the scheduler in the same process) writes the
    same energy as ``coburst sim -E`` (test_delay_and_compute_jobs)."""
    import os
    import subprocess

    from simharness import COBURST, SCHEDULERS, TESTS

    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "delay"},
                                        {"id": 2, "subtime": 1, "res": 1, "profile": "compute"}],
                  {"delay": {"type": "delay", "delay": 10},
                   "compute": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}, nb_res=2)
    proc = subprocess.run([str(COBURST), "run", "-p", str(platform), "-w", str(wl), "-E", "-e", str(tmp_path / "r"),
                           "-o", '{"query": true}', str(SCHEDULERS / "energyProbe.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert proc.returncode == 0, proc.stderr
    assert "energy" in proc.stdout and "3.0" in proc.stdout  # the metrics table: 3000 J = 3.0 kJ
    assert (tmp_path / "r_consumed_energy.csv").read_text().splitlines()[-1] == \
        "11.000000,3200.000000,e,240.000000,NA"
    assert "consumed_joules" in (tmp_path / "r_schedule.csv").read_text()
    header, values = (tmp_path / "r_schedule.csv").read_text().splitlines()
    assert dict(zip(header.split(","), values.split(",")))["consumed_joules"] == "3000.000000"


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(1, 2), st.sampled_from(["delay", "compute"]), st.integers(1, 20),
                          st.integers(0, 30)), min_size=1, max_size=6))
def test_energy_is_the_integral_of_idle_and_full_power(tmp_path_factory, jobs):
    """Random delay (Idle power) and compute (AllCores power) jobs at pstate 0: the platform's
    energy at each traced event is 2 hosts x 100 W x t plus, per compute job, its hosts x
    (200 - 100) W x the time it ran until then; each job's energy is its hosts x its power x
    its run time; the trace never decreases."""
    tmp_path = tmp_path_factory.mktemp("prop")
    platform = tmp_path / "energy2.xml"
    platform.write_text(PLATFORM)
    spec = [{"id": k + 1, "subtime": sub, "res": res, "profile": f"{kind}{length}"}
            for k, (res, kind, length, sub) in enumerate(jobs)]
    profiles = {}
    for res, kind, length, _ in jobs:
        profiles[f"{kind}{length}"] = ({"type": "delay", "delay": length} if kind == "delay" else
                                       {"type": "parallel_homogeneous", "cpu": length * 1e8, "com": 0})
    run = run_probe(tmp_path, platform, spec, profiles, {"query": False})
    rows = run.rows()
    for row in rows:
        watts = 200.0 if row["profile"].startswith("compute") else 100.0
        expected = int(row["requested_number_of_resources"]) * watts * float(row["execution_time"])
        assert float(row["consumed_energy"]) == pytest.approx(expected, abs=2e-3)
    trace = energy_rows(run)
    energies = [float(r["energy"]) for r in trace]
    assert energies == sorted(energies)
    for r in trace:
        t = float(r["time"])
        extra = sum(int(j["requested_number_of_resources"]) * 100.0 *
                    max(0.0, min(t, float(j["finish_time"])) - float(j["starting_time"]))
                    for j in rows if j["profile"].startswith("compute"))
        assert float(r["energy"]) == pytest.approx(2 * 100.0 * t + extra, abs=5e-3)
