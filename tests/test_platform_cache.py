"""The platform cache (coburst/simulator/platform_cache.py): a run on a platform seen before takes
hosts, zones and the routes to and from the master (and, on platforms of up to ~140 resources,
between every two resources: communicating parallel tasks) from the cache and neither imports nor
loads SimGrid; its outputs are byte for byte those of a run without the cache (cold, warm and off
compared, and against the real Batsim 4.2.1 where ``BATSIM`` is set); the key changes with the
platform's bytes, the SimGrid options, the master host and the roles; a corrupt or foreign
entry is ignored and written again; a route the entry does not hold comes from SimGrid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crossengine import WALL_CLOCK, assert_identical, needs_batsim, run_both
from simharness import BIN, CLUSTER4, CLUSTER_MASTER, COBURST, REPO, TESTS, run_sim

from coburst.simulator import platform_cache

PROBE = TESTS / "tools" / "cache_probe.py"
PYTHON = BIN / "python" if (BIN / "python").exists() else Path(sys.executable)
HEATMAP = REPO / "models" / "heatmaps" / "grvingt-nas.heatmap.csv"


def _workload(path: Path, nb_res: int, jobs: list[tuple[float, int, str, float]]) -> Path:
    """Jobs (subtime, res, kind, amount): ``delay`` seconds or ``compute`` flops per host
    (``parallel_homogeneous``, com = 0), walltime 1000 s."""
    profiles, out = {}, []
    for i, (sub, res, kind, amount) in enumerate(jobs):
        name = f"{kind}_{amount:g}"
        profiles[name] = ({"type": "delay", "delay": amount} if kind == "delay" else
                          {"type": "parallel_homogeneous", "cpu": amount, "com": 0})
        out.append({"id": i, "subtime": sub, "walltime": 1000, "res": min(res, nb_res), "profile": name})
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": out, "profiles": profiles}))
    return path


def _outputs(prefix: Path) -> dict[str, str]:
    """Every output file of a run (``_schedule.csv`` without its wall-clock columns)."""
    files = {}
    for path in sorted(prefix.parent.glob(prefix.name + "_*")):
        text = path.read_text()
        if path.name.endswith("_schedule.csv"):
            head, row = text.splitlines()
            keep = [i for i, k in enumerate(head.split(",")) if k not in WALL_CLOCK]
            text = "\n".join(",".join(line.split(",")[i] for i in keep) for line in (head, row))
        files[path.name[len(prefix.name):]] = text
    assert "_jobs.csv" in files and "_schedule.csv" in files
    return files


def _run(scheduler: str, platform: Path, workload: Path, prefix: Path, cache: Path | str,
         extra: list[str] = (), only_platform_cache_off: bool = False) -> tuple[dict[str, str], bool, str]:
    """``coburst run`` in process (through the probe): (outputs, SimGrid imported, stderr)."""
    env = {**os.environ, "COBURST_CACHE": str(cache), "PYTHONPATH": str(TESTS)}
    if only_platform_cache_off:
        env["COBURST_PLATFORM_CACHE"] = "off"
    proc = subprocess.run([str(PYTHON), str(PROBE), "run", scheduler, "-q", "-p", str(platform), "-w", str(workload),
                           "-e", str(prefix), *extra], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    imported = "PROBE simgrid=True" in proc.stderr
    assert imported or "PROBE simgrid=False" in proc.stderr, proc.stderr
    stderr = "".join(line + "\n" for line in proc.stderr.splitlines() if not line.startswith("PROBE "))
    return _outputs(prefix), imported, stderr


def _cold_warm_off(tmp: Path, scheduler: str, platform: Path, workload: Path, extra: list[str] = ()) -> None:
    cache = tmp / "cache"
    cold, cold_sg, cold_err = _run(scheduler, platform, workload, tmp / "cold", cache, extra)
    warm, warm_sg, warm_err = _run(scheduler, platform, workload, tmp / "warm", cache, extra)
    off, off_sg, off_err = _run(scheduler, platform, workload, tmp / "off", cache, extra, only_platform_cache_off=True)
    assert cold_sg and off_sg, "a run without an entry, or with the cache off, loads the platform with SimGrid"
    assert not warm_sg, "the second run should take the platform from the cache, without SimGrid"
    assert cold == warm == off
    assert cold_err == warm_err == off_err  # (warnings included, e.g. missing routes)
    assert list((cache / "platform-descriptions").glob("*/*")), "no entry written"


# ------------------------------------------------------------------------------------------- the key


def test_key_changes_with_what_gives_the_platform_its_meaning():
    data = (CLUSTER4).read_bytes()
    base = platform_cache.entry_key(data, "master_host", {}, ["coburst", "--cfg=host/model:ptask_L07"])
    assert base == platform_cache.entry_key(data, "master_host", {}, ["coburst", "--cfg=host/model:ptask_L07"])
    changed = bytearray(data)
    i = data.index(b"1Gf")
    changed[i] = ord("2")
    others = {
        platform_cache.entry_key(bytes(changed), "master_host", {}, ["coburst", "--cfg=host/model:ptask_L07"]),
        platform_cache.entry_key(data + b" ", "master_host", {}, ["coburst", "--cfg=host/model:ptask_L07"]),
        platform_cache.entry_key(data, "node_0", {}, ["coburst", "--cfg=host/model:ptask_L07"]),
        platform_cache.entry_key(data, "master_host", {"node_1": "storage"}, ["coburst", "--cfg=host/model:ptask_L07"]),
        platform_cache.entry_key(data, "master_host", {}, ["coburst", "--cfg=network/model:CM02",
                                                           "--cfg=host/model:ptask_L07"]),
    }
    assert base not in others and len(others) == 5


def test_platforms_referencing_files_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("COBURST_CACHE", str(tmp_path / "cache"))
    assert platform_cache.cacheable(CLUSTER4.read_bytes())
    text = CLUSTER4.read_text()
    for ref in ('speed_file="speed.txt"', 'state_file="s.txt"', 'bandwidth_file = "b.txt"'):
        assert not platform_cache.cacheable(text.replace('speed="1Gf"', f'speed="1Gf" {ref}', 1).encode())
    assert not platform_cache.cacheable(b"<platform><trace id='t' periodicity='1'>0 1</trace></platform>")
    assert platform_cache.cacheable(b"<platform><host id='profile_file'/></platform>")  # a name, not a reference
    plat = tmp_path / "p.xml"
    plat.write_text(text.replace('speed="1Gf"', 'speed="1Gf" speed_file="none.txt"', 1))
    doc = {"hosts": [], "zones": ("_world_", {}, [], []), "links": {}, "routes": {}, "missing": [], "pairs": False}
    record = platform_cache.entry_path(plat, "master_host", {}, [])
    platform_cache.write(record, doc, plat)
    assert not record[0].exists(), "an entry was written for a platform that references a file"
    record = platform_cache.entry_path(CLUSTER4, "master_host", {}, [])
    platform_cache.write(record, doc, CLUSTER4)
    assert platform_cache.read(record) == {"key": record[1], **doc}
    monkeypatch.setenv("COBURST_PLATFORM_CACHE", "off")
    assert platform_cache.entry_path(CLUSTER4, "master_host", {}, []) is None


def test_the_test_session_never_writes_the_users_cache():
    cache = os.environ.get("COBURST_CACHE", "")
    assert cache == "off" or Path(cache).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())


# --------------------------------------------------------------------- cold, warm and off: same outputs


def test_elise_setting_cold_warm_off(tmp_path):
    """ELiSE's kind of run (co-scheduling platform, speedup hook, the NAS jobs of its workload
    generator) on 6 Grvingt nodes."""
    plat = tmp_path / "g6.xml"
    subprocess.run([str(COBURST), "platform", "cosched", "--preset", "grvingt", "--nodes", "6", "-o", str(plat)],
                   check=True)
    wl = tmp_path / "w.json"
    subprocess.run([str(COBURST), "workload", "elise", "-o", str(wl), "--seed-apps", "grvingt-nas", "-n", "40",
                    "-p", str(plat), "--pick", "random", "--arrival", "zero", "--seed", "3", "-q"], check=True)
    for entry in ("coschedFcfs.py", "coschedEasy.py"):
        _cold_warm_off(tmp_path / entry, str(REPO / "schedulers" / entry), plat, wl, ["--heatmap", str(HEATMAP)])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["cosched-aris", "cosched-grvingt", "cluster", "cluster4", "cluster_master"]),
       nodes=st.integers(2, 7), scheduler=st.sampled_from(["easyBackfill", "fcfs", "easy"]),
       jobs=st.lists(st.tuples(st.sampled_from([0.0, 0.5, 3.0, 10.25]), st.integers(1, 8),
                               st.sampled_from(["delay", "compute"]), st.sampled_from([1.0, 7.5, 2e9, 3e10])),
                     min_size=1, max_size=12))
def test_generated_platforms_cold_warm_off(tmp_path_factory, kind, nodes, scheduler, jobs):
    tmp = tmp_path_factory.mktemp("gen")
    if kind.startswith("cosched"):
        plat = tmp / "p.xml"
        subprocess.run([str(COBURST), "platform", "cosched", "--preset", kind.split("-")[1], "--nodes", str(nodes),
                        "-o", str(plat)], check=True)
        nb_res = nodes * 4
    elif kind == "cluster":
        plat = tmp / "p.xml"
        subprocess.run([str(COBURST), "platform", "cluster", "--nodes", str(nodes), "-o", str(plat)], check=True)
        nb_res = nodes
    else:
        plat, nb_res = (CLUSTER4 if kind == "cluster4" else CLUSTER_MASTER), 4
    jobs = [(s, r, k, a if k == "compute" else (a % 100 or 1.5)) for s, r, k, a in jobs]
    wl = _workload(tmp / "w.json", nb_res, jobs)
    # (cluster_master.xml: the master inside a cluster, messages between two of its actors cross links)
    _cold_warm_off(tmp, scheduler, plat, wl, ["-m", "master_0"] if plat == CLUSTER_MASTER else [])


def _communicating(path: Path, nb_res: int) -> Path:
    profiles = {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e7},
                "m": {"type": "parallel", "cpu": [1e9, 0, 5e8], "com": [0, 1e6, 0, 0, 0, 3e6, 2e5, 0, 0]},
                "d": {"type": "delay", "delay": 2.5}, "seq": {"type": "composed", "seq": ["d", "p", "m"]}}
    jobs = [{"id": i, "subtime": i // 3, "walltime": 100, "res": 3 if p in ("m", "seq") else 2 + i % 2, "profile": p}
            for i, p in enumerate(["p", "p", "m", "seq", "p", "m", "d", "p"])]
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": jobs, "profiles": profiles}))
    return path


def test_communicating_ptasks_take_the_resource_pairs_from_the_entry(tmp_path):
    """Communicating parallel tasks need routes between compute hosts: on a platform whose
    resource pairs the pre-check asks all, the entry holds them and the run neither imports nor
    loads SimGrid; the outputs are those of a run without the cache (cold, warm, off)."""
    _cold_warm_off(tmp_path / "c4", "fcfs", CLUSTER4, _communicating(tmp_path / "w4.json", 4))
    _cold_warm_off(tmp_path / "ar", "easyBackfill", REPO / "platforms" / "aris_cosched_small.xml",
                   _communicating(tmp_path / "w16.json", 16))
    # the pairs' file damaged: the run loads SimGrid, the pre-check writes it again
    cache = tmp_path / "c4" / "cache"
    (pairs,) = (cache / "platform-descriptions").glob("*/*.pairs")
    good = pairs.read_bytes()
    pairs.write_bytes(good[:len(good) // 2])
    wl = _communicating(tmp_path / "w4.json", 4)
    again, sg, _ = _run("fcfs", CLUSTER4, wl, tmp_path / "again", cache)
    assert sg and pairs.read_bytes() == good
    warm, sg, _ = _run("fcfs", CLUSTER4, wl, tmp_path / "warm", cache)
    assert not sg and warm == again


def test_an_entry_without_the_resource_pairs(tmp_path, monkeypatch):
    """:func:`platform_cache.lookup`: an entry written without the resource pairs (a platform with
    more pairs than the pre-check asks) serves runs of route-free jobs only; a run of
    communicating tasks then loads SimGrid and does not run the pre-check again to write one; a
    missing entry is written by the pre-check (unless noted as one it cannot describe)."""
    monkeypatch.setenv("COBURST_CACHE", str(tmp_path / "cache"))
    record = platform_cache.entry_path(CLUSTER4, "master_host", {}, [])
    assert platform_cache.lookup(record, False) == (None, False)
    assert platform_cache.lookup(record, True) == (None, True)
    assert platform_cache.lookup(record, "pairs") == (None, True)
    master = {("master_host", "node_0"): (("l0",), 1e-4)}
    pair = {("node_0", "node_1"): (("l1", "l2"), 2e-4)}
    doc = {"hosts": [], "zones": ("_world_", {}, [], []), "links": {}, "missing": []}
    platform_cache.write(record, {**doc, "routes": master, "pairs": False}, CLUSTER4)
    entry = {"key": record[1], **doc, "routes": master, "pairs": False}
    assert platform_cache.lookup(record, True) == (entry, False)
    assert platform_cache.lookup(record, "pairs") == (None, False)
    # with the pairs: in a file of their own, read only by the runs that want them
    platform_cache.write(record, {**doc, "routes": master, "pairs": True, "pair_routes": pair}, CLUSTER4)
    assert platform_cache.pairs_path(record).exists()
    entry = {"key": record[1], **doc, "routes": master, "pairs": True}
    assert platform_cache.lookup(record, True) == (entry, False)
    assert platform_cache.lookup(record, "pairs") == ({**entry, "routes": {**master, **pair}}, False)
    blob = platform_cache.pairs_path(record).read_bytes()
    platform_cache.pairs_path(record).write_bytes(blob[:-3])  # damaged: written again by the pre-check
    assert platform_cache.lookup(record, "pairs") == (None, True)
    assert platform_cache.lookup(record, True) == (entry, False)
    record[0].unlink()
    platform_cache.mark_unavailable(record)
    assert platform_cache.lookup(record, "pairs") == (None, False)


def test_which_runs_need_the_resource_pairs():
    """:func:`platform_cache.usable` on the profiles of a workload: True (routes to and from the
    master only), "pairs" (routes between resources: parallel tasks that communicate, composed
    sequences of them) or False (other routes, or profiles the cache does not describe)."""
    from types import SimpleNamespace

    from coburst.simulator.workload import Profile

    config = SimpleNamespace(events=None, workflows=None, cut_workflows=None, dynamic_jobs=False, speed_hook=None)

    def answer(*workloads):
        wls = {f"w{i}": SimpleNamespace(profiles={name: Profile(name, kind, data) for name, (kind, data)
                                                  in profiles.items()}) for i, profiles in enumerate(workloads)}
        return platform_cache.usable(config, wls, {})

    delay = {"d": ("delay", {"delay": 1.0}), "c": ("parallel_homogeneous", {"cpu": 1e9, "com": 0})}
    com = {"p": ("parallel_homogeneous", {"cpu": 1e9, "com": 5.0})}
    assert answer(delay) is True
    assert answer(com) == "pairs" and answer(delay, com) == "pairs" and answer(com, delay) == "pairs"
    assert answer({**delay, "s": ("composed", {"seq": ["d", "p"]}), **com}) == "pairs"
    assert answer({"m": ("parallel", {"cpu": [1, 1], "com": [0, 0, 0, 0]})}) is True
    assert answer({"m": ("parallel", {"cpu": [1, 1], "com": [0, 3, 0, 0]})}) == "pairs"
    assert answer({"f": ("parallel_homogeneous_pfs", {"bytes_to_read": 1e6})}) == "pairs"
    assert answer({"s": ("data_staging", {"nb_bytes": 1e6, "from": "a", "to": "b"})}) == "pairs"
    assert answer({**com, "x": ("send", {"msg": {}})}) is False
    assert answer({"s": ("composed", {"seq": ["p", "nowhere"]}), **com}) is False
    for field in ("events", "workflows", "dynamic_jobs", "speed_hook"):
        setattr(config, field, True)
        assert answer(delay) is False and answer(com) is False
        setattr(config, field, None)


# ------------------------------------------------------------------------- corrupt and foreign entries


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "platform-descriptions").glob("*/*") if p.suffix != ".pairs")


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "foreign"])
def test_a_bad_entry_is_ignored_and_written_again(tmp_path, damage):
    wl = _workload(tmp_path / "w.json", 4, [(0.0, 2, "delay", 3.0), (1.0, 4, "compute", 2e9)])
    cache = tmp_path / "cache"
    first, _, _ = _run("easyBackfill", CLUSTER4, wl, tmp_path / "first", cache)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    if damage == "flip":
        blob = bytearray(good)
        blob[-10] ^= 0x40
        entry.write_bytes(bytes(blob))
    elif damage == "truncate":
        entry.write_bytes(good[:len(good) // 2])
    elif damage == "garbage":
        entry.write_bytes(b"not an entry")
    else:  # a valid entry of another platform at this key's place
        other = tmp_path / "other"
        _run("easyBackfill", CLUSTER_MASTER, wl, tmp_path / "o", other, ["-m", "master_0"])
        (foreign,) = _entries(other)
        entry.write_bytes(foreign.read_bytes())
    again, sg, _ = _run("easyBackfill", CLUSTER4, wl, tmp_path / "again", cache)
    assert sg, "a bad entry must not be used"
    assert again == first
    assert entry.read_bytes() == good, "the pre-check writes the entry again"
    warm, sg, _ = _run("easyBackfill", CLUSTER4, wl, tmp_path / "warm", cache)
    assert not sg and warm == first


# ----------------------------------------------------------------------------- a route not in the entry


def test_a_route_not_in_the_entry_comes_from_simgrid(tmp_path):
    """Routes between compute hosts (in the pairs' file, which :func:`platform_cache.read` does
    not read) and a host to itself are not in the entry: asked from SimGrid, loaded then, they
    equal SimGrid's own answer in a simulation."""
    cache = tmp_path / "cache"
    _run("fcfs", CLUSTER4, _workload(tmp_path / "w.json", 4, [(0.0, 1, "delay", 1.0)]), tmp_path / "o", cache)
    script = f"""
import os, sys
os.environ["COBURST_CACHE"] = {str(cache)!r}
from coburst.simulator import platform_cache as pc
from coburst.simulator.options import default_batsim_options
args = ["coburst", "--cfg=debug/clean-atexit:no", "--cfg=host/model:ptask_L07", "--log=root.thresh:critical",
        "--log=xbt_cfg.thresh:critical"]
record = pc.entry_path({str(CLUSTER4)!r}, "master_host", {{}}, args)
doc = pc.read(record)
assert doc is not None
plat = pc.CachedPlatform(doc, {str(CLUSTER4)!r}, args)
hosts = {{h.name: h for h in plat.all_hosts}}
seen = []
for a, b in [("node_0", "master_host"), ("master_host", "node_2"), ("node_0", "node_3"), ("node_1", "node_1")]:
    links, lat = hosts[a].route_to(hosts[b])
    seen.append((a, b, [(l.name, l.bandwidth, l.latency, l.get_sharing_policy() == type(l).SharingPolicy.FATPIPE)
                        for l in links], lat))
print(plat.simgrid_routes, "simgrid" in sys.modules)
from coburst.simulator._simgrid import simgrid
e = plat._sg[1]
real = {{h.name: h for h in e.all_hosts}}
out = []
def ask():
    for a, b, _, _ in seen:
        links, lat = real[a].route_to(real[b])
        out.append((a, b, [(l.name, l.bandwidth, l.latency, l.get_sharing_policy() == simgrid.Link.SharingPolicy.FATPIPE)
                           for l in links], lat))
import warnings
warnings.simplefilter("ignore")
simgrid.Actor.create("x", real["master_host"], ask)
e.run()
print(seen == out)
print(seen)
"""
    proc = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "2 True", proc.stdout  # two routes were not in the entry, SimGrid was loaded for them
    assert lines[1] == "True", proc.stdout


# ------------------------------------------------------------------------------ against the real Batsim

#: (platform, resources, options); Batsim 4.2.1 aborts on cluster4.xml's master in a routing="None"
#: zone once a job computes ("There can't be route in an Empty zone")
CROSS = [
    (CLUSTER_MASTER, 4, ("-m", "master_0")),
    (REPO / "platforms" / "aris_cosched_small.xml", 16, ()),
    (REPO / "platforms" / "dragonfly_small.xml", 8, ()),
    (REPO / "platforms" / "kth_sp2.xml", 100, ()),
]


@needs_batsim
@pytest.mark.parametrize("platform,nb_res,args", CROSS, ids=[p.stem for p, _, _ in CROSS])
def test_crossengine_cold_and_warm(tmp_path, platform, nb_res, args):
    """The same delay and compute-only jobs on Batsim 4.2.1 and on ``coburst sim`` twice (an
    empty cache, then the entry the first run wrote): every message and output identical."""
    jobs = [(0.0, 1, "delay", 5.0), (0.0, 3, "compute", 2e9), (0.5, 2, "delay", 7.25), (2.0, 4, "compute", 5e9),
            (2.0, 1, "delay", 1.0), (9.0, 2, "compute", 1e9)]
    wl = _workload(tmp_path / "w.json", nb_res, jobs)
    cache = tmp_path / "cache"
    env = {"COBURST_CACHE": str(cache)}
    batsim, cold = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="easyBackfill", env=env,
                            args=args)
    assert_identical(batsim, cold)
    assert _entries(cache), "the cold run wrote no entry"
    warm = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="easyBackfill", env=env, args=args,
                   prefix="warm", transcript=True, wait=300, timeout=60)
    assert warm.returncode == 0, warm.report()
    assert_identical(batsim, warm)


# ------------------------------------------------------------------------------------------ signals


@pytest.mark.parametrize("sig, code, transport", [(2, 130, "inprocess"), (15, 143, "inprocess"), (15, 143, "zmq")])
def test_a_signal_during_a_run_from_the_cache(tmp_path, sig, code, transport):
    """The kernel runs in the main thread when the platform comes from the cache: SIGINT/SIGTERM
    still stop the run cleanly (status 130/143, one line, no output left), as from a SimGrid
    actor thread."""
    import signal
    import time

    platform = REPO / "platforms" / "kth_sp2.xml"
    cache = tmp_path / "cache"
    _run("fcfs", platform, _workload(tmp_path / "one.json", 100, [(0.0, 1, "delay", 1.0)]), tmp_path / "w", cache)
    jobs = [(float(i // 4), 1 + i % 7, "delay", 50.0 + i % 13) for i in range(40000)]
    big = _workload(tmp_path / "big.json", 100, jobs)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.Popen([str(PYTHON), str(PROBE), "run", "fcfs", "--transport", transport, "-q", "-p", str(platform),
                             "-w", str(big), "-e", "out"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=run_dir, env={**os.environ, "COBURST_CACHE": str(cache), "PYTHONPATH": str(TESTS)})
    deadline = time.monotonic() + 60
    while not list(run_dir.glob(".out_jobs.csv.*")) and time.monotonic() < deadline:
        time.sleep(0.05)
        assert proc.poll() is None
    time.sleep(0.5)
    proc.send_signal(signal.Signals(sig))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "PROBE simgrid=False" in lines, err
    lines.remove("PROBE simgrid=False")
    assert len(lines) == 1 and "interrupted by" in lines[0] and "Traceback" not in err, err
    assert not [p for p in run_dir.iterdir() if "out" in p.name], list(run_dir.iterdir())


def test_deferred_signals_raise_only_where_the_simulator_looks():
    """``signals.deferred``: inside, a SIGTERM raises nothing where it lands (a scheduler
    exchange half done would break the ZeroMQ socket's state) and is seen by ``pending``; one
    nobody looked at raises ``Interrupted`` when the block ends."""
    script = """
import os, signal, sys
from coburst import signals
from coburst.errors import Interrupted
signals.install()
try:
    with signals.deferred():
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100000))  # (the handler runs between bytecodes: it must not raise here)
        if sys.argv[1] == "look":
            print("seen", signals.pending())
        print("inside: nothing raised")
    print("after: nothing raised")
except Interrupted:
    print("raised at the end")
"""
    out = {}
    for mode in ("look", "no"):
        proc = subprocess.run([str(PYTHON), "-c", script, mode], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        out[mode] = proc.stdout.splitlines()
    assert out["look"] == ["seen 15", "inside: nothing raised", "after: nothing raised"]
    assert out["no"] == ["inside: nothing raised", "raised at the end"]


# ------------------------------------------------------------------ the entry against SimGrid's answers

PSTATES = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <prop id="site" value="here"/>
    <zone id="inner" routing="Full">
      <prop id="rack" value="r1"/>
      <host id="a" speed="100.0Mf, 50.0Mf, 20.0Mf" pstate="1" core="4">
        <prop id="wattage_per_state" value="95.0:190.0, 93.0:170.0, 90.0:150.0"/>
      </host>
      <host id="b" speed="200Mf"/>
      <link id="ab" bandwidth="1GBps" latency="10us" sharing_policy="FATPIPE"/>
      <route src="a" dst="b"><link_ctn id="ab"/></route>
    </zone>
    <zone id="mz" routing="Full">
      <host id="master_host" speed="100Mf"/>
    </zone>
    <link id="m" bandwidth="125MBps" latency="100us"/>
    <zoneRoute src="inner" dst="mz" gw_src="a" gw_dst="master_host"><link_ctn id="m"/></zoneRoute>
  </zone>
</platform>
"""


def test_the_entry_says_what_simgrid_says(tmp_path):
    """Hosts (speed, cores, pstates, properties), each host's zone properties (as the simulator
    computes them for SIMULATION_BEGINS) and the master routes (links, bandwidths, latencies,
    sharing policies) read from the entry equal SimGrid's own, on the shipped and test platforms,
    a generated co-scheduling platform and one with pstates and nested zone properties."""
    gen = tmp_path / "g3.xml"
    subprocess.run([str(COBURST), "platform", "cosched", "--preset", "grvingt", "--nodes", "3", "-o", str(gen)],
                   check=True)
    pst = tmp_path / "pstates.xml"
    pst.write_text(PSTATES)
    platforms = [(CLUSTER4, "master_host"), (CLUSTER_MASTER, "master_0"), (gen, "master_host"), (pst, "master_host")]
    platforms += [(p, "master_host") for p in sorted((REPO / "platforms").glob("*.xml"))]
    script = r'''
import json, sys, warnings
from coburst.simulator import platform_cache as pc
from coburst.simulator.handlers import ProtocolHandlers
from coburst.simulator.platform import assign_resources, prevalidate
from coburst.simulator._simgrid import simgrid
warnings.simplefilter("ignore")
path, master = sys.argv[1], sys.argv[2]
args = ["coburst", "--cfg=host/model:ptask_L07", "--log=root.thresh:critical", "--log=xbt_cfg.thresh:critical"]
record = pc.entry_path(path, master, {}, args)
prevalidate(path, master, {}, args, describe_to=record, force=True)
doc = pc.read(record)
if doc["pairs"]:  # (the routes between resources: read by the runs that need them)
    doc["routes"].update(pc.read_pairs(record))
cached = pc.CachedPlatform(doc, path, args)
engine = simgrid.Engine(args)
engine.load_platform(path)

def hosts(e):
    return sorted((h.name, h.speed, h.core_count, h.pstate, [h.pstate_speed(i) for i in range(h.pstate_count)],
                   dict(h.get_properties())) for h in e.all_hosts)

class Holder:
    pass

def zones(e):
    holder = Holder()
    holder.engine = e
    return ProtocolHandlers.zone_properties(holder)

def link(l):
    return (l.name, l.bandwidth, l.latency, l.get_sharing_policy() == type(l).SharingPolicy.FATPIPE)

real = {h.name: h for h in engine.all_hosts}
mine = {h.name: h for h in cached.all_hosts}
machines = assign_resources(engine, path, master, {})
master = machines.master.name  # (-m's name, or the host of role=master)
pairs = [(n, master) for n in real if n != master] + [(master, n) for n in real if n != master]
if doc["pairs"]:  # every resource pair's route too
    names = [r.host.name for r in machines.resources]
    pairs += [(a, b) for a in names for b in names if a != b]
routes = {}
def ask():
    for a, b in pairs:
        links, lat = real[a].route_to(real[b])
        routes[(a, b)] = ([link(l) for l in links], lat)
simgrid.Actor.create("x", real[master], ask)
engine.run()
cached_routes = {}
for a, b in pairs:
    links, lat = mine[a].route_to(mine[b])
    cached_routes[(a, b)] = ([link(l) for l in links], lat)
print(json.dumps({"hosts": hosts(engine) == hosts(cached), "zones": zones(engine) == zones(cached),
                  "routes": routes == cached_routes, "asked": cached.simgrid_routes, "n": len(pairs),
                  "props": any(zones(cached).values()), "pairs": doc["pairs"]}))
'''
    with_zone_props = with_pairs = 0
    for plat, master in platforms:
        proc = subprocess.run([str(PYTHON), "-c", script, str(plat), master], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "COBURST_CACHE": str(tmp_path / "cache")})
        assert proc.returncode == 0, (plat, proc.stderr[-3000:])
        got = json.loads(proc.stdout.splitlines()[-1])
        assert got["hosts"] and got["zones"] and got["routes"], (plat, got)
        assert got["asked"] == 0 and got["n"] > 0, (plat, got)  # every master route came from the entry
        with_zone_props += got["props"]
        with_pairs += got["pairs"]
    assert with_zone_props >= 2  # (the comparison of zone properties is not only of empty ones)
    assert with_pairs >= 4  # (resource pairs compared: the small platforms have them all)


#: (pybatsim's easyBackfill would compute on the storage hosts of the dragonfly)
COMMUNICATING = [c for c in CROSS if c[0].stem != "dragonfly_small"]


@needs_batsim
@pytest.mark.parametrize("platform,nb_res,args", COMMUNICATING, ids=[p.stem for p, _, _ in COMMUNICATING])
def test_crossengine_communicating_cold_and_warm(tmp_path, platform, nb_res, args):
    """Communicating parallel tasks (homogeneous, a matrix, composed with a delay) on Batsim 4.2.1
    and on ``coburst sim`` twice: the routes between resources from SimGrid, then from the
    entry; every message and output identical."""
    wl = _communicating(tmp_path / "w.json", nb_res)
    env = {"COBURST_CACHE": str(tmp_path / "cache"), "COBURST_DEBUG_PLATFORM_CACHE": "1"}
    batsim, cold = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="easyBackfill", env=env,
                            args=args)
    assert "platform from the cache" not in cold.stderr
    assert_identical(batsim, cold)
    warm = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="easyBackfill", env=env, args=args,
                   prefix="warm", transcript=True, wait=300, timeout=60)
    assert warm.returncode == 0, warm.report()
    assert "platform from the cache, 0 route(s)" in warm.stderr, warm.stderr
    assert_identical(batsim, warm)


@needs_batsim
@pytest.mark.parametrize("nodes", [4, 150])
def test_crossengine_routes_not_in_the_entry(tmp_path, nodes):
    """Compute-only and delay jobs (a run that takes the platform from the cache) to which the
    scheduler attaches inline ``additional_io_job`` tasks reaching a storage host: their routes
    between compute and storage hosts are not in what the run reads (on 4 nodes the entry has
    every resource pair's route, in the file such a run does not read; on 150 nodes, more
    pairs than the pre-check asks, it has none) and come from SimGrid, loaded during the run;
    Batsim's messages and outputs, cold and warm."""
    from simharness import workload as write_workload

    platform = CLUSTER_MASTER
    if nodes != 4:
        platform = tmp_path / "cluster_master_big.xml"
        platform.write_text(CLUSTER_MASTER.read_text().replace('radical="0-3"', f'radical="0-{nodes - 1}"'))
    s = nodes - 1  # the storage host's resource id (node_3: the compute resources come first)

    jobs = [{"id": "a", "subtime": 0, "res": 2, "profile": "nocom"},
            {"id": "b", "subtime": 4, "res": 2, "profile": "long"},
            {"id": "c", "subtime": 9, "res": 1, "profile": "d"},
            {"id": "e", "subtime": 12, "res": 2, "profile": "nocom"}]
    profiles = {"nocom": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
                "long": {"type": "parallel_homogeneous", "cpu": 6e9, "com": 0},
                "d": {"type": "delay", "delay": 3}}
    io = {"type": "parallel_homogeneous", "cpu": 0, "com": 2e9}
    options = {"allocs": {"w0!a": "0-1", "w0!b": "1-2", "w0!c": "0", "w0!e": "0 2"},
               "io_jobs": {"w0!a": {"alloc": f"2 {s}", "profile_name": "io_a", "profile": io},
                           "w0!b": {"alloc": f"0 {s}", "profile_name": "io_b", "profile": {**io, "com": 5e8}},
                           "w0!e": {"alloc": f"1 {s}", "profile_name": "io_e", "profile": io}}}
    wl = write_workload(tmp_path / "w.json", jobs, profiles)
    cache = tmp_path / "cache"
    env = {"COBURST_CACHE": str(cache), "COBURST_DEBUG_PLATFORM_CACHE": "1"}
    args = ["-m", "master_0", "-r", "node_3:storage"]
    batsim, cold = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="ioJobs",
                            options=options, args=args, env=env)
    assert "platform from the cache" not in cold.stderr
    assert_identical(batsim, cold)
    warm = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="ioJobs", options=options,
                   args=args, env=env, prefix="warm", transcript=True, wait=300, timeout=60)
    assert warm.returncode == 0, warm.report()
    assert "platform from the cache" in warm.stderr and "0 route(s)" not in warm.stderr, warm.stderr
    assert_identical(batsim, warm)


@needs_batsim
@pytest.mark.parametrize("kind,options", [("cluster", {"query": True, "pstates": [0, 3], "busy_pstate": [0, 2]}),
                                          ("cluster", {"query": True, "sleep": [5, 0]}),
                                          ("vivaldi", {"query": True, "sleep": [5, 1], "pstates": [1, 4]})])
def test_crossengine_energy_cold_and_warm(tmp_path, kind, options):
    """``-E`` with pstate changes and sleeps, the platform from the cache (a host's pstate sets its
    speed): Batsim's messages, outputs and energy files, cold and warm."""
    from crossengine import assert_energy_identical
    from simharness import workload as write_workload
    from test_energy_crossengine import cluster_platform, vivaldi_platform

    platform = (cluster_platform if kind == "cluster" else vivaldi_platform)(tmp_path / "p.xml", 6)
    profiles = {"c": {"type": "parallel_homogeneous", "cpu": 5e8, "com": 0}, "d": {"type": "delay", "delay": 7.5},
                "seq": {"type": "composed", "seq": ["d", "c"]}}
    jobs = [{"id": 1, "subtime": 1, "walltime": 1000, "res": 2, "profile": "c"},
            {"id": 2, "subtime": 2, "walltime": 1000, "res": 1, "profile": "d"},
            {"id": 3, "subtime": 3, "walltime": 1000, "res": 3, "profile": "seq"},
            {"id": 4, "subtime": 3.5, "walltime": 4, "res": 1, "profile": "c"},
            {"id": 6, "subtime": 200, "walltime": 1000, "res": 4, "profile": "seq"}]
    wl = write_workload(tmp_path / "w.json", jobs, profiles, nb_res=6)
    env = {"COBURST_CACHE": str(tmp_path / "cache"), "COBURST_DEBUG_PLATFORM_CACHE": "1"}
    batsim, cold = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe", options=options,
                            args=["-E"], env=env)
    assert "platform from the cache" not in cold.stderr
    assert_energy_identical(batsim, cold)
    warm = run_sim(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe", options=options,
                   args=["-E"], env=env, prefix="warm", transcript=True, wait=300, timeout=60)
    assert warm.returncode == 0, warm.report()
    assert "platform from the cache" in warm.stderr, warm.stderr
    assert_energy_identical(batsim, warm)
