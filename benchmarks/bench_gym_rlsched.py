"""Benchmark: steps per second of ``coburst/RLScheduler-v0`` beside RLScheduler's own
``HPCSimPickJobs.HPCEnv``, on the same job sequences, in the same run.

    .venv/bin/python benchmarks/bench_gym_rlsched.py [--trace lublin_256.swf] [--episodes 10]
                                                     [--repeat 5] [--seed 0] [--backfill]
                                                     [--policy first|sjf]

Both environments are seeded with ``--seed`` and reset ``--episodes`` times (256-job
sequences of the SWF log, read from the shared SWF folder: ``tests/shared_data.py``); each
episode is played to its end by the same policy: ``first`` (slot 0: the oldest waiting job
while at most 128 wait) or ``sjf`` (the window's job of smallest requested time).  The
script checks that both give the same rewards, then prints, per environment, the median over
``--repeat`` runs of steps/s counting ``step()`` only and counting ``reset()`` as well
(RLScheduler's ``reset`` also schedules the sequence with SJF and F1, for its reward
shaping), and the ratio.  The load average is printed too: the machine is shared.

RLScheduler's checkout (a folder holding its ``HPCSimPickJobs.py``, ``job.py`` and
``cluster.py``) is found through ``COBURST_RLSCHEDULER_DIR``; when that is unset, only
coburst's figures are printed.  Its module imports TensorFlow for its training helpers only;
when TensorFlow is not installed an empty module stands in for it (nothing of it is used
here).  It needs ``gym`` (0.17 era: ``seeding.np_random`` giving a ``RandomState``) and scipy;
``COBURST_RLSCHEDULER_SITE`` (folders separated by ``os.pathsep``, e.g. the site-packages of
a virtual environment holding ``gym==0.17.3``) is appended to ``sys.path`` for them, after
this environment's own packages.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

VAR = "COBURST_RLSCHEDULER_DIR"
SITE_VAR = "COBURST_RLSCHEDULER_SITE"


def load_rlscheduler(folder: str):
    """RLScheduler's environment module, from its checkout ``folder``."""
    sys.path.insert(0, folder)
    sys.path.extend(p for p in os.environ.get(SITE_VAR, "").split(os.pathsep) if p)
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        sys.modules["tensorflow"] = types.ModuleType("tensorflow")
        print("(TensorFlow absent: an empty module stands in for RLScheduler's unused import)")
    with contextlib.redirect_stdout(io.StringIO()):
        import HPCSimPickJobs
    return HPCSimPickJobs


def run_coburst(path: str, args) -> tuple[float, float, int, list[float]]:
    from coburst.gym.rlsched import RLSchedulerEnv, heuristic_action

    env = RLSchedulerEnv(path, backfill=args.backfill)
    steps, t_step, t_all, rewards = 0, 0.0, 0.0, []
    for i in range(args.episodes):
        t0 = time.perf_counter()
        env.reset(seed=args.seed) if i == 0 else env.reset()
        t_all += time.perf_counter() - t0
        terminated = False
        while not terminated:
            action = 0 if args.policy == "first" else heuristic_action(env, "sjf")
            t0 = time.perf_counter()
            _, reward, terminated, _, _ = env.step(action)
            dt = time.perf_counter() - t0
            t_step += dt
            t_all += dt
            steps += 1
        rewards.append(reward)
    return steps / t_step, steps / t_all, steps, rewards


def run_rlscheduler(mod, path: str, args) -> tuple[float, float, int, list[float]]:
    with contextlib.redirect_stdout(io.StringIO()):
        env = mod.HPCEnv(backfil=args.backfill)
        env.my_init(workload_file=path)
    env.seed(args.seed)
    steps, t_step, t_all, rewards = 0, 0.0, 0.0, []
    for _ in range(args.episodes):
        t0 = time.perf_counter()
        env.reset()
        t_all += time.perf_counter() - t0
        done = False
        while not done:
            if args.policy == "first":
                action = 0
            else:
                cand = [i for i, p in enumerate(env.pairs) if p[0] is not None]
                action = min(cand, key=lambda i: env.sjf_score(env.pairs[i][0]))
            t0 = time.perf_counter()
            _, reward, done, *_ = env.step(action)
            dt = time.perf_counter() - t0
            t_step += dt
            t_all += dt
            steps += 1
        rewards.append(reward)
    return steps / t_step, steps / t_all, steps, rewards


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default="lublin_256.swf")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backfill", action="store_true")
    parser.add_argument("--policy", choices=("first", "sjf"), default="first")
    args = parser.parse_args()

    from shared_data import missing, swf_log

    path = swf_log(args.trace)
    if missing(path):
        print(missing(path))
        return 1
    folder = os.environ.get(VAR, "")
    mod = load_rlscheduler(folder) if folder else None
    if mod is None:
        print(f"{VAR} is unset: RLScheduler's environment is not measured, coburst's figures only")
    figures: dict[str, list[tuple[float, float]]] = {"coburst": [], "RLScheduler": []}
    steps = 0
    for _ in range(args.repeat):
        s_step, s_all, steps, ours = run_coburst(str(path), args)
        figures["coburst"].append((s_step, s_all))
        if mod is not None:
            r_step, r_all, r_steps, theirs = run_rlscheduler(mod, str(path), args)
            figures["RLScheduler"].append((r_step, r_all))
            if (r_steps, theirs) != (steps, ours):
                print(f"MISMATCH: RLScheduler {r_steps} steps, rewards {theirs}; coburst {steps}, {ours}")
                return 2
    print(f"{args.trace}, {args.episodes} episodes of 256 jobs from seed {args.seed}, policy {args.policy}, "
          f"backfill {'on' if args.backfill else 'off'}: {steps} steps per run, {args.repeat} runs"
          + (", the same rewards on both" if mod is not None else ""))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'environment':<14}{'steps/s (step)':>16}{'steps/s (+reset)':>18}")
    med = {}
    for name, runs in figures.items():
        if runs:
            med[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            print(f"{name:<14}{med[name][0]:>16.0f}{med[name][1]:>18.0f}")
    if len(med) == 2:
        print(f"{'ratio':<14}{med['coburst'][0] / med['RLScheduler'][0]:>15.1f}x"
              f"{med['coburst'][1] / med['RLScheduler'][1]:>17.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
