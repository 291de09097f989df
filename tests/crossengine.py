"""Cross-engine comparison: the same scheduler and inputs on the real Batsim 4.2.1 and on
``coburst sim``, everything Batsim writes compared.

:func:`run_both` runs both engines (each with its own scheduler process, behind a recording
proxy, see ``tools/zmq_recorder.py``) and :func:`assert_identical` requires:

* every message the scheduler receives, byte for byte (Batsim prints every number with
  ``%6f``, so these hold the dates to the microsecond), except ``SIMULATION_BEGINS``,
  compared as decoded JSON (Batsim sends host properties in hash-map order);
* ``_jobs.csv``, byte for byte;
* ``_schedule.csv``, every column but ``batsim_version`` and the two wall-clock columns
  ``scheduling_time`` and ``simulation_time``;
* ``_machine_states.csv``, byte for byte;
* ``_schedule.trace``, byte for byte once each job's colour is blanked (Batsim draws them
  from ``std::random_device``).

The real Batsim is the binary named by the environment variable ``BATSIM``, else ``batsim`` on
``PATH``; without one, Batsim's side of each case is replayed from what the real Batsim printed
(``tests/data/batsim_recorded/``, see :mod:`batsim_recorded`), so these comparisons always run.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from simharness import BATSIM, SimRun, run_sim

#: marks a cross-engine test: it runs live with a Batsim binary, on the recordings without one
needs_batsim = pytest.mark.crossengine

WALL_CLOCK = ("batsim_version", "scheduling_time", "simulation_time")

def run_both(tmp_path: Path, **kwargs) -> tuple[SimRun, SimRun]:
    """Run the same simulation on Batsim and on coburst; both must succeed."""
    runs = []
    for engine in ("batsim", "coburst"):
        run = run_sim(tmp_path, engine=engine, prefix=engine, transcript=True, **{"wait": 300, "timeout": 60, **kwargs})
        assert run.returncode == 0, f"{engine} failed\n" + run.report()
        runs.append(run)
    return runs[0], runs[1]


def _transcript(run: SimRun) -> list[str]:
    return [m["raw"] for m in run.messages() if m["dir"] == "in"]


def _strip_colors(text: str) -> str:
    return re.sub(r'"[0-9.]+ [0-9.]+ [0-9.]+"', '"COLOR"', text)


def differences(batsim: SimRun, coburst: SimRun, trace: bool = True) -> list[str]:
    """Everything that differs between the two runs (empty: identical).  ``trace=False``:
    skip the Pajé trace — with compute sharing, which job Batsim draws on a shared machine
    depends on heap addresses (``std::set<JobPtr>``)."""
    out: list[str] = []
    ta, tb = _transcript(batsim), _transcript(coburst)
    if len(ta) != len(tb):
        out.append(f"transcripts: {len(ta)} messages on Batsim, {len(tb)} on coburst")
    for i, (a, b) in enumerate(zip(ta, tb)):
        if i == 0:
            ja, jb = json.loads(a), json.loads(b)
            for data in (ja["events"][0]["data"], jb["events"][0]["data"]):
                data.pop("workloads", None)  # absolute paths of different copies
            if ja != jb:
                out.append(f"SIMULATION_BEGINS differs:\n  batsim  {a[:1500]}\n  coburst {b[:1500]}")
        elif a != b:
            at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            lo = max(0, at - 250)
            out.append(f"message #{i} differs at character {at}:\n  batsim  ...{a[lo:at + 250]}\n"
                       f"  coburst ...{b[lo:at + 250]}")
            break
    ja, jb = batsim.jobs_csv.read_text(), coburst.jobs_csv.read_text()
    if ja != jb:
        la, lb = ja.splitlines(), jb.splitlines()
        bad = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
        if len(la) != len(lb) or bad:
            first = bad[0] if bad else min(len(la), len(lb))
            out.append(f"_jobs.csv differs ({len(la)} vs {len(lb)} lines), first at line {first + 1}:\n"
                       f"  batsim  {la[first] if first < len(la) else '<none>'}\n"
                       f"  coburst {lb[first] if first < len(lb) else '<none>'}")
    sa, sb = batsim.schedule(), coburst.schedule()
    for key in sa:
        if key in WALL_CLOCK or sa[key] == sb.get(key):
            continue
        out.append(f"_schedule.csv {key}: batsim {sa[key]} coburst {sb.get(key)}")
    files = [("_machine_states.csv", lambda t: t)] + ([("_schedule.trace", _strip_colors)] if trace else [])
    for suffix, normalise in files:
        pa, pb = Path(f"{batsim.prefix}{suffix}"), Path(f"{coburst.prefix}{suffix}")
        if pa.exists() != pb.exists():
            out.append(f"{suffix}: written by {'Batsim' if pa.exists() else 'coburst'} only")
            continue
        if pa.exists():
            a, b = normalise(pa.read_text()).splitlines(), normalise(pb.read_text()).splitlines()
            if a != b:
                first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                out.append(f"{suffix} differs ({len(a)} vs {len(b)} lines), first at line {first + 1}: "
                           f"{a[first] if first < len(a) else '<none>'!r} vs {b[first] if first < len(b) else '<none>'!r}")
    return out


def assert_identical(batsim: SimRun, coburst: SimRun, trace: bool = True) -> None:
    diffs = differences(batsim, coburst, trace)
    assert not diffs, "coburst differs from Batsim 4.2.1:\n" + "\n".join(diffs)


def jobs_rows(run: SimRun) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(run.jobs_csv.read_text())))


def _degenerate_epower(a: str, b: str, previous: str) -> bool:
    """Two ``_consumed_energy.csv`` lines equal but for ``epower`` over an interval shorter than
    the printed microsecond (Batsim's docs: "subject to degenerate cases"): energy / time of a
    sub-microsecond interval magnifies the last bits of the dates."""
    fa, fb = a.split(","), b.split(",")
    return (fa[:4] == fb[:4] and "NA" not in (fa[4], fb[4]) and previous.split(",")[0] == fa[0])


def assert_energy_identical(batsim, coburst, degenerate_epower: bool = False) -> None:
    assert_identical(batsim, coburst)
    for suffix in ("_consumed_energy.csv", "_pstate_changes.csv"):
        a = Path(f"{batsim.prefix}{suffix}").read_text()
        b = Path(f"{coburst.prefix}{suffix}").read_text()
        if a != b and degenerate_epower and suffix == "_consumed_energy.csv":
            la, lb = a.splitlines(), b.splitlines()
            if len(la) == len(lb) and all(x == y or _degenerate_epower(x, y, la[i - 1])
                                          for i, (x, y) in enumerate(zip(la, lb))):
                continue
        assert a == b, f"{suffix} differs:\n--- batsim\n{a}\n--- coburst\n{b}"
