"""Generated platforms: file size and load time, old (full) against new (linear) layout.

    .venv/bin/python benchmarks/bench_platforms.py [--repeat N] [--no-batsim] [--batsim PATH]

Platforms (generated into a temporary directory by ``coburst platform``):

``cosched-grvingt-800``  ``coburst platform cosched --preset grvingt --nodes 800``
                         (3200 half-socket hosts), ``--layout full`` (n(n-1)/2 zoneRoutes)
                         and ``--layout linear`` (hub zone, DijkstraCache root);
``cosched-aris-96``      the same at 96 ARIS nodes;
``cluster-1000``         ``coburst platform cluster --nodes 1000`` (a SimGrid ``<cluster>``:
                         linear already);
``dragonfly-240``        ``coburst platform dragonfly --topo 4,1;4,1;5,1;3`` (240 hosts, one
                         route per ordered pair: NOT linear, reported for the record).

Load time = the wall time of a whole 1-job run (one 1 s delay job, pybatsim's ``schedFcfs``):
``coburst run --transport inprocess`` and the real Batsim 4.2.1 + pybatsim, so it holds
SimGrid's parsing and sealing plus everything a run does once.  coburst's runs are made with
the platform cache off (``COBURST_PLATFORM_CACHE=off``): SimGrid loads the platform at every run,
which is what this bench measures (with the cache, a run on a platform seen before does not load
it at all: ``bench_startup.py``, ``bench_elise.py``).  Medians of ``--repeat`` runs (default 3),
layouts interleaved; ratios new / old measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_engines  # noqa: E402
from bench_engines import COBURST, Case, RunFailed, find_batsim, run_engine  # noqa: E402

bench_engines.ENV["COBURST_PLATFORM_CACHE"] = "off"  # (SimGrid loads the platform at every run)

PLATFORMS = [
    ("cosched-grvingt-800", ["cosched", "--preset", "grvingt", "--nodes", "800"], ("full", "linear")),
    ("cosched-aris-96", ["cosched", "--nodes", "96"], ("full", "linear")),
    ("cluster-1000", ["cluster", "--nodes", "1000"], (None,)),
    ("dragonfly-240", ["dragonfly", "--topo", "4,1;4,1;5,1;3"], (None,)),
]


def one_job(path: Path) -> Path:
    path.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d"}],
                                "profiles": {"d": {"type": "delay", "delay": 1}}}) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-batsim", action="store_true")
    ap.add_argument("--batsim", default=None)
    args = ap.parse_args()
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-platforms-") as tmp:
        tmp = Path(tmp)
        wl = one_job(tmp / "one.json")
        for name, cmd, layouts in PLATFORMS:
            files = {}
            for layout in layouts:
                p = tmp / f"{name}-{layout or 'only'}.xml"
                subprocess.run([str(COBURST), "platform", *cmd, *(["--layout", layout] if layout else []),
                                "--no-record-command", "-o", str(p)], check=True, capture_output=True)
                files[layout] = p
            walls = {(layout, e): [] for layout in layouts for e in ("coburst", "batsim")}
            for r in range(args.repeat):
                for layout, p in files.items():
                    case = Case(f"{name}-{layout}", "", p, wl, "schedFcfs", 1)
                    for engine, key in (("coburst-inprocess", "coburst"), ("batsim", "batsim")):
                        if engine == "batsim" and not batsim:
                            continue
                        d = tmp / f"{name}-{layout}-{key}{r}"
                        d.mkdir()
                        try:
                            walls[(layout, key)].append(run_engine(engine, case, d / "out", batsim)["wall"])
                        except RunFailed as err:
                            print(f"{name} {layout} {key}: {err}", file=sys.stderr)
                    print(f"{name} {layout} #{r + 1}: " + ", ".join(
                        f"{k} {walls[(layout, k)][-1]:.2f} s" for k in ("coburst", "batsim") if walls[(layout, k)]),
                        file=sys.stderr)
            for layout, p in files.items():
                med = {k: statistics.median(walls[(layout, k)]) if walls[(layout, k)] else None
                       for k in ("coburst", "batsim")}
                rows.append((name, layout or "-", p.stat().st_size, med))
    print("\n| platform | layout | size (MB) | coburst 1-job run (s) | Batsim 4.2.1 1-job run (s) | new / old |")
    print("|---|---|---:|---:|---:|---|")
    old = {}
    for name, layout, size, med in rows:
        c = f"{med['coburst']:.2f}" if med["coburst"] is not None else "-"
        b = f"{med['batsim']:.2f}" if med["batsim"] is not None else "-"
        ratio = "-"
        if layout == "full":
            old[name] = (size, med)
        elif layout == "linear" and name in old:
            osz, om = old[name]
            parts = [f"size {size / osz:.3f}x"]
            for k in ("coburst", "batsim"):
                if med[k] and om[k]:
                    parts.append(f"{k} {med[k] / om[k]:.2f}x")
            ratio = ", ".join(parts)
        print(f"| {name} | {layout} | {size / 1e6:.2f} | {c} | {b} | {ratio} |")
    print(f"\nmedians of {args.repeat} runs (1 delay job of 1 s, pybatsim schedFcfs); coburst with the platform "
          "cache off (SimGrid loads the platform at every run)")


if __name__ == "__main__":
    main()
