"""External events (``--events``) without the real Batsim: reading and checking events files
(:mod:`coburst.simulator.events`), GCC's ``std::sort`` as Batsim sorts events with it, and the
errors ``coburst sim`` gives for what Batsim refuses.  The comparison with Batsim itself is
``tests/test_crossengine_events.py``."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from procset import ProcSet

from simharness import CLUSTER4, run_sim, workload

from coburst.errors import InputError
from coburst.simulator.events import (AVAILABLE, GENERIC, UNAVAILABLE, cxx_sort, load_event_list,
                                      parse_interval_set)

CXX_SORT = r"""
#include <algorithm>
#include <cstdio>
#include <vector>
struct E { int key; int idx; };
int main() {
    int n;
    std::vector<E> v;
    while (scanf("%d", &n) == 1) {
        v.clear();
        for (int i = 0; i < n; i++) { int k; if (scanf("%d", &k) != 1) return 1; v.push_back({k, i}); }
        std::sort(v.begin(), v.end(), [](const E &a, const E &b) { return a.key < b.key; });
        for (auto &e : v) printf("%d ", e.idx);
        printf("\n");
    }
}
"""


@pytest.mark.skipif(not shutil.which("g++"), reason="needs g++ to compare with libstdc++'s std::sort")
def test_cxx_sort_is_libstdcxx_std_sort(tmp_path):
    """Same permutation as GCC's ``std::sort`` on inputs with many equal keys (where it is
    not stable), sorted and reversed inputs, sizes 0..70 and a few large ones."""
    (tmp_path / "s.cpp").write_text(CXX_SORT)
    subprocess.run(["g++", "-O1", "-o", str(tmp_path / "s"), str(tmp_path / "s.cpp")], check=True)
    rng = random.Random(7)
    cases = []
    for n in list(range(71)) + [100, 257, 1000, 3000]:
        for _ in range(3):
            m = rng.choice([1, 2, 3, 5, n + 1])
            cases.append([rng.randrange(m) for _ in range(n)])
    for n in (17, 33, 500):
        cases += [list(range(n)), list(range(n))[::-1], [0] * n]
    text = "".join(f"{len(c)} " + " ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run([str(tmp_path / "s")], input=text, capture_output=True, text=True, check=True)
    unstable = 0
    for keys, line in zip(cases, out.stdout.splitlines(), strict=True):
        expected = [int(x) for x in line.split()]
        got = [i for i, _ in cxx_sort(list(enumerate(keys)), lambda a, b: a[1] < b[1])]
        assert got == expected, keys
        unstable += expected != sorted(range(len(keys)), key=keys.__getitem__)
    assert unstable > 50  # the comparison did cover the unstable cases


@pytest.mark.parametrize("text, expected", [
    ("0", "0"), ("0-4 6 8", "0-4 6 8"), ("0  1", "0-1"), ("3 1-2", "1-3"), ("0-2 1", "0-2"), ("1--3", "1-3")])
def test_interval_sets_as_batsim_reads_them(text, expected):
    result, odd = parse_interval_set(text)
    assert str(result) == expected and not odd


@pytest.mark.parametrize("text", ["", " 1", "1 ", "3-1", "1-2-3", "a", "-1", "99999999999"])
def test_interval_sets_batsim_refuses(text):
    with pytest.raises(ValueError):
        parse_interval_set(text)


def test_interval_set_oddities_accepted_with_a_note():
    result, odd = parse_interval_set("1a 2")
    assert result == ProcSet(1, 2) and odd == ["'1a' read as 1"]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_events_file_read_and_sorted(tmp_path):
    """Sorted by date, then available < unavailable < generic; blank lines skipped; a
    generic event keeps every member (duplicates too, as RapidJSON does) and prints its
    numbers as Batsim's message writer does."""
    path = write(tmp_path / "ev.txt", [
        '{"type": "x", "timestamp": 5, "v": 0.5, "v": 2, "o": {"a": [1, null]}}',
        "",
        '{"type": "machine_unavailable", "resources": "0-1", "timestamp": 5}',
        '{"type": "machine_available", "resources": "0-1", "timestamp": 5.0}',
        '{"timestamp": 1e0, "type": "machine_unavailable", "resources": "2"}\r'])
    elist = load_event_list(str(path), "we0", forward_unknown=True)
    assert [(e.timestamp, e.kind, e.line) for e in elist.events] == [
        (1.0, UNAVAILABLE, 5), (5.0, AVAILABLE, 4), (5.0, UNAVAILABLE, 3), (5.0, GENERIC, 1)]
    assert elist.events[-1].data == '{"type":"x","timestamp":5,"v":0.500000,"v":2,"o":{"a":[1,null]}}'
    assert str(elist.events[0].resources) == "2"


@pytest.mark.parametrize("line, problem", [
    ("[1]", "an event must be a JSON object"),
    ("{\"type\": 1, \"timestamp\": 0}", "'type' must be a string"),
    ("{\"type\": \"machine_available\", \"resources\": \"0\"}", "no 'timestamp' field"),
    ("{\"timestamp\": 0}", "no 'type' field"),
    ("{\"type\": \"machine_available\", \"timestamp\": \"3\", \"resources\": \"0\"}", "'timestamp' must be a number"),
    ("{\"type\": \"machine_available\", \"timestamp\": -1, \"resources\": \"0\"}", "negative timestamp"),
    ("{\"type\": \"machine_available\", \"timestamp\": 1}", "needs a 'resources' field"),
    ("{\"type\": \"machine_available\", \"timestamp\": 1, \"resources\": [0]}", "'resources' must be a string"),
    ("{\"type\": \"machine_available\", \"timestamp\": 1, \"resources\": \"2-1\"}", "invalid interval set"),
    ("{\"type\": \"failure\", \"timestamp\": 1}", "unknown event type 'failure'"),
    ("{\"type\": \"x\", \"timestamp\": 1", "invalid JSON"),
    ("   ", "white space only"),
])
def test_malformed_events_name_file_and_line(tmp_path, line, problem):
    path = write(tmp_path / "ev.txt", ['{"type": "machine_unavailable", "resources": "0", "timestamp": 0}', line])
    with pytest.raises(InputError) as err:
        load_event_list(str(path), "we0", forward_unknown=False)
    assert str(err.value).startswith(f"{path}: line 2") and problem in str(err.value)


def test_missing_events_file(tmp_path):
    with pytest.raises(InputError, match="events file not found"):
        load_event_list(str(tmp_path / "nope.txt"), "we0", forward_unknown=False)


# ------------------------------------------------------------------ coburst sim end to end
JOBS = [{"id": 1, "subtime": 1, "res": 2, "profile": "d"}]
PROFILES = {"d": {"type": "delay", "delay": 10}}


def sim(tmp_path: Path, events: list[dict], *extra: str):
    ev = write(tmp_path / "ev.txt", [json.dumps(e) for e in events])
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    return run_sim(tmp_path, workloads=[wl], scheduler="eventsFiller", args=["--events", str(ev), *extra],
                   timeout=20), ev


def test_unknown_machine_refused_before_the_run(tmp_path):
    run, ev = sim(tmp_path, [{"type": "machine_unavailable", "resources": "2-7", "timestamp": 3}])
    assert run.returncode == 2
    assert f"{ev}: line 1 resources: machine 4 does not exist (the platform's resources are 0-3)" in run.stderr


def test_unavailable_twice_stops_the_run(tmp_path):
    """Batsim aborts when a machine already unavailable is made unavailable again."""
    run, ev = sim(tmp_path, [{"type": "machine_unavailable", "resources": "0-1", "timestamp": 3},
                             {"type": "machine_unavailable", "resources": "1", "timestamp": 4}])
    assert run.returncode == 2
    assert f"{ev}: line 2: machine 1 ('node_1') is made unavailable but already is" in run.stderr


def test_available_without_unavailable_stops_the_run(tmp_path):
    run, ev = sim(tmp_path, [{"type": "machine_available", "resources": "3", "timestamp": 3}])
    assert run.returncode == 2
    assert "machine 3 ('node_3') is made available but it was not unavailable (its state: idle)" in run.stderr


def test_job_on_an_unavailable_machine_refused(tmp_path):
    """A scheduler starting a job on an unavailable machine breaks the protocol (Batsim aborts)."""
    ev = write(tmp_path / "ev.txt", [json.dumps({"type": "machine_unavailable", "resources": "0", "timestamp": 0})])
    wl = workload(tmp_path / "w.json", JOBS, PROFILES)
    run = run_sim(tmp_path, workloads=[wl], scheduler="eventsFiller", options={"ignore_unavailability": True},
                  args=["--events", str(ev)], timeout=20)
    assert run.returncode == 3
    assert "EXECUTE_JOB w0!1: invalid allocation (0-1): machine 0 ('node_0') cannot compute jobs now" in run.stderr


def test_machine_states_and_time_unavailable(tmp_path):
    """cluster4 (delta_m = 0): machine 0 unavailable from 3 to 20 while job 1 runs on it
    from 1 to 11: its job ends, the machine stays unavailable (not idle) until 20."""
    run, _ = sim(tmp_path, [{"type": "machine_unavailable", "resources": "0", "timestamp": 3},
                            {"type": "machine_available", "resources": "0", "timestamp": 20}])
    run.check()
    schedule = run.schedule()
    assert float(schedule["time_unavailable"]) == pytest.approx(17, abs=1e-3)
    states = Path(f"{run.prefix}_machine_states.csv").read_text().splitlines()
    assert states[-1].endswith(",3,0")  # job 1 ended: node_1 idle again, node_0 still unavailable
    trace = Path(f"{run.prefix}_schedule.trace").read_text()
    assert "machine_state m0 w" not in trace.split("# Begin of events")[1].split("\n", 5)[-1]
