"""Shared pieces of the campaign tests: small delay workloads, a scheduler that records every
start, campaign files, and running ``coburst campaign`` as a real process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the first 5000 jobs of the KTH-SP2 log as delay jobs on 100 nodes (shipped, see README)
DELAY_5000 = ROOT / "workloads" / "kth_sp2_delay_5000.json"
PLATFORM = ROOT / "platforms" / "kth_sp2.xml"

#: a coburst pybatsim scheduler that appends the run's id to the file named by its "mark"
#: option when it starts (the "run" option is the run's output prefix, {prefix})
MARKED = '''
import os
from coburst.adapter import CoburstScheduler


class Marked(CoburstScheduler):
    def __init__(self, options=None):
        options = dict(options or {})
        mark, run = options.pop("mark"), options.pop("run")
        fd = os.open(mark, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (run + "\\n").encode())
        os.close(fd)
        super().__init__(options)
'''


def delay_workloads(folder: Path, sizes: list[int]) -> list[Path]:
    """``d<n>.json``: the first ``n`` jobs of :data:`DELAY_5000`, the file ``coburst workload``'s
    delay conversion of the log's first ``n`` jobs would be."""
    from coburst.workloads.batsim_json import write_workload

    folder.mkdir(parents=True, exist_ok=True)
    full = json.loads(DELAY_5000.read_text())
    paths = []
    for n in sizes:
        path = folder / f"d{n}.json"
        if not path.exists():
            jobs = full["jobs"][:n]
            used = {j["profile"] for j in jobs}
            profiles = {k: v for k, v in full["profiles"].items() if k in used}
            write_workload({"nb_res": full["nb_res"], "description": full["description"], "jobs": jobs,
                            "profiles": dict(sorted(profiles.items(), key=lambda kv: kv[1]["delay"]))}, path)
        paths.append(path)
    return paths


def marked_campaign(folder: Path, sizes: list[int], policies: list[str], marks: Path) -> Path:
    """A campaign file: the marked scheduler with a policy grid on delay workloads d<size>."""
    delay_workloads(folder / "wl", sizes)
    (folder / "marked.py").write_text(MARKED)
    return write_spec(folder / "marked.toml", {"name": "marked"},
                      {"name": "marked", "scheduler": "marked.py", "options": {"mark": str(marks), "run": "{prefix}"},
                       "grid": {"policy": list(policies)}},
                      {"path": "wl/d{n}.json", "vary": {"n": list(sizes)}})


def write_spec(path: Path, campaign: dict, scheduler: dict, workload: dict) -> Path:
    """A campaign file on ``PLATFORM`` with one scheduler entry and one workload entry."""
    from coburst.campaign.spec import dumps_toml

    path.write_text(dumps_toml({"platforms": [str(PLATFORM)], "campaign": campaign, "schedulers": [scheduler],
                                "workloads": [workload]}))
    return path


_RUN_OF_PREFIX = re.compile(r"/runs/\.tmp-(.+)-[0-9a-f]{8}/out$")


def marks_of(path: Path) -> list[str]:
    """The run ids of the recorded starts, in order."""
    if not path.exists():
        return []
    ids = []
    for line in path.read_text().splitlines():
        m = _RUN_OF_PREFIX.search(line)
        assert m, line
        ids.append(m.group(1))
    return ids


def campaign_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "coburst", "campaign", *map(str, args)]


def run_campaign(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(campaign_cmd(*args), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


def jobs_files(out: Path) -> dict[str, bytes]:
    """run id -> _jobs.csv bytes of every published run."""
    return {d.name: (d / "out_jobs.csv").read_bytes() for d in sorted((out / "runs").iterdir())
            if not d.name.startswith(".")}
