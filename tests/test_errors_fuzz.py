"""Fuzzed: malformed SWF lines, workload JSON documents, platform XML fragments,
model files and option values for every command, and mutations of valid files (truncation
at every byte offset, field deletions, type swaps).

Each must end with a non-zero status (2), no traceback (no exception escapes ``main``), a
message naming the file or the option, and no output left.  Most cases call
``coburst.cli.main.main`` in this process (milliseconds each: nothing reaches SimGrid);
a few go through the real command in a subprocess, where the point is the exit status, the
absence of a traceback and of any process left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_support import call
from proc_support import children
from shared_data import need_swf, needs_swf, swf_log

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = str(ROOT / "platforms" / "kth_sp2.xml")
WORKLOAD = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "walltime": 10, "res": 2, "profile": "d"},
                                  {"id": "b", "subtime": 2, "res": 1, "profile": "c"}],
            "profiles": {"d": {"type": "delay", "delay": 5},
                         "p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
                         "c": {"type": "composed", "seq": ["d", "p"], "repeat": 2}}}
MODEL = {"distribution": "lognorm", "params": {"s": 1.09725, "loc": -150361, "scale": 2714115},
         "unit_bytes": 1024, "floor_bytes": 100000000, "short_job_runtime": 120, "short_job_bytes": 10000000}
SMALL_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
<host id="master_host" speed="1Gf"/><host id="n0" speed="1Gf"/>
<link id="l" bandwidth="1GBps" latency="1us"/>
<route src="master_host" dst="n0"><link_ctn id="l"/></route>
</zone></platform>
"""
FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _restore_signals():
    yield
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def outputs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("out", ".out")))


def rejected(code: int, err: str, folder: Path, *names: str) -> None:
    assert code == 2, (code, err)
    assert "Traceback" not in err
    assert any(name in err for name in names), (names, err)
    assert outputs(folder) == [], outputs(folder)


# ====================================================================== SWF
@lru_cache(maxsize=None)
def swf_lines() -> tuple[str, ...]:
    """The first three jobs of the KTH-SP2 log (skipped without it)."""
    return tuple([x for x in need_swf().read_text().splitlines() if x.strip() and not x.startswith(";")][:3])


BAD_TOKENS = st.sampled_from(["nan", "inf", "-inf", "1e308", "-1e400", "abc", "0x10", "1.5.2", "", "--1", "1e",
                              "\u00e9", "12,5", "9" * 40])


@st.composite
def malformed_swf_line(draw):
    fields = draw(st.sampled_from(swf_lines())).split()
    defect = draw(st.sampled_from(["token", "count", "fraction"]))
    if defect == "token":
        i = draw(st.integers(0, 17))
        tok = draw(BAD_TOKENS.filter(lambda t: t.strip() != ""))
        fields[i] = tok
    elif defect == "count":
        n = draw(st.integers(0, 30).filter(lambda k: k != 18))
        fields = (fields * 2)[:n] if n else ["1"]
        if n == 0:
            fields = ["1", "2"]
    else:  # an integer field with a fraction
        i = draw(st.sampled_from([0, 4, 7, 10, 11, 12]))
        fields[i] = "3.5"
    return " ".join(fields)


@needs_swf()
@settings(FUZZ, max_examples=12)
@given(line=malformed_swf_line(), where=st.integers(0, 3))
def test_fuzz_swf_lines(tmp_path, line, where):
    lines = list(swf_lines())
    lines.insert(where, line)
    path = tmp_path / "log.swf"
    path.write_text("; Version: 2.2\n" + "\n".join(lines) + "\n")
    code, err = call("workload", "swf", path, "-o", tmp_path / "out.json")
    rejected(code, err, tmp_path, str(path))
    assert f"line {where + 2}" in err


def test_swf_truncated_at_every_byte(tmp_path):
    """The reader at every offset; the whole command at every 16th (a conversion costs ~0.3 s)."""
    from coburst.errors import InputError
    from coburst.workloads.swf import read_swf

    data = ("\n".join(swf_lines()) + "\n").encode()
    path = tmp_path / "log.swf"
    for cut in range(0, len(data)):
        path.write_bytes(data[:cut])
        try:
            read_swf(path)
        except InputError as exc:
            assert exc.source == str(path)
        if cut % 16 == 0:
            code, err = call("workload", "swf", path, "-o", tmp_path / "out.json")
            assert code in (0, 2) and "Traceback" not in err, (cut, err)
            if code == 2:
                assert str(path) in err and outputs(tmp_path) == []
            for p in tmp_path.glob("out*"):
                p.unlink()


# ====================================================================== workload JSON
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False)
                           | st.text(max_size=5), lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=6)


def paths_of(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths_of(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths_of(v, prefix + (i,))


ALL_PATHS = [p for p in paths_of(WORKLOAD) if p]


def mutate(doc, path, op, value):
    doc = json.loads(json.dumps(doc))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if op == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@FUZZ
@given(path=st.sampled_from(ALL_PATHS), op=st.sampled_from(["delete", "swap"]), value=JSON_VALUES)
def test_fuzz_workload_mutations(tmp_path, path, op, value):
    doc = mutate(WORKLOAD, path, op, value)
    f = tmp_path / "w.json"
    f.write_text(json.dumps(doc))
    code, err = call("workload", "check", f)
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert str(f) in err


REQUIRED = [("nb_res",), ("profiles",), ("jobs",), ("jobs", 0, "id"), ("jobs", 0, "subtime"), ("jobs", 0, "res"),
            ("jobs", 0, "profile"), ("profiles", "d", "type"), ("profiles", "d", "delay"), ("profiles", "c", "seq")]
WRONG = st.sampled_from([None, True, "x", [], {}, -5, 1e300, 2**80])


@FUZZ
@given(path=st.sampled_from(REQUIRED), op=st.sampled_from(["delete", "swap"]), value=WRONG)
def test_fuzz_workload_required_fields(tmp_path, path, op, value):
    if op == "swap" and path in (("jobs", 0, "id"), ("profiles", "c", "seq")) and isinstance(value, (str, list)):
        value = None  # a string id is valid; keep the swap wrong
    if path in (("jobs", 0, "subtime"), ("profiles", "d", "delay")) and value in (1e300, 2**80) \
            or path == ("jobs", 0, "subtime") and value == -5:
        value = None  # far or negative dates are valid (Batsim reads any finite double)
    doc = mutate(WORKLOAD, path, op, value)
    f = tmp_path / "w.json"
    f.write_text(json.dumps(doc))
    code, err = call("sim", "-p", PLATFORM, "-w", f, "-e", tmp_path / "out", "--timeout", "1")
    rejected(code, err, tmp_path, str(f))


@FUZZ
@given(text=st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "[]", "{", "\"x\"", "null", "{\"nb_res\":}"]),
       key=st.sampled_from(["nb_res", "subtime", "delay"]))
def test_fuzz_workload_non_json_numbers(tmp_path, text, key):
    raw = json.dumps(WORKLOAD)
    raw = raw.replace(f'"{key}": ', f'"{key}": {text}, "_was": ', 1) if text not in ("[]", "{", "\"x\"", "null") \
        else text
    f = tmp_path / "w.json"
    f.write_text(raw)
    code, err = call("workload", "check", f)
    rejected(code, err, tmp_path, str(f))


def test_workload_truncated_at_every_byte(tmp_path):
    data = json.dumps(WORKLOAD).encode()
    f = tmp_path / "w.json"
    for cut in range(len(data)):
        f.write_bytes(data[:cut])
        code, err = call("workload", "check", f)
        rejected(code, err, tmp_path, str(f))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "latin-1"])
def test_workload_encodings(tmp_path, encoding):
    f = tmp_path / "w.json"
    f.write_bytes(json.dumps({**WORKLOAD, "description": "réseau"}, ensure_ascii=False).encode(encoding))
    code, err = call("workload", "check", f)
    rejected(code, err, tmp_path, str(f))
    assert ("UTF-16" in err or "UTF-32" in err or "UTF-8" in err), err


# ====================================================================== model files
def test_model_truncated_at_every_byte(tmp_path):
    data = json.dumps(MODEL).encode()
    f = tmp_path / "m.json"
    for cut in range(len(data)):
        f.write_bytes(data[:cut])
        code, err = call("model", "bb", "--bb-model", f)
        rejected(code, err, tmp_path, str(f))


@FUZZ
@given(path=st.sampled_from([p for p in paths_of(MODEL) if p]), op=st.sampled_from(["delete", "swap"]),
       value=JSON_VALUES)
def test_fuzz_model_mutations(tmp_path, path, op, value):
    doc = mutate(MODEL, path, op, value)
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    code, err = call("model", "bb", "--bb-model", f)
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert str(f) in err


# ====================================================================== platform XML
ATTR = st.text(alphabet="0123456789.eEfGgkMBps-x <&\"'", max_size=8)


@st.composite
def xml_fragment(draw):
    elements = []
    for i in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["host", "link", "zone", "cluster", "prop", "route", "junk"]))
        attr = draw(ATTR).replace('"', "&quot;") if draw(st.booleans()) else draw(ATTR)
        if kind == "host":
            elements.append(f'<host id="h{i}" speed="{attr}"/>')
        elif kind == "link":
            elements.append(f'<link id="l{i}" bandwidth="{attr}" latency="1us"/>')
        elif kind == "zone":
            elements.append(f'<zone id="z{i}" routing="{attr}">')
        elif kind == "cluster":
            elements.append(f'<cluster id="c{i}" prefix="n" suffix="" radical="{attr}" speed="1Gf" bw="1GBps" '
                            'lat="1us"/>')
        elif kind == "prop":
            elements.append(f'<prop id="role" value="{attr}"/>')
        elif kind == "route":
            elements.append(f'<route src="h{i}" dst="{attr}"><link_ctn id="l0"/></route>')
        else:
            elements.append(attr)
    body = "".join(elements)
    return SMALL_PLATFORM.replace('<host id="n0" speed="1Gf"/>', f'<host id="n0" speed="1Gf"/>{body}')


@FUZZ
@given(xml=xml_fragment())
def test_fuzz_platform_info(tmp_path, xml):
    f = tmp_path / "p.xml"
    f.write_text(xml)
    code, err = call("platform", "info", f)
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert str(f) in err or "--" in err


def test_platform_truncated_at_every_byte(tmp_path):
    from coburst.errors import InputError
    from coburst.simulator.platform import check_xml

    data = SMALL_PLATFORM.encode()
    f = tmp_path / "p.xml"
    for cut in range(0, len(data) - 1):
        f.write_bytes(data[:cut])
        code, err = call("platform", "info", f)
        assert code in (0, 2) and "Traceback" not in err, (cut, err)
        with pytest.raises(InputError, match="p.xml"):
            check_xml(f)


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(xml=xml_fragment().filter(lambda x: "<zone id=\"z" in x or "speed=\"\"" in x or "<&" in x))
def test_fuzz_platform_sim_subprocess(tmp_path, xml):
    """The real ``coburst sim`` on a malformed platform: status 2, no traceback, the file named,
    no output and no process left (SimGrid's aborts are caught in a child first)."""
    f = tmp_path / "p.xml"
    f.write_text(xml)
    w = tmp_path / "w.json"
    w.write_text(json.dumps(WORKLOAD))
    proc = subprocess.run([sys.executable, "-m", "coburst", "sim", "-p", str(f), "-w", str(w), "-e",
                           str(tmp_path / "out"), "-s", "tcp://127.0.0.1:9", "--timeout", "1"],
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (2, 4), proc.stderr  # 4: a valid platform, no scheduler listening
    if proc.returncode == 2:
        assert str(f) in proc.stderr or "-r/--add-role" in proc.stderr, proc.stderr
    assert outputs(tmp_path) == []


# ====================================================================== option values, every command
#: values no numeric option accepts (valid values would run the command: slow, and tested elsewhere)
NUMBERISH = st.sampled_from(["nan", "inf", "-inf", "NaN", "1e999", "-1e999", "", "x", "0x1", "1.5.2", "--3", "1e",
                             "1,5", "\u00bd", "1e308x"])


def swf_file(tmp: Path) -> Path:
    f = tmp / "log.swf"
    f.write_text("\n".join(swf_lines()) + "\n")
    return f


COMMANDS = [
    (["workload", "swf", "{swf}", "-o", "{out}.json"], ["--seed", "--split", "--max-jobs", "--kappa"]),
    (["workload", "elise", "-o", "{out}.json", "-n", "3"], ["--jobs", "--interarrival", "--weibull-shape",
                                                           "--walltime-factor", "--seed"]),
    (["model", "fit-bb", "{swf}"], ["--folds", "--seed", "--max-samples"]),
    (["platform", "cluster", "-o", "{out}.xml"], ["--nodes", "--speed", "--bw", "--lat"]),
    (["platform", "dragonfly", "-o", "{out}.xml"], ["--groups", "--nodes", "--bb-capacity", "--speed"]),
    (["platform", "cosched", "-o", "{out}.xml"], ["--nodes", "--sockets", "--cores", "--core-speed"]),
    (["sim", "-p", PLATFORM, "-w", "{missing}"], ["--timeout", "--mmax", "--redis-port", "--workflow-jobs-limit",
                                                  "--heatmap-alone"]),
    (["run", "fcfs", "-p", PLATFORM, "-w", "{missing}"], ["--timeout", "--mmax", "-o"]),
]


#: the commands reading an SWF log are left out without the KTH-SP2 log
OPTION_CASES = [(c, o) for c, opts in COMMANDS for o in opts if "{swf}" not in c or swf_log().is_file()]


@settings(FUZZ, max_examples=60)
@given(case=st.sampled_from(OPTION_CASES), value=NUMBERISH)
def test_fuzz_option_values(tmp_path, case, value):
    base, option = case
    for p in tmp_path.glob("out*"):
        p.unlink()
    swf = swf_file(tmp_path) if "{swf}" in base else None
    args = [a.format(swf=swf, out=tmp_path / "out", missing=tmp_path / "missing.json") for a in base]
    if base[0] in ("sim", "run"):
        args += ["-e", str(tmp_path / "out")]
    code, err = call(*args, f"{option}={value}" if option.startswith("--") else option, *(
        [] if option.startswith("--") else [value]))
    assert "Traceback" not in err
    assert code == 2, (code, err)
    short = option.lstrip("-")
    assert short in err or "missing.json" in err or "log.swf" in err, (option, value, err)
    assert outputs(tmp_path) == [], outputs(tmp_path)


def test_no_process_left_by_the_fuzzed_commands():
    """Nothing above started a process that still runs (children of this test process)."""
    assert children(os.getpid()) == set()
