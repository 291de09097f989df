"""Engines side by side: the real Batsim 4.2.1, ``coburst sim`` and ``coburst run --transport inprocess``.

    .venv/bin/python benchmarks/bench_engines.py [--repeat N] [--quick] [--scaling] [--batsim PATH]
                                                 [--against DIR]

Same inputs, same pybatsim scheduler, three engines:

``batsim``             the real ``batsim`` binary + a ``pybatsim SCHED -s tcp://127.0.0.1:PORT`` process;
``coburst-zmq``        ``coburst sim ... -s tcp://127.0.0.1:PORT`` + the same pybatsim process;
``coburst-inprocess``  ``coburst run SCHED --transport inprocess -q ...``: one process, the
                       scheduler loaded into the simulator.

For every run: **whole-run wall time** (from launching the first process until the last one
has exited; the scheduler is started first and the simulator as soon as the scheduler
listens, so the scheduler's start-up is counted, as it is in-process), **CPU time** (user +
sys of every process, from ``os.wait4``: a process's figures include its reaped children,
e.g. coburst's forked platform check) and **peak memory** (``ru_maxrss`` of each process,
simulator and scheduler separately and summed).  Runs are sequential (never two at once),
engines interleaved within each repetition; each figure is the median over ``--repeat``
runs (medians taken figure by figure).  Ratios are coburst / batsim.  Every run must exit 0,
and the ``_jobs.csv`` of all runs of a case must be byte-identical ("outputs identical").
All processes get ``PYTHONHASHSEED=0``; pybatsim runs with ``-v warning`` (as in-process).

Cases:

``delay5000``   ``workloads/kth_sp2_delay_5000.json`` (5000 KTH jobs as delay jobs) on
                ``platforms/kth_sp2.xml`` (100 nodes), pybatsim's ``easyBackfill``;
``kth2000-ph``  the first 2000 KTH jobs as Alloc-Only ``parallel_homogeneous`` jobs
                (``coburst workload swf --model alloc-only --max-jobs 2000 --seed 0``) on
                ``platforms/dragonfly96.xml``, ``schedulers/coburstEasy.py`` (burst-buffer aware);
``kth-full``    the whole KTH log as delay jobs on ``kth_sp2.xml`` (28,467 jobs: on 100 nodes only
                9 records are dropped; 28,453 on the 96-node dragonfly), ``easyBackfill``
                (skipped with ``--quick``).

The KTH log is the Parallel Workloads Archive's ``KTH-SP2-1996-2.1-cln.swf``: ``--swf PATH``,
else in ``$COBURST_SWF_DIR``, else in ``../shared/data/swf`` beside the checkout (not in this
repository); without it the two cases that read it are skipped, saying so.

``--against DIR``: two more engines, ``before-zmq`` and ``before-inprocess``: the same
commands with another coburst source tree first on ``PYTHONPATH`` (e.g. ``git archive REV | tar
-x -C DIR``: a copy of the tree before a change), interleaved with the others; each case then
also prints coburst / before ratios (wall and CPU), i.e. a change's effect measured in the same
minutes on a shared machine.  Both trees are byte-compiled first and the runs may write
bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped: a stale ``.pyc`` costs ~30 ms per run).

Generated inputs are cached in ``benchmarks/.cache/`` (self-ignored by git: the folder
holds a ``.gitignore`` of ``*``), rebuilt when older than their sources.

``--scaling`` (coburst in-process only): synthetic delay workloads of 1k (fixed-cost probe),
10k and 100k jobs on flat clusters of 1k and 10k nodes (``coburst platform cluster``),
``benchmarks/benchFcfs.py`` (minimal FCFS), seeded log-uniform sizes (1 to nodes/16) and run
times (1 min to 2 h, walltime 2x), Poisson arrivals at an offered load of 0.7.  Reports jobs
per second of wall time, CPU, peak RSS, and the marginal cost per job between sizes (flat
= linear).  1M jobs is opt-in (``--scaling-max 1000000``); otherwise it is extrapolated from
the 10k -> 100k marginal costs and labelled so.

The real Batsim is ``--batsim PATH``, else ``$BATSIM``, else ``batsim`` on ``PATH``; without it
only coburst's figures are printed.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform as pyplatform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
CACHE = BENCH / ".cache"
VENV_BIN = Path(sys.executable).parent
COBURST = VENV_BIN / "coburst"
PYBATSIM = VENV_BIN / "pybatsim"
sys.path.insert(0, str(ROOT / "tests"))
from shared_data import missing, swf_log  # noqa: E402  (tests/shared_data.py: where the KTH log lies)

SWF = swf_log()  # --swf replaces it
KTH_SP2 = ROOT / "platforms" / "kth_sp2.xml"
DRAGONFLY = ROOT / "platforms" / "dragonfly96.xml"
ENGINES = ("batsim", "coburst-zmq", "coburst-inprocess")
RUN_TIMEOUT = 4 * 3600.0  # seconds; a run past it is killed and reported as failed
ENV = {**os.environ, "PYTHONHASHSEED": "0"}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # an edited module would be compiled at every run
#: ``before-*`` engines' environment (``--against``)
ENV_AGAINST: dict | None = None


# ----------------------------------------------------------------------------- inputs

def _ensure_cache() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    ignore = CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# generated inputs of benchmarks/bench_engines.py\n*\n")


def _stale(target: Path, sources: list[Path]) -> bool:
    if not target.exists():
        return True
    mtime = target.stat().st_mtime
    return any(s.exists() and s.stat().st_mtime > mtime for s in sources)


def _workload_sources() -> list[Path]:
    return [SWF, *sorted((ROOT / "coburst" / "workloads").glob("*.py"))]


def kth2000_ph() -> Path:
    """First 2000 valid KTH jobs, Alloc-Only parallel_homogeneous, for dragonfly96.xml, seed 0."""
    _ensure_cache()
    out = CACHE / "kth2000_alloc_only_dragonfly96_s0.json"
    if _stale(out, [*_workload_sources(), DRAGONFLY, ROOT / "models" / "bb_request.json"]):
        subprocess.run([sys.executable, "-m", "coburst", "workload", "swf", str(SWF), "--model", "alloc-only",
                        "-p", str(DRAGONFLY), "--seed", "0", "--max-jobs", "2000", "-q", "-o", str(out)],
                       check=True, env=ENV)
    return out


def kth_full_delay() -> Path:
    """The whole KTH log as delay jobs for the 100-node kth_sp2.xml (28,467 jobs)."""
    _ensure_cache()
    out = CACHE / "kth_sp2_delay_full.json"
    if _stale(out, _workload_sources()):
        from coburst.workloads.delay import write_delay_workload

        write_delay_workload(SWF, out, 100, None)
    return out


def cluster_platform(nodes: int) -> Path:
    _ensure_cache()
    out = CACHE / f"cluster_{nodes}.xml"
    if _stale(out, [ROOT / "coburst" / "platforms" / "cluster.py"]):
        subprocess.run([str(COBURST), "platform", "cluster", "--nodes", str(nodes), "--id", "c",
                        "--no-record-command", "-o", str(out)], check=True, env=ENV,
                       stdout=subprocess.DEVNULL)
    return out


SCALING_LOAD = 0.7
SCALING_SEED = 1


def scaling_workload(jobs: int, nodes: int, seed: int = SCALING_SEED) -> Path:
    """Poisson arrivals, log-uniform sizes in [1, nodes/16] and run times in [60 s, 2 h]
    (integers, so profiles are shared), walltime 2x run time, offered load SCALING_LOAD."""
    import math

    import numpy as np

    _ensure_cache()
    out = CACHE / f"scaling_delay_{jobs}_{nodes}_s{seed}.json"
    if out.exists():
        return out
    rng = np.random.default_rng(seed)
    top = math.log2(max(1, nodes // 16))
    res = np.maximum(1, np.round(2.0 ** rng.uniform(0, top, jobs))).astype(int)
    run = np.round(np.exp(rng.uniform(math.log(60), math.log(7200), jobs))).astype(int)
    rate = SCALING_LOAD * nodes / (float(res.mean()) * float(run.mean()))  # jobs per second
    sub = np.round(np.cumsum(rng.exponential(1.0 / rate, jobs)), 3)
    sub -= sub[0]
    names = {}
    lines = []
    for i in range(jobs):
        r = int(run[i])
        names.setdefault(r, f"d{r}")
        lines.append(f'{{"id":{i},"subtime":{float(sub[i])!r},"walltime":{2 * r},"res":{int(res[i])},'
                     f'"profile":"d{r}"}}')
    profiles = ",".join(f'"d{r}":{{"type":"delay","delay":{r}}}' for r in sorted(names))
    tmp = out.with_suffix(".tmp")
    head = (f'{{"nb_res":{nodes},"description":"bench_engines scaling: {jobs} delay jobs, offered load '
            f'{SCALING_LOAD}, seed {seed}",\n"jobs":[\n')
    tmp.write_text(head + ",\n".join(lines) + f'],\n"profiles":{{{profiles}}}}}\n')
    tmp.replace(out)
    return out


# ----------------------------------------------------------------------------- running

@dataclass
class Proc:
    popen: subprocess.Popen
    log: Path
    status: int | None = None
    usage: object = None
    end: float | None = None
    thread: threading.Thread | None = None

    def reap(self) -> None:
        _, status, usage = os.wait4(self.popen.pid, 0)
        self.end = time.perf_counter()
        self.status = os.waitstatus_to_exitcode(status)
        self.usage = usage
        self.popen.returncode = self.status

    def start_reaper(self) -> "Proc":
        self.thread = threading.Thread(target=self.reap, daemon=True)
        self.thread.start()
        return self

    @property
    def cpu(self) -> float:
        return self.usage.ru_utime + self.usage.ru_stime

    @property
    def rss_mb(self) -> float:
        return self.usage.ru_maxrss / 1024.0  # Linux: KiB

    def tail(self, n: int = 15) -> str:
        text = self.log.read_text(errors="replace").strip().splitlines()
        return "\n      ".join(text[-n:])


class RunFailed(RuntimeError):
    pass


def _spawn(cmd: list[str], log: Path, env: dict | None = None) -> Proc:
    with open(log, "w") as fh:
        popen = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env or ENV, cwd=ROOT)
    return Proc(popen, log).start_reaper()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    """Is a TCP socket listening on 127.0.0.1:port?  (Read from /proc: connecting would
    disturb ZeroMQ.)"""
    local = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/tcp") as fh:
            next(fh)
            for line in fh:
                parts = line.split()
                if parts[1] == local and parts[3] == "0A":
                    return True
    except OSError:
        return False
    return False


def _wait(procs: list[Proc], what: str) -> None:
    """Wait for every process; if one fails, give the others a few seconds, then kill them."""
    deadline = time.perf_counter() + RUN_TIMEOUT
    while any(p.status is None for p in procs):
        for p in procs:
            p.thread.join(timeout=0.2)
        failed = [p for p in procs if p.status not in (None, 0)]
        if failed or time.perf_counter() > deadline:
            grace = time.perf_counter() + 5
            while any(p.status is None for p in procs) and time.perf_counter() < grace:
                time.sleep(0.05)
            for p in procs:
                if p.status is None:
                    p.popen.kill()
                    p.thread.join()
            break
    bad = [p for p in procs if p.status != 0]
    if bad:
        raise RunFailed(f"{what}: " + "; ".join(
            f"{' '.join(map(str, p.popen.args[:3]))} ... exited {p.status}; output:\n      {p.tail()}" for p in bad))


@dataclass
class Case:
    name: str
    title: str
    platform: Path
    workload: Path
    scheduler: str  # pybatsim file or bundled name
    nb_jobs: int = 0


def run_engine(engine: str, case: Case, prefix: Path, batsim: str | None, extra: list[str] = ()) -> dict:
    out = prefix.parent
    env = None
    if engine.startswith("before-"):  # the --against tree
        env, engine = ENV_AGAINST, engine.replace("before-", "coburst-")
    if engine == "coburst-inprocess":
        t0 = time.perf_counter()
        sim = _spawn([str(COBURST), "run", case.scheduler, "--transport", "inprocess", "-q",
                      "-p", str(case.platform), "-w", str(case.workload), "-e", str(prefix), *extra],
                     out / f"{prefix.name}.sim.log", env)
        _wait([sim], f"{case.name}/{engine}")
        return {"wall": sim.end - t0, "cpu_sim": sim.cpu, "cpu_sched": 0.0, "rss_sim": sim.rss_mb,
                "rss_sched": 0.0, "one_process": True}
    port = _free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    t0 = time.perf_counter()
    sched = _spawn([str(PYBATSIM), case.scheduler, "-s", endpoint, "-t", "36000000", "-v", "warning"],
                   out / f"{prefix.name}.sched.log")
    while not _listening(port):
        if sched.status is not None:
            raise RunFailed(f"{case.name}/{engine}: the scheduler exited {sched.status} before listening:\n"
                            f"      {sched.tail()}")
        if time.perf_counter() - t0 > 60:
            sched.popen.kill()
            raise RunFailed(f"{case.name}/{engine}: the scheduler does not listen on {endpoint} after 60 s")
        time.sleep(0.005)
    if engine == "batsim":
        from coburst.simulator.external import batsim_role_arguments

        # the platform's own roles (coburst-roles: the linear dragonfly) as Batsim's -r
        cmd = [batsim, "-p", str(case.platform), "-w", str(case.workload), "-e", str(prefix), "-s", endpoint,
               *batsim_role_arguments(str(case.platform), [])]
    else:
        cmd = [str(COBURST), "sim", "-p", str(case.platform), "-w", str(case.workload), "-e", str(prefix),
               "-s", endpoint, "--timeout", "3600", "-q"]
    sim = _spawn(cmd, out / f"{prefix.name}.sim.log", env if engine == "coburst-zmq" else None)
    _wait([sim, sched], f"{case.name}/{engine}")
    return {"wall": max(sim.end, sched.end) - t0, "cpu_sim": sim.cpu, "cpu_sched": sched.cpu,
            "rss_sim": sim.rss_mb, "rss_sched": sched.rss_mb, "one_process": False}


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _jobs_difference(a: Path, b: Path) -> tuple[int, int, str, str]:
    """Compare two ``_jobs.csv`` job by job: (jobs whose rows differ, jobs whose rows are equal
    but at another position, the differing row of ``a`` that starts first and ``b``'s row
    of that job)."""
    def rows(path: Path) -> tuple[dict[str, str], list[str]]:
        lines = path.read_text().splitlines()[1:]
        return {line.split(",", 1)[0]: line for line in lines}, [line.split(",", 1)[0] for line in lines]

    ra, order_a = rows(a)
    rb, order_b = rows(b)
    differ = {j for j in ra.keys() | rb.keys() if ra.get(j) != rb.get(j)}
    moved = sum(1 for i, j in enumerate(order_a) if j not in differ and (i >= len(order_b) or order_b[i] != j))
    if not differ:
        return 0, moved, "", ""

    def start(j: str) -> float:
        try:
            return float((ra.get(j) or rb.get(j)).split(",")[8])
        except (ValueError, IndexError):
            return float("inf")

    first = min(differ, key=lambda j: (start(j), len(j), j))
    return len(differ), moved, ra.get(first, "<none>"), rb.get(first, "<none>")


def _median(runs: list[dict]) -> dict:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "one_process"}
    med["one_process"] = runs[0]["one_process"]
    med["cpu"] = statistics.median(r["cpu_sim"] + r["cpu_sched"] for r in runs)
    med["rss"] = statistics.median(r["rss_sim"] + r["rss_sched"] for r in runs)
    return med


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def bench_case(case: Case, engines: list[str], repeat: int, batsim: str | None, tmp: Path) -> dict:
    print(f"\n== {case.name}: {case.title}", flush=True)
    work = tmp / case.name
    work.mkdir()
    runs: dict[str, list[dict]] = {e: [] for e in engines}
    digests: dict[str, list[str]] = {e: [] for e in engines}
    first_csv: dict[str, Path] = {}
    errors = []
    for r in range(repeat):
        for engine in engines:
            prefix = work / f"{engine}-{r}"
            try:
                res = run_engine(engine, case, prefix, batsim)
            except RunFailed as exc:
                errors.append(str(exc))
                print(f"   FAILED {exc}", flush=True)
                continue
            runs[engine].append(res)
            jobs_csv = Path(f"{prefix}_jobs.csv")
            digests[engine].append(_md5(jobs_csv))
            if engine not in first_csv:
                first_csv[engine] = work / f"{engine}_jobs.csv"
                shutil.copyfile(jobs_csv, first_csv[engine])
            for produced in work.glob(f"{engine}-{r}_*"):  # big traces: keep the disk tidy
                produced.unlink()
            print(f"   run {r + 1}/{repeat} {engine:18s} wall {res['wall']:8.2f} s  CPU "
                  f"{res['cpu_sim'] + res['cpu_sched']:8.2f} s  peak RSS {res['rss_sim'] + res['rss_sched']:7.1f} MB",
                  flush=True)
    meds = {e: _median(v) for e, v in runs.items() if v}
    all_digests = {d for v in digests.values() for d in v}
    identical = bool(meds) and len(all_digests) == 1 and not errors and len(meds) == len(engines)
    lines = sum(1 for _ in open(next(iter(first_csv.values())))) - 1 if first_csv else 0
    print(f"\n   {case.nb_jobs:,} jobs; median of {repeat} run(s) per engine "
          f"(load average now {os.getloadavg()[0]:.2f})")
    head = (f"   {'engine':18s} {'wall s':>8s} {'jobs/s':>7s} {'CPU sim':>8s} {'CPU sch':>8s} {'CPU tot':>8s} "
            f"{'RSS sim':>8s} {'RSS sch':>8s} {'RSS sum':>8s}   {'wall':>6s} {'CPU':>6s} {'RSS':>6s} {'simCPU':>6s}")
    print(head)
    print(f"   {'':18s} {'':>8s} {'':>7s} {'s':>8s} {'s':>8s} {'s':>8s} {'MB':>8s} {'MB':>8s} {'MB':>8s}"
          f"   {'--- ratio to batsim ---':>27s}")
    base = meds.get("batsim")
    for engine, m in meds.items():
        sched_cpu = "  (in)" if m["one_process"] else f"{m['cpu_sched']:8.2f}"
        sched_rss = "  (in)" if m["one_process"] else f"{m['rss_sched']:8.1f}"
        ratios = ""
        if base and engine != "batsim":
            ratios = (f"   {_ratio(m['wall'], base['wall']):>6s} {_ratio(m['cpu'], base['cpu']):>6s} "
                      f"{_ratio(m['rss'], base['rss']):>6s} {_ratio(m['cpu_sim'], base['cpu_sim']):>6s}")
        print(f"   {engine:18s} {m['wall']:8.2f} {case.nb_jobs / m['wall']:7.0f} {m['cpu_sim']:8.2f} "
              f"{sched_cpu:>8s} {m['cpu']:8.2f} {m['rss_sim']:8.1f} {sched_rss:>8s} {m['rss']:8.1f}{ratios}")
    for engine in ("coburst-zmq", "coburst-inprocess"):
        before = meds.get(engine.replace("coburst-", "before-"))
        if before and engine in meds:
            m = meds[engine]
            print(f"   {engine} / {engine.replace('coburst-', 'before-')}: wall {_ratio(m['wall'], before['wall'])}, "
                  f"CPU {_ratio(m['cpu'], before['cpu'])} (simulator CPU {_ratio(m['cpu_sim'], before['cpu_sim'])})")
    if errors:
        print(f"   {len(errors)} failed run(s) (see above)")
    verdict = "yes" if identical else "no"
    print(f"   outputs identical: {verdict} ({lines:,} jobs in _jobs.csv; "
          f"{len(all_digests)} distinct _jobs.csv over {sum(len(v) for v in digests.values())} runs"
          + ("" if "batsim" in engines else "; coburst engines only, no Batsim reference") + ")")
    notes = []
    if not identical and "batsim" in first_csv:
        for engine in engines:
            if engine == "batsim" or engine not in first_csv:
                continue
            n, moved, a, b = _jobs_difference(first_csv["batsim"], first_csv[engine])
            if n:
                print(f"     {engine} vs batsim: {n} of {lines:,} jobs differ ({moved} more rows only moved); "
                      f"earliest-starting one:\n       batsim: {a}\n       {engine}: {b}")
                cols_a, cols_b = a.split(","), b.split(",")
                notes.append(f"{engine}: {n} of {lines:,} jobs differ from Batsim's, the first from job "
                             f"{cols_a[0]} (submitted {cols_a[3]}: Batsim starts it at {cols_a[8]}, {engine} at "
                             f"{cols_b[8]})")
            elif moved:
                print(f"     {engine} vs batsim: same rows, {moved} in another order")
    for engine, ds in digests.items():
        if len(set(ds)) > 1:
            print(f"     {engine}: its own repeats differ ({len(set(ds))} distinct _jobs.csv)")
    return {"case": case, "meds": meds, "identical": identical, "errors": errors, "repeat": repeat, "notes": notes}


# ----------------------------------------------------------------------------- scaling

def _load_stats(jobs_csv: Path, nodes: int) -> dict:
    first_sub = last_sub = None
    busy = wait = 0.0
    n = 0
    end = 0.0
    with open(jobs_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            sub = float(row["submission_time"])
            first_sub = sub if first_sub is None else min(first_sub, sub)
            last_sub = sub if last_sub is None else max(last_sub, sub)
            busy += float(row["execution_time"]) * int(row["requested_number_of_resources"])
            wait += float(row["waiting_time"])
            end = max(end, float(row["finish_time"]))
            n += 1
    return {"utilisation": busy / (nodes * end) if end else 0.0, "mean_wait": wait / n if n else 0.0,
            "makespan": end, "last_submit": last_sub or 0.0}


def _mem_available_mb() -> float:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def bench_scaling(nodes_list: list[int], sizes: list[int], max_jobs: int, tmp: Path, traces: bool) -> list[dict]:
    extra = [] if traces else ["--disable-schedule-tracing", "--disable-machine-state-tracing"]
    print(f"\n== scaling: coburst in-process, benchmarks/benchFcfs.py, synthetic delay jobs "
          f"(offered load {SCALING_LOAD}, one run per point; "
          f"{'all Batsim outputs' if traces else 'without _schedule.trace and _machine_states.csv'})", flush=True)
    skipped: set = set()
    sched = str(BENCH / "benchFcfs.py")
    rows = []
    work = tmp / "scaling"
    work.mkdir()
    for nodes in nodes_list:
        plat = cluster_platform(nodes)
        prev = None
        for jobs in sizes:
            if jobs > max_jobs:
                continue
            if prev and "marg_kb" in prev:
                need = prev["rss_sim"] + (jobs - prev["jobs"]) * prev["marg_kb"] / 1024
                avail = _mem_available_mb()
                if avail and need > 0.8 * avail:
                    print(f"   {nodes:6,} nodes {jobs:9,} jobs: SKIPPED, would need about {need:,.0f} MB "
                          f"(only {avail:,.0f} MB available); extrapolated below")
                    skipped.add((nodes, jobs))
                    continue
            t0 = time.perf_counter()
            wl = scaling_workload(jobs, nodes)
            gen = time.perf_counter() - t0
            case = Case(f"scale-{jobs}-{nodes}", "", plat, wl, sched, jobs)
            prefix = work / f"s{jobs}_{nodes}"
            try:
                res = run_engine("coburst-inprocess", case, prefix, None, extra)
            except RunFailed as exc:
                print(f"   FAILED {exc}")
                continue
            stats = _load_stats(Path(f"{prefix}_jobs.csv"), nodes)
            for produced in work.glob(f"{prefix.name}_*"):
                produced.unlink()
            row = {"nodes": nodes, "jobs": jobs, **res, **stats, "extrapolated": False, "traces": traces}
            if prev:
                dn = jobs - prev["jobs"]
                row["marg_us"] = (res["wall"] - prev["wall"]) / dn * 1e6
                row["marg_cpu_us"] = (res["cpu_sim"] - prev["cpu_sim"]) / dn * 1e6
                row["marg_kb"] = (res["rss_sim"] - prev["rss_sim"]) * 1024 / dn
            rows.append(row)
            prev = row
            print(f"   {nodes:6,} nodes {jobs:9,} jobs: wall {res['wall']:8.2f} s ({jobs / res['wall']:6,.0f} jobs/s), "
                  f"CPU {res['cpu_sim']:8.2f} s, peak RSS {res['rss_sim']:7.1f} MB; utilisation "
                  f"{stats['utilisation']:.2f}, mean wait {stats['mean_wait']:,.0f} s "
                  f"(workload ready in {gen:.1f} s)", flush=True)
        # extrapolate the sizes beyond --scaling-max from the last measured marginal costs
        measured = [r for r in rows if r["nodes"] == nodes]
        if len(measured) >= 2:
            last = measured[-1]
            for jobs in sizes:
                if jobs > max_jobs or (nodes, jobs) in skipped:
                    dn = jobs - last["jobs"]
                    rows.append({"nodes": nodes, "jobs": jobs, "extrapolated": True,
                                 "wall": last["wall"] + dn * last["marg_us"] / 1e6,
                                 "cpu_sim": last["cpu_sim"] + dn * last["marg_cpu_us"] / 1e6,
                                 "rss_sim": last["rss_sim"] + dn * last["marg_kb"] / 1024,
                                 "marg_us": last["marg_us"], "marg_cpu_us": last["marg_cpu_us"],
                                 "marg_kb": last["marg_kb"]})
    print(f"\n   {'nodes':>6s} {'jobs':>9s} {'wall s':>9s} {'jobs/s':>7s} {'CPU s':>9s} {'us/job':>7s} "
          f"{'marg us/job':>11s} {'peak MB':>8s} {'marg KB/job':>11s}")
    for r in rows:
        tag = "  (extrapolated)" if r["extrapolated"] else ""
        marg = f"{r['marg_us']:11.0f}" if "marg_us" in r else f"{'-':>11s}"
        margkb = f"{r['marg_kb']:11.2f}" if "marg_kb" in r else f"{'-':>11s}"
        print(f"   {r['nodes']:6,} {r['jobs']:9,} {r['wall']:9.1f} {r['jobs'] / r['wall']:7,.0f} {r['cpu_sim']:9.1f} "
              f"{r['wall'] / r['jobs'] * 1e6:7.0f} {marg} {r['rss_sim']:8.0f} {margkb}{tag}")
    for nodes in nodes_list:
        margs = [r["marg_us"] for r in rows if r["nodes"] == nodes and "marg_us" in r and not r["extrapolated"]]
        if len(margs) >= 2:
            spread = max(margs) / min(margs)
            verdict = "flat (linear)" if spread < 1.3 else "NOT flat"
            print(f"   {nodes:,} nodes: marginal wall per job {' -> '.join(f'{m:.0f}' for m in margs)} us: "
                  f"{verdict} (max/min {spread:.2f})")
        elif margs:
            print(f"   {nodes:,} nodes: one marginal cost measured ({margs[0]:.0f} us/job); "
                  "add --scaling-max 1000000 for a second one")
    return rows


# ----------------------------------------------------------------------------- main

def find_batsim(cli: str | None) -> str | None:
    """The real Batsim: ``--batsim``, else ``$BATSIM``, else ``batsim`` on ``PATH``.  When there is
    none, says so on standard output: the ratios against Batsim are then not measured."""
    for cand in (cli, os.environ.get("BATSIM"), shutil.which("batsim")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return str(Path(cand).resolve())
        if cand and cand == cli:
            raise SystemExit(f"--batsim {cli}: not an executable file")
    print(f"{Path(sys.argv[0]).stem}: the real Batsim was not found (--batsim, $BATSIM, batsim on PATH): "
          "the ratios against Batsim are NOT measured; coburst's own figures follow", flush=True)
    return None


def _version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=ENV).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine_facts(batsim: str | None) -> dict:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    facts = {
        "cores": os.cpu_count(), "cpu": cpu, "python": pyplatform.python_version(),
        "os": f"{pyplatform.system()} {pyplatform.release()}",
        "coburst": _version([str(COBURST), "sim", "--version"]),
        "coburst_simgrid": _version([str(COBURST), "sim", "--simgrid-version"]),
        "pybatsim": importlib.metadata.version("pybatsim"), "pyzmq": importlib.metadata.version("pyzmq"),
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
    }
    if batsim:
        facts["batsim"] = _version([batsim, "--version"])
        facts["batsim_simgrid"] = _version([batsim, "--simgrid-version"])
    return facts


def markdown(results: list[dict], scaling: list[dict], facts: dict, batsim: str | None) -> str:
    out = []
    bs = (f"Batsim {facts['batsim']} (SimGrid {facts['batsim_simgrid']}, C++)" if batsim else "Batsim: not found")
    out.append(f"{facts['cores']} cores ({facts['cpu']}), {facts['os']}, Python {facts['python']}; {bs}; coburst "
               f"{facts['coburst']} on SimGrid {facts['coburst_simgrid']} (Python bindings); pybatsim "
               f"{facts['pybatsim']}, pyzmq {facts['pyzmq']}; {facts['date']}.")
    out.append("")
    if results:
        out.append("| case | engine | wall (s) | CPU (s) sim + sched | peak RSS (MB) sim + sched | wall | CPU | RSS "
                   "| `_jobs.csv` identical |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for res in results:
            case, meds = res["case"], res["meds"]
            base = meds.get("batsim")
            first = True
            for engine, m in meds.items():
                if m["one_process"]:
                    cpu = f"{m['cpu']:.2f} (one process)"
                    rss = f"{m['rss']:.0f} (one process)"
                else:
                    cpu = f"{m['cpu']:.2f} = {m['cpu_sim']:.2f} + {m['cpu_sched']:.2f}"
                    rss = f"{m['rss']:.0f} = {m['rss_sim']:.0f} + {m['rss_sched']:.0f}"
                if base and engine != "batsim":
                    ratios = f"{_ratio(m['wall'], base['wall'])} | {_ratio(m['cpu'], base['cpu'])} | " \
                             f"{_ratio(m['rss'], base['rss'])}"
                else:
                    ratios = "1 | 1 | 1" if engine == "batsim" else "| |"
                label = f"{case.name} ({case.nb_jobs:,} jobs)" if first else ""
                ident = ("yes" if res["identical"] else "**no**") if first else ""
                out.append(f"| {label} | {engine} | {m['wall']:.2f} | {cpu} | {rss} | {ratios} | {ident} |")
                first = False
        reps = sorted({r["repeat"] for r in results})
        out.append("")
        for res in results:
            for note in res["notes"]:
                out.append(f"{res['case'].name}, {note}.  ")
        out.append(f"Median of {'/'.join(map(str, reps))} run(s); ratios are engine / batsim (wall, total CPU, "
                   "summed peak RSS).")
    if scaling:
        out.append("")
        out.append("| nodes | jobs | wall (s) | jobs/s | CPU (s) | marginal µs/job | peak RSS (MB) "
                   "| marginal KB/job |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in scaling:
            mark = " (extrapolated)" if r["extrapolated"] else ""
            marg = f"{r['marg_us']:.0f}" if "marg_us" in r else "-"
            mkb = f"{r['marg_kb']:.2f}" if "marg_kb" in r else "-"
            out.append(f"| {r['nodes']:,} | {r['jobs']:,}{mark} | {r['wall']:.1f} | {r['jobs'] / r['wall']:,.0f} | "
                       f"{r['cpu_sim']:.1f} | {marg} | {r['rss_sim']:.0f} | {mkb} |")
        out.append("")
        out.append(f"(coburst in-process, `benchmarks/benchFcfs.py`, synthetic delay jobs at offered load "
                   f"{SCALING_LOAD}; one run per point; marginal = difference to the previous size; "
                   + ("all Batsim outputs written" if scaling[0].get("traces", True)
                      else "without `_schedule.trace` and `_machine_states.csv`") + ".)")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--repeat", type=int, default=None, help="runs per engine and case (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="one run each, skip kth-full")
    parser.add_argument("--scaling", action="store_true", help="also run the coburst in-process scaling study")
    parser.add_argument("--scaling-only", action="store_true", help="only the scaling study")
    parser.add_argument("--scaling-max", type=int, default=100_000,
                        help="largest scaling workload actually run (default 100000; 1000000 to run 1M)")
    parser.add_argument("--scaling-nodes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--scaling-no-traces", action="store_true",
                        help="scaling runs without _schedule.trace and _machine_states.csv (the simulator "
                             "core alone; Batsim writes both by default)")
    parser.add_argument("--case", action="append", choices=("delay5000", "kth2000-ph", "kth-full"),
                        help="only these cases (repeatable)")
    parser.add_argument("--batsim", help="the real batsim binary (default $BATSIM, else batsim on PATH)")
    parser.add_argument("--swf", type=Path, help="the KTH-SP2 log (default KTH-SP2-1996-2.1-cln.swf in $COBURST_SWF_DIR, "
                                                 "else in ../shared/data/swf beside the checkout)")
    parser.add_argument("--no-batsim", action="store_true", help="coburst engines only")
    parser.add_argument("--against", type=Path, default=None,
                        help="another coburst source tree (before a change): before-zmq and before-inprocess engines")
    parser.add_argument("--keep", action="store_true", help="keep the run folder (printed)")
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    global SWF
    SWF = args.swf.resolve() if args.swf else SWF
    no_log = (f"--swf {args.swf}: no such file" if args.swf else missing(SWF)) if not SWF.is_file() else None
    if no_log and args.case and set(args.case) & {"kth2000-ph", "kth-full"}:
        sys.exit(f"bench_engines: error: {no_log}")
    t_start = time.perf_counter()
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    facts = machine_facts(batsim)
    print(f"bench_engines: {facts['cores']} cores ({facts['cpu']}), Python {facts['python']}, {facts['date']}; "
          f"load average {os.getloadavg()[0]:.2f}")
    if batsim:
        print(f"real Batsim: {batsim} ({facts['batsim']}, SimGrid {facts['batsim_simgrid']})")
    else:
        why = "not used (--no-batsim)" if args.no_batsim else \
            "NOT found (--batsim, $BATSIM, batsim on PATH)"
        print(f"real Batsim {why}: coburst figures only")
    print(f"coburst {facts['coburst']} on SimGrid {facts['coburst_simgrid']}; pybatsim {facts['pybatsim']}")
    engines = [e for e in ENGINES if batsim or e != "batsim"]
    if args.against is not None:
        global ENV_AGAINST
        against = args.against.resolve()
        if not (against / "coburst" / "__init__.py").is_file():
            sys.exit(f"bench_engines: error: --against {args.against}: no coburst/ package there")
        ENV_AGAINST = {**ENV, "PYTHONPATH": os.pathsep.join(filter(None, [str(against), ENV.get("PYTHONPATH")]))}
        for tree in (ROOT, against):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "coburst")], env=ENV, check=False,
                           stdout=subprocess.DEVNULL)
        engines += ["before-zmq", "before-inprocess"]
        print(f"against: {against} (before-zmq, before-inprocess)")

    results, scaling = [], []
    tmp = Path(tempfile.mkdtemp(prefix="coburst-bench-engines-"))
    try:
        if not args.scaling_only:
            wanted = args.case or ["delay5000", "kth2000-ph"] + ([] if args.quick else ["kth-full"])
            for name in wanted:
                if name != "delay5000" and no_log:
                    print(f"{name}: skipped: {no_log}")
                    continue
                if name == "delay5000":
                    case = Case(name, "5000 KTH jobs as delay jobs, kth_sp2.xml (100 nodes), pybatsim easyBackfill",
                                KTH_SP2, ROOT / "workloads" / "kth_sp2_delay_5000.json", "easyBackfill")
                elif name == "kth2000-ph":
                    case = Case(name, "2000 KTH jobs, Alloc-Only parallel_homogeneous, dragonfly96.xml "
                                      "(96 compute + 12 BB nodes), schedulers/coburstEasy.py",
                                DRAGONFLY, kth2000_ph(), str(ROOT / "schedulers" / "coburstEasy.py"))
                else:
                    case = Case(name, "the whole KTH log as delay jobs, kth_sp2.xml (100 nodes), "
                                      "pybatsim easyBackfill", KTH_SP2, kth_full_delay(), "easyBackfill")
                case.nb_jobs = len(json.loads(case.workload.read_text())["jobs"])
                results.append(bench_case(case, engines, repeat, batsim, tmp))
        if args.scaling or args.scaling_only:
            sizes = [1_000, 10_000, 100_000, 1_000_000]
            scaling = bench_scaling(args.scaling_nodes, sizes, args.scaling_max, tmp, not args.scaling_no_traces)
    finally:
        if args.keep:
            print(f"\nrun folder kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("\n---- Markdown (for the README) ----\n")
    print(markdown(results, scaling, facts, batsim))
    print(f"\nbench_engines took {time.perf_counter() - t_start:.0f} s in all; load average at the end "
          f"{os.getloadavg()[0]:.2f}")
    if any(r["errors"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
