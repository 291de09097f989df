"""Long logs: wall time, peak memory of every process and jobs per second on the KTH
log repeated end to end, and memory against simulated time.

    .venv/bin/python benchmarks/bench_long_logs.py [--million] [--no-batsim] [--batsim PATH] [--swf PATH]

Workloads: the whole KTH-SP2 log (the Parallel Workloads Archive's, not in this repository:
``--swf PATH``, else ``KTH-SP2-1996-2.1-cln.swf`` in ``$COBURST_SWF_DIR``, else in
``../shared/data/swf`` beside the checkout) as delay jobs (``coburst workload swf --model delay
--repeat K``) on ``platforms/kth_sp2.xml``: x1 (28,467 jobs), x10 (284,670) and, with
``--million``, x36 (1,024,812 jobs; about a quarter of an hour).  Scheduler: EASY
backfilling (``schedulers/coburstEasy.py``, i.e. ``coburst run easy``).  Engines:

``coburst-inprocess``  ``coburst run easy --transport inprocess`` (one process);
``coburst-zmq``        ``coburst sim`` + a ``pybatsim`` process over ZeroMQ;
``batsim``             the real Batsim 4.2.1 + the same ``pybatsim`` process (x1 and x10 only).

Peak memory is each process's ``ru_maxrss`` (``os.wait4``, as benchmarks/bench_engines.py,
whose process helpers this reuses), CPU the user + system time of every process (the figure
to compare under load from other work).  Ratios are against Batsim measured in the same run.
Every ``_jobs.csv`` of a workload must be byte-identical across engines.  The in-process
runs sample their resident memory (``/proc/self/statm``) with the simulated date every 1000
``_jobs.csv`` rows into ``benchmarks/.cache/long_logs_memory_x{K}.csv``, drawn in
``docs/figures/long_logs_memory.png`` (``--repeats 36`` alone: ``long_logs_memory_1m.png``).

``--io-aware [N]``: instead, the IO-Aware model (``coburst workload swf --model io-aware``,
``platforms/dragonfly96.xml``, ``--enable-dynamic-jobs``; the whole KTH log, 28,453 jobs that
become about 1.18 million rows of static jobs and I/O sub-jobs, or its first N jobs) with
``backfill-sjf-1`` and ``plan-square-0``, ``coburst run`` in-process (one process): wall time,
peak RSS, static jobs and ``_jobs.csv`` rows per second; memory samples in
``benchmarks/.cache/long_logs_io_{scheduler}.csv``.  The whole log takes about half an hour per
scheduler on 2 shared cores.

Targets: 1M delay jobs EASY in-process <= 4 min and <= 300 MB; 285k <= 250 MB;
IO-Aware full KTH with plan-square-0 <= 400 MB.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engines import (  # noqa: E402
    CACHE, COBURST, KTH_SP2, PYBATSIM, ROOT, SWF, RunFailed, _free_port, _listening, _spawn, _wait, find_batsim,
    machine_facts, missing,
)

SCHEDULER = str(ROOT / "schedulers" / "coburstEasy.py")
FIGURE = ROOT / "docs" / "figures" / "long_logs_memory.png"
FIGURE_1M = ROOT / "docs" / "figures" / "long_logs_memory_1m.png"
SAMPLE_EVERY = 1000  # _jobs.csv rows between two memory samples


# ----------------------------------------------------------------------------- probe
def probe(csv_path: str, argv: list[str]) -> int:
    """``coburst run ...`` in this process, writing (rows, simulated date, RSS MB) samples."""
    import os

    from coburst.simulator import accounting

    page = os.sysconf("SC_PAGE_SIZE")
    out = open(csv_path, "w", encoding="utf-8")  # noqa: SIM115 - closed at exit
    out.write("rows,simulated_time,rss_mb\n")
    record = accounting.JobAccounting.record

    def sampled(sim, rec):
        record(sim, rec)
        if sim.nb_records % SAMPLE_EVERY == 0:
            with open("/proc/self/statm") as fh:
                rss = int(fh.read().split()[1]) * page / 1e6
            out.write(f"{sim.nb_records},{sim.kernel.now:.0f},{rss:.1f}\n")

    accounting.JobAccounting.record = sampled
    from coburst.cli.main import main

    try:
        return main(["run", *argv])
    finally:
        out.close()


# ----------------------------------------------------------------------------- inputs
def workload(repeat: int) -> tuple[Path, int]:
    CACHE.mkdir(exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    out = CACHE / f"kth_delay_x{repeat}.json"
    if not out.exists() or out.stat().st_mtime < SWF.stat().st_mtime:
        subprocess.run([str(COBURST), "workload", "swf", str(SWF), "--model", "delay", "-p", str(KTH_SP2),
                        "--repeat", str(repeat), "-q", "-o", str(out)], check=True, cwd=ROOT)
    import ijson

    with open(out, "rb") as fh:
        n = sum(1 for _ in ijson.items(fh, "jobs.item"))
    return out, n


# ----------------------------------------------------------------------------- running
def run(engine: str, wl: Path, prefix: Path, batsim: str | None, samples: Path | None) -> dict:
    out = prefix.parent
    if engine == "coburst-inprocess":
        t0 = time.perf_counter()
        sim = _spawn([sys.executable, __file__, "--probe", str(samples), "easy", "--transport", "inprocess", "-q",
                      "-p", str(KTH_SP2), "-w", str(wl), "-e", str(prefix), "--timeout", "3600"],
                     out / f"{prefix.name}.sim.log")
        _wait([sim], engine)
        return {"wall": sim.end - t0, "cpu": sim.cpu, "rss_sim": sim.rss_mb, "rss_sched": 0.0}
    port = _free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    t0 = time.perf_counter()
    sched = _spawn([str(PYBATSIM), SCHEDULER, "-s", endpoint, "-t", "36000000", "-v", "warning"],
                   out / f"{prefix.name}.sched.log")
    while not _listening(port):
        if sched.status is not None or time.perf_counter() - t0 > 60:
            sched.popen.kill()
            raise RunFailed(f"{engine}: the scheduler does not listen on {endpoint}")
        time.sleep(0.005)
    if engine == "batsim":
        cmd = [batsim, "-p", str(KTH_SP2), "-w", str(wl), "-e", str(prefix), "-s", endpoint]
    else:
        cmd = [str(COBURST), "sim", "-p", str(KTH_SP2), "-w", str(wl), "-e", str(prefix), "-s", endpoint,
               "--timeout", "3600", "-q"]
    sim = _spawn(cmd, out / f"{prefix.name}.sim.log")
    _wait([sim, sched], engine)
    return {"wall": max(sim.end, sched.end) - t0, "cpu": sim.cpu + sched.cpu, "rss_sim": sim.rss_mb,
            "rss_sched": sched.rss_mb}


IO_SCHEDULERS = ("backfill-sjf-1", "plan-square-0")
DRAGONFLY = ROOT / "platforms" / "dragonfly96.xml"


def io_workload(max_jobs: int | None) -> tuple[Path, int]:
    CACHE.mkdir(exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    out = CACHE / f"kth_io_{max_jobs or 'all'}.json"
    if not out.exists() or out.stat().st_mtime < SWF.stat().st_mtime:
        subprocess.run([str(COBURST), "workload", "swf", str(SWF), "--model", "io-aware", "-p", str(DRAGONFLY),
                        *(["--max-jobs", str(max_jobs)] if max_jobs else []), "-q", "-o", str(out)],
                       check=True, cwd=ROOT)
    import ijson

    with open(out, "rb") as fh:
        n = sum(1 for _ in ijson.items(fh, "jobs.item"))
    return out, n


def io_aware(max_jobs: int | None, tmp: str) -> None:
    """The IO-Aware rows (module doc)."""
    wl, n = io_workload(max_jobs)
    print(f"{'workload':<14}{'jobs':>8}  {'scheduler':<16}{'wall s':>9}{'CPU s':>9}{'rows':>10}{'jobs/s':>9}"
          f"{'rows/s':>9}{'peak MB':>9}")
    for sched in IO_SCHEDULERS:
        prefix = Path(tmp) / f"io_{sched}"
        samples = CACHE / f"long_logs_io_{sched}.csv"
        t0 = time.perf_counter()
        proc = _spawn([sys.executable, __file__, "--probe", str(samples), sched, "--enable-dynamic-jobs",
                       "--transport", "inprocess", "-q", "-p", str(DRAGONFLY), "-w", str(wl), "-e", str(prefix),
                       "--timeout", "14400"], Path(tmp) / f"io_{sched}.log")
        try:
            _wait([proc], sched)
        except RunFailed as exc:
            print(f"{'KTH io-aware':<14}{n:>8}  {sched:<16} FAILED: {exc}")
            continue
        wall = proc.end - t0
        with open(f"{prefix}_jobs.csv", "rb") as fh:
            rows = sum(1 for _ in fh) - 1
        print(f"{'KTH io-aware':<14}{n:>8}  {sched:<16}{wall:>9.1f}{proc.cpu:>9.1f}{rows:>10}{n / wall:>9.0f}"
              f"{rows / wall:>9.0f}{proc.rss_mb:>9.0f}", flush=True)


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def plot(curves: dict[int, Path]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for repeat, path in sorted(curves.items()):
        with open(path) as fh:
            rows = list(csv.DictReader(fh))
        if rows:
            ax.plot([float(r["simulated_time"]) / 86400 / 365 for r in rows], [float(r["rss_mb"]) for r in rows],
                    label=f"KTH x{repeat} ({int(rows[-1]['rows']):,} jobs written)")
    ax.set_xlabel("simulated time (years)")
    ax.set_ylabel("resident memory (MB)")
    ax.set_ylim(bottom=0)
    ax.set_title("coburst run easy, in-process: memory against simulated time")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    figure = figure_for(curves)
    figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(figure, dpi=120)


def figure_for(curves: dict) -> Path:
    """The README's figure these curves draw: the million-job one when KTH x36 is the only
    curve (``--repeats 36``), else the x1 / x10 one."""
    return FIGURE_1M if set(curves) == {36} else FIGURE


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--probe":
        sys.exit(probe(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--million", action="store_true", help="also KTH x36 (1,024,812 jobs), coburst only")
    parser.add_argument("--no-batsim", action="store_true", help="skip the real Batsim")
    parser.add_argument("--batsim", help="the Batsim binary (default $BATSIM, else batsim on PATH)")
    parser.add_argument("--swf", type=Path, help="the KTH-SP2 log (default KTH-SP2-1996-2.1-cln.swf in "
                                                 "$COBURST_SWF_DIR, else in ../shared/data/swf beside the checkout)")
    parser.add_argument("--repeats", default=None, help="comma-separated log repetitions (default 1,10[,36])")
    parser.add_argument("--io-aware", nargs="?", type=int, const=0, default=None, metavar="N",
                        help="the IO-Aware KTH rows instead (first N jobs; without N: the whole log)")
    args = parser.parse_args()
    global SWF
    SWF = args.swf.resolve() if args.swf else SWF
    if not SWF.is_file():
        parser.error(f"--swf {args.swf}: no such file" if args.swf else missing(SWF))
    if args.io_aware is not None:
        facts = machine_facts(None)
        print(f"# long logs, IO-Aware, {facts['date']}, {facts['cores']} cores {facts['cpu']}, "
              f"Python {facts['python']}")
        with tempfile.TemporaryDirectory(prefix="coburst-longlogs-") as tmp:
            io_aware(args.io_aware or None, tmp)
        return
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    repeats = [int(x) for x in args.repeats.split(",")] if args.repeats else [1, 10] + ([36] if args.million else [])
    facts = machine_facts(batsim)
    print(f"# long logs, {facts['date']}, {facts['cores']} cores {facts['cpu']}, Python {facts['python']}")
    header = (f"{'workload':<10}{'jobs':>10}  {'engine':<18}{'wall s':>9}{'CPU s':>9}{'jobs/s':>9}{'sim MB':>9}"
              f"{'sched MB':>9}"
              f"{'total MB':>10}  {'vs batsim (wall, MB)':<22}identical")
    print(header)
    curves: dict[int, Path] = {}
    with tempfile.TemporaryDirectory(prefix="coburst-longlogs-") as tmp:
        for repeat in repeats:
            wl, n = workload(repeat)
            engines = ["coburst-inprocess", "coburst-zmq"] + (["batsim"] if batsim and repeat <= 10 else [])
            results = {}
            for engine in engines:
                prefix = Path(tmp) / f"x{repeat}_{engine}"
                samples = CACHE / f"long_logs_memory_x{repeat}.csv" if engine == "coburst-inprocess" else None
                try:
                    results[engine] = run(engine, wl, prefix, batsim, samples)
                except RunFailed as exc:
                    print(f"x{repeat:<9}{n:>10}  {engine:<18} FAILED: {exc}")
                    continue
                results[engine]["md5"] = _md5(Path(f"{prefix}_jobs.csv"))
                if samples is not None:
                    curves[repeat] = samples
            ref = results.get("batsim")
            md5s = {r["md5"] for r in results.values()}
            for engine, r in results.items():
                total = r["rss_sim"] + r["rss_sched"]
                vs = ""
                if ref is not None and engine != "batsim":
                    vs = f"{r['wall'] / ref['wall']:.2f}x, {total / (ref['rss_sim'] + ref['rss_sched']):.2f}x"
                print(f"x{repeat:<9}{n:>10}  {engine:<18}{r['wall']:>9.1f}{r['cpu']:>9.1f}{n / r['wall']:>9.0f}"
                      f"{r['rss_sim']:>9.0f}"
                      f"{r['rss_sched']:>9.0f}{total:>10.0f}  {vs:<22}{'yes' if len(md5s) == 1 else 'NO'}",
                      flush=True)
    if curves:
        plot(curves)
        print(f"memory against simulated time: {figure_for(curves).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
