"""The protocol's fast paths (coburst/simulator/protocol.py, cli/main.py, runner.py), each pinned against
the code it replaces:

* :func:`protocol.decode_json` (one decoder made once, its scanner called directly) reads
  every text as ``json.loads(text, parse_float=rapidjson_double)`` does (``plain``: as
  ``json.loads(text)``), errors included; a date's short repr is kept (``batsim_date``);
* :func:`protocol.check_reply` accepts and refuses what every check of every event did;
* the in-process ``send`` hands the simulator pybatsim's message and leaves pybatsim an empty
  dict to format into its INFO log line (only while that line is not printed);
* :func:`protocol.check_reply` prints a message without text only when refusing it;
* pybatsim's ``batsim`` / ``schedulers`` packages made from their specs (``runner.light_pybatsim``);
* ``coburst sim`` / ``coburst run`` start with the automatic garbage collection paused, and
  the kernel collects while it simulates.
"""

from __future__ import annotations

import copy
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coburst.errors import ProtocolError
from coburst.simulator import protocol
from coburst.simulator.protocol import batsim_dates, check_reply, decode_json, decode_reply, rapidjson_double

from simharness import CLUSTER4, workload

# ---------------------------------------------------------------------- decoding


def _former_decode(text: str):
    return json.loads(text, parse_float=rapidjson_double)


def _outcome(fn, text):
    try:
        return "ok", fn(text)
    except Exception as exc:  # the same exception, with the same message
        return type(exc).__name__, str(exc)


def _same(a, b) -> bool:
    # NaN != NaN: compare the texts of the values
    return repr(a) == repr(b)


numbers = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.floats(min_value=0, max_value=1e12).map(lambda x: round(x, 6)))
values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=6), kids, max_size=4)),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]), st.sampled_from(["", " ", "\n", "\t ", "\ufeff"]),
       st.sampled_from(["", " ", "\n", "x", "}", ",1", "]"]), st.integers(0, 60), st.data())
@example({"now": 1.5, "events": []}, (", ", ": "), "", "", 0, None)
def test_decoding_reads_what_json_loads_reads(value, seps, lead, trail, cut, data):
    """Any text built from a JSON value (separators, surrounding whitespace, trailing
    garbage, truncated, or a character replaced): same value or same error as
    ``json.loads(text, parse_float=rapidjson_double)``."""
    text = lead + json.dumps(value, separators=seps) + trail
    variants = [text, text[:cut]]
    if data is not None and text:
        i = data.draw(st.integers(0, len(text) - 1))
        variants.append(text[:i] + data.draw(st.sampled_from('{}[],:"0.-e x')) + text[i + 1:])
    for t in variants:
        new, old = _outcome(decode_json, t), _outcome(_former_decode, t)
        assert new[0] == old[0] and _same(new[1], old[1]), (t, new, old)
        new, old = _outcome(lambda x: decode_json(x, plain=True), t), _outcome(json.loads, t)
        assert new[0] == old[0] and _same(new[1], old[1]), (t, new, old)


@pytest.mark.parametrize("text", ["", "nul", '{"a":1}x', ' {"now": 1.0, "events": []} ', "NaN", "-Infinity",
                                  "1.7976931348623157e309", '"\\ud800"', '\ufeff{"now": 1.0, "events": []}', "[" * 50 + "]" * 50,
                                  '{"now": 100000000000.00003, "events": []}'])
def test_decoding_edge_texts(text):
    new, old = _outcome(decode_json, text), _outcome(_former_decode, text)
    assert new[0] == old[0] and _same(new[1], old[1])
    new, old = _outcome(lambda x: decode_json(x, plain=True), text), _outcome(json.loads, text)
    assert new[0] == old[0] and _same(new[1], old[1])


def test_decode_reply_errors_unchanged():
    with pytest.raises(ProtocolError, match=r"invalid JSON: Extra data at column 8\): '\{\"a\":1\}x'"):
        decode_reply('{"a":1}x')
    with pytest.raises(ProtocolError, match="expected an object with 'now' and 'events', got '\\[1\\]'"):
        decode_reply("[1]")
    # a number no double holds: refused with the message (was an IndexError from the reader)
    with pytest.raises(ProtocolError, match=r"number too big to be stored in a double: 2e400\)"):
        decode_reply('{"now": 2e400, "events": []}')
    assert decode_reply('{"now": 0.1e309, "events": []}')["now"] == pytest.approx(1e308)
    # a message without text (in-process) is printed when refused, as before
    with pytest.raises(ProtocolError, match=r"got \"\{'now': 1\.0\}\""):
        check_reply({"now": 1.0})
    msg = {"now": 1.0, "events": [{"timestamp": 1.0, "type": "X", "data": {}}]}
    assert check_reply(msg) is msg


def _former_check_reply(msg, raw=None):
    """check_reply as it was (every check for every event)."""
    if raw is None:
        raw = repr(msg)
    if not isinstance(msg, dict) or "now" not in msg or "events" not in msg:
        raise ProtocolError(f"malformed message from the scheduler: expected an object with 'now' and "
                            f"'events', got {raw[:200]!r}")
    now = msg["now"]
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise ProtocolError(f"malformed message from the scheduler: 'now' is not a number: {now!r}")
    events = msg["events"]
    if not isinstance(events, list):
        raise ProtocolError("malformed message from the scheduler: 'events' is not a list")
    for i, event in enumerate(events):
        if not isinstance(event, dict) or "type" not in event or "timestamp" not in event:
            raise ProtocolError(f"malformed event #{i} from the scheduler (needs 'timestamp' and 'type'): "
                                f"{json.dumps(event)[:200]}")
        ts = event["timestamp"]
        if isinstance(ts, bool) or not isinstance(ts, (int, float)):
            raise ProtocolError(f"event #{i} ({event['type']}) has a non-numeric timestamp {ts!r}")
        if ts > now + 1e-9:
            raise ProtocolError(f"event #{i} ({event['type']}) is dated {ts} after the message's now={now}")
    return msg


stamps = st.one_of(st.floats(), st.integers(-5, 10**20), st.booleans(), st.none(), st.text(max_size=2),
                   st.just(10**400))
any_event = st.one_of(
    st.fixed_dictionaries({"timestamp": stamps, "type": st.sampled_from(["EXECUTE_JOB", "NOTIFY"])},
                          optional={"data": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)}),
    st.fixed_dictionaries({"timestamp": stamps}), st.fixed_dictionaries({"type": st.just("X")}),
    st.integers(), st.lists(st.integers(), max_size=2))


@settings(max_examples=600, deadline=None)
@given(stamps, st.lists(any_event, max_size=4), st.sampled_from(["now", "events", "both"]), st.booleans())
@example(1.0, [{"timestamp": 1.0 + 1e-9, "type": "X"}], "both", False)
@example(10**400, [{"timestamp": 1.0, "type": "X"}], "both", False)
@example(1.0, [{"timestamp": float("nan"), "type": "X"}], "both", False)
def test_check_reply_decides_and_says_what_it_said(now, evts, keys, textless):
    """Same message accepted, or the same error, as the former check (every event checked
    in full); dates near ``now``, NaN, integers, booleans, huge integers, malformed events."""
    msg = {"now": now, "events": evts} if keys == "both" else {keys: now}
    raw = None if textless else repr(msg)
    new, old = _outcome(lambda m: check_reply(m, raw), msg), _outcome(lambda m: _former_check_reply(m, raw), msg)
    assert new[0] == old[0] and (new[0] == "ok" or new[1] == old[1]), (new, old)


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.floats(), st.floats(0, 1e11), st.floats(0, 1e11).map(lambda x: round(x, 6)),
                 st.integers(-10, 10), st.floats(min_value=1e15, max_value=1e20)))
@example(100000000000.00003)
@example(-0.0)
@example(0.30000000000000004)
def test_batsim_date_is_rapidjson_of_the_repr(value):
    """``batsim_date``'s shortcut (a short repr: the value itself) against the former
    ``rapidjson_double(repr(value))``, bit for bit (NaN as NaN)."""
    import math
    import struct

    got = protocol.batsim_date(value)
    if type(value) is not float:
        assert got is value
        return
    want = rapidjson_double(repr(value))
    assert type(got) is float
    assert (math.isnan(got) and math.isnan(want)) or struct.pack("<d", got) == struct.pack("<d", want)


@settings(max_examples=300, deadline=None)
@given(values)
def test_in_process_reading_is_json_loads(value):
    """pybatsim's reading of the in-process message (the plain decoder, scanned directly)
    gives ``json.loads``'s value for the text :func:`encode_message` writes."""
    text = protocol.encode_message(1.0, [{"timestamp": 1.0, "type": "X", "data": value}])
    assert repr(decode_json(text, plain=True)) == repr(json.loads(text))


# ---------------------------------------------------------------------- the in-process send

events = st.lists(st.fixed_dictionaries(
    {"timestamp": st.floats(0, 1e11, allow_nan=False), "type": st.sampled_from(["EXECUTE_JOB", "CALL_ME_LATER"]),
     "data": st.one_of(st.fixed_dictionaries({"job_id": st.text(max_size=5), "alloc": st.just("0-3")}),
                       st.fixed_dictionaries({"timestamp": st.floats(0, 1e12, allow_nan=False)}))}), max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e11, allow_nan=False), events, st.booleans())
def test_in_process_send_hands_over_what_it_handed_before(now, evts, info):
    """The simulator gets the dates as Batsim reads them (``batsim_dates`` of pybatsim's
    message, as before); pybatsim's dict is emptied only when its INFO line is not printed."""
    class Network(protocol._MemoryNetwork):
        channel = protocol._Channel()

    msg = {"now": now, "events": evts}
    expected = batsim_dates(copy.deepcopy(msg))
    log = protocol._PYBATSIM_LOG
    level = log.level
    log.setLevel(logging.INFO if info else logging.WARNING)
    try:
        Network().send(msg)
    finally:
        log.setLevel(level)
    assert Network.channel.outgoing == expected
    assert msg == ({} if not info else expected)


def test_pybatsim_logs_the_full_message_at_info(tmp_path, caplog):
    """With pybatsim's INFO log on, the line of every message sent still shows its events."""
    from coburst.simulator.protocol import InProcessLink

    link = InProcessLink("fillerSched")
    logging.getLogger("batsim").setLevel(logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="batsim.batsim"):
            begins = {"nb_resources": 1, "nb_compute_resources": 1, "nb_storage_resources": 0,
                      "allow_compute_sharing": False, "allow_storage_sharing": True,
                      "config": {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
                                 "dynamic-jobs-acknowledged": False, "forward-unknown-events": False},
                      "compute_resources": [{"id": 0, "name": "h0", "state": "idle", "properties": {}}],
                      "storage_resources": [], "workloads": {}, "profiles": {}}
            link.exchange(0.0, [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": begins}])
            reply = link.exchange(1.0, [{"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {
                "job_id": "w0!1", "job": {"id": "w0!1", "subtime": 0.0, "walltime": 10.0, "res": 1, "profile": "p"}}}])
    finally:
        logging.getLogger("batsim").setLevel(logging.WARNING)
    assert [e["type"] for e in reply["events"]] == ["EXECUTE_JOB"]
    sent = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Message Sent")]
    assert "EXECUTE_JOB" in sent[-1]


# ---------------------------------------------------------------------- start-up garbage collection

RECORDER = '''
import gc, json, sys
from batsim.batsim import BatsimScheduler
AT_IMPORT = (gc.get_threshold()[0], gc.isenabled())

class GcRecorder(BatsimScheduler):
    def onSimulationBegins(self):
        with open(self.options["out"], "w") as fh:
            json.dump({"import": AT_IMPORT, "simulating": (gc.get_threshold()[0], gc.isenabled())}, fh)

    def onJobSubmission(self, job):
        from procset import ProcSet
        job.allocation = ProcSet(0)
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass
'''


@pytest.mark.timeout(120)
@pytest.mark.parametrize("transport", ["inprocess", "zmq"])
def test_start_up_pauses_the_collector_and_the_simulation_collects(tmp_path, transport):
    """``coburst run``: the scheduler file is loaded (in-process) with automatic collection
    paused (threshold 0); while the simulation runs it is on again (the kernel's threshold).
    Over ZeroMQ the scheduler is another process: its collector is Python's default."""
    from coburst.simulator.kernel import Kernel

    sched = tmp_path / "gcRecorder.py"
    sched.write_text(RECORDER)
    out = tmp_path / "gc.json"
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                  {"d": {"type": "delay", "delay": 5}})
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", str(sched), "--transport", transport, "-q",
                           "-o", json.dumps({"out": str(out)}), "-p", str(CLUSTER4), "-w", str(wl),
                           "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(out.read_text())
    if transport == "inprocess":
        assert seen["import"] == [0, True]
        assert seen["simulating"][0] >= Kernel.GC_THRESHOLD and seen["simulating"][1]
    else:
        default = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"],
                                 capture_output=True, text=True, timeout=60).stdout.strip()
        assert seen["import"][0] == seen["simulating"][0] == int(default)
    assert Path(f"{tmp_path / 'o'}_jobs.csv").read_text().count("\n") == 2


# ---------------------------------------------------------------------- pybatsim's package start-up

LIGHT_CHECK = r'''
import sys, json
from coburst.runner import light_pybatsim
done = light_pybatsim()
import batsim.batsim
from batsim.tools.launcher import instanciate_scheduler
sched = instanciate_scheduler("easyBackfill", {})
import batsim, schedulers
from batsim import __version__
print(json.dumps({"done": done, "version": __version__, "all": batsim.__all__, "metadata": hasattr(batsim, "metadata"),
                  "sched_version": schedulers.__version__, "sched_all": schedulers.__all__,
                  "sub": batsim.batsim.__name__, "sched": type(sched).__module__, "again": light_pybatsim()}))
'''


def test_pybatsim_packages_load_lightly_and_the_same(tmp_path):
    """``runner.light_pybatsim`` (the installed pybatsim's known ``__init__`` files): every
    module loads, a bundled scheduler too, ``__version__`` / ``__all__`` are what the files
    compute, importlib.metadata is imported only when they are read; a second call changes
    nothing."""
    import importlib.metadata

    script = tmp_path / "check.py"
    script.write_text(LIGHT_CHECK)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    version = importlib.metadata.version("pybatsim")
    assert seen == {"done": ["batsim", "schedulers"], "version": version, "all": [version], "metadata": True,
                    "sched_version": version, "sched_all": [version], "sub": "batsim.batsim",
                    "sched": "schedulers.easyBackfill", "again": []}
    # nothing reads the version in a run: importlib.metadata stays unimported
    probe = ("import sys; from coburst.runner import light_pybatsim; light_pybatsim(); "
             "import batsim.batsim, batsim.tools.launcher, schedulers.easyBackfill; "
             "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_another_pybatsim_package_loads_as_it_is(tmp_path):
    """A ``batsim`` package whose ``__init__`` is not the known one runs its own file."""
    pkg = tmp_path / "other" / "batsim"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = 'other'\nimport sys\nsys.ran_other_batsim_init = True\n")
    probe = (f"import sys; sys.path.insert(0, {str(tmp_path / 'other')!r}); from coburst.runner import light_pybatsim; "
             "print(light_pybatsim()); import batsim; print(batsim.__version__, getattr(sys, 'ran_other_batsim_init', 0))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["['schedulers']", "other", "True"], out.stderr


def test_main_gives_the_collector_back(tmp_path):
    """``coburst.cli.main.main`` called in a process that goes on (tests, scripts): the
    caller's thresholds are back after a simulation, also after one that fails."""
    import gc

    from coburst.cli.main import main

    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                  {"d": {"type": "delay", "delay": 5}})
    before = gc.get_threshold()
    assert main(["run", "fcfs", "-q", "--transport", "inprocess", "-p", str(CLUSTER4), "-w", str(wl),
                 "-e", str(tmp_path / "o")]) == 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # (only the console script, whose process ends, freezes)
    assert main(["run", "fcfs", "-q", "-p", str(tmp_path / "missing.xml"), "-w", str(wl),
                 "-e", str(tmp_path / "p")]) == 2
    assert gc.get_threshold() == before


EXIT_PROBE = '''
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0, flush=True))
from coburst.cli.main import main
sys.exit(main())
'''


@pytest.mark.timeout(120)
def test_the_console_script_freezes_what_lives_at_its_exit(tmp_path):
    """``coburst run`` as a process: once the command is done, what is alive goes out of the
    exit-time collections' sight (``gc.freeze``); atexit handlers still run, the outputs are
    whole and the status is the command's."""
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                  {"d": {"type": "delay", "delay": 5}})
    ok = subprocess.run([sys.executable, "-c", EXIT_PROBE, "run", "fcfs", "-q", "-p", str(CLUSTER4), "-w", str(wl),
                         "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=100)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().endswith("frozen at exit: True")
    assert Path(f"{tmp_path / 'o'}_jobs.csv").read_text().count("\n") == 2
    bad = subprocess.run([sys.executable, "-c", EXIT_PROBE, "run", "fcfs", "-q", "-p", str(tmp_path / "missing.xml"),
                          "-w", str(wl), "-e", str(tmp_path / "p")], capture_output=True, text=True, timeout=100)
    assert bad.returncode == 2 and "frozen at exit: True" in bad.stdout
