"""``coburst.simulator.traces``: Batsim 4.2.1's ``_schedule.trace`` (Pajé) and
``_machine_states.csv``, checked byte for byte against files written by the real Batsim
(tests/data/batsim_ref, see its README), plus properties of the machine-state counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.simulator.traces import (
    MACHINE_STATES_HEADER,
    TraceRecorder,
    batsim_colors,
    colors_from_trace,
    shuffled_colors,
)

pytestmark = pytest.mark.timeout(60)

REF = Path(__file__).parent / "data" / "batsim_ref"
SCENARIOS = ("basic", "sharing", "storage", "easy")


def ids(text: str) -> list[int]:
    out = []
    for part in text.split():
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def replay(name: str, **kwargs) -> tuple[TraceRecorder, dict]:
    ref = json.loads((REF / f"{name}.calls.json").read_text())
    rec = TraceRecorder(ref["machines"], nb_compute=ref["nb_compute"], **kwargs)
    keys = ref["order_keys"]
    for call in ref["calls"]:
        if call[0] == "start":
            rec.job_started(call[1], call[2], ids(call[3]), order_key=keys.get(call[2]))
        elif call[0] == "end":
            rec.job_ended(call[1], call[2], ids(call[3]), kill_mark=call[4])
        else:
            rec.finish(call[1])
    return rec, ref


def strip_colors(text: str) -> str:
    return "\n".join(line.rsplit(' "', 1)[0] if line.startswith("5 j") else line for line in text.splitlines())


@pytest.mark.parametrize("name", SCENARIOS)
def test_paje_trace_identical_to_batsim(name):
    expected = (REF / f"{name}_schedule.trace").read_text()
    rec, _ = replay(name, colors=colors_from_trace(expected))
    assert rec.schedule_trace_text() == expected


@pytest.mark.parametrize("name", SCENARIOS)
def test_machine_states_identical_to_batsim(name):
    rec, _ = replay(name)
    assert rec.machine_states_text() == (REF / f"{name}_machine_states.csv").read_text()


@pytest.mark.parametrize("name", SCENARIOS)
def test_default_colors_only_differ_in_colors(name):
    expected = (REF / f"{name}_schedule.trace").read_text()
    rec, _ = replay(name)
    got = rec.schedule_trace_text()
    assert strip_colors(got) == strip_colors(expected)
    palette = set(batsim_colors())
    assert set(colors_from_trace(expected)) <= palette
    assert set(colors_from_trace(got)) <= palette


def test_color_table():
    colors = batsim_colors()
    assert len(colors) == 64 == len(set(colors))
    assert colors[0] == '"1.000000 0.000000 0.000000"'
    assert colors[16] == '"0.500000 1.000000 0.000000"'  # hue 90
    a, b = shuffled_colors(0), shuffled_colors(0)
    assert a == b and sorted(a) == sorted(colors) and a != colors
    assert shuffled_colors(1) != a
    # jobs beyond 64 reuse the table (register_new_job: colors[n % 64])
    rec = TraceRecorder(["m"], machine_states=False, colors=colors)
    for k in range(66):
        rec.job_started(k, f"w0!{k}", [0])
        rec.job_ended(k + 0.5, f"w0!{k}", [0])
    values = [line for line in rec.schedule_trace_text().splitlines() if line.startswith("5 j")]
    assert values[64].endswith(colors[0]) and values[65].endswith(colors[1])


def test_write_files(tmp_path):
    for name in ("basic", "storage"):
        rec, _ = replay(name, colors=colors_from_trace((REF / f"{name}_schedule.trace").read_text()))
        paths = rec.write(str(tmp_path / "out" / name))
        assert [p.name for p in paths] == [f"{name}_schedule.trace", f"{name}_machine_states.csv"]
        assert paths[0].read_bytes() == (REF / f"{name}_schedule.trace").read_bytes()
        assert paths[1].read_bytes() == (REF / f"{name}_machine_states.csv").read_bytes()


@pytest.mark.parametrize("trace,states", [(False, True), (True, False), (False, False)])
def test_disabled_outputs_are_not_written(tmp_path, trace, states):
    rec, _ = replay("basic", schedule_trace=trace, machine_states=states)
    paths = rec.write(str(tmp_path / "x"))
    names = {p.name for p in paths}
    assert names == ({"x_schedule.trace"} if trace else set()) | ({"x_machine_states.csv"} if states else set())
    assert {p.name for p in tmp_path.iterdir()} == names
    if not trace:
        assert rec.schedule_trace_text() == ""


def test_empty_simulation():
    rec = TraceRecorder(["a", "b"], nb_compute=1)
    rec.finish(0.0)
    assert rec.machine_states_text() == MACHINE_STATES_HEADER
    text = rec.schedule_trace_text()
    assert '2 0.000000 machine_ct m1 "b" root\n' in text
    assert text.endswith("# Begin of events\n6 0.000000 machine_state m0 w\n6 0.000000 machine_state m1 w\n\n"
                         "# End of events, containers destruction\n3 0.000000 m0 machine_ct\n"
                         "3 0.000000 m1 machine_ct\n3 0.000000 root root_ct\n")


def test_misuse_is_reported():
    rec = TraceRecorder(["a", "b"])
    with pytest.raises(ValueError):
        rec.job_ended(1.0, "w0!1", [0])
    rec.job_started(1.0, "w0!1", [0])
    with pytest.raises(ValueError):
        rec.job_started(1.0, "w0!1", [0])
    with pytest.raises(ValueError):
        rec.job_ended(2.0, "w0!2", [0])
    with pytest.raises(ValueError):
        rec.job_started(1.0, "w0!3", [2])
    with pytest.raises(RuntimeError):
        rec.write("nowhere")
    rec.finish(3.0)
    with pytest.raises(RuntimeError):
        rec.finish(3.0)
    with pytest.raises(RuntimeError):
        rec.job_started(4.0, "w0!4", [1])


@st.composite
def histories(draw):
    """Machines, compute count and a start/end history (jobs may share machines)."""
    nb = draw(st.integers(1, 6))
    nb_compute = draw(st.integers(0, nb))
    nb_jobs = draw(st.integers(0, 8))
    allocs = [draw(st.sets(st.integers(0, nb - 1), min_size=1)) for _ in range(nb_jobs)]
    pending = [("start", j) for j in range(nb_jobs)]
    running: list[int] = []
    ops = []
    time = 0.0
    while pending or running:
        choices = pending + [("end", j) for j in running]
        op = draw(st.sampled_from(choices))
        time += draw(st.sampled_from([0.0, 1e-5, 0.5, 3.25]))
        if op[0] == "start":
            pending.remove(op)
            running.append(op[1])
            ops.append(("start", time, op[1], draw(st.booleans())))
        else:
            running.remove(op[1])
            ops.append(("end", time, op[1], draw(st.booleans())))
    return nb, nb_compute, allocs, ops


@settings(max_examples=150, deadline=None)
@given(histories())
def test_machine_state_counts(history):
    nb, nb_compute, allocs, ops = history
    rec = TraceRecorder([f"h{i}" for i in range(nb)], nb_compute=nb_compute, colors=batsim_colors())
    running: dict[int, list[int]] = {m: [] for m in range(nb)}  # machine -> jobs in start order
    expected_paje_state = {m: "w" for m in range(nb)}
    for kind, time, job, flag in ops:
        alloc = sorted(allocs[job])
        if kind == "start":
            rec.job_started(time, f"w0!{job}", alloc)
            for m in alloc:
                running[m].append(job)
        else:
            rec.job_ended(time, f"w0!{job}", alloc, kill_mark=flag)
            for m in alloc:
                running[m].remove(job)
        for m in range(nb):
            # default order key: first started first, so the oldest running job is shown
            expected_paje_state[m] = f"jw0!{running[m][0]}" if running[m] else "w"
            assert rec.computing_jobs(m) == [f"w0!{j}" for j in running[m]]
    rec.finish(ops[-1][1] if ops else 0.0)

    lines = rec.machine_states_text().splitlines()
    assert lines[0] + "\n" == MACHINE_STATES_HEADER
    assert len(lines) == 1 + len(ops)  # one line per start and per end, none at 0 or at the end
    busy: set[int] = set()
    running_jobs: set[int] = set()
    for line, (kind, time, job, _) in zip(lines[1:], ops):
        (running_jobs.add if kind == "start" else running_jobs.discard)(job)
        busy = set().union(*(allocs[j] for j in running_jobs)) if running_jobs else set()
        fields = line.split(",")
        assert fields[0] == "%g" % time
        counts = [int(x) for x in fields[1:]]
        assert counts[:3] == [0, 0, 0]
        assert sum(counts) == nb_compute  # Batsim's counters start with idle = compute machines
        assert counts[4] == len(busy)  # computing = machines running at least one job
        assert counts[3] == nb_compute - len(busy)
    times = [float(line.split(",")[0]) for line in lines[1:]]
    assert times == sorted(times)

    # the Pajé states replayed per machine end as the model says, job values are defined
    # once, before their first use
    state = {}
    defined: list[str] = []
    paje = rec.schedule_trace_text().splitlines()
    events = paje[paje.index("# Begin of events") + 1:paje.index("# End of events, containers destruction")]
    for line in events:
        if not line:
            continue
        parts = line.split()
        if parts[0] == "5":
            assert parts[1] not in defined
            defined.append(parts[1])
        elif parts[0] == "6":
            assert parts[4] == "w" or parts[4] in defined
            state[int(parts[3][1:])] = parts[4]
    assert all(state[m] == "w" for m in range(nb))
    kills = [line for line in events if line.startswith("8 ")]
    marked = [op for op in ops if op[0] == "end" and op[3]]
    assert len(kills) == sum(1 + len(allocs[op[2]]) for op in marked)


@settings(max_examples=60, deadline=None)
@given(histories())
def test_paje_state_tracks_top_job(history):
    nb, nb_compute, allocs, ops = history
    rec = TraceRecorder([f"h{i}" for i in range(nb)], nb_compute=nb_compute, machine_states=False,
                        colors=batsim_colors())
    running: dict[int, list[int]] = {m: [] for m in range(nb)}
    for kind, time, job, flag in ops:
        alloc = sorted(allocs[job])
        if kind == "start":
            rec.job_started(time, f"w0!{job}", alloc)
            for m in alloc:
                running[m].append(job)
        else:
            rec.job_ended(time, f"w0!{job}", alloc, kill_mark=flag)
            for m in alloc:
                running[m].remove(job)
        # after every call, the last Pajé state of each machine is its top job (or w)
        shown = {}
        for line in rec.schedule_trace_text().splitlines():
            parts = line.split()
            if parts and parts[0] == "6":  # (the initial states come first)
                shown[int(parts[3][1:])] = parts[4]
        for m in range(nb):
            assert shown[m] == (f"jw0!{running[m][0]}" if running[m] else "w")
    assert rec.machine_states_text() == MACHINE_STATES_HEADER


def test_from_options():
    rec = TraceRecorder.from_options(["a", "b"], 1, {"schedule_tracing": False, "machine_state_tracing": True})
    assert not rec.schedule_trace and rec.machine_states and rec.nb_compute == 1
    rec = TraceRecorder.from_options(["a"], 1, None)
    assert rec.schedule_trace and rec.machine_states
