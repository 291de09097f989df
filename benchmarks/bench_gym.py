"""Benchmark: ``coburst.gym`` steps per second, a trivial agent on the KTH-SP2 delay jobs.

    .venv/bin/python benchmarks/bench_gym.py [--jobs N] [--window 32] [--agent first|random|wait]
                                             [--repeat 1]

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
across machines.  The load average is printed too: the machine is shared.
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


def episode(workload: str, window: int, agent: str, seed: int) -> dict:
    import gymnasium

    import coburst.gym  # noqa: F401 - registers the ids

    env = gymnasium.make("coburst/BatsimExact-v0", workload=workload, platform=str(PLATFORM), window=window)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    t_reset = time.perf_counter() - t0
    steps = 0
    t1 = time.perf_counter()
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
    decisions = env.unwrapped.decision_id
    jobs = int(env.unwrapped.result.schedule["nb_jobs"])
    env.close()
    return {"reset": t_reset, "wall": wall, "steps": steps, "decisions": decisions, "jobs": jobs}


def plain_run(workload: str, out: str) -> float:
    from coburst.runner import run

    t0 = time.perf_counter()
    run("filler", platform=str(PLATFORM), workloads=[workload], export=out)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs only (default: all 5,000)")
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--agent", choices=("first", "random", "wait"), default="first")
    parser.add_argument("--repeat", type=int, default=1, help="episodes (medians reported)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="coburst-bench-gym-") as tmp:
        workload = str(WORKLOAD)
        if args.jobs:
            doc = json.loads(WORKLOAD.read_text())
            doc["jobs"] = doc["jobs"][:args.jobs]
            workload = str(Path(tmp) / "kth.json")
            Path(workload).write_text(json.dumps(doc))
        plain = plain_run(workload, str(Path(tmp) / "plain"))  # (also describes the platform in the cache)
        runs = [episode(workload, args.window, args.agent, seed) for seed in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"KTH-SP2 delay jobs on {PLATFORM.name}: {med['jobs']:,.0f} jobs, window {args.window}, agent "
          f"{args.agent!r}; load average {load0[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'steps':28s}{med['steps']:12,.0f}")
    print(f"{'decision points shown':28s}{med['decisions']:12,.0f}")
    print(f"{'reset (s)':28s}{med['reset']:12.3f}")
    print(f"{'episode wall time (s)':28s}{med['wall']:12.2f}")
    print(f"{'steps/s':28s}{med['steps'] / med['wall']:12,.0f}")
    print(f"{'jobs/s':28s}{med['jobs'] / med['wall']:12,.0f}")
    print(f"{'coburst run filler (s)':28s}{plain:12.2f}   (same inputs, in process, no environment)")
    print(f"(median of {args.repeat} episode(s); load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
