"""One run of a campaign, published atomically.

:func:`execute_run` is what a local thread or a Dask worker executes (plain arguments,
picklable).  It runs the simulation in a child process (:mod:`coburst.campaign.child`:
``coburst run`` or the real Batsim; one simulation per process, SimGrid's engine is a
per-process singleton) writing into ``<out>/runs/.tmp-<run-id>-<random>/``, then writes
``params.json`` and ``status.json`` there and renames the folder to ``<out>/runs/<run-id>``
(one ``rename``: the run is either absent or complete).  A failure is published the same
way with ``state = "failed"`` and the tail of the run's output; a run interrupted by the
campaign's own stop (Ctrl-C) or by a kill leaves only its temporary folder, which the next
invocation removes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

RUNS = "runs"
TMP_PREFIX = ".tmp-"
OLD_PREFIX = ".old-"
PREFIX_NAME = "out"   # outputs: <run-dir>/out_jobs.csv ...
LOG_NAME = "run.log"

#: local stop: set by the executor on Ctrl-C/SIGTERM; the children are killed, nothing published
_stop = threading.Event()
#: stop on Dask: the campaign process creates ``<out>/.stop-<token>`` on Ctrl-C/SIGTERM; the
#: runs of that invocation, on any worker sharing the file system, see it and stop
STOP_PREFIX = ".stop-"
#: how often a running run looks for its stop (seconds)
STOP_POLL = 0.5
_children: set[subprocess.Popen] = set()
_children_lock = threading.Lock()


def runs_dir(out: str | Path) -> Path:
    return Path(out) / RUNS


def read_status(run_dir: Path) -> dict | None:
    from coburst.errors import InputError
    from coburst.validate import read_json

    try:
        status = read_json(run_dir / "status.json")  # (nesting bounded: a deep file is no RecursionError)
        return status if isinstance(status, dict) else None
    except InputError:
        return None


#: states of a run folder (:func:`run_folder_state`)
DONE, FAILED, IN_PROGRESS = "done", "failed", "in progress"


def run_folder_state(folder: Path, *, strict: bool = False) -> str:
    """``done``, ``failed`` or ``in progress`` (a temporary folder of a running or killed run,
    or one not yet published: no ``status.json``).  ``strict``: a ``status.json`` that cannot
    be read is an InputError naming it (readers of results), else the run counts as not
    published (the campaign runner, which will redo it)."""
    if folder.name.startswith((TMP_PREFIX, OLD_PREFIX)) or not (folder / "status.json").exists():
        return IN_PROGRESS
    status = read_status(folder)
    if status is None:
        if strict:
            from coburst.validate import read_json

            read_json(folder / "status.json")  # raises, naming the file and the problem
            from coburst.errors import InputError

            raise InputError(folder / "status.json", None, "expected a JSON object")
        return IN_PROGRESS
    return DONE if status.get("state") == DONE else FAILED


def list_runs(out: str | Path, *, strict: bool = True) -> list[tuple[Path, str]]:
    """Every run folder under ``<out>/runs`` with its :func:`run_folder_state`, sorted by name:
    the one way readers of a campaign folder (analyze, plot, report, campaign report) learn
    which runs are finished.  Only ``done`` runs may be read; the others are reported."""
    rdir = runs_dir(out)
    if not rdir.is_dir():
        return []
    return [(d, run_folder_state(d, strict=strict)) for d in sorted(rdir.iterdir()) if d.is_dir()]


def _write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(obj, indent=None, separators=(",", ":"), sort_keys=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _tail(path: Path, lines: int = 15, chars: int = 3000) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])[-chars:]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def stop_all() -> None:
    """Stop every local run now (their temporary folders stay, for the next invocation to remove)."""
    _stop.set()
    with _children_lock:
        procs = list(_children)
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)

    def kill_left() -> None:
        with _children_lock:
            left = list(_children)
        for proc in left:
            _signal_group(proc, signal.SIGKILL)

    timer = threading.Timer(5.0, kill_left)
    timer.daemon = True
    timer.start()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _terminate(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM to the run's process group (the child stops cleanly: its scheduler, the real
    Batsim...), SIGKILL after ``grace`` seconds."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()


def stop_file(out: str | Path, token: str) -> Path:
    return Path(out) / f"{STOP_PREFIX}{token}"


def execute_run(run_id: str, params: dict, task: dict, out: str, batsim: str | None = None,
                retry_failed: bool = False, stop_token: str | None = None) -> dict:
    """Execute one run unless it is already published; return ``{"run_id", "state", "error",
    "wall_s", "host"}`` with ``state`` one of done, failed, skipped, stopped.  The run stops
    (its child killed, nothing published) on the local stop, or when ``stop_file(out,
    stop_token)`` appears (a Dask campaign stopped by its user)."""
    stop_path = stop_file(out, stop_token) if stop_token else None
    seen = False

    def stopped() -> bool:  # once seen, for good
        nonlocal seen
        seen = seen or _stop.is_set() or (stop_path is not None and stop_path.exists())
        return seen

    rdir = runs_dir(out)
    final = rdir / run_id
    status = read_status(final)
    if status is not None and (status.get("state") == "done" or (status.get("state") == "failed"
                                                                  and not retry_failed)):
        return {"run_id": run_id, "state": "skipped", "error": status.get("error"), "wall_s": 0.0,
                "host": socket.gethostname()}
    if stopped():
        return {"run_id": run_id, "state": "stopped", "error": None, "wall_s": 0.0, "host": socket.gethostname()}
    rdir.mkdir(parents=True, exist_ok=True)
    tmp = rdir / f"{TMP_PREFIX}{run_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    prefix = str(tmp / PREFIX_NAME)
    final_prefix = str(final / PREFIX_NAME)
    child_task = dict(task, options=_subst_prefix(task["options"], prefix), prefix=prefix, batsim=batsim)
    log = tmp / LOG_NAME
    t0 = time.perf_counter()
    code, error = _run_child(child_task, log, task.get("run_timeout") or None, stopped)
    wall = round(time.perf_counter() - t0, 3)
    if stopped():
        shutil.rmtree(tmp, ignore_errors=True)
        return {"run_id": run_id, "state": "stopped", "error": None, "wall_s": wall, "host": socket.gethostname()}
    if code == 0 and not Path(f"{prefix}_jobs.csv").is_file():
        code, error = 1, "the run ended without writing its _jobs.csv"
    if code != 0 and error is None:
        error = f"exit status {code}: " + (_tail(log) or "(no output)")
    state = "done" if code == 0 else "failed"
    host = socket.gethostname()
    # the published options name the final place of the outputs, not the temporary one
    _write_json(tmp / "params.json", {"run_id": run_id, **params})
    status = {"state": state, "error": error, "wall_s": wall, "exit_code": code, "host": host,
              "prefix": final_prefix}
    worker = _dask_worker()
    if worker is not None:
        status["worker"] = worker
    _write_json(tmp / "status.json", status)
    if state == "done" and log.is_file() and log.stat().st_size == 0:
        log.unlink()
    _fsync_dir(tmp)
    _publish(tmp, final)
    return {"run_id": run_id, "state": state, "error": error, "wall_s": wall, "host": host}


def _dask_worker() -> str | None:
    """The name of the Dask worker executing this run, or None outside Dask."""
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return None


def _publish(tmp: Path, final: Path) -> None:
    """Rename ``tmp`` to ``final``; a previous (failed) ``final`` is moved aside first."""
    try:
        os.rename(tmp, final)
    except OSError:
        if not final.exists():
            raise
        old = final.with_name(f"{OLD_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}")
        os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(final.parent)


def _subst_prefix(value: Any, prefix: str) -> Any:
    if isinstance(value, str):
        return value.replace("{prefix}", prefix)
    if isinstance(value, list):
        return [_subst_prefix(v, prefix) for v in value]
    if isinstance(value, dict):
        return {k: _subst_prefix(v, prefix) for k, v in value.items()}
    return value


def _run_child(task: dict, log: Path, wall_limit: float | None,
               stopped: Callable[[], bool] = _stop.is_set) -> tuple[int, str | None]:
    # the child stops (SIGTERM, a clean stop) when the thread that started it dies: a campaign
    # killed with SIGKILL leaves no simulation running (see coburst.campaign.child)
    env = {**os.environ, "PYTHONHASHSEED": "0", "COBURST_CAMPAIGN_PARENT": str(os.getpid())}
    cmd = [sys.executable, "-m", "coburst.campaign.child", json.dumps(task)]
    with open(log, "wb") as fh:
        # its own process group: a stop or a wall-clock limit kills the run and what it started
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                process_group=0)
    with _children_lock:
        _children.add(proc)
    try:
        deadline = time.monotonic() + wall_limit if wall_limit else math.inf
        while True:
            if stopped():
                _terminate(proc)
                return -15, "stopped"
            try:
                return proc.wait(timeout=max(0.0, min(STOP_POLL, deadline - time.monotonic()))), None
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    _terminate(proc)
                    return -9, f"stopped after the run's wall-clock limit ({wall_limit:g} s): " + (_tail(log) or "")
    finally:
        with _children_lock:
            _children.discard(proc)
        _signal_group(proc, signal.SIGKILL)  # whatever the run started and left behind
