"""Benchmarks of coburst.theory against its speed targets, printing figures:

    .venv/bin/python benchmarks/bench_theory.py            # all parts
    .venv/bin/python benchmarks/bench_theory.py --quick    # fewer repetitions, no n = 20

1. OPT at n = 16 (65,535 combinations): full enumeration (target <= 0.5 s) and column
   generation, same answer; the full LP is the baseline of the ratio.
2. OPT at n = 20 (1,048,575 combinations) by column generation (target <= 10 s).
3. All strategies (OPT, FCS, and the §5 PI/EI/UCB when present) on 50 x n = 10 §8 instances
   of one α range (target <= 10 s).
4. FCS / OPT over the §8 generator: 50 instances x 9 α ranges at n = 10 (Theorem 1's bound
   holds there), and over the nested-stall family (where it does not).

Times are medians of several runs (``--repeat``), wall clock, on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coburst.theory.fcs import fcs
from coburst.theory.generate import section8_instance, section8_instances
from coburst.theory.opt import solve_opt

ALPHAS = [(round(0.05 + 0.1 * k, 2), round(0.15 + 0.1 * k, 2)) for k in range(9)]


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def part_opt16(repeat):
    t_gen, inst = timed(lambda: section8_instance(16, (0.45, 0.55), np.random.default_rng(16)), 1)
    t_full, full = timed(lambda: solve_opt(inst, method="full"), repeat)
    t_cg, cg = timed(lambda: solve_opt(inst, method="colgen"), repeat)
    print(f"[1] OPT n=16 (65,535 combinations; instance generated in {t_gen:.2f} s)")
    print(f"    full LP (3):        {t_full:.3f} s  (target <= 0.5 s)  C_max = {full.makespan:.9f}")
    print(f"    column generation:  {t_cg:.3f} s  ({cg.rounds} rounds, {t_full / t_cg:.1f}x faster than full)"
          f"  C_max = {cg.makespan:.9f}  |diff| = {abs(cg.makespan - full.makespan):.1e}")


def part_opt20(repeat):
    t_gen, inst = timed(lambda: section8_instance(20, (0.45, 0.55), np.random.default_rng(20)), 1)
    t_cg, cg = timed(lambda: solve_opt(inst, method="colgen"), repeat)
    print(f"[2] OPT n=20 (1,048,575 combinations; instance generated in {t_gen:.2f} s, "
          f"{inst.speeds.nbytes / 2**20:.0f} MiB of speeds)")
    print(f"    column generation:  {t_cg:.3f} s  (target <= 10 s; {cg.rounds} rounds, {len(cg.times)} combinations "
          f"used)  C_max = {cg.makespan:.6f}")


def part_strategies(repeat):
    insts = section8_instances(10, (0.45, 0.55), 50, seed=10)
    try:
        from coburst.theory.search import run
    except ImportError:  # pragma: no cover
        run = None
    parts = {"OPT": lambda: [solve_opt(i).makespan for i in insts],
             "FCS": lambda: [fcs(i).makespan for i in insts]}
    if run is not None:
        for s in ("pi", "ei", "ucb"):
            parts[s.upper()] = (lambda s=s: [run(i, s, k=0.9, interval=10.0).makespan for i in insts])
    total, res = 0.0, {}
    for name, fn in parts.items():
        t, res[name] = timed(fn, repeat)
        total += t
    opt = np.array(res["OPT"])
    print("[3] all strategies on 50 x n=10 §8 instances, alpha in [0.45, 0.55] (k = 0.9, interval 10)")
    for name in parts:
        r = np.array(res[name]) / opt
        print(f"    {name:4s} mean ratio {r.mean():.4f}  max {r.max():.4f}")
    print(f"    total {total:.2f} s  (target <= 10 s)  " + "  ".join(
        f"{name} {timed(fn, 1)[0]:.2f} s" for name, fn in parts.items()))


def part_ratios(count):
    print(f"[4] FCS / OPT on the §8 generator, n = 10, {count} instances per alpha range (ties to the first mask)")
    worst = 0.0
    for k, alpha in enumerate(ALPHAS):
        r = np.array([fcs(i).makespan / solve_opt(i).makespan for i in section8_instances(10, alpha, count, 1000 + k)])
        worst = max(worst, r.max())
        print(f"    alpha [{alpha[0]:.2f}, {alpha[1]:.2f}]  mean {r.mean():.4f}  max {r.max():.4f}")
    print(f"    worst over {9 * count} instances: {worst:.4f}  (Theorem 1's bound 2 holds here)")
    from coburst.theory.exact import certify_opt
    from coburst.theory.fcs import fcs_exact
    from coburst.theory.worst_case import nested_caps_for, nested_limit, nested_stall_instance

    print("    nested-stall family (exact arithmetic; limit 1 + sum c_k/p_k as eps -> 0):")
    for n in (7, 8, 10, 12, 14):
        caps = nested_caps_for(n)
        inst = nested_stall_instance(caps)
        cert = certify_opt(inst)
        ratio = fcs_exact(inst).makespan / cert.upper
        print(f"    n = {n:2d}  caps {caps}  FCS/OPT = {float(ratio):.4f}  (limit {float(nested_limit(caps)):.4f},"
              f" OPT {'exact' if cert.exact is not None else 'upper bound'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ratio-count", type=int, default=50)
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    part_opt16(repeat)
    if not args.quick:
        part_opt20(repeat)
    part_strategies(repeat)
    part_ratios(10 if args.quick else args.ratio_count)


if __name__ == "__main__":
    main()
