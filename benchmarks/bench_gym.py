"""Benchmark: ``coburst.gym`` steps per second, a trivial agent on the KTH-SP2 delay jobs.

    .venv/bin/python benchmarks/bench_gym.py [--jobs N] [--window 32] [--agent first|random|wait]
                                             [--repeat 3] [--features basic|extended]

The workload is ``workloads/kth_sp2_delay_5000.json`` (the first 5,000 jobs of the KTH-SP2
log as ``delay`` jobs; ``--jobs N``: its first N) on ``platforms/kth_sp2.xml`` (100 nodes).
One episode per repeat of ``coburst/BatsimExact-v0`` (Dict observations, the dense
waiting-time reward), played to the end by a trivial agent: ``first`` (the first valid
action: the oldest job that fits, which is greedy filling), ``random`` (a valid action at
random, seeded) or ``wait`` (the first job only when waiting would stall, else wait: FCFS
order is not kept, the run is mostly the engine's).  The script prints steps, decision points,
simulated jobs, the wall time of ``reset`` and of the episode, steps/s and jobs/s, and, for
the same inputs, the wall time of ``coburst run filler`` in the same process (the engine and
the adapter without the environment) -- so the environment's own cost per step can be read
across machines.  With the real Batsim at hand (``--batsim``, ``$BATSIM`` or ``batsim`` on
``PATH``), the same workload also runs on it with pybatsim's ``fillerSched`` (greedy filling, the
``first`` agent's order) over ZeroMQ, and its jobs per second -- wall, and CPU of Batsim and the
scheduler together -- are printed beside the environment's: the anchor an absolute steps/s
figure is read against.  Figures are medians over ``--repeat`` episodes; the episode's CPU time (the
process's, which on a shared machine is steadier than its wall time) is printed beside its
wall time, with the date, the machine and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKLOAD = ROOT / "workloads" / "kth_sp2_delay_5000.json"
PLATFORM = ROOT / "platforms" / "kth_sp2.xml"


def episode(workload: str, window: int, agent: str, seed: int, features: str = "basic") -> dict:
    import gymnasium

    import coburst.gym  # noqa: F401 - registers the ids

    env = gymnasium.make("coburst/BatsimExact-v0", workload=workload, platform=str(PLATFORM), window=window,
                         features=features)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    t_reset = time.perf_counter() - t0
    steps = 0
    t1 = time.perf_counter()
    c1 = time.process_time()
    while True:
        valid = np.flatnonzero(info["action_mask"])
        if agent == "first":
            action = valid[0]
        elif agent == "random":
            action = rng.choice(valid)
        else:
            action = window if info["action_mask"][window] else valid[0]
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    wall = time.perf_counter() - t1
    cpu = time.process_time() - c1
    decisions = env.unwrapped.decision_id
    jobs = int(env.unwrapped.result.schedule["nb_jobs"])
    env.close()
    return {"reset": t_reset, "wall": wall, "cpu": cpu, "steps": steps, "decisions": decisions, "jobs": jobs,
            "steps/s": steps / wall, "steps/cpu-s": steps / cpu}


def plain_run(workload: str, out: str) -> tuple[float, float]:
    from coburst.runner import run

    t0, c0 = time.perf_counter(), time.process_time()
    run("filler", platform=str(PLATFORM), workloads=[workload], export=out)
    return time.perf_counter() - t0, time.process_time() - c0


def batsim_runs(batsim: str, workload: str, repeat: int, tmp: Path) -> dict:
    """The real Batsim with pybatsim's ``fillerSched`` on ``workload``: median wall and CPU
    (Batsim's and the scheduler's) over ``repeat`` runs (``bench_engines.run_engine``)."""
    from bench_engines import Case, run_engine  # (this folder)

    case = Case("gym", "the environment's workload", PLATFORM, Path(workload), "fillerSched")
    runs = [run_engine("batsim", case, tmp / f"batsim{i}", batsim) for i in range(repeat)]
    return {"wall": statistics.median(r["wall"] for r in runs),
            "cpu": statistics.median(r["cpu_sim"] + r["cpu_sched"] for r in runs)}


def machine() -> str:
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{platform.node()}, {cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs only (default: all 5,000)")
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--agent", choices=("first", "random", "wait"), default="first")
    parser.add_argument("--repeat", type=int, default=3, help="episodes (medians reported)")
    parser.add_argument("--features", choices=("basic", "extended"), default="basic")
    parser.add_argument("--batsim", default=None, help="the real Batsim (default: $BATSIM, else batsim on PATH)")
    parser.add_argument("--no-batsim", action="store_true", help="leave the real Batsim out")
    args = parser.parse_args()
    batsim = None
    if not args.no_batsim:
        from bench_engines import find_batsim  # (this folder)

        batsim = find_batsim(args.batsim)
    logging.disable(logging.WARNING)
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="coburst-bench-gym-") as tmp:
        workload = str(WORKLOAD)
        if args.jobs:
            doc = json.loads(WORKLOAD.read_text())
            doc["jobs"] = doc["jobs"][:args.jobs]
            workload = str(Path(tmp) / "kth.json")
            Path(workload).write_text(json.dumps(doc))
        plain = [plain_run(workload, str(Path(tmp) / "plain"))]  # (also describes the platform in the cache)
        plain.append(plain_run(workload, str(Path(tmp) / "plain")))
        runs = [episode(workload, args.window, args.agent, seed, args.features) for seed in range(args.repeat)]
        real = batsim_runs(batsim, workload, args.repeat, Path(tmp)) if batsim else None
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
    print(f"KTH-SP2 delay jobs on {PLATFORM.name}: {med['jobs']:,.0f} jobs, window {args.window}, agent "
          f"{args.agent!r}, features {args.features!r}; load average {load0[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'steps':28s}{med['steps']:12,.0f}")
    print(f"{'decision points shown':28s}{med['decisions']:12,.0f}")
    print(f"{'reset (s)':28s}{med['reset']:12.3f}")
    print(f"{'episode wall time (s)':28s}{med['wall']:12.2f}")
    print(f"{'episode CPU time (s)':28s}{med['cpu']:12.2f}")
    each = ", ".join(f"{r['steps/s']:,.0f}" for r in runs)
    print(f"{'steps/s (wall)':28s}{med['steps/s']:12,.0f}   (episodes: {each})")
    print(f"{'steps/s (CPU)':28s}{med['steps/cpu-s']:12,.0f}")
    print(f"{'jobs/s (wall)':28s}{med['jobs'] / med['wall']:12,.0f}")
    print(f"{'coburst run filler (s)':28s}{plain[-1][0]:12.2f}   wall, {plain[-1][1]:.2f} s CPU (same inputs, in "
          f"process, no environment)")
    if real:
        print(f"{'real Batsim, fillerSched (s)':28s}{real['wall']:12.2f}   wall, {real['cpu']:.2f} s CPU (Batsim and "
              f"pybatsim); {med['jobs'] / real['wall']:,.0f} jobs/s wall, {med['jobs'] / real['cpu']:,.0f} per CPU s")
        print(f"{'steps/s over Batsim jobs/s':28s}{med['steps/s'] / (med['jobs'] / real['wall']):11.2f}x   wall, "
              f"{med['steps/cpu-s'] / (med['jobs'] / real['cpu']):.2f}x CPU")
    print(f"(median of {args.repeat} episode(s); load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
