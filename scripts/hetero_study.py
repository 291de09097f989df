#!/usr/bin/env python3
"""Heterogeneous-cluster mapping heuristics, Sánchez Sousa 2023 §5.3, as a campaign.

    .venv/bin/python scripts/hetero_study.py                   # the whole study (160 runs)
    .venv/bin/python scripts/hetero_study.py --report-only     # tables and figures again
    .venv/bin/python scripts/hetero_study.py --seeds 0 --synthetic-jobs 64 --kth-jobs 60 \\
        --policies min_min,max_min,duplex --out /tmp/small     # a reduced variant

1. ``scripts/hetero_study.toml`` (``coburst campaign``): the five §5.1.1 workloads (seeds 0-4:
   512 single-task jobs at t = 0, requested time 100-3000 s) on ``platforms/hetero_low16.xml``
   (Table 2) and ``hetero_high16.xml`` (Table 3), five 500-job slices of the KTH-SP2 log with
   submit times rounded to 1e5 s (§5.1.2; the thesis used KIT ForHLR II) on ``hetero_dist0.xml``
   (Table 4) and ``hetero_dist1.xml`` (Table 5) (the log is read from the campaign's
   ``{swf_dir}``: ``$COBURST_SWF_DIR``, else ``../shared/data/swf`` beside the checkout); the
   eight policies of the thesis' figures (IRMaSim's ``shortest_fastest``, ``longest_fastest``,
   ``first_first``, ``full_random``; the thesis' ``min_min``, ``max_min``, ``duplex``, ``astar``
   with 128 vertices); energy on (-E).
2. The §5.2 metrics per run: total time (makespan), mean waiting time, mean slowdown
   (turnaround / execution time) and mean bounded slowdown with IRMaSim's bound of 10 s
   (``Simulator.bounded_slowdown_statistics``: ``max(turnaround / max(execution, 10), 1)``),
   plus the energy Batsim's model gives (``consumed_joules``); mean and standard deviation over
   the five workloads, as the thesis' bars.
3. A table per platform, the measured orderings next to the thesis' claims (duplex and max-min
   best in total time on the heterogeneity platforms; min-min and shortest_fastest best in
   slowdown), ``OUT/summary.json``, and bar charts in the style of Figures 6-21
   (``--figures``, default ``docs/figures``: ``hetero_<platform>.png``, one panel per metric).

With the default options this is exactly ``coburst campaign scripts/hetero_study.toml``
(output out/hetero_study); other ``--seeds``/``--synthetic-jobs``/``--kth-jobs``/``--policies``
write a variant of it to OUT/spec.toml (default OUT out/hetero_study_<variant>).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOML = ROOT / "scripts" / "hetero_study.toml"
COBURST = [sys.executable, "-m", "coburst"]
TAU = 10.0  # IRMaSim's bounded-slowdown bound
POLICIES = ("shortest_fastest", "longest_fastest", "first_first", "full_random", "min_min", "max_min", "duplex",
            "astar")
PLATFORMS = ("low16", "high16", "dist0", "dist1")
METRICS = (("makespan", "total time", "s"), ("mean_waiting", "mean waiting time", "s"),
           ("mean_slowdown", "mean slowdown", ""), ("mean_bounded_slowdown", "mean bounded slowdown (10 s)", ""),
           ("energy", "energy", "MJ"))
#: the thesis' statements checked against the measured means (§5.3.1-5.3.3, §5.4)
CLAIMS = (
    ("low16", "makespan", {"duplex", "max_min"}, "duplex and max-min best in total time (Fig. 6)"),
    ("high16", "makespan", {"duplex", "max_min"}, "duplex and max-min best in total time (Fig. 10)"),
    ("low16", "mean_slowdown", {"min_min", "shortest_fastest"}, "min-min and shortest_fastest best in slowdown (Fig. 8)"),
    ("high16", "mean_slowdown", {"min_min", "shortest_fastest"},
     "shortest_fastest and min-min best in slowdown (Fig. 12)"),
    ("low16", "mean_bounded_slowdown", {"min_min", "shortest_fastest"}, "the same in bounded slowdown (Fig. 9)"),
    ("high16", "mean_bounded_slowdown", {"min_min", "shortest_fastest"}, "the same in bounded slowdown (Fig. 13)"),
    ("low16", "mean_waiting", {"min_min", "shortest_fastest"}, "shortest_fastest and min-min wait least (Fig. 7)"),
    ("dist0", "mean_waiting", {"shortest_fastest"}, "shortest_fastest waits least, realistic (§5.4)"),
    ("dist1", "mean_waiting", {"shortest_fastest"}, "shortest_fastest waits least, realistic (§5.4)"),
    ("dist0", "mean_slowdown", {"shortest_fastest"}, "shortest_fastest best in slowdown, realistic (§5.3.6, §5.4)"),
    ("dist1", "mean_slowdown", {"shortest_fastest"}, "shortest_fastest best in slowdown, realistic (§5.3.6, §5.4)"),
)
#: the thesis' total times (§5.3.1, §5.3.2, Figs. 14 and 18), in s: (lowest, highest) over the policies
THESIS_TOTAL = {"low16": (8500, 10000), "high16": (2100, 3500), "dist0": (120 * 3600, 120 * 3600),
                "dist1": (90 * 3600, 130 * 3600)}


def registry_policy(name: str) -> bool:
    """Whether a ``--policies`` entry beyond the study's eight is a heterogeneous-mapping policy
    of coburst's registry (``[hetero:]NAME``, plugins included): it runs as one more campaign
    scheduler of that name, with its default parameters."""
    from coburst import registry

    found = registry.lookup(name)
    return found is not None and found.entry.family == "hetero"


def _clean(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def campaign_spec(args) -> tuple[Path, Path | None]:
    """(campaign file, --out or None): the bundled file for the defaults, else a variant
    written to OUT/spec.toml."""
    from coburst.campaign.spec import dumps_toml
    from coburst.fileio import atomic_write

    seeds = [int(s) for s in args.seeds.split(",") if s != ""]
    policies = [p for p in args.policies.split(",") if p]
    platforms = [p for p in args.platforms.split(",") if p]
    default = (seeds == list(range(5)) and args.synthetic_jobs == 512 and args.kth_jobs == 500
               and policies == list(POLICIES) and platforms == list(PLATFORMS))
    if default:
        return TOML, Path(args.out) if args.out else None
    variant = f"s{'-'.join(map(str, seeds))}_n{args.synthetic_jobs}_k{args.kth_jobs}_p{len(policies)}" + \
        ("" if platforms == list(PLATFORMS) else "_" + "-".join(platforms))
    out = Path(args.out) if args.out else ROOT / "out" / f"hetero_study_{variant}"
    data = tomllib.loads(TOML.read_text(encoding="utf-8"))
    data["campaign"].pop("out", None)
    data["campaign"]["seeds"] = seeds
    data["campaign"]["description"] += f" (variant {variant})"
    run = data["prepare"]["run"]
    run[0][-2:-2] = ["--jobs", str(args.synthetic_jobs)]
    run[1][-2:-2] = ["--length", str(args.kth_jobs)]
    data["platforms"] = [p for p in data["platforms"] if p["name"] in platforms]
    for p in data["platforms"]:
        p["path"] = str(ROOT / "platforms" / Path(p["path"]).name)
    for w in data["workloads"]:
        w["platforms"] = [p for p in w["platforms"] if p in platforms]
    data["workloads"] = [w for w in data["workloads"] if w["platforms"]]
    if not data["workloads"]:
        raise SystemExit("--platforms: no platform left")
    if not any("synthetic" in w["name"] for w in data["workloads"]):
        data["prepare"]["run"] = data["prepare"]["run"][1:]
        data["prepare"]["creates"] = data["prepare"]["creates"][1:]
    elif not any(w["name"] == "kth" for w in data["workloads"]):
        data["prepare"]["run"] = data["prepare"]["run"][:1]
        data["prepare"]["creates"] = data["prepare"]["creates"][:1]
    for s in data["schedulers"]:
        s["scheduler"] = str(ROOT / "schedulers" / Path(s["scheduler"]).name)
    data["schedulers"] = [s for s in data["schedulers"] if s["name"] in policies]
    data["schedulers"] += [{"name": p, "scheduler": p} for p in policies if p not in POLICIES]
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "spec.toml"
    with atomic_write(spec) as fh:
        fh.write(dumps_toml(data))
    return spec, out


def energy_of(prefix: str) -> float:
    """Batsim's ``consumed_joules`` of a run (NaN without ``-E``)."""
    import csv

    path = Path(f"{prefix}_schedule.csv")
    try:
        with open(path, newline="") as fh:
            row = next(csv.DictReader(fh))
        value = float(row.get("consumed_joules", "nan"))
    except (OSError, StopIteration, ValueError):
        return float("nan")
    return value if value >= 0 else float("nan")


def collect(out: Path):
    """One row per run (platform, policy, seed, metrics) from the campaign folder."""
    from coburst.analysis.tables import load

    runs, _ = load([out], tau=TAU)
    runs = runs.copy()
    runs["energy"] = [energy_of(p) / 1e6 for p in runs["path"]]
    runs["run_wall"] = [_run_wall(p) for p in runs["path"]]
    return runs


def _run_wall(prefix: str) -> float:
    """Wall-clock seconds of one run, as the campaign recorded it (``status.json``)."""
    try:
        return float(json.loads((Path(prefix).parent / "status.json").read_text())["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("nan")


def summarise(runs) -> dict:
    """platform -> policy -> metric -> (mean, std, n) over the workloads (seeds)."""
    out: dict = {}
    for (plat, pol), grp in runs.groupby(["platform_name", "scheduler"]):
        entry = {"runs": int(len(grp)), "rejected": int(grp["rejected"].sum()), "failed": int(grp["failed"].sum()),
                 "run_wall_mean": float(grp["run_wall"].mean())}
        for key, _, _ in METRICS:
            vals = grp[key].astype(float)
            entry[key] = {"mean": float(vals.mean()), "std": float(vals.std(ddof=0)) if len(vals) > 1 else 0.0}
        out.setdefault(plat, {})[pol] = entry
    return out


def ordering(summary: dict, plat: str, metric: str) -> list[str]:
    """Policies from best (lowest mean) to worst."""
    pols = summary.get(plat, {})
    return sorted((p for p in pols if math.isfinite(pols[p][metric]["mean"])), key=lambda p: pols[p][metric]["mean"])


def ordering_text(summary: dict, plat: str, metric: str) -> str:
    """``a < b = c < d``: best first, ``=`` between equal means (relative 1e-9)."""
    order = ordering(summary, plat, metric)
    out = order[:1]
    for prev, cur in zip(order, order[1:]):
        a, b = summary[plat][prev][metric]["mean"], summary[plat][cur][metric]["mean"]
        out += ["=" if abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300) else "<", cur]
    return " ".join(out)


def check_claims(summary: dict) -> list[dict]:
    rows = []
    for plat, metric, expected, text in CLAIMS:
        order = ordering(summary, plat, metric)
        if not order or not expected <= set(order):
            continue
        best = order[:len(expected)]
        rows.append({"platform": plat, "metric": metric, "thesis": text, "expected": sorted(expected),
                     "measured_best": best, "holds": set(best) == expected, "ordering": order})
    return rows


def figures(summary: dict, out_dir: Path, policies: list[str]) -> list[Path]:
    """One figure per platform, one bar panel per metric (mean over the workloads, error bar =
    standard deviation), policies in the thesis' order (IRMaSim's four, then the thesis' four)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {"low16": "low heterogeneity (Table 2)", "high16": "high heterogeneity (Table 3)",
              "dist0": "distributed heterogeneity 0 (Table 4), KTH", "dist1": "distributed heterogeneity 1 (Table 5), KTH"}
    colours = {p: ("#7f7f7f" if i < 4 else "#1f77b4") for i, p in enumerate(POLICIES)}
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for plat in PLATFORMS:
        if plat not in summary:
            continue
        pols = [p for p in policies if p in summary[plat]]
        metrics = [m for m in METRICS if any(math.isfinite(summary[plat][p][m[0]]["mean"]) for p in pols)]
        fig, axes = plt.subplots(1, len(metrics), figsize=(3.1 * len(metrics), 3.4), constrained_layout=True)
        for ax, (key, label, unit) in zip(axes, metrics):
            means = [summary[plat][p][key]["mean"] for p in pols]
            stds = [summary[plat][p][key]["std"] for p in pols]
            if key == "makespan" and plat.startswith("dist"):
                means, stds, unit = [m / 3600 for m in means], [s / 3600 for s in stds], "h"
            ax.barh(range(len(pols)), means, xerr=stds, color=[colours.get(p, "#1f77b4") for p in pols],
                    capsize=2, error_kw={"elinewidth": 0.8})
            ax.set_yticks(range(len(pols)))
            ax.set_yticklabels(pols if ax is axes[0] else [""] * len(pols), fontsize=8)
            ax.invert_yaxis()
            ax.set_title(f"{label}" + (f" ({unit})" if unit else ""), fontsize=9)
            ax.tick_params(axis="x", labelsize=7)
            ax.grid(axis="x", alpha=0.3)
        fig.suptitle(f"{titles[plat]}: mean over the workloads (bars: std)", fontsize=10)
        path = out_dir / f"hetero_{plat}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def print_report(summary: dict, claims: list[dict], policies: list[str], console) -> None:
    from rich.table import Table

    for plat in PLATFORMS:
        if plat not in summary:
            continue
        table = Table(title=f"{plat}: mean (std) over {max(v['runs'] for v in summary[plat].values())} workloads")
        table.add_column("policy")
        for key, label, unit in METRICS:
            table.add_column(label + (f" ({unit})" if unit else ""), justify="right")
        table.add_column("rejected", justify="right")
        table.add_column("run (s)", justify="right")
        for pol in policies:
            if pol not in summary[plat]:
                continue
            e = summary[plat][pol]
            cells = []
            for key, _, _ in METRICS:
                m, s = e[key]["mean"], e[key]["std"]
                cells.append("-" if not math.isfinite(m) else f"{m:.4g} ({s:.2g})")
            table.add_row(pol, *cells, str(e["rejected"]), f"{e['run_wall_mean']:.1f}")
        console.print(table)
        for key, label, _ in METRICS[:4]:
            console.print(f"  {label}, best first: {ordering_text(summary, plat, key)}")
        means = [e["makespan"]["mean"] for e in summary[plat].values()]
        lo, hi = THESIS_TOTAL[plat]
        console.print(f"  total time over the policies {min(means):.0f}-{max(means):.0f} s "
                      f"(thesis: {lo}-{hi} s{' about' if lo == hi else ''})")
    if claims:
        table = Table(title="the thesis' orderings against the measured ones")
        for col in ("platform", "thesis", "measured best", "holds"):
            table.add_column(col)
        for c in claims:
            table.add_row(c["platform"], c["thesis"], ", ".join(c["measured_best"]), "yes" if c["holds"] else "NO")
        console.print(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="campaign output folder (default: out/hetero_study, or a variant's)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="workload seeds, comma-separated (default 0-4)")
    parser.add_argument("--synthetic-jobs", type=int, default=512, help="jobs of a 5.1.1 workload (default 512)")
    parser.add_argument("--kth-jobs", type=int, default=500, help="jobs of a 5.1.2 KTH slice (default 500)")
    parser.add_argument("--policies", default=",".join(POLICIES),
                        help="policies, comma-separated (default: all 8; any other heterogeneous-mapping policy "
                             "name of `coburst policies --family hetero`, plugins too, runs with its defaults)")
    parser.add_argument("--platforms", default=",".join(PLATFORMS),
                        help="platforms, comma-separated (default: low16,high16,dist0,dist1)")
    parser.add_argument("--parallel", type=int, default=2, help="simulations at once (default 2)")
    parser.add_argument("--figures", default=str(ROOT / "docs" / "figures"),
                        help="folder of the bar charts hetero_<platform>.png (default docs/figures; '' for none)")
    parser.add_argument("--report-only", action="store_true", help="do not run; tables and figures from the runs done")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in POLICIES and not registry_policy(p)]
    if unknown:
        parser.error(f"--policies: unknown {', '.join(unknown)} (choose among {', '.join(POLICIES)}, or a name of "
                     "`coburst policies --family hetero`)")
    bad = [p for p in args.platforms.split(",") if p and p not in PLATFORMS]
    if bad:
        parser.error(f"--platforms: unknown {', '.join(bad)} (choose among {', '.join(PLATFORMS)})")
    if args.synthetic_jobs < 1 or args.kth_jobs < 1:
        parser.error("--synthetic-jobs and --kth-jobs must be >= 1")

    from rich.console import Console

    from coburst.campaign.spec import load_campaign
    from coburst.fileio import atomic_write

    console = Console(width=None if sys.stdout.isatty() else 150)
    spec, out_arg = campaign_spec(args)
    wall = None
    if not args.report_only:
        cmd = [*COBURST, "campaign", str(spec), "--jobs", str(max(1, args.parallel)), "-q"]
        if out_arg is not None:
            cmd += ["--out", str(out_arg)]
        t0 = time.monotonic()
        code = subprocess.call(cmd)
        wall = time.monotonic() - t0
        if code not in (0, 1):  # 1: some run failed (listed above); the tables show the others
            return code
    camp = load_campaign(spec, out=out_arg)
    runs = collect(camp.out)
    if runs.empty:
        console.print(f"no finished run in {camp.out}")
        return 1
    summary = summarise(runs)
    claims = check_claims(summary)
    print_report(summary, claims, policies, console)
    written = figures(summary, Path(args.figures), policies) if args.figures else []
    for path in written:
        console.print(f"wrote {path}")
    if wall is None:  # --report-only: keep the campaign time measured when it ran
        try:
            wall = json.loads((camp.out / "summary.json").read_text()).get("wall_seconds")
        except (OSError, ValueError):
            wall = None
    doc = {"campaign": str(spec), "out": str(camp.out), "tau": TAU, "wall_seconds": wall, "summary": summary,
           "claims": claims,
           "orderings": {plat: {key: ordering_text(summary, plat, key) for key, _, _ in METRICS} for plat in summary}}
    with atomic_write(camp.out / "summary.json") as fh:
        fh.write(json.dumps(_clean(doc), indent=1) + "\n")
    total_run = float(runs["run_wall"].sum())
    doc["runs_wall_sum"] = total_run
    with atomic_write(camp.out / "summary.json") as fh:
        fh.write(json.dumps(_clean(doc), indent=1) + "\n")
    console.print(f"{len(runs)} runs, {total_run:.0f} s of run wall time in all")
    if wall is not None:
        console.print(f"campaign wall time {wall:.0f} s" + (" (when it ran)" if args.report_only else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
