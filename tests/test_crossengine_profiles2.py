"""Batsim 4.2.1's ``usage_trace``, ``send`` / ``recv`` profiles and ``additional_io_job`` on
``coburst sim`` and on the real Batsim: identical outputs (everything
:func:`crossengine.assert_identical` compares; with ``-E`` the energy files too).

* Batsim's own usage-trace test inputs (``workloads/test_usage_trace.json`` and its
  ``usage-trace/`` folder on ``platforms/small_platform_usage_replay.xml``: 100-core hosts, the
  replayed traces' 4-byte messages cross explicit routes), copied from Batsim's files beside
  the checkout (``COBURST_BATSIM_DATA``, default ``../shared/data/batsim-4.2.1``) into the
  test's temporary folder;
* small inputs written here: walltimes reached and kills in the middle of a replay, ranks
  sharing a host, ranks mapped by ``smpi_ranks_to_hosts_mapping``, usage traces inside
  composed profiles, trace-file quirks (comments, blank lines, another rank's lines, no final
  newline);
* ``send`` / ``recv`` with ``tests/schedulers/messenger.py`` (TO_JOB_MSG answers and early
  messages), recv timeouts, polling against the walltime, regex matches and failures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossengine import assert_energy_identical, assert_identical, jobs_rows, needs_batsim, run_both
from shared_data import batsim_tree, needs_batsim_data
from simharness import run_sim, workload

pytestmark = [needs_batsim, pytest.mark.timeout(600)]

needs_repo = needs_batsim_data()


# ------------------------------------------------------------------------------ usage_trace
def usage_platform(path: Path, cores: int = 100) -> Path:
    """Four hosts (two at 100 flop/s, two at 50) with ``cores`` cores and energy figures, in a
    Full zone with explicit routes of different lengths (like Batsim's
    small_platform_usage_replay.xml) and a loopback link on each host."""
    hosts = "".join(
        f'  <host id="{h}" core="{cores}" pstate="0" speed="{speed}f">\n'
        f'    <prop id="wattage_per_state" value="50.0:100:200.0"/>\n    <prop id="wattage_off" value="5.0"/>\n'
        f'  </host>\n' for h, speed in (("a", 100.0), ("b", 100.0), ("c", 50.0), ("d", 50.0)))
    links = ('  <link id="l1" bandwidth="41.279125MBps" latency="59.904us"/>\n'
             '  <link id="l2" bandwidth="7.20975MBps" latency="1.461517ms"/>\n'
             '  <link id="l3" bandwidth="118.6825MBps" latency="136.931us"/>\n'
             '  <link id="loop" bandwidth="498MBps" latency="15us" sharing_policy="FATPIPE"/>\n')
    routes = "".join(f'  <route src="{h}" dst="{h}"><link_ctn id="loop"/></route>\n'
                     for h in ("master_host", "a", "b", "c", "d"))
    pairs = {("master_host", "a"): "l2", ("master_host", "b"): "l1 l3", ("master_host", "c"): "l1",
             ("master_host", "d"): "l3", ("a", "b"): "l2 l1", ("a", "c"): "l1 l3 l2", ("a", "d"): "l3",
             ("b", "c"): "l1", ("b", "d"): "l2 l3", ("c", "d"): "l1 l2"}
    routes += "".join(f'  <route src="{s}" dst="{d}">' + "".join(f'<link_ctn id="{x}"/>' for x in ls.split())
                      + "</route>\n" for (s, d), ls in pairs.items())
    path.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    '<platform version="4.1">\n<zone id="AS0" routing="Full">\n'
                    '  <host id="master_host" speed="100.0Mf"/>\n' + hosts + links + routes + "</zone>\n</platform>\n")
    return path


def traces(folder: Path, name: str, ranks: list[str], list_text: str | None = None) -> str:
    """A usage trace ``folder/name``: one file per rank (its text given), and the list."""
    base = folder / name
    base.mkdir(parents=True, exist_ok=True)
    for rank, text in enumerate(ranks):
        (base / f"r{rank}.txt").write_text(text)
    (base / "traces.txt").write_text(list_text if list_text is not None
                                     else "".join(f"r{rank}.txt\n" for rank in range(len(ranks))))
    return f"{name}/traces.txt"


@needs_repo
@pytest.mark.parametrize("energy", [True, False], ids=["energy", "plain"])
def test_batsims_usage_trace_inputs(tmp_path, energy):
    root = batsim_tree(tmp_path, "platforms/small_platform_usage_replay.xml", "workloads/test_usage_trace.json",
                       "workloads/usage-trace")
    batsim, coburst = run_both(tmp_path, workloads=[root / "workloads" / "test_usage_trace.json"],
                               platform=root / "platforms" / "small_platform_usage_replay.xml",
                               scheduler="easyBackfill", args=["-E"] if energy else [])
    if energy:
        assert_energy_identical(batsim, coburst)
    else:
        assert_identical(batsim, coburst)
    rows = {r["job_id"]: r for r in jobs_rows(coburst)}
    assert rows["60"]["final_state"] == "COMPLETED_SUCCESSFULLY" and len(rows) == 12


def test_usage_trace_walltimes_kills_and_quirks(tmp_path):
    """Walltimes reached in the middle of a replay (ranks killed), a KILL_JOB in the middle of
    one (progress: current_task_index -1), composed profiles, more ranks than hosts (hosts
    shared by ranks), smpi_ranks_to_hosts_mapping, trace-file quirks."""
    plat = usage_platform(tmp_path / "p.xml")
    wdir = tmp_path / "w"
    quirky = ("# a comment\n\n0 m_usage 0.25 300 extra fields\n1 m_usage 1 50\n  0\tm_usage   0.004 120\n"
              "0 m_usage 0.5 0\n0 m_usage 0.3 77")  # last line: no newline, never replayed
    profiles = {
        "two": {"type": "usage_trace", "trace": traces(wdir, "two", ["0 m_usage 0.6 1000\n0 m_usage 0.1 500\n",
                                                                     "1 m_usage 0.35 700\n"])},
        "quirky": {"type": "usage_trace", "trace": traces(wdir, "quirky", [quirky, "1 m_usage 0.125 10\n"])},
        "four": {"type": "usage_trace", "trace": traces(wdir, "four", [f"{r} m_usage 0.{r + 2} {100 * (r + 1)}\n"
                                                                      for r in range(4)])},
        "empty": {"type": "usage_trace", "trace": traces(wdir, "empty", [], list_text="")},
        "d1": {"type": "delay", "delay": 1.5},
        "seq": {"type": "composed", "repeat": 2, "seq": ["d1", "two"], "ret": 3},
    }
    jobs = [
        {"id": 1, "subtime": 1, "res": 2, "profile": "two"},
        {"id": 2, "subtime": 2, "res": 2, "profile": "two", "walltime": 7.25},  # reached in a replay
        {"id": 3, "subtime": 30, "res": 2, "profile": "quirky"},
        {"id": 4, "subtime": 40, "res": 2, "profile": "four"},  # 4 ranks on 2 hosts
        {"id": 5, "subtime": 60, "res": 4, "profile": "four", "smpi_ranks_to_hosts_mapping": [3, 3, 0, 1]},
        {"id": 6, "subtime": 80, "res": 2, "profile": "seq", "walltime": 1000},
        {"id": 7, "subtime": 120, "res": 2, "profile": "two"},  # killed in the middle of its replay
        {"id": 8, "subtime": 150, "res": 1, "profile": "empty"},
    ]
    options = {"allocs": {"w0!1": "0-1", "w0!2": "2-3", "w0!3": "1-2", "w0!4": "0 3", "w0!5": "0-3",
                          "w0!6": "0 2", "w0!7": "1 3", "w0!8": "2"},
               "kill": [[125.5, ["w0!7"]]]}
    # -E: not with ranks sharing a host (jobs 4 and 5): their hosts' load is not followed yet
    for energy, name in (([], "w.json"), (["-E"], "w_energy.json")):
        wl = workload(wdir / name, [j for j in jobs if not energy or j["id"] not in (4, 5)], profiles)
        out = tmp_path / ("energy" if energy else "plain")
        out.mkdir()
        batsim, coburst = run_both(out, workloads=[wl], platform=plat, scheduler="fixed", options=options,
                                   args=energy)
        (assert_energy_identical if energy else assert_identical)(batsim, coburst)
        if not energy:
            plain = coburst
    coburst = plain
    rows = {r["job_id"]: r["final_state"] for r in jobs_rows(coburst)}
    assert rows == {"1": "COMPLETED_SUCCESSFULLY", "2": "COMPLETED_WALLTIME_REACHED", "3": "COMPLETED_SUCCESSFULLY",
                    "4": "COMPLETED_SUCCESSFULLY", "5": "COMPLETED_SUCCESSFULLY", "6": "COMPLETED_FAILED",
                    "7": "COMPLETED_KILLED", "8": "COMPLETED_SUCCESSFULLY"}
    killed = [m for m in coburst.messages() if m["dir"] == "in" and "JOB_KILLED" in m["raw"]]
    assert '"job_progress":{"w0!7":{"profile_name":"two","current_task_index":-1}}' in killed[0]["raw"]


# ------------------------------------------------------------------------------ send / recv
SEND_RECV_PROFILES = {
    "hello": {"type": "send", "msg": {"text": "hi", "n": 1.5, "big": 1e6, "list": [1, 2.25, "x"], "t": True},
              "sleeptime": 0.25},
    "quick": {"type": "send", "msg": {}},
    "wait": {"type": "recv", "regex": "go.*", "success": "work", "failure": "oops", "polltime": 0.5},
    "wait_default": {"type": "recv", "success": "work"},
    "or_else": {"type": "recv", "timeout": "work", "success": "oops"},
    "strict": {"type": "recv", "regex": "[0-9]+", "success": "work", "polltime": 0.125},
    "work": {"type": "delay", "delay": 2},
    "oops": {"type": "delay", "delay": 1, "ret": 2},
    "talk": {"type": "composed", "seq": ["hello", "wait", "quick"]},
    "talk_twice": {"type": "composed", "repeat": 2, "seq": ["hello", "strict"]},
}


def test_send_recv(tmp_path):
    """FROM_JOB_MSG (the message object as written) then TO_JOB_MSG answers; recv matching,
    failing, timing out at once, polling until a message comes, polling until the walltime;
    messages sent before the job runs; a kill during a send's delay."""
    jobs = [
        {"id": 1, "subtime": 1, "res": 1, "profile": "talk"},  # answered "go on": success
        {"id": 2, "subtime": 2, "res": 1, "profile": "talk"},  # answered "stop": failure (ret 2)
        {"id": 3, "subtime": 3, "res": 1, "profile": "or_else"},  # no message: its timeout profile
        {"id": 4, "subtime": 4, "res": 1, "profile": "or_else"},  # a message sent at submission: success
        {"id": 5, "subtime": 10, "res": 1, "profile": "wait_default", "walltime": 3.3},  # polls until the walltime
        {"id": 6, "subtime": 11, "res": 2, "profile": "talk_twice"},  # "12" then "x1": success then nothing
        {"id": 7, "subtime": 20, "res": 1, "profile": "hello"},  # killed in its delay
        {"id": 8, "subtime": 30, "res": 2, "profile": "work"},
        {"id": 9, "subtime": 30, "res": 2, "profile": "oops"},
    ]
    wl = workload(tmp_path / "w.json", jobs, SEND_RECV_PROFILES)
    options = {"allocs": {"w0!1": "0", "w0!2": "1", "w0!3": "2", "w0!4": "3", "w0!5": "0", "w0!6": "1-2",
                          "w0!7": "3", "w0!8": "0-1", "w0!9": "2-3"},
               "replies": {"w0!1": ["go on"], "w0!2": ["stop"], "w0!6": ["12", "x1"]},
               "to_job": {"w0!4": ["anything"]},
               "kill": [[20.1, ["w0!7"]]]}
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=usage_platform(tmp_path / "p.xml"),
                               scheduler="messenger", options=options)
    assert_identical(batsim, coburst)
    rows = {r["job_id"]: r["final_state"] for r in jobs_rows(coburst)}
    assert rows == {"1": "COMPLETED_SUCCESSFULLY", "2": "COMPLETED_FAILED", "3": "COMPLETED_SUCCESSFULLY",
                    "4": "COMPLETED_FAILED", "5": "COMPLETED_WALLTIME_REACHED", "6": "COMPLETED_SUCCESSFULLY",
                    "7": "COMPLETED_KILLED", "8": "COMPLETED_SUCCESSFULLY", "9": "COMPLETED_FAILED"}
    raw = "\n".join(m["raw"] for m in coburst.messages() if m["dir"] == "in")
    assert '"type":"FROM_JOB_MSG","data":{"job_id":"w0!1","msg":{"text":"hi","n":1.5' in raw
    assert '"job_progress":{"w0!7":{"profile_name":"hello","current_task_index":-1}}' in raw


@pytest.mark.parametrize("case", ["unused_target", "kill_in_chosen_profile"])
def test_send_recv_inputs_batsim_aborts_on(tmp_path, case):
    """Both engines stop: a recv choosing a profile no job nor composed profile uses (Batsim
    dropped it at load), a kill while a recv's chosen profile runs (Batsim cannot report
    its progress)."""
    profiles = dict(SEND_RECV_PROFILES)
    jobs = [{"id": 1, "subtime": 1, "res": 1, "profile": "talk"}]
    options = {"replies": {"w0!1": ["go"]}}
    if case == "kill_in_chosen_profile":
        jobs.append({"id": 2, "subtime": 50, "res": 1, "profile": "work"})
        jobs.append({"id": 3, "subtime": 50, "res": 1, "profile": "oops"})
        options["kill"] = [[3.0, ["w0!1"]]]
        options["allocs"] = {"w0!2": "1", "w0!3": "2"}
    wl = workload(tmp_path / "w.json", jobs, profiles)
    for engine in ("batsim", "coburst"):
        run = run_sim(tmp_path, engine=engine, prefix=engine, workloads=[wl], scheduler="messenger",
                      platform=usage_platform(tmp_path / "p.xml"),
                      options=options, wait=60, timeout=10)
        assert run.returncode != 0, f"{engine} accepted it\n" + run.report()
        if engine == "coburst":
            assert ("no job nor composed profile uses it" if case == "unused_target"
                    else "Leaves should not contain sub tasks") in run.stderr
