"""Co-scheduling at ELiSE's published setting: EASY and EASY-Co, 1000 and 10,000 jobs.

    .venv/bin/python benchmarks/bench_elise.py [--repeat N] [--sizes 1000,10000] [--no-batsim]

ELiSE's setting (ELiSE paper, §4; issue 8): all jobs at t = 0, drawn uniformly from the
Grid5000 Grvingt NAS seed (13 NPB jobs), on 800 nodes x 2 sockets x 16 cores = 25,600 cores
(``coburst platform cosched --preset grvingt --nodes 800``: 3200 half-socket resources).
ELiSE, run on this kind of 2-core machine, takes 0.9 s (EASY) and 11.6 s (EASY co-scheduler)
for 1000 jobs and 77 s and 181 s for 10,000 jobs (figures of the issue, not re-measured here:
ELiSE is not installed).

Engines measured in the same run:

``coburst``  ``coburst run schedulers/coschedEasy[Co].py --heatmap grvingt-nas`` (in-process,
             the speedup hook on): the run ELiSE makes;
``batsim``   the real Batsim 4.2.1 + the same entry file as a ``pybatsim`` process (no speedup
             hook: Batsim has none; same scheduler, its own timeline) - the same-run baseline.

Figures: whole-run wall time (process start to exit, inputs already generated), medians over
``--repeat`` runs (default 3), engines interleaved.  Inputs are cached in
``benchmarks/.cache/``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_engines import COBURST, Case, RunFailed, _ensure_cache, _stale, find_batsim, run_engine  # noqa: E402

CACHE = HERE / ".cache"
ROOT = HERE.parent
HEATMAP = ROOT / "models" / "heatmaps" / "grvingt-nas.heatmap.csv"
ELISE = {("easy", 1000): 0.9, ("easy-co", 1000): 11.6, ("easy", 10000): 77.0, ("easy-co", 10000): 181.0}
ENTRY = {"easy": ROOT / "schedulers" / "coschedEasy.py", "easy-co": ROOT / "schedulers" / "coschedEasyCo.py"}


def platform() -> Path:
    _ensure_cache()
    p = CACHE / "grvingt800.xml"
    if _stale(p, [ROOT / "coburst" / "platforms" / "cosched.py"]):
        subprocess.run([str(COBURST), "platform", "cosched", "--preset", "grvingt", "--nodes", "800", "-o", str(p)],
                       check=True)
    return p


def workload(n: int, plat: Path) -> Path:
    p = CACHE / f"elise_grvingt_{n}.json"
    if _stale(p, [ROOT / "coburst" / "workloads" / "elise.py", plat]):
        subprocess.run([str(COBURST), "workload", "elise", "-o", str(p), "--seed-apps", "grvingt-nas", "-n", str(n),
                        "-p", str(plat), "--pick", "random", "--arrival", "zero", "--seed", "0", "-q"], check=True)
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--no-batsim", action="store_true")
    ap.add_argument("--batsim", default=None)
    args = ap.parse_args()
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    plat = platform()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-elise-") as tmp:
        tmp = Path(tmp)
        for n in sizes:
            wl = workload(n, plat)
            for policy in ("easy", "easy-co"):
                case = Case(f"{policy}-{n}", "", plat, wl, str(ENTRY[policy]), n)
                walls: dict[str, list[float]] = {"coburst": [], "batsim": []}
                for r in range(args.repeat):
                    for kind in "cb":
                        (tmp / f"{case.name}-{kind}{r}").mkdir()
                    res = run_engine("coburst-inprocess", case, tmp / f"{case.name}-c{r}" / "out", None,
                                     ["--heatmap", str(HEATMAP)])
                    walls["coburst"].append(res["wall"])
                    if batsim:
                        try:
                            res = run_engine("batsim", case, tmp / f"{case.name}-b{r}" / "out", batsim)
                            walls["batsim"].append(res["wall"])
                        except RunFailed as err:
                            print(f"batsim run failed: {err}", file=sys.stderr)
                    print(f"{case.name} #{r + 1}: coburst {walls['coburst'][-1]:.2f} s"
                          + (f", batsim {walls['batsim'][-1]:.2f} s" if walls["batsim"] else ""), file=sys.stderr)
                c = statistics.median(walls["coburst"])
                b = statistics.median(walls["batsim"]) if walls["batsim"] else None
                rows.append((policy, n, c, ELISE[(policy, n)], b))
    print("\n| scheduler | jobs | coburst wall (s) | ELiSE (s, published) | ELiSE / coburst "
          "| Batsim 4.2.1 + pybatsim (s) | coburst / Batsim |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for policy, n, c, e, b in rows:
        bs = f"{b:.2f}" if b is not None else "-"
        ratio = f"{c / b:.2f}x" if b else "-"
        print(f"| {'EASY' if policy == 'easy' else 'EASY-Co'} | {n:,} | {c:.2f} | {e:g} | **{e / c:.2f}x** "
              f"| {bs} | {ratio} |")
    print(f"\nmedians of {args.repeat} runs; 800 nodes x 2 x 16 cores, Grvingt NAS seed, all jobs at t = 0")


if __name__ == "__main__":
    main()
