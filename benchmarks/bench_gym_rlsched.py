"""Benchmark: steps per second of coburst's two modes -- ``coburst/RLScheduler-v0`` and the
Batsim-exact ``coburst/BatsimExact-v0`` -- beside RLScheduler's own
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

The Batsim-exact mode plays the same sequences (the start indices ``coburst/RLScheduler-v0``
drew) as Batsim workloads of ``delay`` jobs -- each job's run time as its delay, its requested
time as its walltime (its run time when that is longer: RLScheduler never kills a job), its
processors over the log's processors per node as its nodes, submission times from the
sequence's first -- on a flat cluster of the log's ``MaxNodes`` hosts and a master
(``coburst platform cluster --nodes N``), ``window=128`` (RLScheduler's), with a trivial agent:
the first valid action (the oldest job of the window that fits now, else wait).  Its
dynamics are Batsim's, not RLScheduler's (no reward is compared); its steps are the jobs
started and the waits chosen, and ``reset`` starts the engine on the sequence's workload.
Its platform is described in coburst's platform cache by one ``coburst run`` first.  jobs/s
is the sequences' jobs over the same times.  ``--no-exact`` leaves it out.

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
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

VAR = "COBURST_RLSCHEDULER_DIR"
COBURST, THEIRS = "coburst RLScheduler-v0", "RLScheduler HPCEnv"
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


def sequence_starts(path: str, args) -> list[int]:
    """The start index of every episode ``coburst/RLScheduler-v0`` plays from ``--seed``."""
    from coburst.gym.rlsched import RLSchedulerEnv

    env = RLSchedulerEnv(path, backfill=args.backfill)
    starts = []
    for i in range(args.episodes):
        env.reset(seed=args.seed) if i == 0 else env.reset()
        starts.append(env._ep.start)
    return starts


def exact_inputs(path: str, starts: list[int], folder: Path) -> tuple[str, list[str]]:
    """The platform (the log's ``MaxNodes`` hosts) and one Batsim workload of ``delay`` jobs per
    sequence (class doc)."""
    from coburst.gym.rlsched import JOB_SEQUENCE_SIZE, load_trace
    from coburst.platforms.cluster import ClusterSpec, render_xml
    from coburst.workloads.batsim_json import write_workload

    trace = load_trace(path)
    platform = folder / f"rlsched_{trace.max_nodes}.xml"
    platform.write_text(render_xml(ClusterSpec(nodes=trace.max_nodes, cluster_id="lublin")))
    workloads = []
    for n, start in enumerate(starts):
        jobs, profiles = [], {}
        for j in range(start, start + JOB_SEQUENCE_SIZE):
            run = trace.run[j]
            profiles.setdefault(f"d{run}", {"type": "delay", "delay": run})
            jobs.append({"id": str(trace.job_id[j]), "subtime": trace.submit[j] - trace.submit[start],
                         "res": trace.nodes[j], "walltime": max(trace.request_time[j], run),
                         "profile": f"d{run}"})
        doc = {"nb_res": trace.max_nodes, "jobs": jobs, "profiles": profiles}
        workloads.append(str(folder / f"sequence_{n}.json"))
        write_workload(doc, workloads[-1])
    return str(platform), workloads


def run_exact(platform: str, workloads: list[str]) -> tuple[float, float, int, int]:
    """steps/s counting ``step()`` only and counting ``reset()`` too, steps and jobs, of the
    Batsim-exact mode on the sequences' workloads (the first valid action at every step)."""
    import gymnasium
    import numpy as np

    import coburst.gym  # noqa: F401 - registers the ids

    steps, jobs, t_step, t_all = 0, 0, 0.0, 0.0
    for workload in workloads:
        env = gymnasium.make("coburst/BatsimExact-v0", workload=workload, platform=platform, window=128)
        t0 = time.perf_counter()
        _, info = env.reset(seed=0)
        t_all += time.perf_counter() - t0
        terminated = truncated = False
        while not (terminated or truncated):
            action = int(np.flatnonzero(info["action_mask"])[0])
            t0 = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            dt = time.perf_counter() - t0
            t_step += dt
            t_all += dt
            steps += 1
        if truncated:
            raise RuntimeError(f"{workload}: the episode was truncated")
        jobs += int(env.unwrapped.result.schedule["nb_jobs"])
        env.close()
    return steps / t_step, steps / t_all, steps, jobs


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
    parser.add_argument("--no-exact", action="store_true", help="leave the Batsim-exact mode out")
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
    exact = "coburst BatsimExact-v0"
    #: environment -> per run (steps/s of step(), steps/s with reset(), jobs per step)
    figures: dict[str, list[tuple[float, float, float]]] = {COBURST: [], THEIRS: [], exact: []}
    tmp = tempfile.TemporaryDirectory(prefix="coburst-bench-rlsched-")
    inputs = None
    if not args.no_exact:
        import logging

        from coburst.runner import run

        logging.disable(logging.WARNING)
        inputs = exact_inputs(str(path), sequence_starts(str(path), args), Path(tmp.name))
        run("fcfs", platform=inputs[0], workloads=inputs[1][:1], export=str(Path(tmp.name) / "warm"))
    steps = exact_steps = 0
    for _ in range(args.repeat):
        s_step, s_all, steps, ours = run_coburst(str(path), args)
        jobs = 256 * args.episodes
        figures[COBURST].append((s_step, s_all, jobs / steps))
        if mod is not None:
            r_step, r_all, r_steps, theirs = run_rlscheduler(mod, str(path), args)
            figures[THEIRS].append((r_step, r_all, jobs / r_steps))
            if (r_steps, theirs) != (steps, ours):
                print(f"MISMATCH: RLScheduler {r_steps} steps, rewards {theirs}; coburst {steps}, {ours}")
                return 2
        if inputs is not None:
            e_step, e_all, exact_steps, e_jobs = run_exact(*inputs)
            figures[exact].append((e_step, e_all, e_jobs / exact_steps))
    tmp.cleanup()
    from bench_gym import machine  # (this folder)

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
    print(f"{args.trace}, {args.episodes} episodes of 256 jobs from seed {args.seed}, policy {args.policy}, "
          f"backfill {'on' if args.backfill else 'off'}: {steps} steps per run, {args.repeat} runs"
          + (", the same rewards on both" if mod is not None else ""))
    if inputs is not None:
        print(f"Batsim-exact: the same sequences as delay jobs on {Path(inputs[0]).name}, window 128, the first "
              f"valid action: {exact_steps} steps per run")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'environment':<26}{'steps/s (step)':>16}{'steps/s (+reset)':>18}{'jobs/s (+reset)':>17}")
    med = {}
    for name, runs in figures.items():
        if runs:
            med[name] = tuple(statistics.median(r[k] for r in runs) for k in range(2))
            per_step = statistics.median(r[2] for r in runs)
            print(f"{name:<26}{med[name][0]:>16.0f}{med[name][1]:>18.0f}{med[name][1] * per_step:>17.0f}")
    if THEIRS in med:
        for name in (COBURST, exact):
            if name in med:
                print(f"{name.split()[1] + ' / HPCEnv':<26}{med[name][0] / med[THEIRS][0]:>15.1f}x"
                      f"{med[name][1] / med[THEIRS][1]:>17.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
