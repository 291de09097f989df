"""Fuzz targets, one per reader: SWF logs, Batsim JSON workloads (read whole and streamed),
SimGrid platforms, heatmaps (CSV and JSON), campaign files (TOML) and co-scheduling theory
instances.  Each target mutates a valid document with hostile values (huge and tiny numbers,
numbers of thousands of digits, NUL and control characters, path fragments, long strings,
deep nesting, repeated keys) and checks that the reader either accepts it or refuses it with
an :class:`~coburst.errors.InputError` (a short message), never another exception.

They run briefly in the test suite (a few examples each, derandomized); to fuzz longer::

    COBURST_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest -q -n 0 tests/test_fuzz_readers.py

(``COBURST_FUZZ_SEED=random`` draws new examples on every run instead of the fixed ones).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_support import call
from coburst.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster16.xml"
EXAMPLES = int(os.environ.get("COBURST_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("COBURST_FUZZ_SEED") != "random",
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])
MESSAGE_MAX = 5000

#: values no reader should meet in a real input
HOSTILE = st.one_of(
    st.sampled_from([1e308, -1e308, 5e-324, -0.0, 0, -1, 2**31 - 1, 2**31, 2**63, -2**63, "", "\x00", "a\x00b",
                     "a\nb", "\r", '"', "'", "\\", "../..", "/etc/passwd", "..", "$x$", "a,b", "%s", "{out}", "x" * 3000,
                     [], {}, None, True, False, [[[[[]]]]], {"": {"": {}}}]),
    st.integers(min_value=-2**80, max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
#: raw text spliced in place of a value (what a JSON encoder never writes)
RAW = st.sampled_from(["[" * 600 + "]" * 600, "{\"a\":" * 300 + "1" + "}" * 300, "9" * 5000, "1e999", "-1e999",
                       "NaN", "Infinity", '{"k": 1, "k": 2}', '"\\ud800"', '"\\u0000"', "0x10", "01", "1.", ".5"])


def check_refusal(exc: InputError) -> None:
    assert len(str(exc)) < MESSAGE_MAX, len(str(exc))


def paths(doc, prefix=()):
    """Every place of a JSON document (as a tuple of keys and indexes)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, (*prefix, i))


MARK = "__coburst_fuzz_raw__"


@st.composite
def mutated_json(draw, base: dict) -> str:
    """``base`` with one to three places replaced by a hostile value or raw text."""
    doc = json.loads(json.dumps(base))
    raw = None
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p in paths(doc) if p]
        place = draw(st.sampled_from(places))
        parent = doc
        for key in place[:-1]:
            parent = parent[key]
        if raw is None and draw(st.booleans()):
            raw = draw(RAW)
            parent[place[-1]] = MARK
        else:
            value = draw(HOSTILE)
            parent[place[-1]] = json.loads(json.dumps(value)) if isinstance(value, (list, dict)) else value  # (a copy)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()))
    return text.replace(json.dumps(MARK), raw) if raw is not None else text


def write(tmp: Path, name: str, text: str | bytes) -> Path:
    path = tmp / name
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    path.write_bytes(text)
    return path


# ------------------------------------------------------------------ workloads
WORKLOAD = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "walltime": 10, "res": 2, "profile": "d"},
                                  {"id": "b", "subtime": 2, "res": 1, "profile": "c", "extra": {"x": [1, 2]}}],
            "profiles": {"d": {"type": "delay", "delay": 5},
                         "p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
                         "c": {"type": "composed", "seq": ["d", "p"], "repeat": 2}}}


@FUZZ
@given(text=mutated_json(WORKLOAD), stream=st.booleans())
def test_fuzz_workload_reader(tmp_path, text, stream):
    from coburst.simulator import workload as wmod

    path = write(tmp_path, "w.json", text)
    try:
        wl = wmod.load_workload(path, "w0", stream=stream)
        list(wl.iter_jobs())
    except InputError as exc:
        check_refusal(exc)


# ------------------------------------------------------------------ theory instances
@pytest.fixture(scope="module")
def instances(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("theory") / "i.json"
    code, err = call("theory", "generate", "--n", 2, "--alpha", 0.4, 0.6, "-o", path)
    assert code == 0, err
    return json.loads(path.read_text())


@FUZZ
@given(data=st.data())
def test_fuzz_theory_instances(tmp_path, instances, data):
    from coburst.theory.io import read_instances

    path = write(tmp_path, "i.json", data.draw(mutated_json(instances)))
    try:
        read_instances(path)
    except InputError as exc:
        check_refusal(exc)


# ------------------------------------------------------------------ heatmaps
HEATMAP = {"a": {"a": 1.0, "b": 0.9}, "b": {"a": 0.8, "b": None}}


@FUZZ
@given(text=mutated_json(HEATMAP))
def test_fuzz_heatmap_json(tmp_path, text):
    from coburst.models.heatmap import load_heatmap

    path = write(tmp_path, "h.json", text)
    try:
        load_heatmap(path, "json")
    except InputError as exc:
        check_refusal(exc)


CELL = st.one_of(st.sampled_from(["", "1e308", "5e-324", "-1", "0", "nan", "inf", "9" * 5000, "\x00", '"', "a,b",
                                  "x" * 3000, "\u202e"]), st.text(max_size=8))


@FUZZ
@given(cells=st.lists(CELL, min_size=1, max_size=4), row=st.integers(0, 2), col=st.integers(0, 2))
def test_fuzz_heatmap_csv(tmp_path, cells, row, col):
    from coburst.models.heatmap import load_heatmap

    rows = [["job\\co_job", "a", "b"], ["a", "1.0", "0.9"], ["b", "0.8", ""]]
    for k, cell in enumerate(cells):
        rows[(row + k) % 3][(col + k) % 3] = cell
    path = write(tmp_path, "h.csv", "\n".join(",".join(r) for r in rows) + "\n")
    try:
        load_heatmap(path, "csv")
    except InputError as exc:
        check_refusal(exc)


# ------------------------------------------------------------------ campaign files
TOML_VALUE = st.one_of(st.sampled_from(['"../.."', '"/tmp/x"', '"\\u0000"', '"a\\nb"', "1e308", "-1", "0", "nan",
                                        "inf", "9" * 5000, "[" * 100 + "]" * 100, "{a = {b = {c = 1}}}", '""',
                                        '"' + "x" * 3000 + '"', "true", "[1, \"a\"]", "{}", "[]"]),
                       st.text(max_size=10).map(json.dumps))
TOML_KEYS = ["campaign.name", "campaign.out", "campaign.seeds", "campaign.timeout", "campaign.run_timeout",
             "campaign.engines", "campaign.sim_args", "schedulers.name", "schedulers.scheduler", "schedulers.options",
             "schedulers.grid", "platforms.path", "platforms.name", "workloads.path", "workloads.name",
             "workloads.labels", "workloads.vary"]


@FUZZ
@given(changes=st.dictionaries(st.sampled_from(TOML_KEYS), TOML_VALUE, min_size=1, max_size=3))
def test_fuzz_campaign_file(tmp_path, changes):
    from coburst.campaign.spec import load_campaign

    tables = {"campaign": {"name": '"c"'}, "schedulers": {"scheduler": '"fcfs"'},
              "platforms": {"path": json.dumps(str(PLATFORM))}, "workloads": {"path": '"w.json"'}}
    for key, value in changes.items():
        table, field = key.split(".")
        tables[table][field] = value
    text = "".join(f"{'[campaign]' if t == 'campaign' else f'[[{t}]]'}\n"
                   + "".join(f"{k} = {v}\n" for k, v in fields.items()) for t, fields in tables.items())
    write(tmp_path, "w.json", json.dumps(WORKLOAD))
    path = write(tmp_path, "c.toml", text)
    try:
        load_campaign(path, out=tmp_path / "out")
    except InputError as exc:
        check_refusal(exc)
    assert not (tmp_path / "out").exists()  # loading writes nothing


# ------------------------------------------------------------------ SWF logs
SWF_FIELD = st.one_of(st.sampled_from(["-1", "0", "1e308", "5e-324", "nan", "inf", "9" * 5000, "-" * 3, "\x00",
                                       "1,5", "0x10", "x" * 3000, "2147483648", "-2147483649"]),
                      st.integers(-2**40, 2**40).map(str))


@FUZZ
@given(changes=st.dictionaries(st.integers(0, 17), SWF_FIELD, min_size=1, max_size=4), line=st.integers(0, 2))
def test_fuzz_swf_reader(tmp_path, changes, line):
    rows = [[str(v) for v in (k + 1, 10 * k, 0, 100, 4, -1, -1, 4, 200, -1, 1, 1, 1, -1, 1, -1, -1, -1)]
            for k in range(3)]
    for field, value in changes.items():
        rows[line][field] = value
    path = write(tmp_path, "log.swf", "; fuzzed\n" + "\n".join(" ".join(r) for r in rows) + "\n")
    (tmp_path / "o.json").unlink(missing_ok=True)  # (tmp_path is shared by the examples)
    code, err = call("workload", "swf", path, "-o", tmp_path / "o.json", "-p", PLATFORM)
    assert code in (0, 2), err
    assert "Traceback" not in err and len(err) < MESSAGE_MAX, err[:2000]
    if code == 2:
        assert not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ platforms
ATTRIBUTE = st.one_of(st.sampled_from(["", "0", "-1Gf", "1e308f", "1e999Gf", "nan", "\x01", "&amp;", "&#0;", "a\"b",
                                       "x" * 3000, "1Gf 2Gf", "100%", "../..", "9" * 5000]), st.text(max_size=6))


@FUZZ
@given(where=st.sampled_from(["speed", "id", "bandwidth", "latency", "core", "value"]), value=ATTRIBUTE)
def test_fuzz_platform_reader(tmp_path, where, value):
    from xml.sax.saxutils import quoteattr

    attrs = {"speed": "1Gf", "id": "n0", "bandwidth": "1GBps", "latency": "1us", "core": "1", "value": "compute_node"}
    attrs[where] = value
    try:
        quoted = {k: quoteattr(v) for k, v in attrs.items()}
    except ValueError:
        return
    xml = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
           "<host id=\"master_host\" speed=\"1Gf\"/>"
           f"<host id={quoted['id']} speed={quoted['speed']} core={quoted['core']}>"
           f"<prop id=\"role\" value={quoted['value']}/></host>\n"
           f"<link id=\"l\" bandwidth={quoted['bandwidth']} latency={quoted['latency']}/>\n"
           f"<route src=\"master_host\" dst={quoted['id']}><link_ctn id=\"l\"/></route>\n</zone></platform>\n")
    path = write(tmp_path, "p.xml", xml)
    code, err = call("platform", "info", path)
    assert code in (0, 2), err
    assert "Traceback" not in err and len(err) < MESSAGE_MAX, err[:2000]
