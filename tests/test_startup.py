"""Start-up time without changed behaviour: the policy registries name each family's module
and class without importing them all (the tables must match the classes, every registered name
must resolve, resolving one name imports only its own module), and what start-up leaves out or
writes out is what it replaces."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from coburst import policies
from coburst.errors import InputError
from coburst.policies import cosched, hetero

REGISTRIES = {"coburst.policies": policies, "coburst.policies.cosched": cosched,
              "coburst.policies.hetero": hetero}


@pytest.mark.parametrize("package", sorted(REGISTRIES))
def test_every_table_entry_is_its_class(package):
    registry = REGISTRIES[package]
    for family, (module, name) in registry.MODULES.items():
        cls = getattr(importlib.import_module(f"{package}.{module}"), name)
        assert cls.family == family, (package, family, cls)
        assert registry.resolve(family)[0] is cls
        assert registry.known(family)
        assert getattr(registry, name) is cls  # the lazy module attribute
    assert list(registry.families()) == list(registry.MODULES)


@pytest.mark.parametrize("package", sorted(REGISTRIES))
def test_every_policy_class_of_the_package_is_registered(package):
    """A class with a family name defined in one of the package's modules is in the table
    (a new policy module cannot be forgotten)."""
    import pkgutil

    registry = REGISTRIES[package]
    tabled = {(module, name) for module, name in registry.MODULES.values()}
    found = set()
    for info in pkgutil.iter_modules(registry.__path__):
        if info.ispkg or info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == module.__name__ and getattr(value, "family", ""):
                found.add((info.name, name))
    assert found == tabled


def test_labels_and_aliases_resolve():
    assert policies.resolve("backfill-sjf-1") == (policies.BackfillSJF, {"depth": 1})
    assert policies.resolve("maxutil-1.0-1") == (policies.MaxUtil, {"beta": 1.0, "depth": 1})
    assert policies.resolve("plan-square-0") == (policies.PlanSquare, {"depth": 0})
    for alias in policies.ALIASES:
        assert policies.known(alias)
        policies.resolve(alias)
    for label, family in cosched.LABELS.items():
        assert cosched.known(label) and cosched.resolve(label)[0] is cosched.families()[family]
    from coburst.policies.hetero.heuristic import LABELS

    assert hetero.HEURISTIC_LABELS == LABELS
    for alias in hetero.ALIASES:
        assert hetero.known(alias) and hetero.known(alias.upper())
        hetero.resolve(alias)


@pytest.mark.parametrize("name", ["easyBackfill", "fcfs-x", "backfill-sjf", "fcfs-1", "maxutil-1", "", "schedFcfs"])
def test_known_agrees_with_resolve(name):
    for registry in REGISTRIES.values():
        try:
            registry.resolve(name)
        except InputError:
            resolves = False
        else:
            resolves = True
        assert registry.known(name) is resolves, (registry.__name__, name)


def test_unknown_name_lists_every_policy():
    with pytest.raises(InputError) as err:
        policies.resolve("nope")
    assert str(err.value) == ("policy: nope: unknown policy (known: backfill-D, backfill-sjf-D, conservative, fcfs, "
                              "filler, filler-sjf, maxutil-beta-D, no-future-D, plan-cube-D, plan-square-D, "
                              "plan-start-D, plan-sum-D, window-D, easy, easy-sjf)")
    with pytest.raises(InputError, match="unknown co-scheduling policy"):
        cosched.resolve("nope")
    with pytest.raises(InputError, match="unknown heterogeneous-cluster policy"):
        hetero.resolve("nope")


def _modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_resolving_a_name_imports_only_its_module():
    """What the start-up gain rests on: a pybatsim name imports no policy module, one
    policy name only its own."""
    mods = _modules_after("from coburst.runner import resolve_scheduler\nresolve_scheduler('easyBackfill', {})")
    assert not [m for m in mods if m.startswith(("coburst.policies.", "coburst.core", "numpy"))
                and m not in ("coburst.policies.cosched", "coburst.policies.hetero", "coburst.policies.elastic")]
    mods = _modules_after("from coburst.policies import cosched\ncosched.get('easy')")
    assert "coburst.policies.cosched.traditional" in mods
    assert not [m for m in mods if m.startswith("coburst.policies.cosched.") and
                m.rsplit(".", 1)[1] in ("easy_co", "filler", "fcs", "pair_greedy", "popularity")]
    assert "coburst.policies.window" not in mods and "coburst.policies.maxutil" not in mods


def test_default_trace_colour_order_is_numpys():
    """The Pajé colours' default order, written out in traces.py, is numpy's seed-0 permutation."""
    import numpy as np

    from coburst.simulator.traces import SEED0_ORDER, batsim_colors, shuffled_colors

    assert list(SEED0_ORDER) == [int(i) for i in np.random.default_rng(0).permutation(64)]
    colors = batsim_colors()
    assert shuffled_colors(0) == [colors[int(i)] for i in np.random.default_rng(0).permutation(len(colors))]
    assert shuffled_colors(3) == [colors[int(i)] for i in np.random.default_rng(3).permutation(len(colors))]


# ------------------------------------------------------------------ the workload's checking pass
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from coburst.simulator import workload as simworkload  # noqa: E402

PROFILES = {"a": simworkload.validate_profile("a", {"type": "delay", "delay": 1}, "f.json", "profiles.a"),
            "p": simworkload.validate_profile("p", {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]},
                                              "f.json", "profiles.p")}
NUMBERS = st.one_of(st.integers(-3, 3), st.integers(-2**40, 2**40), st.sampled_from([
    -1, -1.0, 0, 0.0, -0.0, 1e15, 1e15 - 1, 9.999999999999998e14, 1e22, 1e23, -1e23, 2**31 - 1, 2**31, 2.0,
    float("nan"), float("inf"), -float("inf"), True, False, None, "1", [], {}]), st.floats(allow_nan=True))
IDS = st.one_of(st.integers(-2**70, 2**70), st.text(max_size=4), st.sampled_from(
    ["", "w0!3", "w1!3", "!", "a!b", True, None, 1.5, [1]]))


@st.composite
def job_objects(draw):
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from([None, 3, "job", [1, 2]]))
    obj = {}
    common = {"id": st.integers(0, 10**6), "subtime": st.floats(0, 1e6), "walltime": st.sampled_from([-1, 5, 7.5]),
              "res": st.integers(1, 4), "profile": st.just("a")}  # the common shape, one field off at a time
    for key, values in (("id", IDS), ("subtime", NUMBERS), ("walltime", NUMBERS), ("res", NUMBERS),
                        ("profile", st.sampled_from(["a", "p", "b", 1, None]))):
        if draw(st.integers(0, 9)):  # mostly present
            obj[key] = draw(values if draw(st.integers(0, 3)) == 0 else common[key])
    if draw(st.integers(0, 9)) == 0:
        obj["smpi_ranks_to_hosts_mapping"] = draw(st.lists(st.integers(-1, 3), max_size=3))
    if draw(st.booleans()):
        obj["extra"] = draw(st.one_of(st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)))
    return obj


def _outcome(fn, obj):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            result = fn(obj, "w0", "f.json", "jobs[0]", PROFILES)
        except InputError as exc:
            result = ("error", str(exc))
    return result, err.getvalue()


@settings(max_examples=800, deadline=None)
@given(obj=job_objects())
def test_the_common_job_shortcut_builds_what_the_checks_build(obj):
    """job_from_json's shortcut (no one-by-one checks for a job of the common shape) gives the
    same Job, and a job it does not take gets the same error or warning."""
    fast, fast_err = _outcome(simworkload.job_from_json, obj)
    full, full_err = _outcome(simworkload.checked_job, obj)
    assert fast_err == full_err
    if isinstance(full, tuple):
        assert fast == full
    else:
        assert fast == full and type(fast.walltime) is type(full.walltime) is float
        assert type(fast.res) is type(full.res) is int and fast.json == full.json
        if simworkload.common_job(obj, PROFILES):
            assert not full_err


_DELAYS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-10**30, max_value=10**30),
    st.sampled_from([0, 0.0, -0.0, 1e22, 1e22 * (1 - 2**-52), 1e23, 5e-324, True, False, None, "10", [1]]))


@settings(max_examples=600, deadline=None)
@given(delay=_DELAYS)
def test_the_delay_profile_shortcut_accepts_what_the_checks_accept(delay):
    """validate_profile's shortcut for a plain delay (a number in ]0, 1e22[) takes no delay the
    one-by-one checks (``_num`` then ``batsim_writable``) refuse, and leaves every other to them."""
    try:
        simworkload.batsim_writable(simworkload._num(delay, "f.json", "profiles.p.delay", positive=True,
                                                    maximum=simworkload.BATSIM_TIME_MAX), "f.json", "profiles.p.delay")
        full = None
    except InputError as exc:
        full = str(exc)
    try:
        prof = simworkload.validate_profile("p", {"type": "delay", "delay": delay}, "f.json", "profiles.p")
        fast = None
    except InputError as exc:
        fast, prof = str(exc), None
    assert fast == full
    if prof is not None:
        assert prof.data["delay"] is delay


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from("abcde"), st.integers()), max_size=8))
def test_a_json_object_is_read_with_its_duplicated_keys(pairs):
    """The workload reader's object hook gives the dict Batsim 4.2.1 reads (RapidJSON: the
    first value of a repeated key), and names duplicated keys (in the order they come again)
    as the former dict subclass did for every object."""
    obj = simworkload._json_object(pairs)
    first: dict = {}
    for key, value in pairs:
        first.setdefault(key, value)
    assert obj == first and list(obj) == list(first)
    former = simworkload._JsonObject(pairs)
    assert getattr(obj, "duplicates", []) == former.duplicates


def test_duplicate_profile_names_are_refused(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [], "profiles": {"p": {"type": "delay", "delay": 1}, '
                    '"p": {"type": "delay", "delay": 2}}}')
    with pytest.raises(InputError, match="profiles.p.*duplicate profile name"):
        simworkload.load_workload(path, "w0", stream=False)


def _scan(events):
    """The checking pass's outcome over an ijson event stream: top-level keys and the first
    event of nb_res/jobs/profiles, or "fallback"."""
    top, keys = {}, []
    for event in events:
        prefix = event[0]
        if prefix == "":
            if event[1] == "map_key":
                keys.append(event[2])
            elif event[1] not in ("start_map", "end_map"):
                return "fallback"
        elif len(prefix) > 10 * simworkload._STREAM_DEPTH:
            return "fallback"
        elif prefix in ("nb_res", "jobs", "profiles") and prefix not in top:
            top[prefix] = event[1:]
    return keys, top


def _watch_reference(path):
    """The checking pass before the start-up work: every event through a Python generator."""
    import ijson

    with open(path, "rb") as f:
        return _scan(ijson.parse(f, use_float=True))


def _outline_now(path):
    import ijson

    with open(path, "rb") as f:
        return _scan(simworkload._outline(ijson.parse(f, use_float=True)))


KEYS = st.sampled_from(["nb_res", "jobs", "profiles", "", "a", "nb_res2", "jobs.item", "profiles.x", "k" * 8,
                        "k" * 9, "description", "x" * 990, "y" * 1005])


@st.composite
def documents(draw):
    def value(depth):
        kind = draw(st.integers(0, 5 if depth < 3 else 2))
        if kind == 0:
            return json.dumps(draw(st.one_of(st.integers(-5, 2**40), st.floats(allow_nan=False, allow_infinity=False),
                                             st.text(max_size=3),
                                             st.booleans(), st.none())))
        if kind == 1:  # deeply nested
            n = draw(st.sampled_from([1, 150, 198, 199, 200, 201, 260]))
            return "[" * n + "1" + "]" * n
        if kind == 2:
            return "[]"
        if kind == 3:
            return "[" + ", ".join(value(depth + 1) for _ in range(draw(st.integers(0, 3)))) + "]"
        items = [f"{json.dumps(draw(KEYS))}: {value(depth + 1)}" for _ in range(draw(st.integers(0, 3)))]
        return "{" + ", ".join(items) + "}"

    if draw(st.integers(0, 9)) == 0:
        return value(0)
    items = [f"{json.dumps(draw(KEYS))}: {value(1)}" for _ in range(draw(st.integers(0, 5)))]
    return "{" + ", ".join(items) + "}"


@settings(max_examples=300, deadline=None)
@given(text=documents())
def test_the_checking_pass_sees_what_every_event_showed(tmp_path_factory, text):
    """scan_workload's first pass now drops the events inside the top-level values in C; what
    it decides (top-level keys, first events of nb_res/jobs/profiles, deep nesting) is what
    looking at every event decided."""
    path = tmp_path_factory.mktemp("doc") / "w.json"
    path.write_text(text)
    assert _decided(_outline_now, path) == _decided(_watch_reference, path)


def _decided(fn, path):
    import ijson

    try:
        return fn(path)
    except ijson.JSONError as exc:
        return ("error", type(exc).__name__)


# ------------------------------------------------------------------ zone properties
NESTED_ZONES = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <prop id="a" value="root"/><prop id="b" value="root"/>
    <zone id="z1" routing="Full">
      <prop id="b" value="z1"/>
      <zone id="z11" routing="Full"><prop id="c" value="z11"/><host id="h2" speed="1f"/></zone>
      <zone id="z12" routing="Full"><host id="h1" speed="1f"/></zone>
    </zone>
    <zone id="z2" routing="Full"><host id="master_host" speed="1f"/><host id="h3" speed="1f"/></zone>
  </zone>
</platform>
"""


SIBLING_ZONES = NESTED_ZONES.replace('<zone id="z1" routing="Full">\n      <prop id="b" value="z1"/>',
                                     '<zone id="z1" routing="Full">')


@pytest.mark.parametrize("platform", ["platforms/aris_cosched_small.xml", "platforms/dragonfly_small.xml",
                                      "platforms/hetero_low16.xml", "platforms/kth_sp2.xml", "nested", "siblings"])
def test_zone_properties_shortcut_is_the_walk(platform, tmp_path):
    """Hosts' zone properties (SIMULATION_BEGINS): the shortcut for platforms whose only zone
    properties are the root's gives what walking every zone gives, values and key order."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    path = root / platform
    if platform in ("nested", "siblings"):
        path = tmp_path / f"{platform}.xml"
        path.write_text(NESTED_ZONES if platform == "nested" else SIBLING_ZONES)
    out = subprocess.run([sys.executable, str(root / "tests/tools/zone_props_check.py"), str(path)],
                         capture_output=True, text=True, check=True, cwd=root)
    got = json.loads(out.stdout)
    assert got["found"] == got["reference"] and all(got["orders"])
    if platform == "nested":
        assert got["found"]["h2"] == {"a": "root", "b": "z1", "c": "z11"}
    if platform == "siblings":
        assert got["found"]["h2"] == {"a": "root", "b": "root", "c": "z11"} and got["found"]["h3"]["b"] == "root"
    if platform == "platforms/aris_cosched_small.xml":
        assert got["found"]["n0_s0_h0"]["platform"] == "cosched"


# ------------------------------------------------------------------ one reading of the workload
def test_coburst_run_reads_the_workload_once(tmp_path):
    """`coburst run` checks the workload before the scheduler starts and the simulator uses
    that reading (it read the file again before): a warning is printed once, the outputs are
    the ones of `coburst sim` with the same scheduler."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = {"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 3}},
           "jobs": [{"id": 0, "subtime": -5, "res": 1, "profile": "p"}, {"id": 1, "subtime": 2, "res": 2, "profile": "p"}]}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-m", "coburst", "run", "easyBackfill", "-q", "-p",
                          str(root / "platforms/kth_sp2.xml"), "-w", "w.json", "-e", "out"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("negative submission time -5") == 1, run.stderr
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("job_id,")


@settings(max_examples=200, deadline=None)
@given(resources=st.lists(st.tuples(st.integers(0, 2**40), st.text(max_size=6),
                                    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=4),
                                    st.sampled_from([0, 1, 2, None])), min_size=1, max_size=6),
       zones=st.lists(st.dictionaries(st.text(max_size=4), st.text(max_size=5), max_size=4), min_size=3, max_size=3))
def test_resources_are_encoded_as_before(resources, zones):
    """SIMULATION_BEGINS' resources written as text at once (zone properties shared by many
    hosts encoded once) read as the dicts encode_value wrote before."""
    from types import SimpleNamespace

    from coburst.simulator.handlers import resource_json
    from coburst.simulator.protocol import encode_text

    zone_props = {name: zones[z] for _, name, _, z in resources if z is not None}
    texts = {}
    for rid, name, props, _ in resources:
        r = SimpleNamespace(id=rid, name=name, properties=props)
        before = encode_text({"id": r.id, "name": r.name, "state": "idle", "properties": dict(r.properties),
                              "zone_properties": zone_props.get(r.name, {})})
        assert resource_json(r, zone_props, texts) == before


# ------------------------------------------------------------------ remembered platform scans
def test_a_remembered_platform_scan_is_the_scan(tmp_path, monkeypatch):
    """A well-formed platform file's scan (root, version, each host's zone routing, a
    declaration after white space) is remembered by content: read back it is the scan; an
    edited file is scanned again; a damaged record is ignored; nothing is remembered with
    COBURST_CACHE=off or for a malformed file."""
    from xml.parsers import expat

    from coburst.simulator import platform as simplatform

    monkeypatch.setenv("COBURST_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "p.xml"
    path.write_text("\n" + NESTED_ZONES)  # white space before the declaration: decl_line 2

    def fresh():
        simplatform._SCANS.clear()
        return simplatform._scan(path)

    first = fresh()
    records = list((tmp_path / "cache" / "platform-scans").glob("*.json"))
    assert len(records) == 1 and first.decl_line == 2 and first.host_zone["h2"] == "Full"
    again = fresh()
    assert again == first
    records[0].write_text("{not json")
    assert fresh() == first
    path.write_text("\n" + NESTED_ZONES.replace('<host id="h3" speed="1f"/>', '<host id="h4" speed="1f"/>'))
    edited = fresh()
    assert "h4" in edited.host_zone and "h3" not in edited.host_zone
    path.write_text(NESTED_ZONES.replace("</platform>", ""))
    with pytest.raises(expat.ExpatError):
        fresh()
    assert len(list((tmp_path / "cache" / "platform-scans").glob("*.json"))) == 2
    monkeypatch.setenv("COBURST_CACHE", "off")
    path.write_text(NESTED_ZONES)
    assert fresh().decl_line == 0
    assert len(list((tmp_path / "cache" / "platform-scans").glob("*.json"))) == 2
