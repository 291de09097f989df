"""Running the same inputs on the real Batsim: ``batsim`` + a ``pybatsim`` scheduler process.

Used by ``coburst demo --engine batsim`` (and campaigns): the binary comes from ``--batsim``,
else the environment variable ``BATSIM``, else ``batsim`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from coburst.errors import InputError, SchedulerGone


def find_batsim(explicit: str | None = None) -> str:
    """The real ``batsim`` binary to use, or an InputError saying how to give one."""
    if explicit is not None:  # the user's own choice: checked, never replaced by another binary
        path = Path(explicit)
        if not path.exists():
            raise InputError("--batsim", explicit, "no such file: give the path of the batsim binary")
        if not path.is_file() or not os.access(path, os.X_OK):
            raise InputError("--batsim", explicit, "not an executable file: give the path of the batsim binary")
        return str(path.resolve())
    env = os.environ.get("BATSIM")
    if env:
        if not (Path(env).is_file() and os.access(env, os.X_OK)):
            raise InputError("BATSIM", env, "the environment variable BATSIM does not name an executable file: fix "
                                            "it, unset it, or pass --batsim PATH")
        return str(Path(env).resolve())
    found = shutil.which("batsim")
    if found:
        return str(Path(found).resolve())
    raise InputError("--engine batsim", None, "no real batsim binary found: pass --batsim PATH, set BATSIM=PATH, "
                                              "or put batsim on PATH (e.g. from Batsim's Nix shell)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_with_batsim(batsim: str, scheduler: str, options: dict, platform: str, workloads: list[str],
                    prefix: str, extra_args: list[str] = (), timeout: float = 3600) -> None:
    """Run ``scheduler`` (a pybatsim scheduler file or bundled name) against the real Batsim.

    The platform's own roles (``coburst-roles`` zone properties, :mod:`coburst.platforms.roles`)
    are passed as ``-r``; roles given in ``extra_args`` too must be the same."""
    extra_args = batsim_role_arguments(str(platform), list(extra_args))
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    log_dir = tempfile.mkdtemp(prefix="coburst-batsim-")
    sched_log = Path(log_dir) / "scheduler.log"
    sim_log = Path(log_dir) / "batsim.log"
    try:
        with open(sched_log, "w") as slog, open(sim_log, "w") as blog:
            sched = subprocess.Popen([sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-o",
                                      json.dumps(options), "-s", endpoint, "-t", "30000", "-v", "warning"],
                                     stdout=slog, stderr=subprocess.STDOUT, cwd=log_dir,
                                     env={**os.environ, "PYTHONHASHSEED": "0"})
            cmd = [batsim, "-p", str(platform)]
            for w in workloads:
                cmd += ["-w", str(w)]
            cmd += ["-e", str(prefix), "-s", endpoint, *extra_args]
            try:
                code = subprocess.call(cmd, stdout=blog, stderr=subprocess.STDOUT, timeout=timeout)
            finally:
                try:
                    sched.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    sched.kill()
                    sched.wait()
        if code != 0:
            tail = "\n    ".join(sim_log.read_text(errors="replace").strip().splitlines()[-6:])
            stail = "\n    ".join(sched_log.read_text(errors="replace").strip().splitlines()[-6:])
            raise SchedulerGone(f"batsim exited with code {code}; its last output:\n    {tail}\n"
                                f"scheduler's last output:\n    {stail}")
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)


def batsim_role_arguments(platform: str, args: list[str]) -> list[str]:
    """``args`` plus the ``-r`` options saying the platform file's own roles (none if ``args``
    gives the same roles; an error naming both if they differ)."""
    from coburst.platforms.roles import batsim_arguments, file_role_items, merge_roles
    from coburst.platforms.roles import parse_roles

    items = file_role_items(platform)
    if not items:
        return args
    given = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-r", "--add-role-to-hosts")]
    given += [a.split("=", 1)[1] for a in args if a.startswith("--add-role-to-hosts=")]
    if given:
        merge_roles(platform, items, parse_roles(given))  # raises when they differ
        return args
    return batsim_arguments(items) + args
