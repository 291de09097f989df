"""Running a campaign: the output folder's state, the local thread pool or Dask, progress.

* :func:`open_output` makes/validates ``<out>`` (a folder made by another spec is refused),
  takes its lock (one campaign process per folder; the lock dies with its process, so a
  ``kill -9`` leaves no stale lock) and removes the temporary folders of runs a killed
  invocation left behind;
* :func:`run_state` classifies every run: done, failed or pending;
* :func:`execute` runs the pending ones, locally (``jobs`` at a time, each in its own
  process) or on a Dask cluster (``scheduler_address``: each run is a Dask task executing
  :func:`coburst.campaign.runner.execute_run` on a worker; the workers must see ``<out>``,
  the inputs and the Python environment at the same paths -- a shared file system).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from coburst.campaign import runner
from coburst.campaign.spec import SWF_VAR, Campaign, Run, parse_toml
from coburst.errors import InputError

SPEC_COPY = "campaign.toml"
META = "campaign.json"
LOCK = ".lock"


@dataclass
class State:
    done: list[Run] = field(default_factory=list)
    failed: list[tuple[Run, dict]] = field(default_factory=list)
    pending: list[Run] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)   # temporary folders of unfinished runs
    unknown: list[str] = field(default_factory=list)  # run folders no run of the spec has


def run_state(camp: Campaign) -> State:
    state = State()
    rdir = runner.runs_dir(camp.out)
    ids = set()
    for run in camp.runs:
        ids.add(run.run_id)
        folder = rdir / run.run_id
        kind = runner.run_folder_state(folder) if folder.is_dir() else runner.IN_PROGRESS
        if kind == runner.DONE:
            state.done.append(run)
        elif kind == runner.FAILED:
            state.failed.append((run, runner.read_status(folder)))
        else:
            state.pending.append(run)
    if rdir.is_dir():
        for entry in sorted(rdir.iterdir()):
            if entry.name.startswith((runner.TMP_PREFIX, runner.OLD_PREFIX)):
                state.stale.append(entry)
            elif entry.name not in ids:
                state.unknown.append(entry.name)
    return state


# ---------------------------------------------------------------------------- the output folder
def _identity(camp: Campaign) -> dict:
    return {"spec_file": str(camp.source.resolve()), "engines": camp.engines}


def check_output(camp: Campaign) -> None:
    """Refuse an output folder made by another spec (or other engines); nothing is written."""
    out = camp.out
    if out.exists() and not out.is_dir():
        raise InputError(out, None, "the campaign output is not a folder")
    copy = out / SPEC_COPY
    if copy.is_file():
        _, stored = parse_toml(copy)
        if stored != camp.data:
            raise InputError(out, None, f"this folder holds another campaign (its spec: {copy}, differs from "
                                        f"{camp.source}); give another --out or remove the folder")
        meta = _read_meta(out)
        if meta.get("engines") not in (None, camp.engines):
            raise InputError(out, None, f"this folder holds the campaign run with --engine "
                                        f"{','.join(meta['engines'])}, not {','.join(camp.engines)}; give another "
                                        "--out")
    elif out.is_dir() and any(out.iterdir()):
        if (out / runner.RUNS).exists():
            raise InputError(out, None, f"a campaign folder without its {SPEC_COPY}: remove it or give another --out")


def check_scheduler_address(address: str) -> str:
    """A Dask scheduler address checked before anything starts: ``[tcp|tls|ws|wss]://HOST:PORT``
    (no scheme = ``tcp``, as Dask reads it), a port in 1..65535, a host name that resolves.
    InputError naming ``--scheduler-address``; returns the address Dask is given."""
    import socket
    from urllib.parse import urlsplit

    option = "--scheduler-address"
    text = address.strip()
    full = text if "://" in text else f"tcp://{text}"
    problem = "expected tcp://HOST:PORT (the address `dask scheduler` prints)"
    try:
        parts = urlsplit(full)
        port = parts.port
    except ValueError:
        raise InputError(option, repr(address), problem) from None
    if parts.scheme not in ("tcp", "tls", "ws", "wss") or not parts.hostname or port is None \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InputError(option, repr(address), problem)
    if not 0 < port < 65536:
        raise InputError(option, repr(address), f"port {port} is out of range 1-65535")
    try:
        socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise InputError(option, repr(address), f"unknown host {parts.hostname!r}: check the name, or give the "
                                                "scheduler's IP address") from None
    return full


def _read_meta(out: Path) -> dict:
    from coburst.validate import read_json

    try:
        meta = read_json(out / META)  # (nesting bounded: a deep file is no RecursionError)
        return meta if isinstance(meta, dict) else {}
    except InputError:
        return {}


class OutputLock:
    """``<out>/.lock``, held while a campaign runs there (fcntl; released when the process dies)."""

    def __init__(self, out: Path):
        self.out = out
        self.fh = None

    def __enter__(self) -> "OutputLock":
        self.out.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.out / LOCK, "a+", encoding="utf-8")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            pid = self.fh.read().strip() or "?"
            self.fh.close()
            raise InputError(self.out, None, f"another campaign is running in this folder (pid {pid}); wait for it "
                                             "or stop it first") from None
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(f"{os.getpid()}\n")
        self.fh.flush()
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()


def holder(out: Path) -> str | None:
    """The pid of the campaign running in ``out``, or None."""
    path = out / LOCK
    if not path.is_file():
        return None
    with open(path, "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            return fh.read().strip() or "?"
        fcntl.flock(fh, fcntl.LOCK_UN)
    return None


def open_output(camp: Campaign) -> None:
    """Under the lock: write the spec copy the first time, remove stale temporary folders."""
    out = camp.out
    from coburst.fileio import atomic_write

    if not (out / SPEC_COPY).is_file():
        with atomic_write(out / META) as fh:
            fh.write(json.dumps(_identity(camp), separators=(",", ":")) + "\n")
        with atomic_write(out / SPEC_COPY) as fh:  # last: it marks the folder as this campaign's
            fh.write(camp.text)
    rdir = runner.runs_dir(out)
    rdir.mkdir(parents=True, exist_ok=True)
    for entry in rdir.iterdir():
        if entry.name.startswith((runner.TMP_PREFIX, runner.OLD_PREFIX)):
            shutil.rmtree(entry, ignore_errors=True)
    for entry in out.glob(f"{runner.STOP_PREFIX}*"):  # left by a stopped Dask campaign
        entry.unlink(missing_ok=True)


def prepare(camp: Campaign, log: Callable[[str], None]) -> None:
    """The ``[prepare]`` commands, unless every ``creates`` path exists."""
    if not camp.prepare_run:
        return
    if camp.prepare_creates and all(p.exists() for p in camp.prepare_creates):
        return
    for place, path in camp.prepare_inputs:
        if not path.exists():
            raise InputError(camp.source, place, f"file not found: {path} ({{swf_dir}} is ${SWF_VAR}, else "
                                                 "../shared/data/swf beside the coburst checkout)")
    cwd = camp.source.resolve().parent
    for i, cmd in enumerate(camp.prepare_run):
        log(f"prepare: {' '.join(cmd)}")
        try:
            proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as exc:
            raise InputError(camp.source, f"prepare.run[{i}]", f"cannot start {cmd[0]!r}: {exc.strerror}") from None
        if proc.returncode != 0:
            tail = "\n    ".join(proc.stdout.strip().splitlines()[-8:])
            raise InputError(camp.source, f"prepare.run[{i}]",
                             f"command failed with exit status {proc.returncode}:\n    {tail}")
    missing = [p for p in camp.prepare_creates if not p.exists()]
    if missing:
        raise InputError(camp.source, "prepare.creates", f"the prepare commands did not make {missing[0]}")


# ---------------------------------------------------------------------------- execution
@dataclass
class Progress:
    total: int
    done: int = 0
    failed: int = 0
    running: int = 0


def execute(camp: Campaign, runs: list[Run], *, jobs: int, scheduler_address: str | None = None,
            batsim: str | None = None, retry_failed: bool = False,
            on_update: Callable[[Progress, dict | None], None] = lambda p, r: None) -> Progress:
    """Run ``runs`` (the pending ones) and return the counts; ``on_update`` is called on every
    change (with the result of a run when one finished)."""
    prog = Progress(total=len(runs))
    if not runs:
        return prog
    if scheduler_address:
        return _execute_dask(camp, runs, scheduler_address, batsim, retry_failed, prog, on_update)
    return _execute_local(camp, runs, max(1, jobs), batsim, retry_failed, prog, on_update)


def _account(prog: Progress, result: dict) -> None:
    if result["state"] in ("done", "skipped"):
        prog.done += 1
    elif result["state"] == "failed":
        prog.failed += 1


def _execute_local(camp, runs, jobs, batsim, retry_failed, prog, on_update) -> Progress:
    import threading

    lock = threading.Lock()

    def one(run: Run) -> dict:
        with lock:
            prog.running += 1
        try:
            return runner.execute_run(run.run_id, run.params, run.task, str(camp.out), batsim, retry_failed)
        finally:
            with lock:
                prog.running -= 1

    runner._stop.clear()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="coburst-run")
    try:
        futures = {pool.submit(one, run) for run in runs}
        on_update(prog, None)
        while futures:
            finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                result = fut.result()
                _account(prog, result)
                on_update(prog, result)
            if not finished:
                on_update(prog, None)
    except BaseException:
        runner.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return prog


def _execute_dask(camp, runs, address, batsim, retry_failed, prog, on_update) -> Progress:
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a dependency of coburst
        raise InputError("--scheduler-address", None, "dask.distributed is not installed") from None
    import dask

    try:  # Dask's own connect timeout (distributed.comm.timeouts.connect, DASK_DISTRIBUTED__COMM__...)
        client = Client(address, timeout=dask.config.get("distributed.comm.timeouts.connect", "30s"))
    except (OSError, TimeoutError):
        limit = dask.config.get("distributed.comm.timeouts.connect", "30s")
        raise InputError("--scheduler-address", address, f"cannot reach the Dask scheduler: nothing answered within {limit}; "
                                                         "start one with `dask scheduler` (and workers with `dask "
                                                         "worker ADDRESS`) or fix the address") from None
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"  # this invocation's stop file (runner.stop_file)
    futures = []
    try:
        for run in runs:
            futures.append(client.submit(runner.execute_run, run.run_id, run.params, run.task, str(camp.out), batsim,
                                         retry_failed, token, key=f"coburst-run-{run.run_id}-{os.getpid()}",
                                         pure=False, retries=0))
        pending = len(futures)

        def threads() -> int:
            try:
                return sum(client.nthreads().values())
            except Exception:  # noqa: BLE001 - a display detail
                return 0

        prog.running = min(pending, threads())
        on_update(prog, None)
        seq = as_completed(futures, with_results=True, raise_errors=False)
        for fut, result in seq:
            pending -= 1
            if fut.status == "error" or not isinstance(result, dict):
                exc = fut.exception() if fut.status == "error" else result
                run_id = fut.key.removeprefix("coburst-run-").rsplit("-", 1)[0]
                result = {"run_id": run_id, "state": "failed", "error": f"the Dask task failed: {exc!r}",
                          "wall_s": 0.0, "host": "?"}
            _account(prog, result)
            prog.running = min(pending, threads())
            on_update(prog, result)
    except BaseException:
        # Ctrl-C / SIGTERM: queued runs are cancelled; the running ones, on the workers, see
        # the stop file within runner.STOP_POLL, kill their simulation and publish nothing.
        # The file stays (the workers may still be stopping): open_output removes it next time.
        try:
            runner.stop_file(camp.out, token).touch()
        except OSError:
            pass  # the output folder went away: nothing left to protect
        try:
            client.cancel(futures)
        finally:
            client.close()
        raise
    client.close()
    return prog


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def spec_of_output(out: Path) -> tuple[Path, str, Path]:
    """(original spec place, its stored text, the base folder) of an output folder."""
    copy = out / SPEC_COPY
    if not copy.is_file():
        raise InputError(out, None, f"not a campaign folder (no {SPEC_COPY})")
    meta = _read_meta(out)
    spec_file = Path(meta.get("spec_file") or copy)
    return spec_file, copy.read_text(encoding="utf-8"), spec_file.parent
