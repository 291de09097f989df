"""Regenerate tests/data/l07_reference.json: the dates libsimgrid 3.32 (Batsim 4.2.1's SimGrid)
gives the scenarios below under ``ptask_L07``, printed by ``l07_driver.cpp`` with %.17g.

Needs ``g++`` and ``libsimgrid-dev`` 3.32 (``apt-get install libsimgrid-dev``)::

    python scripts/l07_reference/regenerate.py            # writes tests/data/l07_reference.json
    python scripts/l07_reference/regenerate.py --check    # also runs coburst's kernel on them

The tests (tests/test_sim_l07.py) read the JSON and need neither.  Scenarios: hand-written
ones (one per case of the model) and seeded random mixes of parallel tasks and messages on
``l07_platform.xml`` and on ``platforms/dragonfly_small.xml``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "tests" / "data" / "l07_reference.json"
SMALL = "scripts/l07_reference/l07_platform.xml"
DRAGONFLY = "platforms/dragonfly_small.xml"


def hom(n: int, cpu: float, com: float) -> tuple[list[float], list[float]]:
    """Batsim's parallel_homogeneous vectors."""
    return [cpu] * n, [0.0 if i == j else com for i in range(n) for j in range(n)]


def task(name, start, hosts, flops, bytes_, timeout=-1.0, cancel_at=-1.0) -> str:
    nums = " ".join(repr(float(x)) for x in [*flops, *bytes_])
    return f"task {name} {start!r} {timeout!r} {cancel_at!r} {len(hosts)} {' '.join(hosts)} {nums}"


def msg(name, start, src, dst) -> str:
    return f"msg {name} {start!r} {src} {dst}"


def hand_written() -> dict[str, tuple[str, list[str]]]:
    s = {}
    s["one_ptask_3_hosts"] = (SMALL, [task("A", 0.0, ["h0", "h1", "h2"], [1e9, 2e9, 5e8],
                                          [0, 1e8, 2e8, 3e7, 0, 0, 5e8, 1e6, 0])])
    s["one_ptask_4_hosts_homogeneous"] = (SMALL, [task("A", 0.0, ["h0", "h1", "h2", "h3"], *hom(4, 1e9, 1e8))])
    s["two_ptasks_share_backbone"] = (SMALL, [task("A", 0.0, ["h0", "h1"], *hom(2, 1e8, 1e9)),
                                              task("B", 0.3, ["h2", "h3"], *hom(2, 2e8, 8e8))])
    s["ptask_and_messages"] = (SMALL, [task("A", 0.0, ["h0", "h1"], *hom(2, 1e8, 1e9))]
                               + [msg(f"m{i}", 0.05 + 0.1 * i, "h1" if i % 2 else "h0", "master") for i in range(8)])
    s["fatpipe"] = (SMALL, [task("A", 0.0, ["h4", "h5"], *hom(2, 1e9, 5e8)),
                            task("B", 0.1, ["h4", "h0"], *hom(2, 1e9, 3e8)),
                            task("C", 0.2, ["h5", "h2"], [0, 0], [0, 4e8, 0, 0])])
    s["splitduplex"] = (SMALL, [task("A", 0.0, ["h3", "h5"], *hom(2, 1e8, 6e8)),
                                task("B", 0.1, ["h3", "h5"], [0, 0], [0, 3e8, 0, 0])])
    s["timeout_zombie"] = (SMALL, [task("A", 0.0, ["h0", "h2"], *hom(2, 1e9, 2e9), timeout=0.5, cancel_at=1.25),
                                   task("B", 0.1, ["h1", "h3"], *hom(2, 1e9, 1e9))])
    s["cancel_running"] = (SMALL, [task("A", 0.0, ["h0", "h2"], *hom(2, 1e9, 2e9), cancel_at=0.4),
                                   task("B", 0.1, ["h1", "h3"], *hom(2, 1e9, 1e9))])
    s["loopback"] = (SMALL, [task("A", 0.0, ["h0", "h1"], [1e8, 1e8], [5e8, 1e7, 1e7, 3e8]),
                             task("B", 0.05, ["h0"], [0.0], [2e9])])
    s["multicore"] = (SMALL, [task("A", 0.0, ["h4", "h5"], [3e9, 1e9], [0, 1e9, 0, 0]),
                              task("B", 0.1, ["h4", "h4"], [1e9, 1e9], [0, 0, 0, 0]),
                              task("C", 0.2, ["h4"], [2e9], [0.0])])
    s["no_comm_no_flops"] = (SMALL, [task("A", 0.0, ["h0", "h1"], [0, 0], [0, 0, 0, 0]),
                                     task("B", 0.1, ["h0", "h1"], [1e9, 0], [0, 0, 0, 0])])
    s["dragonfly_ptasks_and_messages"] = (DRAGONFLY, [
        task("A", 0.0, ["node_1", "node_2", "node_5", "node_9"], *hom(4, 1e9, 5e8)),
        task("B", 0.2, ["node_3", "node_6"], *hom(2, 5e8, 2e9)),
        task("C", 0.3, ["node_10", "node_11", "node_13"], *hom(3, 2e9, 1e8), timeout=1.0, cancel_at=2.0),
        task("D", 0.0, ["node_1", "node_2", "pfs"], [0, 0, 0], [0, 0, 1e9, 0, 0, 1e9, 2e9, 2e9, 0]),
    ] + [msg(f"m{i}", 0.1 * i, f"node_{(3 * i) % 16}", "master") for i in range(12)])
    return s


def random_scenarios(count: int, seed: int) -> dict[str, tuple[str, list[str]]]:
    rng = np.random.default_rng(seed)
    out = {}
    small_hosts = ["h0", "h1", "h2", "h3", "h4", "h5"]
    dragon_hosts = [f"node_{i}" for i in range(16)] + ["pfs"]
    for k in range(count):
        platform, hosts = (SMALL, small_hosts) if k % 2 == 0 else (DRAGONFLY, dragon_hosts)
        lines = []
        for t in range(int(rng.integers(3, 9))):
            n = int(rng.integers(1, 5))
            chosen = [str(h) for h in rng.choice(hosts, size=n, replace=bool(rng.random() < 0.15))]
            flops = [0.0 if h == "pfs" or rng.random() < 0.2 else float(rng.integers(1, 40)) * 1e8 for h in chosen]
            bytes_ = [0.0 if rng.random() < 0.4 else float(rng.integers(1, 30)) * 1e8 for _ in range(n * n)]
            start = round(float(rng.random()) * 2, 3)
            if rng.random() < 0.25:
                timeout = round(float(rng.random()) * 2 + 0.1, 3)
                lines.append(task(f"T{t}", start, chosen, flops, bytes_, timeout=timeout,
                                  cancel_at=round(start + timeout + float(rng.random()), 3)))
            elif rng.random() < 0.15:
                lines.append(task(f"T{t}", start, chosen, flops, bytes_, cancel_at=round(start + float(rng.random()) * 2, 3)))
            else:
                lines.append(task(f"T{t}", start, chosen, flops, bytes_))
        master = "master"
        for m in range(int(rng.integers(0, 10))):
            src = str(rng.choice(hosts))
            lines.append(msg(f"M{m}", round(float(rng.random()) * 3, 4), src, master))
        out[f"random_{k:02d}"] = (platform, lines)
    return out


def reference(driver: Path, platform: str, lines: list[str]) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        text = subprocess.run([str(driver), str(ROOT / platform), fh.name, "--cfg=host/model:ptask_L07",
                               "--log=root.thresh:critical"], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in text.splitlines():
        name, event, date = line.split()
        result[f"{name} {event}"] = float(date)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="also run coburst's kernel and compare")
    parser.add_argument("--random", type=int, default=40, help="number of random scenarios (default 40)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "l07_driver"
        subprocess.run(["g++", "-O1", "-o", str(driver), str(HERE / "l07_driver.cpp"), "-lsimgrid"], check=True)
        scenarios = {**hand_written(), **random_scenarios(args.random, seed=20261125)}
        data = {}
        for name, (platform, lines) in scenarios.items():
            data[name] = {"platform": platform, "spec": lines, "expected": reference(driver, platform, lines)}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({len(data)} scenarios)")
    if args.check:
        bad = 0
        for platform in sorted({case["platform"] for case in data.values()}):
            names = [name for name, case in data.items() if case["platform"] == platform]
            specs = ["\n".join(data[name]["spec"]) for name in names]
            text = subprocess.run([sys.executable, str(HERE / "scenario.py"), str(ROOT / platform)],
                                  input=json.dumps(specs), capture_output=True, text=True, check=True).stdout
            for name, got in zip(names, json.loads(text)):
                expected = data[name]["expected"]
                if got != expected:
                    bad += 1
                    print(f"DIFFERS {name}:")
                    for key in sorted(set(got) | set(expected)):
                        if expected.get(key) != got.get(key):
                            print(f"   {key}: simgrid {expected.get(key)!r} coburst {got.get(key)!r}")
        print(f"{len(data) - bad}/{len(data)} identical")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
