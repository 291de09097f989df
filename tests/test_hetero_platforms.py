"""Heterogeneous platforms (coburst/platforms/hetero.py, irmasim.py; Sánchez Sousa 2023,
Tables 2-5): presets, spec files, IRMaSim modelV1 conversion, errors, and runs on both engines."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from coburst.errors import InputError
from coburst.platforms import hetero
from coburst.platforms.irmasim import convert

sys.path.insert(0, str(Path(__file__).parent))
from crossengine import assert_identical, needs_batsim, run_both  # noqa: E402
from simharness import COBURST, REPO, run_sim, write_json  # noqa: E402
from hetero_fixtures import IRMASIM, needs_irmasim  # noqa: E402

PLATFORMS = REPO / "platforms"

#: Sánchez Sousa 2023, Tables 2 and 3: (count, lowest, highest clock in GHz) per class, the
#: open classes closed as the module documents (width of the class before)
TABLE2 = [(6, 1.00, 5.00), (5, 5.01, 7.50), (3, 7.51, 10.00), (2, 10.01, 12.50)]
TABLE3 = [(4, 1.00, 10.00), (4, 10.01, 20.00), (4, 20.00, 30.00), (4, 30.01, 40.00)]
#: Tables 4 and 5: (nodes, cores, GHz)
TABLE4 = [(13, 32, 4.6), (11, 20, 10.2), (4, 8, 6.4), (4, 8, 15.2)]
TABLE5 = [(4, 32, 2.6), (4, 20, 5.2), (4, 8, 3.4), (4, 8, 7.2)]


def hosts(text: str) -> list[tuple[str, float, dict[str, str]]]:
    """(name, speed, properties) of every host of a platform XML, in file order."""
    out = []
    for m in re.finditer(r'<host id="([^"]+)" speed="([0-9.e+]+)(G?)f">(.*?)</host>', text, re.S):
        props = dict(re.findall(r'<prop id="([^"]+)" value="([^"]*)"/>', m.group(4)))
        out.append((m.group(1), float(m.group(2)) * (1e9 if m.group(3) else 1), props))
    return out


def cores(text: str) -> list[tuple[str, float, dict[str, str]]]:
    return [h for h in hosts(text) if h[0] != "master_host"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(COBURST), *args], capture_output=True, text=True, cwd=cwd, timeout=60)


# ----------------------------------------------------------------------------- presets
@pytest.mark.parametrize("name", ["low16", "high16", "dist0", "dist1"])
def test_committed_presets_regenerate_byte_for_byte(name):
    text = hetero.render_xml(hetero.preset(name, 0))
    assert (PLATFORMS / f"hetero_{name}.xml").read_text() == text


@pytest.mark.parametrize("name, table", [("low16", TABLE2), ("high16", TABLE3)])
def test_single_core_presets_draw_in_the_tables_ranges(name, table):
    found = cores((PLATFORMS / f"hetero_{name}.xml").read_text())
    assert len(found) == 16
    i = 0
    for count, lo, hi in table:
        for _ in range(count):
            host, speed, props = found[i]
            assert props["cores"] == "1" and props["core"] == "0" and props["node"] == str(i)
            clock = speed / 1e9
            assert lo <= clock <= hi, (host, clock, lo, hi)
            assert round(clock * 100) == pytest.approx(clock * 100)  # the 0.01 GHz grid
            assert float(props["speed"]) == speed
            i += 1


@pytest.mark.parametrize("name, table", [("dist0", TABLE4), ("dist1", TABLE5)])
def test_distributed_presets_follow_tables_4_and_5(name, table):
    found = cores((PLATFORMS / f"hetero_{name}.xml").read_text())
    flat = [(ncores, clock) for count, ncores, clock in table for _ in range(count)]
    expected = [(node, core, clock) for node, (ncores, clock) in enumerate(flat) for core in range(ncores)]
    assert len(found) == len(expected) == sum(n * c for n, c, _ in table)
    for (host, speed, props), (node, core, clock) in zip(found, expected):
        assert props["node"] == str(node) and props["core"] == str(core)
        assert speed == clock * 1e9  # exact: 4.6 GHz -> 4600000000 flop/s
    zone = (PLATFORMS / f"hetero_{name}.xml").read_text()
    assert f'<prop id="nodes" value="{sum(n for n, _, _ in table)}"/>' in zone


def test_host_names_sort_node_major_core_minor():
    """Batsim numbers resources in lexicographic host order: it must be (node, core) order."""
    for name in ("low16", "dist0"):
        found = cores((PLATFORMS / f"hetero_{name}.xml").read_text())
        names = [h for h, _, _ in found]
        assert names == sorted(names)
        keys = [(int(p["node"]), int(p["core"])) for _, _, p in found]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        for _, _, p in found:
            assert 0 <= int(p["core"]) < int(p["cores"])


def test_power_properties_are_batsims_and_the_documented_model():
    _, speed, p = cores((PLATFORMS / "hetero_low16.xml").read_text())[0]
    idle, full = (float(x) for x in p["wattage_per_state"].split(":"))
    assert idle == float(p["static_power"]) == hetero.STATIC_W_PER_CORE
    assert full - idle == pytest.approx(float(p["dynamic_power"]))
    assert float(p["dynamic_power"]) == pytest.approx(hetero.DYNAMIC_W_PER_GHZ * speed / 1e9)
    assert float(p["wattage_off"]) == pytest.approx(hetero.MIN_POWER * idle)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), name=st.sampled_from(["low16", "high16"]))
def test_any_seed_stays_in_the_ranges_and_is_reproducible(seed, name):
    table = TABLE2 if name == "low16" else TABLE3
    plat = hetero.preset(name, seed)
    bounds = [(lo, hi) for count, lo, hi in table for _ in range(count)]
    for node, (lo, hi) in zip(plat.nodes, bounds):
        clock = node.cores[0].speed / 1e9
        assert lo <= clock <= hi
    assert hetero.render_xml(hetero.preset(name, seed)) == hetero.render_xml(plat)


def test_cli_same_seed_same_bytes_other_seed_other_clocks(tmp_path):
    for out, seed in (("a.xml", "7"), ("b.xml", "7"), ("c.xml", "8")):
        r = cli("platform", "hetero", "--preset", "high16", "--seed", seed, "--no-record-command", "-o", out,
                cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    a, b, c = ((tmp_path / n).read_bytes() for n in ("a.xml", "b.xml", "c.xml"))
    assert a == b and a != c
    assert b'<prop id="seed" value="7"/>' in a


# ----------------------------------------------------------------------------- spec files
SPEC = """\
description = "two fast nodes and three slow ones"
seed = 5
[[types]]
id = "fast"
count = 2
cores = 4
clock = 3.2
flops_per_cycle = 4
static_power = 40.0
dynamic_power = 8.0
min_power = 0.1
mem = 64
mem_bw = 25.6
[[types]]
id = "slow"
count = 3
clock = [1.0, 2.0]
"""


def test_spec_file_toml_and_json_give_the_same_platform(tmp_path):
    (tmp_path / "s.toml").write_text(SPEC)
    types, extra = hetero.load_spec(tmp_path / "s.toml")
    import tomllib

    write_json(tmp_path / "s.json", tomllib.loads(SPEC))
    assert hetero.load_spec(tmp_path / "s.json") == (types, extra)
    r = cli("platform", "hetero", "--spec", "s.toml", "--no-record-command", "-o", "p.xml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    found = cores((tmp_path / "p.xml").read_text())
    assert len(found) == 2 * 4 + 3
    name, speed, p = found[0]
    assert name == "n0_c0" and speed == 3.2 * 4 * 1e9 and p["type"] == "fast" and p["cores"] == "4"
    assert p["wattage_per_state"] == "10:18" and p["wattage_off"] == "1" and p["mem"] == "64" and p["mem_bw"] == "25.6"
    assert [h[0] for h in found[7:9]] == ["n1_c3", "n2_c0"]
    slow = [s / 1e9 for _, s, p in found if p["type"] == "slow"]
    assert all(1.0 <= s <= 2.0 for s in slow)
    assert b'<prop id="seed" value="5"/>' in (tmp_path / "p.xml").read_bytes()  # the spec's seed


@pytest.mark.parametrize("text, where, problem", [
    ("[[types]]\nid = 'a'\ncount = 1\nclock = 2\nspeed = 3\n", "types[0].speed", "unknown key"),
    ("[[types]]\nid = 'a'\ncount = 0\nclock = 2\n", "types[0].count", "must be >= 1"),
    ("[[types]]\nid = 'a'\ncount = 1\n", "types[0]", "'clock' is missing"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = [3, 2]\n", "types[0].clock", "is empty"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = [2.001, 2.009]\n", "types[0].clock", "0.01 GHz"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = 2\n[[types]]\nid = 'a'\ncount = 1\nclock = 2\n",
     "types[1].id", "defined twice"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = 2\nmin_power = 3\n", "types[0].min_power", "fraction"),
    ("types = []\n", "types", "non-empty"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = 'fast'\n", "types[0].clock", "expected a number"),
    ("[[types]]\nid = 'a'\ncount = 1\nclock = 2\n[[types\n", "line 5 column", "invalid TOML"),
])
def test_bad_spec_files_name_file_place_problem_exit_2_no_output(tmp_path, text, where, problem):
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(InputError) as err:
        hetero.load_spec(tmp_path / "bad.toml")
    assert err.value.source.endswith("bad.toml") and where in (err.value.where or "") and problem in err.value.problem


def test_a_bad_spec_on_the_command_line_exits_2_without_output(tmp_path):
    (tmp_path / "bad.toml").write_text("[[types]]\nid = 'a'\ncount = 1\nclock = [3, 2]\n")
    r = cli("platform", "hetero", "--spec", "bad.toml", "-o", "out.xml", cwd=tmp_path)
    assert r.returncode == 2 and "bad.toml: types[0].clock: range [3, 2] is empty" in r.stderr
    assert "Traceback" not in r.stderr and sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


@pytest.mark.parametrize("args, message", [
    (["--preset", "low17"], "invalid choice"),
    (["--preset", "low16", "--spec", "x.toml"], "give exactly one"),
    (["--preset", "low16", "--seed", "-1"], "--seed"),
    (["--spec", "missing.toml"], "not found"),
])
def test_bad_options_exit_2_without_output(tmp_path, args, message):
    r = cli("platform", "hetero", *args, "-o", "out.xml", cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out.xml").exists()


@pytest.mark.parametrize("network, option", [({"master": "hub"}, "--master"), ({"master": "n1_c0"}, "--master"),
                                             ({"link_bw": "0MBps"}, "--link-bw"), ({"master_lat": "soon"}, "--master-lat")])
def test_bad_network_options_are_named(network, option):
    with pytest.raises(InputError) as err:
        hetero.preset("low16", 0, **network)
    assert err.value.source == option


# ----------------------------------------------------------------------------- IRMaSim
@needs_irmasim
def test_irmasim_examples_convert_with_modelv1_speeds_and_power(tmp_path):
    plat = convert(IRMASIM / "heuristic" / "resource" / "platform.json")
    spec = json.loads((IRMASIM / "heuristic" / "resource" / "platform.json").read_text())
    assert [len(n.cores) for n in plat.nodes] == [1, 1, 2, 2, 4, 4, 8, 8]
    for node, ntype in zip(plat.nodes, [f"n0{i}" for i in range(1, 9)]):
        proc = spec["processor"][f"proc_{ntype}"]
        core = node.cores[0]
        assert node.type == ntype
        assert core.speed == pytest.approx(proc["clock_rate"] * proc["dpflops_per_cycle"] * 1e9, rel=1e-15)
        assert core.idle == pytest.approx(proc["static_power"] / proc["cores"])  # Core.static_power
        assert core.dynamic == proc["dynamic_power"] and core.off == pytest.approx(proc["min_power"] * core.idle)
    r = cli("platform", "from-irmasim", str(IRMASIM / "backfill" / "platform.json"), "-o", "b.xml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    found = cores((tmp_path / "b.xml").read_text())
    assert len(found) == 12 and {s for _, s, _ in found} == {4e9}  # 12 cores of 1 GHz x 4 flops per cycle
    assert found[0][2]["wattage_per_state"] == f"{6.14211 / 12!r}:{6.14211 / 12 + 5.59316!r}"


def _irmasim_platform(tmp_path: Path, **changes) -> Path:
    doc = json.loads((IRMASIM / "heuristic" / "resource" / "platform.json").read_text())
    for path, value in changes.items():
        obj = doc
        keys = path.split("/")
        for k in keys[:-1]:
            obj = obj[int(k)] if isinstance(obj, list) else obj[k]
        if value is None:
            del obj[keys[-1]]
        else:
            obj[keys[-1]] = value
    return write_json(tmp_path / "platform.json", doc)


@needs_irmasim
@pytest.mark.parametrize("changes, where, problem", [
    ({"platform/the_platform/clusters/0/nodes/0/type": "n99"}, "clusters[0].nodes[0].type", "unknown node type 'n99'"),
    ({"node/n01/processors/0/type": "proc_x"}, "node.n01.processors[0].type", "unknown processor type"),
    ({"processor/proc_n03/clock_rate": None}, "processor.proc_n03", "'clock_rate' is missing"),
    ({"processor/proc_n03/cores": 0}, "processor.proc_n03.cores", "must be >= 1"),
    ({"platform/the_platform/model_name": "modelV2"}, "model_name", "only IRMaSim's modelV1"),
    ({"platform/other": {"clusters": []}}, "platform", "defines 2 platforms"),
    ({"nodes": {}}, "nodes", "unknown group"),
])
def test_bad_irmasim_platforms_are_named_exit_2_no_output(tmp_path, changes, where, problem):
    path = _irmasim_platform(tmp_path, **changes)
    with pytest.raises(InputError) as err:
        convert(path)
    assert err.value.source == str(path) and where in (err.value.where or "") and problem in err.value.problem


@needs_irmasim
def test_a_bad_irmasim_platform_on_the_command_line_exits_2_without_output(tmp_path):
    path = _irmasim_platform(tmp_path, **{"platform/the_platform/clusters/0/nodes/0/type": "n99"})
    r = cli("platform", "from-irmasim", str(path), "-o", "out.xml", cwd=tmp_path)
    assert r.returncode == 2 and "platform.json: platform.the_platform.clusters[0].nodes[0].type: unknown node " \
                                 "type 'n99'" in r.stderr, r.stderr
    assert not (tmp_path / "out.xml").exists()


def test_malformed_irmasim_json_names_line_and_column(tmp_path):
    (tmp_path / "p.json").write_text('{"platform": {"x": {"clusters": [}}\n')
    r = cli("platform", "from-irmasim", "p.json", "-o", "out.xml", cwd=tmp_path)
    assert r.returncode == 2 and "p.json: line 1 column" in r.stderr and "invalid JSON" in r.stderr
    assert not (tmp_path / "out.xml").exists()


# ----------------------------------------------------------------------------- engines
def _job(jid: int, sub: float, res: int, cpu: int) -> dict:
    return {"id": jid, "subtime": sub, "res": res, "profile": f"c{cpu}"}


def _workload(tmp_path: Path, jobs: list[dict], name: str = "w.json") -> Path:
    profiles = {j["profile"]: {"type": "parallel_homogeneous", "cpu": int(j["profile"][1:]), "com": 0} for j in jobs}
    return write_json(tmp_path / name, {"nb_res": max(j["res"] for j in jobs), "jobs": jobs, "profiles": profiles})


def test_run_time_is_the_work_over_the_core_speed(tmp_path):
    """Same job on the slowest and the fastest core of low16: cpu / speed, speeds read from the XML."""
    text = (PLATFORMS / "hetero_low16.xml").read_text()
    found = cores(text)
    speeds = [s for _, s, _ in found]
    slow, fast = speeds.index(min(speeds)), speeds.index(max(speeds))
    cpu = 3_000_000_000_000
    w = _workload(tmp_path, [_job(0, 1, 1, cpu), _job(1, 1, 1, cpu)])
    run = run_sim(tmp_path, workloads=[w], platform=PLATFORMS / "hetero_low16.xml", scheduler="fixed",
                  options={"allocs": {"w0!0": str(slow), "w0!1": str(fast)}}).check()
    rows = run.jobs()
    assert float(rows["w0!0"]["execution_time"]) == pytest.approx(cpu / speeds[slow], abs=2e-6)
    assert float(rows["w0!1"]["execution_time"]) == pytest.approx(cpu / speeds[fast], abs=2e-6)
    assert speeds[fast] / speeds[slow] > 2  # the run times really differ


@needs_batsim
@pytest.mark.parametrize("name", ["low16", "high16", "dist0", "dist1"])
def test_presets_run_identically_on_batsim_and_coburst(tmp_path, name):
    """One job per node type (first node of each type, all its cores), energy on (``-E``: the
    platform's ``wattage_per_state`` read by both engines, energies compared)."""
    text = (PLATFORMS / f"hetero_{name}.xml").read_text()
    found = cores(text)
    firsts, seen = [], set()
    for rid, (_, _, p) in enumerate(found):
        if p["type"] not in seen and p["core"] == "0":
            seen.add(p["type"])
            firsts.append((rid, int(p["cores"])))
    jobs = [_job(k, 1 + k, ncores, 10**11 * (k + 1)) for k, (_, ncores) in enumerate(firsts)]
    allocs = {f"w0!{k}": f"{rid}-{rid + ncores - 1}" for k, (rid, ncores) in enumerate(firsts)}
    w = _workload(tmp_path, jobs)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=PLATFORMS / f"hetero_{name}.xml",
                               scheduler="fixed", options={"allocs": allocs}, args=["-E"]))
    assert float(next(iter(jobs_rows_energy(tmp_path)))) > 0


def jobs_rows_energy(tmp_path: Path) -> list[str]:
    import csv

    with open(tmp_path / "coburst_jobs.csv", newline="") as f:
        return [r["consumed_energy"] for r in csv.DictReader(f)]


def test_platform_info_summarises_a_heterogeneous_platform(tmp_path):
    r = cli("platform", "info", str(PLATFORMS / "hetero_dist1.xml"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2.6e+09 .. 7.2e+09 flop/s (4 distinct)" in r.stdout and "272" in r.stdout


PSTATES_SPEC = """\
[[types]]
id = "dvfs"
count = 2
cores = 2
clock = 3.0
dynamic_power = 9.0
pstates = [2.0, [1.0, 2.5]]
"""


def test_pstates_are_batsim_speeds_and_wattages(tmp_path):
    (tmp_path / "s.toml").write_text(PSTATES_SPEC)
    types, _ = hetero.load_spec(tmp_path / "s.toml")
    text = hetero.render_xml(hetero.build(types, 0))
    assert text.count('speed="3000000000f, 2000000000f, 1000000000f"') == 4
    # idle 6 W per core (default static power); full = idle + 9 W, + 2.5 W/GHz x 2 GHz, + 2.5 W
    assert text.count('<prop id="wattage_per_state" value="6:15, 6:11, 6:8.5"/>') == 4
    assert '<prop id="speed" value="3000000000"/>' in text  # pstate 0
    (tmp_path / "bad.toml").write_text(PSTATES_SPEC.replace("[1.0, 2.5]", "[1.0, 2.5, 3]"))
    with pytest.raises(InputError) as err:
        hetero.load_spec(tmp_path / "bad.toml")
    assert err.value.where == "types[0].pstates[1]" and "[clock, dynamic_power]" in err.value.problem


@needs_batsim
def test_pstates_platform_identical_on_batsim_and_coburst(tmp_path):
    (tmp_path / "s.toml").write_text(PSTATES_SPEC)
    plat = tmp_path / "p.xml"
    plat.write_text(hetero.render_xml(hetero.build(hetero.load_spec(tmp_path / "s.toml")[0], 0)))
    w = _workload(tmp_path, [_job(0, 1, 2, 6 * 10**9), _job(1, 2, 1, 3 * 10**9)])
    assert_identical(*run_both(tmp_path, workloads=[w], platform=plat, scheduler="fixed",
                               options={"allocs": {"w0!0": "0-1", "w0!1": "3"}}, args=["-E"]))
    assert [float(e) for e in jobs_rows_energy(tmp_path)] == pytest.approx([2 * 2 * 15, 1 * 15])
