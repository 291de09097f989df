"""Batsim 4.2.1's own test corpus on both engines, in the suite.

Batsim's ``platforms/``, ``workloads/`` and ``events/`` at tag v4.2.1 are read where
``shared_data.batsim_data()`` says (``COBURST_BATSIM_DATA``, default
``../shared/data/batsim-4.2.1``; Batsim's files, not in this repository): without them, every
test here is skipped with a message naming the folder.  Every (platform, workload) pair whose ``nb_res`` fits the
platform's compute hosts, with each of pybatsim's three example schedulers, is one case
here (``scripts/batsim_corpus.py`` pairs them the same way).  Each case asserts the outcome
it must have, and reaches it quickly (no case waits for a hang):

* **identical** (the default): both engines run it; every message the scheduler receives,
  ``_jobs.csv``, ``_schedule.csv``, ``_machine_states.csv`` and the trace are compared
  (``crossengine.differences``).  ``fillerSched`` runs as ``fillerSchedById`` (its code
  unchanged, pybatsim's Job objects hashed by id: its set's order no longer follows memory
  addresses), on both engines;
* **Batsim aborts on the platform** (:data:`PLATFORM_ABORTS`): Batsim aborts before it
  connects, with its message; coburst refuses too, naming the file;
* **smpi profiles**: coburst refuses them by name before it connects (SMPI replay is not
  simulated); Batsim is not run (it hangs on some of them until killed, README);
* **pfs profiles without a storage host**: Batsim aborts when the job starts, coburst stops
  with the same reason;
* **pybatsim's schedFcfs fails** (the same error on either engine): job ids that are not
  integers, a job submitted at 0 on a platform whose messages take no time (its allocation
  asserts a start time > 0), ``usage_trace`` profiles, pfs profiles without ``bytes_to_read``;
  coburst stops at once (the scheduler is gone), Batsim waits for it and is killed shortly
  after (the harness's grace made short here).

Measured 2026-11-27 on 2 shared cores (load ~4 from other work): the 1569 cases in 9 min 10 s
wall at ``-n 2``, 9.8 min CPU (user + system, every process).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

import simharness
from crossengine import differences, needs_batsim
from shared_data import batsim_data, needs_batsim_data
from simharness import run_sim

CORPUS = batsim_data()
pytestmark = needs_batsim_data()
SCHEDULERS = ("fillerSched", "easyBackfill", "schedFcfs")
#: the scheduler file each name runs as (tests/schedulers/)
RUN_AS = {"fillerSched": "fillerSchedById"}

#: compute hosts of each platform (hosts but ``master_host`` and those whose ``role`` is
#: ``master`` or ``storage``) and storage hosts, as SimGrid counts them
#: (:func:`test_host_counts` checks them; None: SimGrid 4.1 cannot load the file, counted
#: from its declarations as ``scripts/batsim_corpus.py`` does)
HOSTS = {
    "cluster512.xml": (512, 0),
    "cluster512_pfs.xml": (512, 1),
    "cluster_energy_128.xml": (128, 0),
    "cluster_locality_32x16.xml": (513, 0),
    "cluster_locality_4x128.xml": (513, 0),
    "cluster_locality_8x16.xml": (129, 0),
    "cluster_locality_8x64.xml": (513, 0),
    "energy_platform.xml": (4, 0),
    "energy_platform_homogeneous.xml": (4, 0),
    "energy_platform_homogeneous_no_net.xml": (7, None),
    "energy_platform_homogeneous_no_net_1.xml": (1, 0),
    "energy_platform_homogeneous_no_net_128.xml": (128, 0),
    "energy_platform_homogeneous_no_net_256.xml": (256, 0),
    "energy_platform_homogeneous_no_net_512.xml": (512, 0),
    "graphene.xml": (144, None),
    "heterogeneous/platform.xml": (15, 0),
    "properties_example.xml": (7, 0),
    "simple_coalloc_platform.xml": (34, 0),
    "small_platform.xml": (4, 0),
    "small_platform_pfs0.xml": (5, 0),
    "small_platform_usage_replay.xml": (4, 0),
}

#: platforms Batsim 4.2.1 aborts on before it connects to the scheduler: its message, and
#: coburst's (README, "Pairs the real Batsim 4.2.1 refuses")
PLATFORM_ABORTS = {
    "cluster_locality_4x128.xml": ('Cannot find the "master" role in the platform file', "no master host"),
    "cluster_locality_8x16.xml": ('Cannot find the "master" role in the platform file', "no master host"),
    "cluster_locality_8x64.xml": ('Cannot find the "master" role in the platform file', "no master host"),
    "cluster_locality_32x16.xml": ('Cannot find the "master" role in the platform file', "no master host"),
    "graphene.xml": ("Bad config key: network/TCP_gamma", "network/TCP_gamma"),
    "energy_platform_homogeneous_no_net.xml": ("Bad config key: network/coordinates", "network/coordinates"),
    "heterogeneous/platform.xml": ("There can't be route in an Empty zone",
                                   "SimGrid aborted while computing the route"),
}
#: of those, the one Batsim aborts on only once the scheduler has connected (its first route)
ABORTS_AFTER_CONNECTING = {"heterogeneous/platform.xml"}
#: platforms whose messages take no time (Vivaldi platforms without network; the master's
#: loopback route in properties_example.xml is empty): a job submitted at 0 reaches the
#: scheduler at 0 (``"now": 0``)
INSTANT_MESSAGES = {f"energy_platform_homogeneous_no_net_{n}.xml" for n in (1, 128, 256, 512)} | {
    "properties_example.xml"}

SMPI_REFUSAL = "profile type 'smpi'"
PFS_ABORT = ("Cannot generate a homogeneous parallel task with pfs",
             "EXECUTE_JOB gave no storage_mapping and the platform has 0 storage hosts")
#: pybatsim 3.2.1's schedFcfs (batsim.sched) parses job ids as integers, and refuses an
#: allocation starting at 0 (``assert start_time > 0`` in batsim/sched/alloc.py)
FCFS_ODD_ID = "ValueError: invalid literal for int() with base 10"
FCFS_AT_ZERO = "AssertionError: Invalid start time for the allocation was given"
#: ... and cannot read a usage_trace profile, nor a pfs profile without ``bytes_to_read``
#: (batsim/sched/profiles.py)
FCFS_USAGE_TRACE = "TypeError: Profile.__init__() got an unexpected keyword argument 'type'"
FCFS_PFS_READ = "KeyError: 'bytes_to_read'"
SCHEDULER_GONE = "disconnected before answering"


@lru_cache(maxsize=None)
def workload_info(name: str) -> tuple[int | None, frozenset[str], bool, float]:
    """``nb_res``, the profile types, whether some job id is not an integer, the first
    submission time."""
    data = json.loads((CORPUS / "workloads" / name).read_text())
    nb = data.get("nb_res")
    types = set(p.get("type", "") for p in data.get("profiles", {}).values())
    if any(p.get("type") == "parallel_homogeneous_pfs" and "bytes_to_read" not in p
           for p in data.get("profiles", {}).values()):
        types.add("pfs without bytes_to_read")
    types = frozenset(types)
    odd_ids = any(not str(j["id"]).strip().lstrip("-").isdigit() or str(j["id"]) != str(j["id"]).strip()
                  for j in data.get("jobs", []))
    first = min((float(j["subtime"]) for j in data.get("jobs", [])), default=float("inf"))
    return (nb if isinstance(nb, int) and not isinstance(nb, bool) else None), types, odd_ids, first


def corpus_pairs() -> list[tuple[str, str]]:
    platforms = sorted(str(p.relative_to(CORPUS / "platforms")) for p in (CORPUS / "platforms").rglob("*.xml"))
    workloads = sorted(str(w.relative_to(CORPUS / "workloads")) for w in (CORPUS / "workloads").rglob("*.json"))
    return [(p, w) for p in platforms for w in workloads
            if workload_info(w)[0] is not None and workload_info(w)[0] <= HOSTS[p][0]]


@dataclass(frozen=True)
class Expected:
    kind: str  # identical | platform_abort | smpi | pfs_abort | scheduler_crash
    batsim: str = ""
    coburst: str = ""
    scheduler: str = ""  # the scheduler's error (scheduler_crash)


def expected(platform: str, workload: str, scheduler: str) -> Expected:
    """The outcome a case must have (first rule that applies)."""
    _, types, odd_ids, first = workload_info(workload)
    if platform in PLATFORM_ABORTS:  # coburst reads the workload first: smpi is refused before
        batsim, coburst = PLATFORM_ABORTS[platform]
        return Expected("platform_abort", batsim, SMPI_REFUSAL if "smpi" in types else coburst)
    if "smpi" in types:
        return Expected("smpi", coburst=SMPI_REFUSAL)
    if scheduler == "schedFcfs" and odd_ids:
        return Expected("scheduler_crash", scheduler=FCFS_ODD_ID, coburst=SCHEDULER_GONE)
    if scheduler == "schedFcfs" and platform in INSTANT_MESSAGES and first == 0:
        return Expected("scheduler_crash", scheduler=FCFS_AT_ZERO, coburst=SCHEDULER_GONE)
    if scheduler == "schedFcfs" and "usage_trace" in types:
        return Expected("scheduler_crash", scheduler=FCFS_USAGE_TRACE, coburst=SCHEDULER_GONE)
    if scheduler == "schedFcfs" and "pfs without bytes_to_read" in types:
        return Expected("scheduler_crash", scheduler=FCFS_PFS_READ, coburst=SCHEDULER_GONE)
    if "parallel_homogeneous_pfs" in types and HOSTS[platform][1] != 1:
        return Expected("pfs_abort", *PFS_ABORT)
    return Expected("identical")


CASES = [(p, w, s) for p, w in corpus_pairs() for s in SCHEDULERS]


def case_id(case: tuple[str, str, str]) -> str:
    p, w, s = case
    return f"{Path(p).with_suffix('')}--{Path(w).with_suffix('')}--{s}"


@needs_batsim
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_corpus(tmp_path, monkeypatch, case):
    platform, workload, scheduler = case
    plat, wl = CORPUS / "platforms" / platform, CORPUS / "workloads" / workload
    want = expected(platform, workload, scheduler)
    sched = RUN_AS.get(scheduler, scheduler)
    common = dict(platform=plat, workloads=[wl], scheduler=sched, timeout=60)

    if want.kind in ("platform_abort", "smpi"):  # refused (but one) before any scheduler connects
        engines = ("batsim", "coburst") if want.kind == "platform_abort" else ("coburst",)
        for engine in engines:
            connects = engine == "batsim" and platform in ABORTS_AFTER_CONNECTING
            run = run_sim(tmp_path, engine=engine, prefix=engine, start_scheduler=connects, wait=30, **common)
            text = want.batsim if engine == "batsim" else want.coburst
            assert run.returncode != 0 and text in run.stderr, f"{engine}: expected a refusal with {text!r}\n" + run.report()
            if engine == "coburst":  # Batsim opens its outputs before it aborts on a route
                assert not run.jobs_csv.exists(), "coburst wrote outputs"
        return

    if want.kind in ("pfs_abort", "scheduler_crash"):
        monkeypatch.setattr(simharness, "PEER_GONE_GRACE", 1.0)  # Batsim waits for a scheduler that is gone
        for engine in ("batsim", "coburst"):
            run = run_sim(tmp_path, engine=engine, prefix=engine, wait=60, **common)
            text = want.batsim if engine == "batsim" else want.coburst
            assert run.returncode != 0 and text in run.stderr, f"{engine}: expected {text!r}\n" + run.report()
            if want.scheduler:
                assert want.scheduler in run.sched_output, f"{engine}: expected the scheduler to fail with " \
                                                           f"{want.scheduler!r}\n" + run.report()
        return

    runs = {}
    for engine in ("batsim", "coburst"):
        runs[engine] = run = run_sim(tmp_path, engine=engine, prefix=engine, transcript=True, wait=120, **common)
        assert run.returncode == 0, f"{engine} failed\n" + run.report()
    diffs = differences(runs["batsim"], runs["coburst"])
    assert not diffs, "coburst differs from Batsim 4.2.1:\n" + "\n".join(diffs)


_COUNT = r"""
import sys
from coburst.simulator._simgrid import simgrid
e = simgrid.Engine(["count", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
roles = [h.get_properties().get("role", "") for h in e.all_hosts if h.name != "master_host"]
print(sum(r not in ("master", "storage") for r in roles), sum(r == "storage" for r in roles))
"""


@pytest.mark.parametrize("platform", sorted(HOSTS))
def test_host_counts(platform):
    """:data:`HOSTS` is what SimGrid finds in each platform (or, for the two files SimGrid 4.1
    cannot load, what ``scripts/batsim_corpus.py`` counts in their declarations)."""
    import subprocess
    import sys

    path = CORPUS / "platforms" / platform
    proc = subprocess.run([sys.executable, "-c", _COUNT, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(simharness.REPO)})
    if HOSTS[platform][1] is None:
        assert proc.returncode != 0 and "Bad config key" in proc.stderr, proc.stdout + proc.stderr[-500:]
        sys.path.insert(0, str(simharness.REPO / "scripts"))
        from batsim_corpus import compute_hosts
        assert compute_hosts(path) == HOSTS[platform][0]
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert tuple(map(int, proc.stdout.split())) == HOSTS[platform]


def test_every_file_is_in_some_case():
    """Every platform and every workload of the corpus is in the table: none is left out
    but where nb_res exceeds a platform's compute hosts (no workload lacks nb_res)."""
    pairs = corpus_pairs()
    platforms = {str(p.relative_to(CORPUS / "platforms")) for p in (CORPUS / "platforms").rglob("*.xml")}
    workloads = {str(w.relative_to(CORPUS / "workloads")) for w in (CORPUS / "workloads").rglob("*.json")}
    assert set(HOSTS) == platforms
    assert {p for p, _ in pairs} == platforms and {w for _, w in pairs} == workloads
    assert len(pairs) == 523 and len(CASES) == 3 * 523
    assert all(workload_info(w)[0] is not None for w in workloads)
