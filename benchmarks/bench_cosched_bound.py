"""Time of the co-scheduling makespan bound (:mod:`coburst.theory.cosched_bound`) at Kellari's
study size: 1000 jobs at t = 0 drawn from 14 applications of the ARIS NAS seed, 420-node ARIS
platform (2 x 10 cores, half-socket units), measured ARIS NAS heatmap.  Target:
<= 5 s.

Cases (medians of ``--repeat`` runs, LP build + HiGHS solve + dual certificate):

* ``aggregated``: the LP over (application, nodes, work, walltime, release) classes (one per
  application for ELiSE workloads: 14 classes);
* ``per-job``: the same jobs, one class per job (``aggregate=False``: 1000 classes, the same
  optimum) -- the baseline the aggregated LP is compared with, measured in the same run;
* ``distinct``: every job's work jittered by U(0.9, 1.1), so no two jobs share a class (the
  largest LP a 1000-job set can give);
* ``from files``: what ``coburst analyze --heatmap`` pays per run: the workload file read and
  checked, the platform XML parsed (420 nodes, ~15 MB), the heatmap read, the bound.

Tightness (``--tiny K``, default 200): on K random tiny instances (3-5 jobs of 1-2 nodes, work
20-100 s, walltime 1.4 x work, eight ARIS NAS applications, 4 nodes), the exhaustive optimum
over event-driven schedules (:func:`~coburst.theory.cosched_bound.exhaustive_makespan`) divided
by the bound: mean, median, 90th percentile, maximum and the share of instances where the bound
is the optimum.

    python benchmarks/bench_cosched_bound.py [--jobs 1000] [--apps 14] [--nodes 420] [--repeat 5] [--tiny 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coburst.models.heatmap import bundled, bundled_path, bundled_seed, load_heatmap  # noqa: E402
from coburst.platforms.cosched import CoschedSpec, render_xml  # noqa: E402
from coburst.theory.cosched_bound import (BoundJob, Machine, exhaustive_makespan, jobs_from_workload,  # noqa: E402
                                          machine_from_platform, makespan_bound)
from coburst.workloads.elise import generate  # noqa: E402

TARGET = 5.0


def workload(jobs: int, apps: int, nodes: int, seed: int) -> dict:
    usable = [a for a in bundled_seed("aris-nas") if a.processes and -(-a.processes // 20) <= nodes // 2]
    return generate(usable[:apps], jobs, cores_per_node=20, units_per_node=4, seed=seed)


def bound_jobs(doc: dict, jitter: np.random.Generator | None = None) -> list[BoundJob]:
    out = []
    for j in doc["jobs"]:
        work = float(doc["profiles"][j["profile"]]["delay"])
        if jitter is not None:
            work *= jitter.uniform(0.9, 1.1)
        out.append(BoundJob(str(j["id"]), j["app"], j["res"] // 4, work, float(j["walltime"]), float(j["subtime"])))
    return out


TINY_APPS = ("ft.D.64", "mg.E.128", "cg.E.512", "ep.E.256", "sp.C.64", "lu.D.64", "is.E.256", "bt.D.64")


def tightness(count: int, seed: int) -> np.ndarray:
    """Exhaustive optimum / bound on ``count`` random tiny instances (module doc)."""
    hm = bundled("aris-nas")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        jobs = []
        for i in range(int(rng.integers(3, 6))):
            work = float(rng.integers(4, 21) * 5)
            jobs.append(BoundJob(str(i), TINY_APPS[rng.integers(len(TINY_APPS))], int(rng.integers(1, 3)), work,
                                 1.4 * work))
        bound = makespan_bound(jobs, hm, Machine(4)).makespan
        out.append(exhaustive_makespan(jobs, hm, Machine(4)).makespan / bound)
    return np.array(out)


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--apps", type=int, default=14)
    ap.add_argument("--nodes", type=int, default=420)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", type=int, default=200, help="tiny instances for the tightness check (0: none)")
    args = ap.parse_args(argv)
    hm = bundled("aris-nas")
    machine = Machine(args.nodes, True)
    doc = workload(args.jobs, args.apps, args.nodes, args.seed)
    jobs = bound_jobs(doc)
    distinct = bound_jobs(doc, np.random.default_rng(args.seed))
    rows = []
    t_base, base = timed(lambda: makespan_bound(jobs, hm, machine, aggregate=False), args.repeat)
    t_agg, agg = timed(lambda: makespan_bound(jobs, hm, machine), args.repeat)
    t_dis, dis = timed(lambda: makespan_bound(distinct, hm, machine), args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        plat = Path(tmp) / "aris.xml"
        plat.write_text(render_xml(CoschedSpec(nodes=args.nodes)))
        wl = Path(tmp) / "w.json"
        wl.write_text(json.dumps(doc) + "\n")

        def from_files():
            cl = machine_from_platform(plat)
            js, _ = jobs_from_workload(wl, cl)
            return makespan_bound(js, load_heatmap(bundled_path("aris-nas")), Machine(cl.n, cl.can_spread))

        t_files, files = timed(from_files, args.repeat)
    for name, t, b in (("per-job (baseline)", t_base, base), ("aggregated", t_agg, agg), ("distinct", t_dis, dis),
                       ("from files", t_files, files)):
        rows.append((name, t, b))
    assert abs(agg.lp_value - base.lp_value) <= 1e-7 * base.lp_value, (agg.lp_value, base.lp_value)
    assert abs(files.makespan - agg.makespan) <= 1e-7 * agg.makespan
    print(f"{args.jobs} jobs, {args.apps} applications, {args.nodes} nodes, aris-nas heatmap; medians of "
          f"{args.repeat} runs\n")
    print("| case | classes | LP variables | LP rows | time (s) | vs per-job | vs 5 s target | bound (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, t, b in rows:
        print(f"| {name} | {len(b.classes)} | {b.variables:,} | {b.constraints:,} | {t:.3f} | {t / t_base:.2f}x | "
              f"{t / TARGET:.3f} | {b.makespan:,.1f} |")
    print(f"\nbound {agg.makespan:.1f} s (longest job {agg.longest:.1f} s, area {agg.area:.1f} s)")
    worst = max(t for _, t, _ in rows)
    print(f"target <= {TARGET:g} s: {'met' if worst <= TARGET else 'MISSED'} (slowest case {worst:.2f} s)")
    if args.tiny:
        t0 = time.perf_counter()
        r = tightness(args.tiny, args.seed)
        assert (r >= 1 - 1e-9).all()
        print(f"\ntightness on {len(r)} tiny instances (exhaustive optimum / bound, {time.perf_counter() - t0:.1f} s): "
              f"mean {r.mean():.3f}, median {np.median(r):.3f}, p90 {np.percentile(r, 90):.3f}, max {r.max():.3f}, "
              f"bound = optimum in {100 * np.mean(r <= 1 + 1e-9):.0f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
