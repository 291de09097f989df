#!/usr/bin/env python3
"""Burst-buffer reservations in backfilling: fcfs, no-future-1, backfill-1 and filler on
KTH-SP2 (Kopański 2020, §4.2), Alloc-Only and IO-Aware job models, platforms/dragonfly96.xml.

    .venv/bin/python scripts/reservation_study.py [--jobs 1000] [--out out/reservation_study] [--seed 0]
    .venv/bin/python scripts/reservation_study.py --part 3          # the thesis' 3rd of 16 periods
    .venv/bin/python scripts/reservation_study.py --swf PATH        # the KTH-SP2 log from elsewhere

A campaign (``scripts/reservation_study.toml``, ``coburst campaign``) plus the study's tables:

1. converts the first ``--jobs`` jobs of the Parallel Workloads Archive's KTH-SP2 log (``--swf``,
   default ``KTH-SP2-1996-2.1-cln.swf`` in ``$COBURST_SWF_DIR``, else in ``../shared/data/swf``
   beside the checkout: the campaign's ``{swf_dir}``), or one of its 16 time periods
   (``--part``), with ``coburst workload swf`` under both job models (the campaign's
   ``[prepare]`` step);
2. runs every policy through ``coburst run`` (the campaign: resumable, ``--parallel`` runs at
   a time); IO-Aware jobs run their phases as dynamic sub-jobs (``--enable-dynamic-jobs``,
   adapter coburst/adapter/io_aware.py);
3. prints mean and 50/90/99 %/max of waiting time and bounded slowdown (tau = 600 s) per
   policy, waiting time by job class (narrow / medium / wide, BB-hungry), and whether
   no-future-1 shows the starvation signature of §4.2 (wide and BB-hungry jobs waiting far
   longer than with backfill-1).  The analysis is coburst/analysis/study.py.

With the default options this is exactly ``coburst campaign scripts/reservation_study.toml``
(output folder out/reservation_study); other ``--jobs``/``--part``/``--seed``/``--models``/``--swf``
make a variant of that campaign (OUT/spec.toml, default OUT out/reservation_study_<variant>).

Outputs: the campaign folder (OUT/workloads/*.json, OUT/runs/<run-id>/out_jobs.csv ...),
OUT/summary.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402

from coburst.analysis.metrics import read_jobs  # noqa: E402
from coburst.analysis.study import class_table, job_classes, quantile_table, starvation_signature, summary  # noqa: E402
from coburst.campaign.executors import run_state  # noqa: E402
from coburst.campaign.runner import PREFIX_NAME, read_status, runs_dir  # noqa: E402
from coburst.campaign.spec import dumps_toml, load_campaign  # noqa: E402
from coburst.fileio import atomic_write  # noqa: E402

TOML = ROOT / "scripts" / "reservation_study.toml"
#: the log, as the campaign names it
LOG = "{swf_dir}/KTH-SP2-1996-2.1-cln.swf"
PLATFORM = ROOT / "platforms" / "dragonfly96.xml"
POLICIES = ("fcfs", "no-future-1", "backfill-1", "filler")
MODELS = ("alloc-only", "io-aware")
COBURST = [sys.executable, "-m", "coburst"]
DEFAULTS = {"jobs": 1000, "part": None, "seed": 0, "models": list(MODELS), "swf": None}


def _clean(obj):
    """NaN -> None, recursively (strict JSON)."""
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def campaign_spec(args, models: list[str]) -> tuple[Path, Path | None]:
    """(campaign file, --out or None) for these options: the bundled file for the defaults,
    else a variant of it written to OUT/spec.toml."""
    if {"jobs": args.jobs, "part": args.part, "seed": args.seed, "models": models, "swf": args.swf} == DEFAULTS:
        return TOML, Path(args.out) if args.out else None
    variant = (f"part{args.part:02d}" if args.part else f"first{args.jobs}") + f"_seed{args.seed}" + \
        ("" if models == list(MODELS) else "_" + "_".join(models)) + \
        ("" if args.swf is None else "_" + Path(args.swf).stem)
    out = Path(args.out) if args.out else ROOT / "out" / f"reservation_study_{variant}"
    data = tomllib.loads(TOML.read_text(encoding="utf-8"))
    data["campaign"].pop("out", None)
    data["campaign"]["description"] = "Kopański 2020 §4.2: BB reservations in backfilling, " + \
        (f"KTH part {args.part}/16" if args.part else f"first {args.jobs} KTH jobs")
    data["campaign"]["seeds"] = [args.seed]
    data["platforms"] = [str(PLATFORM)]
    data["workloads"] = [w for w in data["workloads"] if w["labels"]["model"] in models]
    run, creates = [], []
    for w in data["workloads"]:
        name = f"{{out}}/workloads/kth_{w['labels']['model'].replace('-', '_')}.seed{{seed}}.json"
        log = LOG if args.swf is None else str(Path(args.swf).resolve()).replace("{", "{{").replace("}", "}}")
        cmd = ["{python}", "-m", "coburst", "workload", "swf", log, "--model", w["labels"]["model"], "--seed",
               "{seed}", "-p", str(PLATFORM), "-q", "-o", name]
        if args.part:
            cmd[-2:-2] = ["--split", "16"]
            name = name.replace(".json", f".part{args.part:02d}.json")
        else:
            cmd[-2:-2] = ["--max-jobs", str(args.jobs)]
        run.append(cmd)
        creates.append(name)
        w["path"] = name
    data["prepare"] = {"run": run, "creates": creates}
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "spec.toml"
    with atomic_write(spec) as fh:
        fh.write(dumps_toml(data))
    return spec, out


def bb_policy(name: str) -> bool:
    """Whether a ``--more-policies`` entry is a burst-buffer policy of coburst's registry
    (``[bb:]NAME``, any spelling: ``backfill-sjf-1``, a plugin's name)."""
    from coburst import registry

    found = registry.lookup(name)
    return found is not None and found.entry.family == "bb"


def with_policies(spec: Path, out: Path, names: list[str]) -> Path:
    """The campaign ``spec`` with one more scheduler per name (``--more-policies``), written
    to ``out``/spec.toml (the bundled file's relative paths made absolute)."""
    data = tomllib.loads(spec.read_text(encoding="utf-8"))
    if spec == TOML:
        data["platforms"] = [str(PLATFORM)]
        data["prepare"]["run"] = [[a.replace("{spec_dir}/..", str(ROOT)) for a in cmd] for cmd in data["prepare"]["run"]]
    data["campaign"].pop("out", None)
    data["schedulers"] += [{"scheduler": p} for p in names]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "spec.toml"
    with atomic_write(path) as fh:
        fh.write(dumps_toml(data))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000,
                        help="first N jobs of the log (default 1000: about 4 minutes on 2 cores)")
    parser.add_argument("--part", type=int, choices=range(1, 17), metavar="K",
                        help="use the K-th of the 16 equal time periods of the log instead of --jobs")
    parser.add_argument("--out", default=None,
                        help="campaign output folder (default: out/reservation_study, or "
                             "out/reservation_study_<variant> for non-default --jobs/--part/--seed/--models)")
    parser.add_argument("--seed", type=int, default=0, help="workload seed (burst-buffer requests), default 0")
    parser.add_argument("--parallel", type=int, default=2, help="simulations run at once (default 2)")
    parser.add_argument("--models", default=",".join(MODELS), help="job models, comma-separated")
    parser.add_argument("--more-policies", default="", metavar="NAMES",
                        help="more burst-buffer policies run and tabulated beside the four, comma-separated (any "
                             "name of `coburst policies --family bb`, plugins too); default OUT "
                             "out/reservation_study[_<variant>]_with_<names>")
    parser.add_argument("--swf", metavar="PATH", help="the KTH-SP2 log (default: KTH-SP2-1996-2.1-cln.swf in "
                        "$COBURST_SWF_DIR, else in ../shared/data/swf beside the checkout)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
    if args.swf is not None and not Path(args.swf).is_file():
        parser.error(f"--swf: {args.swf}: no such file")
    models = [m for m in args.models.split(",") if m]
    if any(m not in MODELS for m in models):
        parser.error(f"--models: choose among {', '.join(MODELS)}")
    more = [p for p in args.more_policies.split(",") if p]
    bad = [p for p in more if p in POLICIES or not bb_policy(p)]
    if bad:
        parser.error(f"--more-policies: {', '.join(bad)}: not a burst-buffer policy beyond {', '.join(POLICIES)} "
                     "(`coburst policies --family bb` lists them)")
    policies = [*POLICIES, *more]
    console = Console(width=None if sys.stdout.isatty() else 132)  # tables not cut when redirected

    io_adapter = (ROOT / "coburst" / "adapter" / "io_aware.py").is_file()
    spec, out_arg = campaign_spec(args, models)
    if more:
        base = out_arg or ROOT / "out" / "reservation_study"
        out_arg = Path(args.out) if args.out else base.with_name(f"{base.name}_with_{'_'.join(more)}")
        spec = with_policies(spec, out_arg, more)
    cmd = [*COBURST, "campaign", str(spec), "--jobs", str(max(1, args.parallel))]
    if out_arg is not None:
        cmd += ["--out", str(out_arg)]
    code = subprocess.call(cmd)
    if code not in (0, 1):  # 1: a run failed (listed above); the tables show the others
        return code
    camp = load_campaign(spec, out=out_arg)
    out = camp.out
    state = run_state(camp)
    runs_of = {(r.params["model"], r.params["scheduler"]): r for r in state.done}
    runs_of.update({(r.params["model"], r.params["scheduler"]): r for r, _ in state.failed})
    workloads = {r.params["model"]: Path(r.params["workload"]) for r in camp.runs}
    what = f"part {args.part}/16 of the log" if args.part else f"first {args.jobs} jobs"
    console.print(f"[bold]KTH-SP2, {what}, seed {args.seed}, {PLATFORM.name}[/bold]")
    if "io-aware" in models:
        console.print("IO-Aware jobs run as dynamic sub-jobs (coburst/adapter/io_aware.py, --enable-dynamic-jobs)"
                      if io_adapter else
                      "[yellow]coburst/adapter/io_aware.py not found: IO-Aware jobs run their static profiles "
                      "(one parallel_homogeneous phase each)[/yellow]")
    results = []
    for model in models:
        for policy in policies:
            run = runs_of.get((model, policy))
            status = read_status(runs_dir(out) / run.run_id) if run else None
            if status is None:
                results.append((model, policy, 0.0, "not run"))
                continue
            error = "" if status.get("state") == "done" else (status.get("error") or "failed")[-2000:]
            results.append((model, policy, float(status.get("wall_s") or 0.0), error))
    failed = [r for r in results if r[3]]
    for model, policy, wall, error in results:
        console.print(f"  {model:10s} {policy:12s} {wall:7.1f} s" + (f"  [red]FAILED {error}[/red]" if error else ""))

    report: dict = {"jobs": None if args.part else args.jobs, "part": args.part, "seed": args.seed,
                    "io_aware_dynamic": io_adapter, "models": {}}
    for model in models:
        runs = {}
        for policy in policies:
            if any(r[0] == model and r[1] == policy for r in failed):
                continue
            df = read_jobs(runs_dir(out) / runs_of[(model, policy)].run_id / f"{PREFIX_NAME}_jobs.csv")
            runs[policy] = df[df["workload_name"] == "w0"].copy()  # not the IO-Aware sub-jobs
        if not runs:
            continue
        doc = json.loads(workloads[model].read_text())
        meta = doc.get("coburst", {})
        total_bb = int(meta.get("bb_capacity", 0)) * int(meta.get("bb_nodes", 0))
        classes = job_classes(doc["jobs"], int(doc["nb_res"]), total_bb)
        title = f"{model}, {len(doc['jobs'])} jobs"
        console.print()
        console.print(quantile_table(runs, "waiting", title=title, baseline="fcfs"))
        console.print(quantile_table(runs, "bounded_slowdown", title=title, baseline="fcfs"))
        console.print(class_table(runs, classes, title=f"{title}: waiting time (s) by job class "
                                  "(narrow <= 8 nodes < medium <= 32 < wide; BB-hungry: >= 25 % of all BB)",
                                  reference="backfill-1"))
        sig = starvation_signature(runs, classes)
        entry = {"summary": {p: summary(df) for p, df in runs.items()}}
        if sig is not None:
            console.print(("[bold red]" if sig.starved else "[bold]") + sig.verdict())
            if sig.starved and sig.worst:
                console.print("  most delayed by no-future-1 (job, nodes, share of all BB, wait no-future-1 / "
                              "backfill-1):")
                for jid, res, share, ws, wr in sig.worst:
                    console.print(f"    job {jid:>6s}  {res:3d} nodes  {share:6.1%}  {ws:12,.0f} s / {wr:10,.0f} s")
            entry["signature"] = {"starved": sig.starved, "verdict": sig.verdict(), "class_ratio": sig.class_ratio,
                                  "class_vs_fcfs": sig.class_vs_baseline, "mean_vs_fcfs": sig.mean_vs_baseline,
                                  "max_vs_fcfs": sig.max_vs_baseline}
        report["models"][model] = entry
    with atomic_write(out / "summary.json") as f:
        f.write(json.dumps(_clean(report), indent=None, separators=(",", ":")) + "\n")
    console.print(f"\noutputs in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
