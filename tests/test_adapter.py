"""pybatsim adapter, driven through pybatsim 3.2.1 itself by a scripted Batsim peer.

pybatsim's network handler is replaced by an in-process fake so that pybatsim's real
message parsing (``Batsim._read_bat_msg``) runs; the peer is a minimal Batsim: jobs run
their given runtime (cut at the walltime), simultaneous events are batched.  The adapter's
decisions must equal those of the reference replay.
"""

from __future__ import annotations

import heapq
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcSet

import batsim.batsim as pybatsim

with warnings.catch_warnings():  # pybatsim's docopt has invalid escape sequences
    warnings.simplefilter("ignore", DeprecationWarning)
    from batsim.tools.launcher import instanciate_scheduler
from coburst import policies
from coburst.adapter import CoburstScheduler, parse_options
from coburst.adapter.scheduler import bb_metadata
from coburst.core.cluster import Cluster
from coburst.core.replay import replay
from coburst.core.state import Job
from coburst.errors import InputError

pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

ROOT = Path(__file__).resolve().parents[1]
CAP = 4000


def platform(groups=1, chassis=2, routers=1, per_router=4, with_props=True):
    """Batsim resource lists of a small dragonfly, first host of a chassis a BB node."""
    per_chassis = routers * per_router
    n = groups * chassis * per_chassis
    is_bb = {f"node_{i}": i % per_chassis == 0 for i in range(n)}
    # Batsim 4 ids: compute hosts 0..C-1, then storage hosts, each in lexicographic name order
    order = sorted(is_bb, key=lambda name: (is_bb[name], name))
    rid = {name: k for k, name in enumerate(order)}
    compute, storage = [], []
    for i in range(n):
        router = i // per_router
        ch = router // routers
        props = {"group": str(ch // chassis), "chassis": str(ch), "router": str(router)} if with_props else {}
        res = {"id": rid[f"node_{i}"], "name": f"node_{i}", "state": "idle", "properties": props}
        if is_bb[f"node_{i}"]:
            res["properties"] = {**props, "role": "storage", "bb_capacity": str(CAP)} if with_props else {}
            storage.append(res)
        else:
            res["properties"] = {**props, "role": "compute"} if with_props else {}
            compute.append(res)
    storage.append({"id": n, "name": "pfs", "state": "idle", "properties": {"role": "storage"}})
    return compute, storage


class FakeBatsim:
    """Minimal Batsim peer speaking the JSON protocol of Batsim 4."""

    def __init__(self, compute, storage, jobs, runtimes):
        self.compute, self.storage = compute, storage
        self.jobs = {j["id"]: j for j in jobs}
        self.runtimes = runtimes
        self.now = 0.0
        self.heap = [(j["subtime"], 1, k, ("submit", j["id"])) for k, j in enumerate(jobs)]
        heapq.heapify(self.heap)
        self.seq = len(jobs)
        self.started, self.rejected, self.ended = {}, [], {}
        self.metadata: dict[str, str] = {}
        self.busy: set[int] = set()
        self.begun = self.finished = False
        self.replies = []

    def push(self, t, kind, payload):
        heapq.heappush(self.heap, (t, kind, self.seq, payload))
        self.seq += 1

    def next_message(self):
        if not self.begun:
            self.begun = True
            data = {
                "nb_resources": len(self.compute) + len(self.storage),
                "nb_compute_resources": len(self.compute),
                "nb_storage_resources": len(self.storage),
                "allow_compute_sharing": False, "allow_storage_sharing": True,
                "config": {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
                           "dynamic-jobs-acknowledged": False, "forward-unknown-events": False},
                "compute_resources": self.compute, "storage_resources": self.storage,
                "workloads": {"w0": "w0.json"},
                "profiles": {"w0": {"p": {"type": "delay", "delay": 1}}},
            }
            return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]}
        if not self.heap:
            self.finished = True
            return {"now": self.now, "events": [{"timestamp": self.now, "type": "SIMULATION_ENDS", "data": {}}]}
        t = self.heap[0][0]
        self.now = t
        events = []
        while self.heap and self.heap[0][0] == t:
            _, _, _, (kind, arg) = heapq.heappop(self.heap)
            if kind == "end":
                self.busy -= set(self.started[arg][1])
                self.ended[arg] = t
                events.append({"timestamp": t, "type": "JOB_COMPLETED",
                               "data": {"job_id": arg, "job_state": "COMPLETED_SUCCESSFULLY",
                                        "return_code": 0, "alloc": str(ProcSet(*self.started[arg][1]))}})
            elif kind == "submit":
                events.append({"timestamp": t, "type": "JOB_SUBMITTED",
                               "data": {"job_id": arg, "job": self.jobs[arg]}})
            else:
                events.append({"timestamp": t, "type": "REQUESTED_CALL", "data": {}})
        return {"now": t, "events": events}

    def receive(self, msg):
        self.replies.append(msg)
        if self.finished:
            assert msg["events"] == []
            return
        for ev in msg["events"]:
            assert ev["timestamp"] == self.now
            data = ev["data"]
            if ev["type"] == "EXECUTE_JOB":
                nodes = list(ProcSet.from_str(data["alloc"]))
                assert not self.busy & set(nodes), "compute node allocated twice"
                assert all(any(r["id"] == n for r in self.compute) for n in nodes)
                self.busy |= set(nodes)
                job = self.jobs[data["job_id"]]
                assert len(nodes) == job["res"]
                self.started[data["job_id"]] = (self.now, nodes)
                run = min(self.runtimes[data["job_id"]], job["walltime"])
                self.push(self.now + run, 0, ("end", data["job_id"]))
            elif ev["type"] == "REJECT_JOB":
                self.rejected.append(data["job_id"])
            elif ev["type"] == "CALL_ME_LATER":
                assert data["timestamp"] > self.now
                self.push(data["timestamp"], 2, ("call", None))
            elif ev["type"] == "SET_JOB_METADATA":  # BB placement of a started job
                assert data["job_id"] in self.started and '"' not in data["metadata"]
                self.metadata[data["job_id"]] = data["metadata"]
            else:
                raise AssertionError(f"unexpected event {ev['type']}")


def run_pybatsim(monkeypatch, scheduler, fake):
    class Net:
        def __init__(self, *args, **kwargs):
            pass

        def bind(self):
            pass

        def recv(self, blocking=False):
            return fake.next_message()

        def send(self, msg):
            fake.receive(msg)

        def close(self):
            pass

    monkeypatch.setattr(pybatsim, "NetworkHandler", Net)
    bs = pybatsim.Batsim(scheduler, "tcp://fake:0", 2000)
    bs.start()
    return bs


def make_jobs(spec):
    return [{"id": f"w0!{k}", "subtime": float(t), "res": r, "walltime": float(w), "profile": "p", "bb": b}
            for k, (t, r, w, b) in enumerate(spec)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 7), st.integers(1, 20), st.integers(0, 5)),
                min_size=1, max_size=15),
       st.sampled_from(["fcfs", "backfill-1", "backfill-sjf-2", "no-future-1", "conservative", "filler"]),
       st.data())
def test_adapter_matches_replay(monkeypatch_session, spec, name, data):
    spec = [(t, r, w, b * CAP // 4) for t, r, w, b in sorted(spec)]
    jobs = make_jobs(spec)
    runtimes = {j["id"]: float(data.draw(st.integers(1, int(j["walltime"])))) for j in jobs}
    compute, storage = platform()
    fake = FakeBatsim(compute, storage, jobs, runtimes)
    sched = CoburstScheduler({"policy": name})
    sched.placement_history = {}  # ended jobs' placements kept for the checks below
    run_pybatsim(monkeypatch_session, sched, fake)

    cluster = Cluster.from_resources(compute, storage)
    core_jobs = [Job(j["id"], j["subtime"], j["res"], j["walltime"], j["bb"]) for j in jobs]
    ref = replay(cluster, core_jobs, policies.get(name), runtimes)
    for job in core_jobs:
        rec = ref.jobs[job.id]
        if rec.rejected:
            assert job.id in fake.rejected
        else:
            start, nodes = fake.started[job.id]
            assert start == rec.start
            assert ProcSet(*nodes) == rec.alloc.compute_ids(cluster)
            assert sched.placement(job.id) == rec.alloc.storage_map(cluster)
            if job.bb:
                assert fake.metadata[job.id] == bb_metadata(rec.alloc.bb_bytes(cluster))
            else:
                assert job.id not in fake.metadata
    assert fake.finished and not sched.state.queue and not sched.state.running


@pytest.fixture(scope="module")
def monkeypatch_session():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_adapter_rejects_and_places(monkeypatch):
    compute, storage = platform()
    jobs = make_jobs([(0, 4, 10, 0), (0, 7, 10, 0), (0, 1, 10, CAP + 1), (1, 2, 5, CAP),
                      (1, 2, 5, 3 * CAP // 4)])
    jobs[4]["bb"] = "a lot"  # malformed
    runtimes = {j["id"]: 3.0 for j in jobs}
    fake = FakeBatsim(compute, storage, jobs, runtimes)
    sched = CoburstScheduler({"policy": "backfill-1"})
    sched.placement_history = {}
    run_pybatsim(monkeypatch, sched, fake)
    assert sorted(fake.rejected) == ["w0!1", "w0!2", "w0!4"]
    assert fake.started["w0!0"][0] == 0.0 and fake.started["w0!3"][0] == 1.0
    # 2 nodes of chassis 1 x CAP bytes: the first on its chassis' BB node, the second elsewhere
    place = sched.placement("w0!3")
    assert sorted(place.values()) == sorted(r["id"] for r in storage if r["name"] != "pfs")
    assert sched.cluster.n_compute == 6 and sched.cluster.n_bb == 2


def test_adapter_without_platform_properties(monkeypatch):
    compute, storage = platform(with_props=False)
    jobs = make_jobs([(0, 2, 10, CAP // 2)])
    fake = FakeBatsim(compute, storage, jobs, {"w0!0": 1.0})
    sched = CoburstScheduler({"policy": "fcfs", "bb_capacity": CAP, "dragonfly": "1,1;2,1;1,1;4"})
    sched.placement_history = {}
    run_pybatsim(monkeypatch, sched, fake)
    assert sched.cluster.n_bb == 2 and fake.started["w0!0"][0] == 0.0
    assert len(set(sched.placement("w0!0").values())) == 1  # same chassis: one BB node


def test_options():
    pol, settings_ = parse_options({"policy": "backfill-sjf", "depth": 2})
    assert pol.name == "backfill-sjf-2" and settings_ == {"bb_capacity": None, "dragonfly": None, "trace": None}
    assert parse_options({}, default_policy="backfill-1")[0].name == "backfill-1"
    assert parse_options({"bb_capacity": 40e9}, fixed_policy="fcfs")[1]["bb_capacity"] == 40_000_000_000
    for bad, where in [({"policy": "backfill", "dpeth": 1}, "dpeth"), ({"policy": "x"}, "policy"),
                       ({"policy": "backfill", "depth": "1"}, "depth"), ({}, "policy"),
                       ({"policy": "fcfs", "bb_capacity": -1}, "bb_capacity"),
                       ({"policy": "fcfs", "dragonfly": "3;4"}, "dragonfly"),
                       ({"policy": "fcfs", "trace": 3}, "trace")]:
        with pytest.raises(InputError) as err:
            parse_options(bad)
        assert err.value.where == where, (bad, err.value)
    with pytest.raises(InputError, match="always runs"):
        parse_options({"depth": 2}, fixed_policy="backfill-1")


def test_bad_options_exit_without_traceback(capsys):
    with pytest.raises(SystemExit) as exc:
        CoburstScheduler({"policy": "backfill", "dpeth": 1})
    assert exc.value.code == 2
    assert "dpeth: unknown option" in capsys.readouterr().err


@pytest.mark.parametrize("path, cls, policy", [
    ("schedulers/coburstFcfs.py", "CoburstFcfs", "fcfs"),
    ("schedulers/coburstEasy.py", "CoburstEasy", "backfill-1"),
    ("schedulers/coburstBackfill.py", "CoburstBackfill", "backfill-1"),
])
def test_entry_files_load_by_path(monkeypatch, path, cls, policy):
    """pybatsim first tries ``import schedulers.<name>``, which finds its own bundled
    ``schedulers`` package; our names must not collide and the by-path fallback must work,
    from the repository root (relative path) and from elsewhere (absolute path)."""
    import importlib.util
    bundled = importlib.util.find_spec("schedulers")
    if bundled is not None and bundled.submodule_search_locations:
        for loc in bundled.submodule_search_locations:
            assert not (Path(loc) / Path(path).name).exists()
    monkeypatch.chdir(ROOT)
    s = instanciate_scheduler(path, {})
    assert type(s).__name__ == cls and s.policy.name == policy
    monkeypatch.chdir("/")
    s = instanciate_scheduler(str(ROOT / path), {})
    assert type(s).__name__ == cls
    s = instanciate_scheduler(str(ROOT / "schedulers/coburstBackfill.py"), {"policy": "backfill-sjf-1"})
    assert s.policy.name == "backfill-sjf-1"
