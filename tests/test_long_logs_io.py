"""Long logs in the IO-Aware model: the dynamic sub-jobs and the profiles
registered for them are let go when they end, in ``coburst sim`` (``jobs.ProfileTable``) and
in the IO-Aware adapter (pybatsim's ``Batsim.profiles``), so the live objects do not grow
with the log.  The property, not a number: the same log once and four times end to end
gives peaks of live job objects and of live profiles within a small constant of each other
(before, the profiles grew by about 25 per static job)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst.simulator.jobs import ProfileKeys, ProfileTable
from coburst.simulator.workload import Profile
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = str(ROOT / "platforms" / "dragonfly96.xml")
TOOL = Path(__file__).resolve().parent / "tools" / "live_jobs.py"


def io_workload(tmp_path: Path, repeat: int, jobs: int = 100) -> Path:
    out = tmp_path / f"kth_io_{jobs}x{repeat}.json"
    subprocess.run([sys.executable, "-m", "coburst.cli.main", "workload", "swf", str(need_swf()), "--model", "io-aware",
                    "-p", PLATFORM, "--max-jobs", str(jobs), "--repeat", str(repeat), "-q", "-o", str(out)],
                   check=True, cwd=ROOT)
    return out


def run_counted(workload: Path, export: Path, scheduler: str) -> dict:
    cmd = [sys.executable, str(TOOL), scheduler, "--enable-dynamic-jobs", "-p", PLATFORM, "-w", str(workload),
           "-e", str(export), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scheduler", ["plan-square-0", "backfill-sjf-1"])
def test_io_aware_live_objects_do_not_grow_with_the_log(tmp_path, scheduler):
    a = run_counted(io_workload(tmp_path, 1), tmp_path / "x1", scheduler)
    b = run_counted(io_workload(tmp_path, 4), tmp_path / "x4", scheduler)
    # thousands of sub-jobs per copy of the log: a leak of one object per sub-job shows
    assert a["rows"] > 2000 and b["rows"] > 3.5 * a["rows"], (a, b)
    assert a["peak"] > 0 and a["profiles"] > 0
    assert b["peak"] <= a["peak"] + 40, (a, b)
    assert b["profiles"] <= a["profiles"] + 40, (a, b)


def test_profile_table_drops_a_discarded_profile_with_its_last_user():
    """Batsim's ``remove_profile`` keeps the name (registering it again aborts) while a live
    job keeps its own pointer: the table drops the object only when no live job uses it."""
    table = ProfileTable()
    delay = Profile("p", "delay", {"type": "delay", "delay": 1})
    table["p"] = delay
    table["seq"] = Profile("seq", "composed", {"type": "composed", "seq": ["q"]})
    table["q"] = Profile("q", "delay", {"type": "delay", "delay": 2})
    table.use("p"), table.use("p"), table.use("q")
    table.release("p", collected=True)
    assert table["p"] is delay  # the other job still runs it
    table.release("p", collected=True)
    assert "p" in table and dict.get(table, "p") is None and "p" not in list(table)
    table.release("q", collected=True)  # listed by a composed profile: looked up by name later
    assert dict.get(table, "q") is not None
    table.use("r")
    table["r"] = Profile("r", "delay", {"type": "delay", "delay": 3})
    table.release("r", collected=False)  # --enable-profile-reuse: kept
    assert dict.get(table, "r") is not None and "x" not in table and not table.users


def test_profile_keys_hold_pairs():
    keys = ProfileKeys()
    for i in range(70_000):
        keys.add(("io", f"w0.{i}.c1"))
    assert ("io", "w0.69999.c1") in keys and ("io", "w0.0.c1") in keys
    assert ("io", "w0.70000.c1") not in keys and ("w0", "w0.1.c1") not in keys and len(keys) == 70_000
