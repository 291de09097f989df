"""The speedup hook's neighbour maps: same timelines as before.

:class:`coburst.simulator.speedup.HeatmapSpeedup` keeps, for every running job, the jobs that
share any of its nodes (updated at starts and ends) and takes the minimum pairwise speedup
over them, where it used to walk every node of the job and every job on each node at every
change.  Pinned against the former hook (``tests/speedup_former.py``, the code before,
attached with ``--speed-hook``) through the real engine and ZeroMQ, with the node-sharing
policies that co-locate jobs (spread placements: neighbours come and go) and a compact one,
on random ELiSE workloads of the 8-node ARIS platform, both alone rules: the ``_jobs.csv``
(start and end dates, achieved speedups in the metadata) must be byte-identical.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simharness import REPO, run_sim
from test_cosched_engine import SMALL, elise_workload

pytestmark = pytest.mark.timeout(600)

HEATMAP = REPO / "models" / "heatmaps" / "aris-nas.heatmap.csv"
ENTRIES = {"easy-co": "coschedEasyCo", "filler": "coschedFiller", "fcfs": "coschedFcfs"}


def _jobs(tmp_path, wl, entry, args, env, prefix):
    r = run_sim(tmp_path, workloads=[wl], platform=SMALL, scheduler=str(REPO / "schedulers" / f"{entry}.py"),
                args=args, env=env, prefix=prefix, timeout=60.0)
    r.check()
    return r.jobs_csv.read_bytes()


@pytest.mark.parametrize("policy", sorted(ENTRIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), n=st.integers(5, 40), arrival=st.sampled_from(["zero", "poisson"]),
       alone=st.sampled_from(["best", "1.0", "0.85"]))
def test_neighbour_maps_give_the_former_timelines(tmp_path_factory, policy, seed, n, arrival, alone):
    tmp_path = tmp_path_factory.mktemp("hook")
    wl = elise_workload(tmp_path / "w.json", n, seed, arrival=arrival, interarrival=20.0)
    entry = ENTRIES[policy]
    new = _jobs(tmp_path, wl, entry, ["--heatmap", str(HEATMAP), "--heatmap-alone", alone], None, "new")
    former = _jobs(tmp_path, wl, entry, ["--speed-hook", "speedup_former:FormerHook"],
                   {"COBURST_FORMER_HEATMAP": str(HEATMAP), "COBURST_FORMER_ALONE": alone}, "former")
    assert b"speedup=" in new
    assert new == former


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(subs=st.lists(st.integers(0, 12), min_size=4, max_size=4),
       apps=st.lists(st.sampled_from(["A", "B", None]), min_size=4, max_size=4),
       delays=st.lists(st.sampled_from(["d5", "d10"]), min_size=4, max_size=4))
def test_several_neighbours_at_once(tmp_path_factory, subs, apps, delays):
    """A spread job on nodes 1-2 whose halves are shared with one job on each node (and a
    compact job elsewhere): several distinct neighbours at once, as the random workloads
    above rarely give on 8 nodes."""
    from simharness import workload

    tmp_path = tmp_path_factory.mktemp("near")
    heatmap = tmp_path / "h.csv"
    heatmap.write_text("job\\co_job,A,B\r\nA,0.9,0.8\r\nB,1.25,1.1\r\n")
    allocs = {"w0!1": "4 6 8 10", "w0!2": "5 7", "w0!3": "9 11", "w0!4": "0-3"}
    jobs = []
    for i, (sub, app, prof) in enumerate(zip(subs, apps, delays), start=1):
        job = {"id": i, "subtime": sub, "res": len(allocs[f"w0!{i}"].split()) if i < 4 else 4, "profile": prof}
        if app is not None:
            job["app"] = app
        jobs.append(job)
    w = workload(tmp_path / "w.json", jobs, {"d10": {"type": "delay", "delay": 10},
                                             "d5": {"type": "delay", "delay": 5}}, nb_res=32)
    out = {}
    for name, args, env in (("new", ["--heatmap", str(heatmap)], None),
                            ("former", ["--speed-hook", "speedup_former:FormerHook"],
                             {"COBURST_FORMER_HEATMAP": str(heatmap)})):
        r = run_sim(tmp_path, workloads=[w], platform=SMALL, scheduler="fixed", options={"allocs": allocs},
                    args=[*args, "--enable-compute-sharing"], env=env, prefix=name)
        r.check()
        out[name] = r.jobs_csv.read_bytes()
    assert out["new"] == out["former"]
