"""Bounded time: what one workload may expand into, and a prompt stop on SIGINT/SIGTERM.

* a composed profile's ``repeat`` is a 32-bit integer, as Batsim 4.2.1 reads it (RapidJSON
  ``IsInt``): 2**31 is refused naming the file, the profile and the problem;
* a job whose profile expands (nested ``repeat`` x sequences) into more than
  ``COBURST_MAX_PROFILE_TASKS`` tasks (default 1,000,000) is refused naming the job and the
  profile; the variable raises the bound or (``off``) removes it;
* a long run that never talks to its scheduler (a job of millions of composed tasks) stops
  within moments of SIGTERM, exit 143, no output left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_support import call
from coburst.errors import InputError
from coburst.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster16.xml"


def composed(repeat, seq=("d",), extra=None) -> dict:
    profiles = {"d": {"type": "delay", "delay": 1}, "c": {"type": "composed", "repeat": repeat, "seq": list(seq)}}
    profiles.update(extra or {})
    return {"nb_res": 4, "jobs": [{"id": "big", "subtime": 0, "res": 1, "profile": "c"}], "profiles": profiles}


def write(tmp: Path, doc: dict, name: str = "w.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("repeat", [2**31, 2**63, 10**30])
def test_repeat_past_32_bits_is_refused_as_batsim_does(tmp_path, repeat):
    path = write(tmp_path, composed(repeat))
    code, err = call("workload", "check", path)
    assert code == 2, err
    assert str(path) in err and "profiles.c.repeat" in err and "32-bit" in err and "'c'" in err, err
    assert "Traceback" not in err and not list(tmp_path.glob("out*"))


def test_largest_32_bit_repeat_is_read_then_bounded(tmp_path):
    """2**31 - 1 is a repeat Batsim takes: the expansion bound refuses it, naming job and profile."""
    path = write(tmp_path, composed(2**31 - 1))
    code, err = call("workload", "check", path)
    assert code == 2, err
    assert str(path) in err and "jobs[0]" in err and '"big"' in err and '"c"' in err, err
    assert "COBURST_MAX_PROFILE_TASKS" in err and "1000000" in err


def test_nested_repeats_multiply(tmp_path, monkeypatch):
    """Three levels of repeat 200 (8,000,000 tasks) past the default bound; 100 x 100 x 50 = 500,000 under it."""
    extra = {"b": {"type": "composed", "repeat": 200, "seq": ["d"]},
             "a": {"type": "composed", "repeat": 200, "seq": ["b"]}}
    with pytest.raises(InputError, match=r"jobs\[0\].*\"c\" expands into more than 1000000"):
        load_workload(write(tmp_path, composed(200, ["a"], extra)), "w0")
    extra = {"b": {"type": "composed", "repeat": 100, "seq": ["d"]},
             "a": {"type": "composed", "repeat": 100, "seq": ["b"]}}
    load_workload(write(tmp_path, composed(50, ["a"], extra)), "w0")


@pytest.mark.parametrize("stream", [False, True])
def test_the_variable_lifts_or_lowers_the_bound(tmp_path, monkeypatch, stream):
    path = write(tmp_path, composed(3000))
    load_workload(path, "w0", stream=stream)
    monkeypatch.setenv("COBURST_MAX_PROFILE_TASKS", "2999")
    with pytest.raises(InputError, match="more than 2999 tasks"):
        load_workload(path, "w0", stream=stream)
    monkeypatch.setenv("COBURST_MAX_PROFILE_TASKS", "3000")
    load_workload(path, "w0", stream=stream)
    monkeypatch.setenv("COBURST_MAX_PROFILE_TASKS", "off")
    load_workload(write(tmp_path, composed(2**31 - 1), "big.json"), "w0", stream=stream)
    monkeypatch.setenv("COBURST_MAX_PROFILE_TASKS", "lots")
    with pytest.raises(InputError, match="COBURST_MAX_PROFILE_TASKS: expected a positive integer"):
        load_workload(path, "w0", stream=stream)


def test_unused_oversized_profile_is_not_refused(tmp_path):
    doc = composed(2**31 - 1)
    doc["jobs"][0]["profile"] = "d"
    load_workload(write(tmp_path, doc), "w0")


def test_a_long_chain_of_composed_profiles_is_no_recursion_error(tmp_path):
    n = 5000
    profiles = {"p0": {"type": "delay", "delay": 1}}
    profiles.update({f"p{i}": {"type": "composed", "seq": [f"p{i - 1}"]} for i in range(1, n)})
    doc = {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": f"p{n - 1}"}], "profiles": profiles}
    load_workload(write(tmp_path, doc), "w0")
    profiles["p0"] = {"type": "composed", "seq": [f"p{n - 1}"]}  # a cycle through all of them
    code, err = call("workload", "check", write(tmp_path, doc))
    assert code == 2 and "cycle" in err and "Traceback" not in err, err
    assert len(err) < 2000, len(err)  # the cycle is shown cut


@pytest.mark.parametrize("cache, tasks", [("on", "ptask"), ("off", "ptask"), ("on", "delays")])
def test_sigterm_stops_a_long_composed_run_promptly(tmp_path, cache, tasks):
    """Five million tasks in one job (a delay and a parallel task in turn: ~a minute of
    simulation before, when the engine only looked at signals when it talked to its
    scheduler), or 2**31 - 1 one-second delays (folded, about a minute): stopped within
    seconds, the simulation in the main thread (platform from the cache) or in SimGrid's actor
    thread."""
    if tasks == "ptask":
        write(tmp_path, composed(2_500_000, ("d", "p"), {"p": {"type": "parallel_homogeneous", "cpu": 1e6, "com": 0}}))
    else:
        write(tmp_path, composed(2**31 - 1))
    (tmp_path / ".tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / ".tmp"), "COBURST_MAX_PROFILE_TASKS": "off"}
    if cache == "off":
        env["COBURST_CACHE"] = "off"
    proc = subprocess.Popen([sys.executable, "-m", "coburst", "run", "fcfs", "-p", str(PLATFORM), "-w", "w.json",
                             "-e", "out", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".out_jobs.csv.*")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        time.sleep(1.0)  # well inside the job's millions of tasks
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=120)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert elapsed < 5, elapsed
    assert "Traceback" not in err and "interrupted by SIGTERM" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tmp", "w.json"]


def test_a_registered_job_is_bounded_too(tmp_path):
    """A job the scheduler registers (``REGISTER_JOB``) whose profile expands past the bound is
    refused as a protocol error naming the job and the profile, at its registration.  Under
    the bound it is registered; executing it is then refused for another reason: a composed
    profile registered during the run never runs (Batsim 4.2.1 crashes on it)."""
    from simharness import run_sim, workload

    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                 {"d": {"type": "delay", "delay": 1}})
    options = {"allocs": {"w0!1": "0"},
               "profiles": {"one": {"type": "delay", "delay": 0.5},
                            "big": {"type": "composed", "repeat": 30, "seq": ["one"]}},
               "jobs": [{"id": "dyn!1", "res": 1, "walltime": -1, "profile": "big", "alloc": "1"}]}
    args = ["--enable-dynamic-jobs"]
    refused = run_sim(tmp_path, workloads=[w], scheduler="dynamic", options=options, args=args, timeout=5,
                      env={"COBURST_MAX_PROFILE_TASKS": "20"}, prefix="refused")
    assert refused.returncode == 3
    assert "REGISTER_JOB dyn!1: its profile 'big' expands into more than 20 tasks; set COBURST_MAX_PROFILE_TASKS" \
        in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    registered = run_sim(tmp_path, workloads=[w], scheduler="dynamic", options=options, args=args, timeout=5,
                         env={"COBURST_MAX_PROFILE_TASKS": "30"}, prefix="registered")
    assert registered.returncode == 3
    assert "expands into" not in registered.stderr
    assert "EXECUTE_JOB dyn!1: its composed profile 'big' was registered during the simulation" in registered.stderr
