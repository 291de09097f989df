"""Real outputs of the embedded simulator for the analysis tests (analyze, plot, report)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from simharness import COBURST, REPO

DF96 = REPO / "platforms" / "dragonfly96.xml"
ALLOC = REPO / "workloads" / "kth_alloc_only_sample.json"
IO = REPO / "workloads" / "kth_io_aware_sample.json"


def first_jobs(src: Path, dst: Path, n: int, squeeze: float = 1.0) -> Path:
    """The first ``n`` jobs of ``src``, submission times divided by ``squeeze`` (more contention)."""
    doc = json.loads(src.read_text())
    doc["jobs"] = [{**j, "subtime": round(j["subtime"] / squeeze, 3)} for j in doc["jobs"][:n]]
    used = {j["profile"] for j in doc["jobs"]}
    doc["profiles"] = {k: v for k, v in doc["profiles"].items() if k in used}
    dst.write_text(json.dumps(doc))
    return dst


def run(scheduler: str, workload: Path, prefix: Path, *extra: str) -> Path:
    proc = subprocess.run([str(COBURST), "run", scheduler, "-p", str(DF96), "-w", str(workload), "-e", str(prefix),
                           "-q", *extra], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return prefix


def outputs(root: Path, n: int = 40, squeeze: float = 1.0) -> dict:
    """fcfs and backfill-1 on the first ``n`` Alloc-Only KTH jobs (96-node dragonfly, BB)."""
    root.mkdir(parents=True, exist_ok=True)
    w = first_jobs(ALLOC, root / "w.json", n, squeeze)
    return {"workload": w, "platform": DF96, "fcfs": run("fcfs", w, root / "out" / "fcfs"),
            "backfill-1": run("backfill-1", w, root / "out" / "backfill-1")}


def campaign(root: Path, outs: dict | list[dict], parts: int = 2, failed: bool = True) -> Path:
    """A campaign folder (runs/<id>/params.json, status.json, out_*) holding the real
    outputs of ``outs`` (one dict per part, or one repeated as ``parts`` parts), plus one
    failed run."""
    per_part = outs if isinstance(outs, list) else [outs] * parts
    for part, outs in enumerate(per_part, start=1):
        for sched in ("fcfs", "backfill-1"):
            d = root / "runs" / f"p{part}-{sched}"
            d.mkdir(parents=True)
            for suffix in ("_jobs.csv", "_schedule.csv"):
                shutil.copy(f"{outs[sched]}{suffix}", d / f"out{suffix}")
            (d / "params.json").write_text(json.dumps({
                "scheduler": sched, "options": "{}", "platform": str(outs["platform"]),
                "workload": str(outs["workload"]), "seed": 0, "engine": "coburst", "part": part}))
            (d / "status.json").write_text(json.dumps({"state": "done", "error": None, "wall_s": 1.5}))
    if failed:
        d = root / "runs" / "p9-broken"
        d.mkdir(parents=True)
        (d / "params.json").write_text(json.dumps({"scheduler": "window-1", "options": "{}", "part": 9}))
        (d / "status.json").write_text(json.dumps({"state": "failed", "error": "timeout", "wall_s": 3.0}))
    return root
