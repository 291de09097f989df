"""One policy run through the embedded simulator, for tests: :func:`run_policy`.

The run is what ``coburst run NAME -p PLATFORM -w WORKLOAD -o '{params}'`` does (the
scheduler in the simulator's process, ``--transport inprocess``; ``transport="zmq"``: a
``pybatsim`` process over ZeroMQ), in a child Python process of its own (one simulation per
process, as the campaigns run them; the caller's ``sys.path`` is passed on, so a policy class
defined in a test module or a plugin's source tree runs without being installed).  The
adapter's decision trace is on, so that the reservations can be checked.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["PolicyRun", "RunFailed", "run_policy", "assert_deterministic"]


#: the columns of ``_schedule.csv`` that measure the machine, not the simulation
WALL_CLOCK = ("simulation_time", "scheduling_time")


class RunFailed(AssertionError):
    """The run did not end normally (the simulator's or the scheduler's message inside)."""


@dataclass
class PolicyRun:
    """What a run left: its output files and how to read them."""

    policy: str
    params: dict[str, Any]
    out: Path
    platform: Path
    workload_path: Path
    trace: Path | None
    #: the policy's promise about its reservations (``Policy.keeps_reservations``)
    keeps_reservations: str | None = None
    stderr: str = ""
    prefix: Path = field(init=False)

    def __post_init__(self):
        self.prefix = self.out / "out"

    @property
    def jobs_csv(self) -> Path:
        return Path(f"{self.prefix}_jobs.csv")

    @property
    def schedule_csv(self) -> Path:
        return Path(f"{self.prefix}_schedule.csv")

    @cached_property
    def workload(self) -> dict:
        return json.loads(self.workload_path.read_text(encoding="utf-8"))

    @cached_property
    def rows(self) -> dict[str, dict[str, str]]:
        """``_jobs.csv`` rows by ``workload!id``."""
        with open(self.jobs_csv, newline="", encoding="utf-8") as fh:
            return {f"{r['workload_name']}!{r['job_id']}": r for r in csv.DictReader(fh)}

    def schedule_rows(self) -> list[dict[str, str]]:
        """``_schedule.csv`` without its wall-clock columns (``simulation_time``,
        ``scheduling_time``)."""
        with open(self.schedule_csv, newline="", encoding="utf-8") as fh:
            return [{k: v for k, v in r.items() if k not in WALL_CLOCK} for r in csv.DictReader(fh)]

    def decisions(self) -> list[dict]:
        """The adapter's decision trace, one dict per decision that did something."""
        if self.trace is None or not self.trace.exists():
            return []
        return [json.loads(line) for line in self.trace.read_text().splitlines()]


def _policy_name(policy: Any) -> tuple[str, str | None]:
    """(name to run, "module:qualname" of a class the child registers, or None)."""
    if isinstance(policy, str):
        return policy, None
    if isinstance(policy, type):
        from coburst import registry

        registry.register(policy)  # the same checks as a plugin's, here at once
        return policy.family, f"{policy.__module__}:{policy.__qualname__}"
    raise TypeError(f"policy must be a name or a policy class, got {policy!r}")


def _write_input(value: Any, out: Path, name: str, kind: str) -> Path:
    if isinstance(value, Mapping):
        path = out / name
        path.write_text(json.dumps(value, separators=(",", ":")) + "\n", encoding="utf-8")
        return path
    if isinstance(value, str) and value.lstrip().startswith("<"):  # platform XML text
        path = out / name
        path.write_text(value, encoding="utf-8")
        return path
    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        if not path.is_file():
            raise FileNotFoundError(f"{kind} {path}: no such file")
        return path.resolve()
    raise TypeError(f"{kind} must be a file path{' or a workload dict' if kind == 'workload' else ' or XML text'}, "
                    f"got {type(value).__name__}")


def run_policy(policy: Any, workload: Any, platform: Any, *, out: str | Path | None = None,
               transport: str = "inprocess", sim_args: Sequence[str] = (), timeout: float = 60.0,
               trace: bool = True, heatmap: str | None = None, **params: Any) -> PolicyRun:
    """Run ``policy`` on ``workload`` and ``platform``; return the :class:`PolicyRun`.

    ``policy``: a registered name (``[FAMILY:]NAME``: built-in or plugin) or a policy class
    (registered for the run under its ``family`` name, as a plugin); ``workload``: a Batsim
    workload file or its JSON as a dict; ``platform``: a SimGrid platform file or its XML
    text; ``params``: the policy's parameters and the adapter's options (JSON values);
    ``sim_args``: the simulator's options (``["--enable-dynamic-jobs"]``); ``heatmap``: the
    speed hook of node-sharing runs; ``out``: the output folder (default: a new temporary
    one, left to the caller).  A run that does not end normally raises :class:`RunFailed`
    with the messages; bad input raises it too (the ``coburst run`` message inside)."""
    name, class_path = _policy_name(policy)
    out = Path(tempfile.mkdtemp(prefix="coburst-testing-") if out is None else out)
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()  # (the run's process works in ``out``: every path it gets is absolute)
    workload_path = _write_input(workload, out, "workload.json", "workload")
    platform_path = _write_input(platform, out, "platform.xml", "platform")
    options = dict(params)
    trace_path = out / "trace.jsonl" if trace else None
    if trace_path is not None:
        options["trace"] = str(trace_path)
    if heatmap is not None and Path(heatmap).exists():
        heatmap = str(Path(heatmap).resolve())
    args = list(sim_args) + (["--heatmap", str(heatmap)] if heatmap is not None else [])
    task = {"scheduler": name, "class": class_path, "platform": str(platform_path), "workload": str(workload_path),
            "export": str(out / "out"), "options": options, "sim_args": args, "transport": transport,
            "timeout": timeout}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-m", "coburst.testing.child", json.dumps(task)], capture_output=True,
                          text=True, env=env, cwd=out)
    if proc.returncode != 0:
        raise RunFailed(f"{name} on {workload_path.name} / {platform_path.name}: exit {proc.returncode}\n"
                        f"{proc.stderr.strip()}")
    run = PolicyRun(name, params, out, platform_path, workload_path, trace_path, stderr=proc.stderr)
    run.keeps_reservations = _promise(name, params, class_path)
    return run


def _promise(name: str, params: dict, class_path: str | None) -> str | None:
    from coburst import registry
    from coburst.adapter.scheduler import ADAPTER_OPTIONS

    found = registry.resolve(name)
    own = {k: v for k, v in params.items() if k not in ADAPTER_OPTIONS}
    try:
        policy = found.cls(**{**own, **found.implied})
    except Exception:  # noqa: BLE001 - the run itself accepted them; no promise to check then
        return None
    return getattr(policy, "keeps_reservations", None)
