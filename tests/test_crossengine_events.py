"""Batsim's external events (``--events``) on both engines.

Every run goes through the real Batsim 4.2.1 and ``coburst sim`` with the same scheduler
(``tests/schedulers/eventsFiller.py``: pybatsim's ``fillerSchedWithEvents``, the scheduler
Batsim tests its events with, made deterministic) and everything Batsim writes is compared
(:func:`crossengine.assert_identical`: messages, ``_jobs.csv``, ``_schedule.csv`` with
``time_unavailable``, ``_machine_states.csv``, the Pajé trace).

* Batsim's own inputs (``events/test_events_4hosts.txt``, ``events/test_generic_event.txt``
  with the platform and workloads Batsim's ``test/test_externalevents.py`` uses), read from
  Batsim's files beside the checkout (``COBURST_BATSIM_DATA``, default
  ``../shared/data/batsim-4.2.1``; skipped, naming the file, without them);
* small inputs of our own: a machine made unavailable while idle and while it runs a job
  (Batsim does not kill the job: it ends normally and the machine stays unavailable; a
  scheduler may kill it, ``kill_on_unavailable``), available again, several events at one
  date (available before unavailable, and more than 16 events of one type at one date,
  where Batsim's ``std::sort`` is not stable), generic events with and without
  ``--forward-unknown-events``, events after the last job, two events files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossengine import assert_identical, needs_batsim, run_both
from simharness import CLUSTER_MASTER, run_sim, workload
from shared_data import batsim_file, needs_batsim_data

pytestmark = needs_batsim

needs_repo = needs_batsim_data()

DELAY = {"d10": {"type": "delay", "delay": 10}, "d30": {"type": "delay", "delay": 30}}


def events_file(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def both(tmp_path: Path, events: list[Path], jobs: list[dict] | None = None, *, wl: Path | None = None,
         platform: Path = CLUSTER_MASTER, options: dict | None = None, args: tuple = ()):
    if wl is None:
        wl = workload(tmp_path / "w.json", jobs, DELAY)
    extra = [a for e in events for a in ("--events", str(e))] + list(args)
    if platform == CLUSTER_MASTER:
        extra += ["-m", "master_0"]
    return run_both(tmp_path, workloads=[wl], platform=platform, scheduler="eventsFiller",
                    options=options or {}, args=extra)


def notifies(run) -> list[dict]:
    return [e["data"] for m in run.received() for e in m["events"] if e["type"] == "NOTIFY"]


# ------------------------------------------------------------------ Batsim's own inputs
@needs_repo
@pytest.mark.parametrize("wl_name", ["test_delays.json", "test_various_profile_types.json"])
def test_batsims_events_file(tmp_path, wl_name):
    """``test_externalevents.py``'s inputs (small_platform, events/test_events_4hosts.txt)."""
    plat = batsim_file(tmp_path, "platforms/small_platform.xml")
    wl = batsim_file(tmp_path, f"workloads/{wl_name}")
    ev = batsim_file(tmp_path, "events/test_events_4hosts.txt")
    batsim, coburst = both(tmp_path, [ev], wl=wl, platform=plat)
    assert_identical(batsim, coburst)
    assert float(coburst.schedule()["time_unavailable"]) > 0


@needs_repo
def test_batsims_generic_event_forwarded(tmp_path):
    plat = batsim_file(tmp_path, "platforms/small_platform.xml")
    wl = batsim_file(tmp_path, "workloads/test_delays.json")
    ev = batsim_file(tmp_path, "events/test_generic_event.txt")
    batsim, coburst = both(tmp_path, [ev], wl=wl, platform=plat, args=("--forward-unknown-events",))
    assert_identical(batsim, coburst)
    assert {"type": "some_generic_event", "timestamp": 123} in notifies(coburst)


@needs_repo
def test_batsims_generic_event_refused_without_forwarding(tmp_path):
    """Batsim's ``test_generic_events_fail``: without ``--forward-unknown-events`` Batsim
    refuses the file; coburst too, naming the file, the line and the option."""
    plat = batsim_file(tmp_path, "platforms/small_platform.xml")
    wl = batsim_file(tmp_path, "workloads/test_delays.json")
    ev = batsim_file(tmp_path, "events/test_generic_event.txt")
    runs = [run_sim(tmp_path, engine=engine, prefix=engine, workloads=[wl], platform=plat, scheduler="eventsFiller",
                    args=["--events", str(ev)], sched_timeout_ms=3000) for engine in ("batsim", "coburst")]
    assert runs[0].returncode != 0
    assert runs[1].returncode == 2, runs[1].report()
    assert f"{ev}: line 1: unknown event type 'some_generic_event'" in runs[1].stderr
    assert "--forward-unknown-events" in runs[1].stderr


# ------------------------------------------------------------------ our own inputs
JOBS = [{"id": 1, "subtime": 1, "res": 2, "profile": "d30"},
        {"id": 2, "subtime": 2, "res": 2, "profile": "d10"},
        {"id": 3, "subtime": 5, "res": 4, "profile": "d10"},
        {"id": 4, "subtime": 6, "res": 1, "profile": "d10"}]


@pytest.mark.parametrize("kill", [False, True])
def test_unavailable_while_idle_and_while_running(tmp_path, kill):
    """Machine 3 fails while idle, machine 0 while job 1 runs on it: without a kill the job
    ends normally and machine 0 stays unavailable (no idle state, no Pajé line); with
    ``kill_on_unavailable`` the scheduler kills it.  Both come back later."""
    ev = events_file(tmp_path / "ev.txt", [
        {"type": "machine_unavailable", "resources": "3", "timestamp": 3},
        {"type": "machine_unavailable", "resources": "0", "timestamp": 4},
        {"type": "machine_available", "resources": "3", "timestamp": 20},
        {"type": "machine_available", "resources": "0", "timestamp": 50}])
    batsim, coburst = both(tmp_path, [ev], JOBS, options={"kill_on_unavailable": kill})
    assert_identical(batsim, coburst)
    rows = coburst.jobs()
    assert rows["w0!1"]["final_state"] == ("COMPLETED_KILLED" if kill else "COMPLETED_SUCCESSFULLY")
    assert float(coburst.schedule()["time_unavailable"]) > 0


def test_several_events_at_one_date(tmp_path):
    """At one date Batsim handles available before unavailable (events sorted by date, then
    type), whatever the file's order; the file need not be sorted."""
    ev = events_file(tmp_path / "ev.txt", [
        {"type": "machine_available", "resources": "0-1", "timestamp": 15},
        {"type": "machine_unavailable", "resources": "2", "timestamp": 15},
        {"type": "machine_unavailable", "resources": "0-1", "timestamp": 8},
        {"type": "machine_unavailable", "resources": "3", "timestamp": 8},
        {"type": "machine_available", "resources": "2-3", "timestamp": 40},
        {"type": "machine_unavailable", "resources": "1", "timestamp": 15},
        {"type": "machine_available", "resources": "1", "timestamp": 45}])
    batsim, coburst = both(tmp_path, [ev], JOBS)
    assert_identical(batsim, coburst)


def test_many_generic_events_at_one_date(tmp_path):
    """40 generic events at one date: Batsim's ``std::sort`` is not stable beyond 16 events,
    so they reach the scheduler in an order that is not the file's; coburst sorts as
    libstdc++ does.  Fields of every JSON kind travel as Batsim prints them."""
    generic = [{"type": f"g{i}", "timestamp": 7, "k": i, "x": i / 3, "s": "é\"\\", "l": [1, 2.5, None, True],
                "o": {"a": {}}} for i in range(40)]
    ev = events_file(tmp_path / "ev.txt", generic + [{"type": "machine_unavailable", "resources": "1", "timestamp": 7},
                                                     {"type": "machine_available", "resources": "1", "timestamp": 50}])
    batsim, coburst = both(tmp_path, [ev], JOBS, args=("--forward-unknown-events",))
    assert_identical(batsim, coburst)
    order = [n["k"] for n in notifies(coburst) if "k" in n]
    assert sorted(order) == list(range(40)) and order != list(range(40))


def test_events_after_the_last_job_and_two_files(tmp_path):
    """The simulation waits for every events file (``no_more_external_event_to_occur`` once
    the last one is done) before it ends, long after the last job."""
    ev0 = events_file(tmp_path / "ev0.txt", [{"type": "machine_unavailable", "resources": "0-3", "timestamp": 500},
                                             {"type": "machine_available", "resources": "0-3", "timestamp": 900}])
    ev1 = events_file(tmp_path / "ev1.txt", [{"type": "machine_unavailable", "resources": "2", "timestamp": 0},
                                             {"type": "machine_available", "resources": "2", "timestamp": 400.5},
                                             {"type": "custom", "timestamp": 2000.25, "payload": "end"}])
    batsim, coburst = both(tmp_path, [ev0, ev1], JOBS, args=("--forward-unknown-events",))
    assert_identical(batsim, coburst)
    last = coburst.received()[-2]["events"]
    assert [e["data"]["type"] for e in last] == ["no_more_external_event_to_occur"]
    assert coburst.received()[-1]["now"] > 2000.25


def test_events_only(tmp_path):
    """No workload at all: the events alone make the simulation."""
    ev = events_file(tmp_path / "ev.txt", [{"type": "machine_unavailable", "resources": "0", "timestamp": 5},
                                           {"type": "machine_available", "resources": "0", "timestamp": 6}])
    runs = []
    for engine in ("batsim", "coburst"):
        run = run_sim(tmp_path, engine=engine, prefix=engine, scheduler="eventsFiller", transcript=True,
                      platform=CLUSTER_MASTER,
                      args=["--events", str(ev), "-m", "master_0"], wait=120, timeout=60)
        assert run.returncode == 0, run.report()
        runs.append(run)
    assert_identical(*runs)
