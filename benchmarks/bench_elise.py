"""Co-scheduling at ELiSE's published setting: FIFO, EASY, EASY-Co and Filler, 1000 and 10,000 jobs.

    .venv/bin/python benchmarks/bench_elise.py [--repeat N] [--sizes 1000,10000] [--no-batsim]
        [--elise DIR --elise-python PY | --no-elise] [--elise-repeat-large N]

ELiSE's setting (ELiSE paper, §4): all jobs at t = 0, drawn uniformly from the
Grid5000 Grvingt NAS seed (13 NPB jobs), on 800 nodes x 2 sockets x 16 cores = 25,600 cores
(``coburst platform cosched --preset grvingt --nodes 800``: 3200 half-socket resources).

Engines measured in the same run, interleaved:

``coburst``  ``coburst run schedulers/cosched{Fcfs,Easy,EasyCo,Filler}.py --heatmap grvingt-nas``
             (in-process, the speedup hook on): the run ELiSE makes;
``ELiSE``    ELiSE itself (nikosT/elise, ``--elise`` work tree, ``--elise-python`` with its
             packages; ``scripts/elise_reference.py`` says how) on the same job list, one
             scheduler per ELiSE command (FIFO Scheduler, EASY Scheduler, Random Ranks
             Co-Scheduler, Filler Co-Scheduler; backfilling on but for FIFO): its own report
             (``time_reports.csv``: the simulation loop, without its start-up) is the
             baseline of the ratios, the whole command's wall time is printed next to it;
             without ELiSE (``--no-elise``, or no work tree) the ratios use the figures
             ELiSE recorded on this machine (``ELISE_RECORDED``);
``batsim``   the real Batsim 4.2.1 + the same entry file as a ``pybatsim`` process (no speedup
             hook: Batsim has none; same scheduler, its own timeline) - a second baseline.

coburst's figure is a run with a warm cache (``coburst.simulator.platform_cache``: the
platform's hosts and master routes written by an unmeasured first run into a cache folder of
the bench, so SimGrid is neither imported nor loaded); ``coburst cold`` is the same run with an
empty cache folder each time (SimGrid loads the platform, the pre-check child writes the cache).

Figures: whole-run wall time for coburst and Batsim (process start to exit, inputs already
generated), medians over ``--repeat`` runs (default 3); ELiSE at more than 1000 jobs is run
``--elise-repeat-large`` times (default 1: minutes per run).  Inputs are cached in
``benchmarks/.cache/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))

from bench_engines import COBURST, Case, RunFailed, _ensure_cache, _stale, find_batsim, run_engine  # noqa: E402

CACHE = HERE / ".cache"
ROOT = HERE.parent
HEATMAP = ROOT / "models" / "heatmaps" / "grvingt-nas.heatmap.csv"
#: ELiSE's own simulation-loop times recorded on this kind of machine (tests/data/elise/
#: g800_1000_t0/time_reports.csv for 1000 jobs; the target's own for EASY / EASY-Co at 10,000; FIFO and
#: Filler at 10,000: this bench on 2026-11-27, load 2-5 -- the same day EASY took 123-130 s)
ELISE_RECORDED = {("fifo", 1000): 0.92, ("easy", 1000): 1.03, ("easy-co", 1000): 12.7, ("filler", 1000): 10.8,
                  ("fifo", 10000): 133.4, ("easy", 10000): 77.0, ("easy-co", 10000): 181.0,
                  ("filler", 10000): 291.4}
POLICIES = ("fifo", "easy", "easy-co", "filler")
LABEL = {"fifo": "FIFO", "easy": "EASY", "easy-co": "EASY-Co", "filler": "Filler"}
ENTRY = {"fifo": ROOT / "schedulers" / "coschedFcfs.py", "easy": ROOT / "schedulers" / "coschedEasy.py",
         "easy-co": ROOT / "schedulers" / "coschedEasyCo.py", "filler": ROOT / "schedulers" / "coschedFiller.py"}
#: ELiSE's scheduler (name, backfill_enabled) for each policy (scripts/elise_reference.py)
ELISE_SCHEDULER = {"fifo": ("FIFO Scheduler", False), "easy": ("EASY Scheduler", True),
                   "easy-co": ("Random Ranks Co-Scheduler", True), "filler": ("Filler Co-Scheduler", True)}
#: the target (ELiSE's time / coburst's) by job count
TARGET = {1000: 2.0, 10000: 20.0}


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


def _seconds(text: str) -> float:
    """A ``datetime.timedelta`` printed by ELiSE (``H:MM:SS.ffffff``, maybe ``N day_``...) in seconds."""
    days = 0
    if "day" in text:
        head, text = text.split("_", 1) if "_" in text else text.split(",", 1)
        days = int(head.split()[0])
    h, m, sec = text.strip().split(":")
    return days * 86400 + int(h) * 3600 + int(m) * 60 + float(sec)


def run_elise_once(elise: Path, python: str, policy: str, workload_path: Path, nodes: int, tmp: Path
                   ) -> tuple[float, float, float]:
    """(ELiSE's own simulation-loop time, the whole command's wall time, its CPU time: every
    process of the command, reaped) of one ELiSE run."""
    from coburst.analysis.elise import job_list_text
    from elise_reference import run_elise

    listing = job_list_text(json.loads(workload_path.read_text()))
    name, bf = ELISE_SCHEDULER[policy]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run_elise(elise, python, listing, nodes, [(policy, name, bf)], tmp)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    path = tmp / "reports" / "time_reports.csv"
    report = path.read_text().splitlines() if path.is_file() else []
    if len(report) != 2:  # e.g. another ELiSE running: its progress server takes a fixed port (54321)
        raise RunFailed(f"ELiSE {policy}: no time report ({path}); ELiSE runs cannot overlap (fixed port 54321)")
    row = report[1].split(",")
    return _seconds(row[4]), wall, cpu


@contextlib.contextmanager
def _cache(folder: Path):
    """coburst's runs inside the block use ``folder`` as ``COBURST_CACHE`` (bench_engines' ``ENV``)."""
    import bench_engines

    saved = bench_engines.ENV.get("COBURST_CACHE")
    bench_engines.ENV["COBURST_CACHE"] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            bench_engines.ENV.pop("COBURST_CACHE", None)
        else:
            bench_engines.ENV["COBURST_CACHE"] = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--policies", default=",".join(POLICIES), help="among " + ", ".join(POLICIES))
    ap.add_argument("--no-batsim", action="store_true")
    ap.add_argument("--batsim", default=None)
    ap.add_argument("--elise", default=os.environ.get("ELISE", "/tmp/elise"),
                    help="ELiSE work tree (nikosT/elise: framework/, pools/)")
    ap.add_argument("--elise-python", default=os.environ.get("ELISE_PYTHON", "/tmp/elisevenv/bin/python"),
                    help="a Python with ELiSE's packages")
    ap.add_argument("--no-elise", action="store_true")
    ap.add_argument("--elise-repeat-large", type=int, default=1, help="ELiSE runs above 1000 jobs")
    ap.add_argument("--elise-sizes", default=None,
                    help="job counts at which ELiSE is run (default: every size; others use ELISE_RECORDED)")
    args = ap.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    if not set(policies) <= set(POLICIES):
        ap.error(f"--policies: among {', '.join(POLICIES)}")
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    elise = None if args.no_elise else Path(args.elise)
    if elise is not None and not ((elise / "framework" / "batch" / "submit.py").is_file()
                                  and Path(args.elise_python).is_file()):
        print(f"ELiSE not found ({elise}, {args.elise_python}): ratios against its recorded times",
              file=sys.stderr)
        elise = None
    plat = platform()
    sizes = [int(s) for s in args.sizes.split(",")]
    elise_sizes = set(sizes) if args.elise_sizes is None else {int(s) for s in args.elise_sizes.split(",") if s}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-elise-") as tmp:
        tmp = Path(tmp)
        for n in sizes:
            wl = workload(n, plat)
            for policy in policies:
                case = Case(f"{policy}-{n}", "", plat, wl, str(ENTRY[policy]), n)
                walls: dict[str, list[float]] = {"coburst": [], "coburst_cpu": [], "cold": [], "cold_cpu": [],
                                                 "batsim": [], "elise": [], "elise_wall": [], "elise_cpu": []}
                (tmp / f"{case.name}-warmup").mkdir()
                with _cache(tmp / "cache"):  # (fills the bench's warm cache: not measured)
                    run_engine("coburst-inprocess", case, tmp / f"{case.name}-warmup" / "out", None,
                               ["--heatmap", str(HEATMAP)])
                for r in range(args.repeat):
                    for kind in "cobe":
                        (tmp / f"{case.name}-{kind}{r}").mkdir()
                    with _cache(tmp / "cache"):
                        res = run_engine("coburst-inprocess", case, tmp / f"{case.name}-c{r}" / "out", None,
                                         ["--heatmap", str(HEATMAP)])
                    walls["coburst"].append(res["wall"])
                    walls["coburst_cpu"].append(res["cpu_sim"])
                    with _cache(tmp / f"{case.name}-cold-cache{r}"):
                        res = run_engine("coburst-inprocess", case, tmp / f"{case.name}-o{r}" / "out", None,
                                         ["--heatmap", str(HEATMAP)])
                    walls["cold"].append(res["wall"])
                    walls["cold_cpu"].append(res["cpu_sim"])
                    if batsim:
                        try:
                            res = run_engine("batsim", case, tmp / f"{case.name}-b{r}" / "out", batsim)
                            walls["batsim"].append(res["wall"])
                        except RunFailed as err:
                            print(f"batsim run failed: {err}", file=sys.stderr)
                    if elise is not None and n in elise_sizes and (n <= 1000 or r < args.elise_repeat_large):
                        try:
                            own, wall, cpu = run_elise_once(elise, args.elise_python, policy, wl, 800,
                                                            tmp / f"{case.name}-e{r}")
                            walls["elise"].append(own)
                            walls["elise_wall"].append(wall)
                            walls["elise_cpu"].append(cpu)
                        except (RunFailed, subprocess.CalledProcessError) as err:
                            print(f"ELiSE run failed: {err}", file=sys.stderr)
                    print(f"{case.name} #{r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in walls.items()
                                                                if len(v) == r + 1), file=sys.stderr)
                med = {k: statistics.median(v) if v else None for k, v in walls.items()}
                rows.append((policy, n, med, len(walls["elise"])))
    print("\n| scheduler | jobs | coburst, warm cache (s) | ELiSE (s, its report) | ELiSE / coburst | target "
          "| ELiSE whole command (s) | CPU s: coburst / ELiSE command (ratio) "
          "| Batsim 4.2.1 + pybatsim (s) | coburst / Batsim | coburst, cold cache: wall / CPU (s) |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for policy, n, med, n_elise in rows:
        c, b = med["coburst"], med["batsim"]
        e = med["elise"]
        note = "" if e is None or n_elise == args.repeat else f" ({n_elise} run{'s' if n_elise > 1 else ''})"
        if e is None:
            e = ELISE_RECORDED.get((policy, n))
            note = " (recorded)" if e is not None else ""
        target = TARGET.get(n)
        holds = "-" if e is None or target is None else f"{target:g}x: {'holds' if e / c >= target else 'not met'}"
        es = f"{e:.2f}{note}" if e is not None else "-"
        ratio = f"**{e / c:.2f}x**" if e is not None else "-"
        ew = f"{med['elise_wall']:.2f}" if med["elise_wall"] is not None else "-"
        bs = f"{b:.2f}" if b is not None else "-"
        cb = f"{c / b:.2f}x" if b else "-"
        cc, ec = med["coburst_cpu"], med["elise_cpu"]
        cpu = f"{cc:.2f} / {ec:.2f} ({ec / cc:.1f}x)" if ec is not None else f"{cc:.2f} / -"
        print(f"| {LABEL[policy]} | {n:,} | {c:.2f} | {es} | {ratio} | {target and holds} | {ew} | {cpu} "
              f"| {bs} | {cb} | {med['cold']:.2f} / {med['cold_cpu']:.2f} |")
    print(f"\nmedians of {args.repeat} runs (ELiSE above 1000 jobs: {args.elise_repeat_large}); 800 nodes x 2 x 16 "
          "cores, Grvingt NAS seed, all jobs at t = 0")


if __name__ == "__main__":
    main()
