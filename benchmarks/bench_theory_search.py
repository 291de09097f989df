"""Time of §5's search strategies (Kuchumov & Korkhov 2021) on §8 instances, against the
straightforward reference measured in the same run (target: all strategies on the
50 x n = 10 instances of one α range in <= 10 s).

    .venv/bin/python benchmarks/bench_theory_search.py [--count 50] [--n 10] [--ranges 0.05:0.15 0.45:0.55]
                                                       [--repeats 3] [--reference 2]

Per α range: the median over ``--repeats`` runs of the process CPU time of

* ``search``: :func:`coburst.theory.search.run` for PI, EI and UCB at k = 0.9 on ``--count``
  instances (the numba kernel, compiled before timing), and the same at all six k of
  Figure 6;
* ``FCS`` and ``OPT`` on the same instances (the yardsticks of the figures);
* ``reference``: ``tests/search_support.reference_search`` (anchors re-derived from every
  measurement at every step, plain Python) against the kernel on ``--reference`` instances
  of the range with ``--reference-n`` tasks (n = 10 takes the reference minutes per
  instance); its decisions are checked equal to the kernel's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from coburst.theory.fcs import fcs  # noqa: E402
from coburst.theory.generate import section8_instances  # noqa: E402
from coburst.theory.opt import solve_opt  # noqa: E402
from coburst.theory.search import search  # noqa: E402
from search_support import reference_search  # noqa: E402

KS = (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


def cpu(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--ranges", nargs="+", default=["0.05:0.15", "0.45:0.55", "0.85:0.95"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--reference", type=int, default=3)
    ap.add_argument("--reference-n", type=int, default=7)
    args = ap.parse_args()
    search(section8_instances(4, (0.5, 0.6), 1, 0)[0], "pi")  # compile / load the kernel
    print(f"CPU seconds, median of {args.repeats}; {args.count} instances of n = {args.n} per range")
    print(f"{'α range':12} {'search k=0.9':>13} {'search 6 k':>11} {'FCS':>7} {'OPT':>7} "
          f"{'ref n=' + str(args.reference_n):>10} {'ref/kernel':>10} {'steps/run':>9}")
    for text in args.ranges:
        lo, hi = (float(v) for v in text.split(":"))
        insts = section8_instances(args.n, (lo, hi), args.count, 2021)
        steps = []

        def one_k():
            for inst in insts:
                for s in ("pi", "ei", "ucb"):
                    steps.append(len(search(inst, s, k=0.9, check=False).steps))

        def six_k():
            for inst in insts:
                for s in ("pi", "ei", "ucb"):
                    for k in KS:
                        search(inst, s, k=k, check=False)

        t_one = cpu(one_k, args.repeats)
        t_six = cpu(six_k, args.repeats)
        t_fcs = cpu(lambda: [fcs(i) for i in insts], args.repeats)
        t_opt = cpu(lambda: [solve_opt(i) for i in insts], args.repeats)
        few = section8_instances(args.reference_n, (lo, hi), args.reference, 7)
        t_ref = t_ker = 0.0
        for inst in few:
            for s in ("pi", "ei", "ucb"):
                t0 = time.process_time()
                ref, _ = reference_search(inst, s, 0.9)
                t1 = time.process_time()
                got = [(st.mask, st.kind, st.done) for st in search(inst, s, k=0.9, check=False).steps]
                t_ref, t_ker = t_ref + t1 - t0, t_ker + time.process_time() - t1
                assert got == ref, (inst.id, s)
        per_run = sum(steps) / max(1, len(steps))
        ratio = f"{t_ref / t_ker:10.0f}" if t_ker > 0 else f"{'-':>10}"
        print(f"{text:12} {t_one:13.2f} {t_six:11.2f} {t_fcs:7.2f} {t_opt:7.2f} {t_ref:10.2f} {ratio} "
              f"{per_run:9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
