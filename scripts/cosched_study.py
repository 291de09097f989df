#!/usr/bin/env python3
"""Kellari 2025, Chapter 6: the co-scheduling study on ARIS, as one command.

    uv run python scripts/cosched_study.py                 # 10 experiments x 1000 jobs, all policies
    uv run python scripts/cosched_study.py --experiments 2 --jobs 200 --nodes 84   # a quick look

For each experiment ``k`` (workload seed ``k``): ``--jobs`` jobs drawn uniformly from the ARIS
NAS application seed (``coburst workload elise``, walltime 1.4 x compact time, arrivals
``--arrival``, all at t = 0 by default) on a ``--nodes``-node ARIS platform (2 x 10 cores, half
sockets as Batsim resources), every policy run through ``coburst run`` with the measured ARIS
NAS heatmap as speedup hook.  Prints the per-policy means over the experiments laid out like
Tables 6.1-6.2 (makespan speedup against Conservative of the same experiment), with one more
column: makespan / bound, where the bound is a lower bound on the makespan of any schedule
of the experiment's jobs (the fluid LP of :mod:`coburst.theory.cosched_bound`: how far each
policy is from the best possible schedule, at most), and writes a
Pareto plot of mean slowdown against makespan speedup (``<out>/pareto.png``), and every run's
metrics (``<out>/metrics.csv``).

Runs go in parallel on the local cores (``--workers``); each run's outputs are written
atomically under ``<out>/exp<k>/<policy>/``, so a second invocation skips every finished run
(resume after an interruption).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from coburst import registry  # noqa: E402
from coburst.analysis.cosched import cosched_metrics, makespan_bound_of  # noqa: E402
from coburst.models.heatmap import load_heatmap  # noqa: E402
from coburst.policies.cosched import LABELS  # noqa: E402

#: Kellari's schedulers (Tables 6.1-6.2), the heatmap-greedy pairing and Kuchumov & Korkhov's FCS
POLICIES = ["SJF", "SJF-Co", "SJF-Filler", "Filler", "Pop-Filler", "Popularity", "EASY", "EASY-Co",
            "Conservative", "FCFS", "LJF-Co", "LAF-Co", "LJF", "Pair-Greedy", "FCS"]
HEATMAP = REPO / "models" / "heatmaps" / "aris-nas.heatmap.csv"
COLUMNS_1 = [("mean slowdown", "mean_slowdown", ".1f"), ("mean slowdown pp", "mean_slowdown_per_processor", ".3f"),
             ("slowdown (%)", "slowdown_count_percent", ".2f"), ("utilization", "utilisation", ".3f")]
COLUMNS_2 = [("mean job speedup", "mean_job_speedup", ".3f"),
             ("weighted mean job speedup", "weighted_mean_job_speedup", ".3f"),
             ("makespan speedup", "makespan_speedup", ".3f"), ("makespan / bound", "makespan_over_bound", ".3f")]


def coburst(*args: str) -> list[str]:
    return [sys.executable, "-m", "coburst", *args]


def prepare(out: Path, nodes: int, jobs: int, experiments: int, arrival: str) -> tuple[Path, list[Path]]:
    out.mkdir(parents=True, exist_ok=True)
    platform = out / f"aris{nodes}.xml"
    if not platform.exists():
        subprocess.run(coburst("platform", "cosched", "--preset", "aris", "--nodes", str(nodes), "-o", str(platform)),
                       check=True)
    workloads = []
    for k in range(experiments):
        wl = out / f"workload{k}.json"
        if not wl.exists():
            subprocess.run(coburst("workload", "elise", "-o", str(wl), "--seed-apps", "aris-nas", "-n", str(jobs),
                                   "-p", str(platform), "--arrival", arrival, "--seed", str(k), "-q"), check=True)
        workloads.append(wl)
    return platform, workloads


def policy_name(label: str) -> str | None:
    """The name ``coburst run`` takes for a ``--policies`` entry: a Kellari label (``EASY-Co``)
    gives its family's name; any other co-scheduling policy name of the registry
    (``[cosched:]NAME``, plugins included) is taken as it is.  None: not a co-scheduling policy."""
    if label in LABELS:
        return LABELS[label]
    found = registry.lookup(label, platform_family="cosched")
    return found.entry.qualified if found is not None and found.entry.family == "cosched" else None


def run_one(platform: Path, workload: Path, label: str, prefix: Path) -> tuple[str, float, str]:
    """One ``coburst run``; returns (label, wall seconds, error or "")."""
    jobs_csv = Path(f"{prefix}_jobs.csv")
    if jobs_csv.exists():
        return label, 0.0, ""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.run(coburst("run", policy_name(label), "-p", str(platform), "-w", str(workload),
                                  "--heatmap", str(HEATMAP), "-e", str(prefix), "-q"),
                          capture_output=True, text=True)
    err = "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
    return label, time.perf_counter() - t0, err


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both lower slowdown and higher speedup."""
    front = []
    for i, (s, m) in enumerate(points):
        if not any((s2 <= s and m2 >= m) and (s2, m2) != (s, m) for s2, m2 in points):
            front.append(i)
    return front


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=420)
    ap.add_argument("--arrival", default="zero", help="zero (default), constant, uniform, poisson, weibull")
    ap.add_argument("--policies", default=",".join(POLICIES),
                    help="comma-separated Kellari labels, or any co-scheduling policy name (plugins too: "
                         "coburst policies --family cosched)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="out/cosched_study")
    args = ap.parse_args(argv)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if policy_name(p) is None]
    if unknown:
        ap.error(f"unknown policies {unknown} (known: {', '.join(LABELS)}, or any name of "
                 "`coburst policies --family cosched`)")
    if "Conservative" not in policies:
        policies.append("Conservative")  # the makespan-speedup baseline
    out = Path(args.out)
    platform, workloads = prepare(out, args.nodes, args.jobs, args.experiments, args.arrival)
    tasks = [(platform, wl, label, out / f"exp{k}" / label / "out") for k, wl in enumerate(workloads)
             for label in policies]
    failed = 0
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [pool.submit(run_one, *t) for t in tasks]
        for i, fut in enumerate(as_completed(futures), 1):
            label, wall, err = fut.result()
            if err:
                failed += 1
                print(f"[{i}/{len(tasks)}] {label}: FAILED: {err}", file=sys.stderr)
            elif wall:
                print(f"[{i}/{len(tasks)}] {label}: {wall:.1f} s", file=sys.stderr)
    print(f"{len(tasks)} runs ({failed} failed) in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    cores = args.nodes * 20
    rows = []
    heatmap, cache, bounds, compact = load_heatmap(HEATMAP), {}, {}, {}
    for k in range(args.experiments):
        base_csv = out / f"exp{k}" / "Conservative" / "out_jobs.csv"
        if not base_csv.exists():
            continue
        base = cosched_metrics(base_csv, total_cores=cores, cores_per_unit=5)["makespan"]
        bounds[k] = makespan_bound_of(workloads[k], platform, heatmap, cache=cache)
        compact[k] = makespan_bound_of(workloads[k], platform, heatmap, cache=cache, spread=False)
        for label in policies:
            csv_path = out / f"exp{k}" / label / "out_jobs.csv"
            if csv_path.exists():
                m = cosched_metrics(csv_path, total_cores=cores, cores_per_unit=5, baseline_makespan=base)
                m["bound"] = bounds[k].makespan
                m["makespan_over_bound"] = m["makespan"] / bounds[k].makespan
                rows.append({"experiment": k, "scheduler": label, **m})
    if not rows:
        print("no finished run", file=sys.stderr)
        return 1
    keys = list(rows[0])
    with open(out / "metrics.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    means = {}
    for label in policies:
        mine = [r for r in rows if r["scheduler"] == label]
        if mine:
            means[label] = {k: math.fsum(r[k] for r in mine) / len(mine) for k in keys[2:]}
    order = sorted(means, key=lambda p: means[p]["mean_slowdown"])
    n_exp = len({r["experiment"] for r in rows})
    for title, cols in ((f"Table 6.1 layout: means over {n_exp} experiments ({args.jobs} jobs, {args.nodes}-node "
                         f"ARIS) - part 1", COLUMNS_1), ("Table 6.2 layout - part 2", COLUMNS_2)):
        print(f"\n{title}\n")
        print("scheduler\t" + "\t".join(c[0] for c in cols))
        for p in order:
            print(p + "\t" + "\t".join(format(means[p][key], fmt) for _, key, fmt in cols))
    print("\nmakespan lower bound (coburst.theory.cosched_bound, all jobs at their submission): "
          + "; ".join(f"exp{k} {b.makespan:,.1f} s (longest job {b.longest:,.1f} s, area {b.area:,.1f} s, "
                      f"compact only {compact[k].makespan:,.1f} s, LP {b.seconds:.2f} s)" for k, b in bounds.items()))
    plot_pareto(means, out / "pareto.png")
    print(f"\nper-run metrics: {out / 'metrics.csv'}; Pareto plot: {out / 'pareto.png'}")
    return 1 if failed else 0


def plot_pareto(means: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(means)
    pts = [(means[p]["mean_slowdown"], means[p]["makespan_speedup"]) for p in labels]
    front = set(pareto_front(pts))
    fig, ax = plt.subplots(figsize=(7, 5))
    for i, (p, (s, m)) in enumerate(zip(labels, pts)):
        co = p.endswith("-Co") or "Filler" in p or p in ("Popularity", "Pair-Greedy")
        ax.scatter(s, m, marker="o" if co else "s", s=60, color="tab:red" if i in front else "tab:blue")
        ax.annotate(p, (s, m), textcoords="offset points", xytext=(5, 4), fontsize=8)
    fp = sorted(pts[i] for i in front)
    ax.plot([x for x, _ in fp], [y for _, y in fp], "--", color="tab:red", lw=1, label="Pareto front")
    ax.set_xlabel("mean slowdown (lower is better)")
    ax.set_ylabel("makespan speedup vs Conservative (higher is better)")
    ax.set_title("Co-scheduling on ARIS: slowdown vs makespan speedup")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, path)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
