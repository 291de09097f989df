"""Harness for end-to-end tests of ``coburst sim``: a real scheduler process, real sockets.

Each simulation runs as two processes (the SimGrid engine is a per-process singleton):

* the scheduler — ``pybatsim <scheduler> -s tcp://127.0.0.1:PORT`` where ``<scheduler>``
  is a pybatsim bundled scheduler name (``schedFcfs``, ``easyBackfill``) or a scheduler file
  of ``tests/schedulers/`` (options passed with ``-o JSON``);
* the simulator — ``coburst sim -p ... -w ... -e PREFIX -s tcp://127.0.0.1:PORT``.

:func:`run_sim` starts both, waits for both (killing only the scheduler process it
started if it outlives the simulator), and returns a :class:`SimRun` with the exit codes,
the captured outputs and helpers to read ``PREFIX_jobs.csv`` / ``PREFIX_schedule.csv`` and
the messages recorded by the test schedulers.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import batsim_recorded

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
DATA = TESTS / "data"
SCHEDULERS = TESTS / "schedulers"
BIN = REPO / ".venv" / "bin" if (REPO / ".venv" / "bin" / "coburst").exists() else Path(sys.executable).parent
PYBATSIM = BIN / "pybatsim"
COBURST = BIN / "coburst"

#: flat cluster node_0..node_3 (1 Gflop/s, 50 us / 1.25 GB/s private links, 500 us / 2.5 GB/s
#: backbone); the master sits alone in a routing="None" zone behind a 100 us link
CLUSTER4 = DATA / "cluster4.xml"
#: the same cluster, but the master is the only host of a second cluster (see the file)
CLUSTER_MASTER = DATA / "cluster_master.xml"

#: the real Batsim 4.2.1 binary for cross-engine tests: ``BATSIM``, else ``batsim`` on ``PATH``;
#: without one, Batsim's runs are replayed from their recordings (``batsim_recorded``)
BATSIM = batsim_recorded.BATSIM

JOBS_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
               "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
               "stretch,allocated_resources,consumed_energy,metadata")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def workload(path: Path, jobs: list[dict], profiles: dict[str, dict], nb_res: int = 4) -> Path:
    """Write a Batsim workload; ``walltime`` defaults to 100 s when not given."""
    full = [{"walltime": 100, **j} for j in jobs]
    return write_json(path, {"nb_res": nb_res, "jobs": full, "profiles": profiles})


def scheduler_spec(name: str) -> str:
    """A pybatsim bundled scheduler name, or the path of a test scheduler file."""
    candidate = SCHEDULERS / f"{name}.py"
    return str(candidate) if candidate.is_file() else name


@dataclass
class SimRun:
    returncode: int
    stdout: str
    stderr: str
    sched_returncode: int | None
    sched_output: str
    prefix: Path
    record: Path | None
    wall: float
    cmd: list[str] = field(default_factory=list)

    @property
    def jobs_csv(self) -> Path:
        return Path(f"{self.prefix}_jobs.csv")

    @property
    def schedule_csv(self) -> Path:
        return Path(f"{self.prefix}_schedule.csv")

    def check(self) -> "SimRun":
        """Assert the simulation succeeded (with a useful report otherwise)."""
        assert self.returncode == 0, self.report()
        return self

    def report(self) -> str:
        return (f"coburst sim exit {self.returncode}\ncmd: {' '.join(self.cmd)}\n--- stdout\n{self.stdout}\n"
                f"--- stderr\n{self.stderr}\n--- scheduler (exit {self.sched_returncode})\n"
                f"{self.sched_output[-3000:]}")

    def rows(self) -> list[dict[str, str]]:
        with open(self.jobs_csv, newline="") as f:
            return list(csv.DictReader(f))

    def jobs(self) -> dict[str, dict[str, str]]:
        """``_jobs.csv`` rows by ``workload!job_id``."""
        return {f"{r['workload_name']}!{r['job_id']}": r for r in self.rows()}

    def schedule(self) -> dict[str, str]:
        lines = self.schedule_csv.read_text().splitlines()
        assert len(lines) == 2
        return dict(zip(lines[0].split(","), lines[1].split(",")))

    def messages(self) -> list[dict]:
        """Messages recorded by a test scheduler: ``{"dir": "in"|"out", "msg": {...}}``."""
        assert self.record is not None and self.record.is_file(), self.report()
        out = []
        for line in self.record.read_text().splitlines():
            entry = json.loads(line)
            out.append({"dir": entry["dir"], "raw": entry["raw"], "msg": json.loads(entry["raw"])})
        return out

    def received(self) -> list[dict]:
        """Messages the scheduler received from the simulator (decoded)."""
        return [m["msg"] for m in self.messages() if m["dir"] == "in"]

    def events(self, etype: str | None = None) -> list[dict]:
        """Every event received by the scheduler, in order (optionally of one type)."""
        return [e for msg in self.received() for e in msg["events"] if etype is None or e["type"] == etype]

    def leftovers(self) -> list[str]:
        """Files the simulator left next to its output prefix."""
        stem = self.prefix.name
        return sorted(p.name for p in self.prefix.parent.iterdir()
                      if p.name.startswith(stem) or p.name.startswith(f".{stem}"))


def run_sim(tmp_path: Path, *, workloads: Iterable[Path] = (), platform: Path | str = CLUSTER4,
            scheduler: str = "schedFcfs", options: dict | None = None, args: Iterable[str] = (),
            timeout: float = 5.0, sched_timeout_ms: int = 20000, prefix: str = "out",
            record: bool = False, env: dict[str, str] | None = None, wait: float = 30.0,
            start_scheduler: bool = True, engine: str = "coburst", transcript: bool = False) -> SimRun:
    """Run one simulation: scheduler process + ``coburst sim`` process (``engine="batsim"``:
    the real Batsim instead, same options but coburst's own ``--timeout``; without a Batsim
    binary, its recorded run is replayed, see :mod:`batsim_recorded`)."""
    if engine == "batsim":
        return _batsim_sim(tmp_path, workloads=list(workloads), platform=platform, scheduler=scheduler,
                           options=options, args=list(args), timeout=timeout, sched_timeout_ms=sched_timeout_ms,
                           prefix=prefix, record=record, env=env, wait=wait, start_scheduler=start_scheduler,
                           transcript=transcript)
    return _run_sim(tmp_path, workloads=workloads, platform=platform, scheduler=scheduler, options=options,
                    args=args, timeout=timeout, sched_timeout_ms=sched_timeout_ms, prefix=prefix, record=record,
                    env=env, wait=wait, start_scheduler=start_scheduler, engine=engine, transcript=transcript)


def _scheduler_name(scheduler: str) -> str:
    """A scheduler as a recording's key names it: a file of the repository by its path in the
    repository (its code, like coburst's policies it imports, is not part of the key: changed
    decisions show as a difference, and the case is recorded again), else as given."""
    spec = Path(scheduler_spec(scheduler))
    try:
        return "repo:" + spec.resolve().relative_to(REPO).as_posix() if spec.is_absolute() else scheduler
    except ValueError:
        return scheduler


def batsim_role_args(platform: Path | str, args: list[str]) -> list[str]:
    """``args`` for the real Batsim: the platform's own roles (its ``coburst-roles`` zone
    properties, which ``coburst sim`` applies by itself) added as ``-r`` options, unless the
    test gives ``-r`` itself."""
    from coburst.platforms.roles import batsim_arguments, file_role_items

    if any(a in ("-r", "--add-role-to-hosts") or a.startswith("--add-role-to-hosts=") for a in args):
        return args
    return batsim_arguments(file_role_items(platform)) + args


def _batsim_sim(tmp_path: Path, **kw: Any) -> SimRun:
    """The real Batsim's run of a case, live or replayed from its recording (the platform's
    own roles passed as ``-r``, part of the recording's key as every argument)."""
    kw["args"] = batsim_role_args(kw["platform"], kw["args"])
    description = {"kind": "sim", "platform": kw["platform"], "workloads": kw["workloads"],
                   "scheduler": _scheduler_name(kw["scheduler"]), "options": kw["options"] or {},
                   "args": kw["args"], "prefix": kw["prefix"], "record": kw["record"], "env": kw["env"] or {},
                   "start_scheduler": kw["start_scheduler"], "transcript": kw["transcript"]}
    result: dict[str, SimRun] = {}

    def live() -> batsim_recorded.Outcome:
        run = result["run"] = _run_sim(tmp_path, engine="batsim", **kw)
        return batsim_recorded.Outcome(run.returncode, run.stdout, run.stderr,
                                       {"sched_returncode": run.sched_returncode, "sched_output": run.sched_output,
                                        "wall": run.wall})
    outcome = batsim_recorded.batsim_run(tmp_path, description, live)
    if "run" in result:
        return result["run"]
    out_prefix = tmp_path / kw["prefix"]
    record_path = None
    if kw["transcript"]:
        record_path = tmp_path / f"transcript-{kw['prefix']}.jsonl"
    elif kw["record"]:
        record_path = tmp_path / f"messages-{kw['prefix']}.jsonl"
    extra = outcome.extra
    return SimRun(outcome.returncode, outcome.stdout, outcome.stderr, extra.get("sched_returncode"),
                  extra.get("sched_output", ""), out_prefix, record_path, extra.get("wall", 0.0),
                  ["batsim (recorded)", "-p", str(kw["platform"])])


def _run_sim(tmp_path: Path, *, workloads: Iterable[Path] = (), platform: Path | str = CLUSTER4,
             scheduler: str = "schedFcfs", options: dict | None = None, args: Iterable[str] = (),
             timeout: float = 5.0, sched_timeout_ms: int = 20000, prefix: str = "out",
             record: bool = False, env: dict[str, str] | None = None, wait: float = 30.0,
             start_scheduler: bool = True, engine: str = "coburst", transcript: bool = False) -> SimRun:
    options = dict(options or {})
    record_path = tmp_path / f"messages-{prefix}.jsonl" if record else None
    if record_path is not None:
        options["record"] = str(record_path)
    out_prefix = tmp_path / prefix
    for attempt in range(3):
        port = free_port()
        endpoint = f"tcp://127.0.0.1:{port}"
        sched = None
        sched_log = tmp_path / f"scheduler-{prefix}.log"
        if start_scheduler:
            sched_cmd = [str(PYBATSIM), scheduler_spec(scheduler), "-s", endpoint, "-t", str(sched_timeout_ms),
                         "-v", "warning", "-o", json.dumps(options)]
            sched_dir = tmp_path / f"scheduler-{prefix}"  # pybatsim's batsim.sched writes out_events.csv there
            sched_dir.mkdir(exist_ok=True)
            with open(sched_log, "w") as log:
                # a fixed hash seed: some pybatsim schedulers iterate over sets of job ids
                sched = subprocess.Popen(sched_cmd, stdout=log, stderr=subprocess.STDOUT, cwd=sched_dir,
                                         env={**os.environ, "PYTHONHASHSEED": "0"})
        recorder = None
        if transcript:  # a recording proxy between the simulator and the scheduler
            record_path = tmp_path / f"transcript-{prefix}.jsonl"
            front = f"tcp://127.0.0.1:{free_port()}"
            recorder_log = tmp_path / f"recorder-{prefix}.log"
            with open(recorder_log, "w") as log:
                recorder = subprocess.Popen([sys.executable, str(TESTS / "tools" / "zmq_recorder.py"), front,
                                             endpoint, str(record_path)], stderr=log)
            endpoint = front
        cmd = [str(COBURST), "sim", "-p", str(platform)] if engine == "coburst" else [BATSIM, "-p", str(platform)]
        for w in workloads:
            cmd += ["-w", str(w)]
        cmd += ["-e", str(out_prefix), "-s", endpoint]
        if engine == "coburst":
            cmd += ["--timeout", str(timeout)]
        cmd += list(args)
        full_env = {**os.environ, "PYTHONPATH": str(TESTS), **(env or {})}
        t0 = time.monotonic()
        proc = None
        try:
            proc = _run_simulator(cmd, full_env, tmp_path, wait, [p for p in (sched, recorder) if p is not None])
        finally:
            sched_rc = None
            if sched is not None:
                # after a successful run the scheduler has got SIMULATION_ENDS and exits by itself;
                # after a failure it would wait for the next message until its own timeout
                grace = 5.0 if proc is not None and proc.returncode == 0 else 0.2
                try:
                    sched_rc = sched.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    sched.kill()  # only the scheduler process this function started
                    sched_rc = sched.wait()
            if recorder is not None:
                try:
                    recorder.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    recorder.kill()
                    recorder.wait()
        wall = time.monotonic() - t0
        sched_output = sched_log.read_text(errors="replace") if start_scheduler else ""
        recorder_output = recorder_log.read_text(errors="replace") if recorder is not None else ""
        if "Address already in use" in sched_output + recorder_output and attempt < 2:
            continue  # another test grabbed the port in between: retry on a new one
        return SimRun(proc.returncode, proc.stdout, proc.stderr, sched_rc, sched_output, out_prefix,
                      record_path, wall, cmd)
    raise AssertionError("no free port found")  # pragma: no cover


#: how long a simulator may run on once the scheduler (or the recording proxy) has exited: the
#: real Batsim waits for a scheduler that is gone forever (a port another test took in between)
PEER_GONE_GRACE = 30.0


def _run_simulator(cmd: list[str], env: dict, cwd: Path, wait: float,
                   peers: list[subprocess.Popen]) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, timeout=wait)``, except that the simulator is killed (returncode -9)
    ``PEER_GONE_GRACE`` seconds after one of ``peers`` exited while it still runs, instead of
    hanging until ``wait``: a scheduler that never bound its port leaves Batsim waiting."""
    # errors="replace": a C++ backtrace on abort may print stray bytes
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                            env=env, cwd=cwd)
    deadline = time.monotonic() + wait
    gone_at = None
    while True:
        try:
            out, err = proc.communicate(timeout=0.5)
            return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if gone_at is None and any(p.poll() is not None for p in peers):
            gone_at = now
        if now > deadline or (gone_at is not None and now - gone_at > PEER_GONE_GRACE):
            proc.kill()
            out, err = proc.communicate()
            if now > deadline:
                raise subprocess.TimeoutExpired(cmd, wait, output=out, stderr=err)
            return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run_cli(tmp_path: Path, args: list[str], wait: float = 30.0) -> subprocess.CompletedProcess:
    """``coburst sim ARGS`` without any scheduler (for errors detected before connecting)."""
    return subprocess.run([str(COBURST), "sim", *args], capture_output=True, text=True, timeout=wait,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(TESTS)})


def f6(x: float) -> str:
    return f"{x:.6f}"


def approx_row(row: dict[str, str], *, start: float, finish: float, tol: float = 2e-6) -> None:
    """Check a ``_jobs.csv`` row's start/finish/execution to the printed precision."""
    assert abs(float(row["starting_time"]) - start) <= tol, (row, start)
    assert abs(float(row["finish_time"]) - finish) <= tol, (row, finish)
    assert abs(float(row["execution_time"]) - (finish - start)) <= tol, (row, finish - start)
