"""The heterogeneous-cluster entry files (schedulers/hetero*.py) on the real Batsim 4.2.1 and on
``coburst sim``: identical messages and outputs (tests/crossengine.py), and the model's
invariants on the outputs (every job completed on cores of one node, for ops / speed seconds,
no core held twice); on the shipped presets with energy on (``-E``: ``_consumed_energy.csv``
compared too).  Skipped without ``BATSIM``."""

from __future__ import annotations

import subprocess

import pytest

import hetero_fixtures as hf
from crossengine import assert_energy_identical, assert_identical, jobs_rows, needs_batsim, run_both
from simharness import COBURST, REPO
from hetero_fixtures import NODES, check_invariants, random_jobs
from shared_data import need_swf

CASES = [("heteroMinMin", {}), ("heteroMaxMin", {"mapping": "deferred"}), ("heteroDuplex", {}),
         ("heteroAStar", {"mapping": "deferred"}),
         ("heteroHeuristic", {"job_selection": "random", "node_selection": "random", "seed": 5, "mapping": "queue"})]


@needs_batsim
@pytest.mark.parametrize("entry,options", CASES, ids=[f"{e}-{i}" for i, (e, _) in enumerate(CASES)])
def test_entry_files_on_real_batsim_like_coburst(tmp_path, entry, options):
    plat = hf.platform(tmp_path / "hetero.xml", NODES, mem=[4, 8, 16, 32], power=[(10, 20), (5, 30), (8, 8), (2, 4)])
    jobs = random_jobs(21, 16, "poisson") + [dict(j, id=100 + j["id"], subtime=5.0) for j in random_jobs(22, 6, "zero")]
    wl = hf.workload(tmp_path / "w.json", jobs, 8)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=plat, scheduler=str(REPO / "schedulers" / f"{entry}.py"),
                               options=options)
    assert_identical(batsim, coburst)
    check_invariants(jobs_rows(coburst), jobs)


@needs_batsim
@pytest.mark.parametrize("entry,options", CASES, ids=[f"{e}-{i}" for i, (e, _) in enumerate(CASES)])
def test_entry_files_with_energy_on_the_low_heterogeneity_preset(tmp_path, entry, options):
    """Every entry file on ``platforms/hetero_low16.xml`` (Table 2, Batsim power properties)
    with ``-E``: the same messages, outputs and energy files on both engines."""
    wl = tmp_path / "w.json"
    subprocess.run([str(COBURST), "workload", "hetero", "--seed", "1", "--jobs", "40", "-o", str(wl)], check=True,
                   capture_output=True, timeout=120)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=REPO / "platforms" / "hetero_low16.xml",
                               scheduler=str(REPO / "schedulers" / f"{entry}.py"), options=options, args=["-E"])
    assert_energy_identical(batsim, coburst, degenerate_epower=True)
    assert len(jobs_rows(coburst)) == 40


@needs_batsim
def test_on_a_distributed_heterogeneity_preset_with_a_kth_slice(tmp_path):
    """``coburst platform hetero --preset dist0`` (Table 4: 32 multi-core nodes, 700 cores) and
    ``coburst workload hetero --swf`` (§5.1.2: a KTH slice, multi-task jobs, daily batches)."""
    plat, wl = tmp_path / "dist0.xml", tmp_path / "kth.json"
    for args in (["platform", "hetero", "--preset", "dist0", "-o", str(plat)],
                 ["workload", "hetero", "--swf", str(need_swf()),
                  "--length", "30", "--start", "200", "-o", str(wl), "-q"]):
        subprocess.run([str(COBURST), *args], check=True, capture_output=True, timeout=120)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=plat, scheduler=str(REPO / "schedulers" / "heteroDuplex.py"),
                               args=["-E"])
    assert_energy_identical(batsim, coburst, degenerate_epower=True)
    rows = jobs_rows(coburst)
    assert len(rows) == 30 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
