#!/usr/bin/env python3
"""Trains the NumPy masked-PPO agent (:mod:`coburst.gym.ppo`) in ``coburst/RLScheduler-v0``
on an SWF log and sets it beside RLScheduler's heuristics on held-back sequences:

    nice -n 10 .venv/bin/python scripts/train_ppo.py --trace lublin --time-limit 30
    nice -n 10 .venv/bin/python scripts/train_ppo.py --trace kth --time-limit 30 --out out/ppo_kth

``--trace``: ``lublin`` (RLScheduler's ``lublin_256.swf``), ``lublin2`` (``lublin_256_new2.swf``),
``kth`` (the Parallel Workloads Archive's ``KTH-SP2-1996-2.1-cln.swf``), all read from the SWF
folder (``../shared/data/swf``, or ``$COBURST_SWF_DIR``), or the path of any SWF log.

1. The log's jobs are split by position: the first ``1 - --test-fraction`` (0.75) for
   training, the rest for testing.  Training episodes are ``--length`` (256) jobs starting at
   random in the training part and ending inside it; the test sequences are ``--length``-job
   blocks of the test part (``--test-sequences``; by default as many disjoint blocks as fit;
   more overlap).  No test job is ever seen in training.
2. PPO (without backfilling, as RLScheduler trains for its headline table) runs for
   ``--epochs`` rounds of at least ``--steps-per-epoch`` decisions (whole episodes), stopping
   early once ``--time-limit`` minutes of wall clock have passed; every round is logged.
3. On the test sequences: the trained policy (its most probable job, through the 128-job
   window), RLScheduler's FCFS, SJF and F1 over the whole queue (``schedule_sequence``, its
   baselines) and EASY backfilling (FCFS with the environment's backfilling), each sequence's
   mean bounded slowdown, their mean with a 95 % Student-t interval, and the paired
   difference PPO - F1.  On the Lublin logs the agent is also run on the sequences of
   RLScheduler's README protocol (seed 1, ten sequences of 1024 jobs), beside its published
   figures; those sequences are not held back (RLScheduler's agent trains on the whole log too).
4. ``--out`` (``out/ppo``) receives ``policy.npz`` (:func:`coburst.gym.ppo.load_policy`),
   ``history.json`` (the rounds) and ``results.json`` (the table's numbers); the table is
   printed in Markdown.

Errors (a missing or unreadable log, a log too short to split) print the file and the
problem and exit with status 2 (arguments) or 1.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread: deterministic sums, polite on shared machines

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from shared_data import KTH, LUBLIN_256, LUBLIN_256_NEW2, missing, swf_log  # noqa: E402

TRACES = {"lublin": LUBLIN_256, "lublin2": LUBLIN_256_NEW2, "kth": KTH}
#: RLScheduler's README, bounded slowdown, Lublin rows (ten 1024-job sequences, seed 1)
PUBLISHED = {LUBLIN_256: {"name": "Lublin-1", "fcfs": 7273.77, "sjf": 277.35, "f1": 258.37, "rl": 254.67,
                          "easy": 235.82},
             LUBLIN_256_NEW2: {"name": "Lublin-2", "fcfs": 7842.47, "sjf": 787.89, "f1": 698.34, "rl": 724.51,
                               "easy": 247.61}}
POLICIES = [("ppo", "PPO (this run, greedy)"), ("fcfs", "FCFS"), ("sjf", "SJF"), ("f1", "F1"),
            ("easy", "EASY backfilling (FCFS)")]


class Failure(Exception):
    """A problem to report as ``file: problem`` before exiting 1."""


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", default="lublin",
                   help="lublin, lublin2, kth, or the path of an SWF log (default: lublin)")
    p.add_argument("--epochs", type=int, default=10000, help="training rounds at most (default: 10000)")
    p.add_argument("--steps-per-epoch", type=int, default=4096, help="decisions per round, at least (default: 4096)")
    p.add_argument("--seed", type=int, default=0, help="the seed of everything random (default: 0)")
    p.add_argument("--out", default="out/ppo", help="output folder (default: out/ppo)")
    p.add_argument("--time-limit", type=float, default=30.0, help="training wall clock, minutes (default: 30)")
    p.add_argument("--length", type=int, default=256, help="jobs per episode and test sequence (default: 256)")
    p.add_argument("--test-fraction", type=float, default=0.25, help="the log's last part held back (default: 0.25)")
    p.add_argument("--test-sequences", type=int, default=0, help="test sequences (default: the disjoint blocks)")
    p.add_argument("--no-published", action="store_true", help="skip RLScheduler's README protocol (Lublin logs)")
    a = p.parse_args(argv)
    for name in ("epochs", "steps_per_epoch", "length"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.time_limit <= 0:
        p.error("--time-limit must be positive (minutes)")
    if not 0 < a.test_fraction < 1:
        p.error("--test-fraction must lie strictly between 0 and 1")
    if a.test_sequences < 0 or a.seed < 0:
        p.error("--test-sequences and --seed must be non-negative")
    return a


def trace_path(arg: str) -> Path:
    if arg in TRACES:
        path = swf_log(TRACES[arg])
        problem = missing(path)
        if problem:
            raise Failure(f"{path}: no such file {problem.split(' ', 2)[2]}")
        return path
    path = Path(arg)
    if not path.is_file():
        raise Failure(f"{path}: no such file (--trace: lublin, lublin2, kth, or an SWF log's path)")
    return path


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and the 95 % Student-t interval's half-width (nan for one value)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return float(x.mean()), math.nan, len(x)
    return float(x.mean()), float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))), len(x)


def evaluate(path: Path, policy, starts: list[int], length: int) -> dict[str, list[float]]:
    """Each policy's mean bounded slowdown on each sequence."""
    from coburst.gym.ppo import run_episode
    from coburst.gym.rlsched import RLSchedulerEnv, schedule_sequence

    env = RLSchedulerEnv(path, sequence_length=length)
    trace = env.trace
    out: dict[str, list[float]] = {k: [] for k, _ in POLICIES}
    for s in starts:
        out["ppo"].append(run_episode(env, lambda obs, e: policy.act(obs, e.unwrapped.action_masks()), s))
        for h in ("fcfs", "sjf", "f1"):
            out[h].append(schedule_sequence(trace, s, h, length=length)[1])
        out["easy"].append(schedule_sequence(trace, s, "fcfs", backfill=True, length=length)[1])
    return out


def fmt(mean: float, half: float) -> str:
    return f"{mean:.2f} ± {half:.2f}" if not math.isnan(half) else f"{mean:.2f}"


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    try:
        path = trace_path(a.trace)
        from coburst.gym.ppo import PPO
        from coburst.gym.rlsched import RLSchedulerEnv, gym017_random_state, load_trace

        try:
            trace = load_trace(path)
        except (OSError, UnicodeError, ValueError) as exc:
            msg = str(exc)
            raise Failure(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
        n, L = trace.size, a.length
        split = int(round(n * (1 - a.test_fraction)))
        if split - L < L + 1 or n - split < L + 1:
            raise Failure(f"{path}: {n} jobs are too few to train and test on {L}-job sequences "
                          f"(training part {split} jobs, test part {n - split})")
        blocks = (n - 1 - split) // L
        count = a.test_sequences or blocks
        hi = n - L - 1
        test_starts = [split + (i * (hi - split)) // max(1, count - 1) for i in range(count)] if count > 1 else [split]
        if count <= blocks:
            test_starts = [split + i * L for i in range(count)]
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
    except Failure as exc:
        print(f"train_ppo.py: error: {exc}", file=sys.stderr)
        return 1

    env = RLSchedulerEnv(path, sequence_length=L)
    ppo = PPO(a.seed)

    def starts(rng: np.random.Generator) -> int:  # training episodes end inside the training part
        return int(rng.integers(0, split - L + 1))

    def log(rec: dict) -> None:
        if rec["epoch"] == 1 or rec["epoch"] % 10 == 0:
            print(f"epoch {rec['epoch']:5d}  {rec['elapsed'] / 60:6.1f} min  episodes {rec['episodes']:3d}  "
                  f"training bsld {rec['bsld_mean']:10.2f}  kl {rec['kl']:.4f}  entropy {rec['entropy']:.3f}  "
                  f"vloss {rec['vloss']:.4f}", flush=True)

    print(f"{path.name}: {n} jobs; training on jobs 0-{split - 1}, testing on {count} sequences of {L} jobs "
          f"in jobs {split}-{n - 1}; seed {a.seed}, {a.steps_per_epoch} steps per epoch, at most {a.epochs} "
          f"epochs or {a.time_limit:g} min", flush=True)
    t0 = time.monotonic()
    history = ppo.train(env, a.epochs, a.steps_per_epoch, starts, time_limit=a.time_limit * 60, log=log)
    train_s = time.monotonic() - t0
    ppo.save(out / "policy.npz")
    (out / "history.json").write_text(json.dumps(history, indent=1))
    steps = sum(h["steps"] for h in history)
    episodes = sum(h["episodes"] for h in history)

    res = evaluate(path, ppo.policy, test_starts, L)
    summary = {k: t_interval(v) for k, v in res.items()}
    diff = t_interval([p - f for p, f in zip(res["ppo"], res["f1"])])
    pub = PUBLISHED.get(path.name) if not a.no_published else None
    proto = None
    if pub:
        penv = RLSchedulerEnv(path, sequence_length=1024)
        rng = gym017_random_state(1)
        pstarts = [int(rng.randint(penv.low, penv.high)) for _ in range(10)]
        proto = {k: float(np.mean(v)) for k, v in evaluate(path, ppo.policy, pstarts, 1024).items()}

    print()
    print(f"Trace `{path.name}`, seed {a.seed}: {len(history)} epochs, {episodes} episodes, {steps} decisions "
          f"in {train_s / 60:.1f} min; {count} held-back test sequences of {L} jobs (jobs {split}-{n - 1}). "
          "Mean bounded slowdown (10 s), without backfilling unless stated; 95 % t-interval.")
    print()
    head = "| policy | test sequences, mean ± 95 % CI |"
    rule = "|--------|------|"
    if pub:
        head += f" README protocol (10 × 1024 jobs, seed 1) | RLScheduler's README ({pub['name']}) |"
        rule += "------|------|"
    print(head)
    print(rule)
    for key, label in POLICIES:
        row = f"| {label} | {fmt(*summary[key][:2])} |"
        if pub:
            published = {"ppo": pub["rl"]}.get(key, pub.get(key))
            row += f" {proto[key]:.2f} | {published:.2f}{' (its RL agent)' if key == 'ppo' else ''} |"
        print(row)
    row = f"| PPO - F1, paired | {fmt(*diff[:2])} |"
    if pub:
        row += f" {proto['ppo'] - proto['f1']:.2f} | {pub['rl'] - pub['f1']:.2f} |"
    print(row)
    print()
    verdict = "at or below" if summary["ppo"][0] <= summary["f1"][0] else "above"
    print(f"PPO's test mean is {verdict} F1's ({summary['ppo'][0]:.2f} vs {summary['f1'][0]:.2f}; paired "
          f"difference {fmt(*diff[:2])}).")
    results = {"trace": str(path), "seed": a.seed, "epochs": len(history), "episodes": episodes, "steps": steps,
               "train_minutes": train_s / 60, "steps_per_epoch": a.steps_per_epoch, "length": L,
               "split": split, "test_starts": test_starts, "per_sequence": res,
               "summary": {k: {"mean": m, "ci95": h, "n": c} for k, (m, h, c) in summary.items()},
               "ppo_minus_f1": {"mean": diff[0], "ci95": diff[1]}, "readme_protocol": proto, "published": pub,
               "python": platform.python_version(), "numpy": np.__version__}
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
