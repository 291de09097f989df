"""Start-up cost of a run: whole 1-job runs, coburst in process against the real Batsim 4.2.1 +
pybatsim measured in the same run (the fixed cost of every ``coburst run``).

    .venv/bin/python benchmarks/bench_startup.py [--repeat N] [--no-batsim] [--batsim PATH]
                                                  [--against DIR] [--case NAME ...]

Cases (one delay job; a run is then almost only its fixed cost: imports, option and input
checks, platform loading, the first messages, outputs):

``kth-easyBackfill``   ``platforms/kth_sp2.xml``, pybatsim's bundled ``easyBackfill``
``kth-easy``           the same, coburst's ``easy`` policy by name (``schedulers/coburstBackfill.py``)
``grvingt-coschedEasy`` ELiSE's setting: 800 Grvingt nodes (``coburst platform cosched --preset
                       grvingt --nodes 800``, 3200 hosts), ``schedulers/coschedEasy.py`` with
                       ``--heatmap grvingt-nas`` (Batsim runs the same entry file, without the hook)

``coburst`` runs with a warm cache (the platform scan, pre-check and description of
``coburst.simulator.platform_cache`` written by the warm-up run, in a cache folder of the bench);
``coburst-cold`` runs the same tree with an empty cache folder each time (the first run on a
platform: SimGrid loads it, the pre-check child writes the cache).

``--against DIR``: also run ``coburst run`` from another source tree (``DIR/coburst``,
``DIR/schedulers``, ``DIR/models``, put first on ``PYTHONPATH``; e.g. the tree before a change)
and print the ratio against it.  Whole-run wall time and CPU time (user + system, every
process of the run), medians of ``--repeat`` runs (default 5), engines interleaved, after one
warm-up run of each coburst tree (``PYTHONDONTWRITEBYTECODE`` is dropped for coburst's runs: a
start-up measure with the compiled modules cached, as an installed package has them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_engines import COBURST, ROOT, Case, RunFailed, find_batsim, run_engine  # noqa: E402

PYTHON = COBURST.parent / "python"


def one_job(path: Path, nb_res: int, res: int) -> Path:
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": [{"id": 0, "subtime": 0, "walltime": 100, "res": res,
                                                           "profile": "d"}],
                                "profiles": {"d": {"type": "delay", "delay": 10}}}) + "\n")
    return path


def coburst_run(tree: Path | None, case: Case, extra: list[str], prefix: Path, cache: Path) -> dict:
    """One ``coburst run --transport inprocess`` (``tree``: another source tree first on the path;
    ``cache``: its ``COBURST_CACHE`` folder)."""
    env = dict(os.environ)
    env["COBURST_CACHE"] = str(cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a start-up measure: compiled modules cached, as installed
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([str(PYTHON), "-m", "coburst", "run", case.scheduler, "--transport", "inprocess", "-q",
                           "-p", str(case.platform), "-w", str(case.workload), "-e", str(prefix), *extra],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RunFailed(f"{case.name}: coburst run exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-batsim", action="store_true")
    ap.add_argument("--batsim", default=None)
    ap.add_argument("--against", type=Path, default=None, help="another coburst source tree (before a change)")
    ap.add_argument("--case", action="append", default=None, help="run only these cases")
    args = ap.parse_args()
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    if args.against is not None and not (args.against / "coburst" / "__init__.py").is_file():
        sys.exit(f"bench_startup: error: --against {args.against}: no coburst/ package there")
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        tmp = Path(tmp)
        grvingt = ROOT / "benchmarks" / ".cache" / "grvingt800.xml"
        if not grvingt.is_file():
            grvingt = tmp / "grvingt800.xml"
            subprocess.run([str(COBURST), "platform", "cosched", "--preset", "grvingt", "--nodes", "800",
                            "--no-record-command", "-o", str(grvingt)], check=True, capture_output=True)
        kth = ROOT / "platforms" / "kth_sp2.xml"
        cases = {
            "kth-easyBackfill": (Case("kth-easyBackfill", "", kth, one_job(tmp / "kth.json", 100, 4), "easyBackfill"),
                                 [], "easyBackfill"),
            "kth-easy": (Case("kth-easy", "", kth, tmp / "kth.json", "easy"), [], "easyBackfill"),
            "grvingt-coschedEasy": (Case("grvingt-coschedEasy", "", grvingt, one_job(tmp / "grvingt.json", 16, 8),
                                         str(ROOT / "schedulers" / "coschedEasy.py")),
                                    ["--heatmap", "grvingt-nas"], str(ROOT / "schedulers" / "coschedEasy.py")),
        }
        chosen = [c for c in cases if not args.case or c in args.case]
        engines = ["coburst", "coburst-cold"] + (["against"] if args.against else []) + (["batsim"] if batsim else [])
        warm_cache = tmp / "cache"
        results: dict[tuple[str, str], list[dict]] = {(c, e): [] for c in chosen for e in engines}
        for name in chosen:  # warm-up, not counted: compiled modules written, files in the page cache
            case, extra, _ = cases[name]
            for engine in engines:
                if engine not in ("batsim", "coburst-cold"):
                    coburst_run(args.against if engine == "against" else None, case, extra, tmp / f"warm-{name}-{engine}",
                                warm_cache)
        for r in range(args.repeat):
            for name in chosen:
                case, extra, batsim_sched = cases[name]
                for engine in engines:
                    prefix = tmp / f"{name}-{engine}-{r}" / "out"
                    prefix.parent.mkdir()
                    try:
                        if engine == "batsim":
                            bcase = Case(case.name, "", case.platform, case.workload, batsim_sched)
                            m = run_engine("batsim", bcase, prefix, batsim)
                            m = {"wall": m["wall"], "cpu": m["cpu_sim"] + m["cpu_sched"]}
                        else:
                            cache = tmp / f"cold-{name}-{r}" if engine == "coburst-cold" else warm_cache
                            m = coburst_run(args.against if engine == "against" else None, case, extra, prefix, cache)
                    except RunFailed as err:
                        print(f"{name} {engine}: {err}", file=sys.stderr)
                        continue
                    results[(name, engine)].append(m)
                print(f"#{r + 1} {name}: " + ", ".join(
                    f"{e} {results[(name, e)][-1]['wall']:.2f} s" for e in engines if results[(name, e)]),
                    file=sys.stderr)
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("wall", "cpu")} if v else None
           for k, v in results.items()}
    head = "| case | engine | wall (s) | CPU (s) |"
    rule = "|---|---|---:|---:|"
    if args.against:
        head += " wall / before | CPU / before |"
        rule += "---:|---:|"
    if batsim:
        head += " wall / Batsim | CPU / Batsim |"
        rule += "---:|---:|"
    print("\n" + head + "\n" + rule)
    labels = {"coburst": "coburst in-process (warm cache)", "coburst-cold": "coburst in-process, cold cache",
              "against": f"coburst in-process, {args.against}",
              "batsim": "Batsim 4.2.1 + pybatsim"}
    for name in chosen:
        for engine in engines:
            m = med[(name, engine)]
            if m is None:
                continue
            row = f"| {name} | {labels[engine]} | {m['wall']:.3f} | {m['cpu']:.3f} |"
            for ref in (["against"] if args.against else []) + (["batsim"] if batsim else []):
                base = med[(name, ref)]
                row += (f" {m['wall'] / base['wall']:.2f}x | {m['cpu'] / base['cpu']:.2f}x |" if base else " - | - |")
            print(row)
    print(f"\nmedians of {args.repeat} runs; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
