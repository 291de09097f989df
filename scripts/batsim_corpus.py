#!/usr/bin/env python3
"""Batsim 4.2.1's own test corpus on both engines: every (platform, workload) pair that makes
sense, with pybatsim's example schedulers, on the real Batsim and on ``coburst sim``.

    BATSIM=/path/to/batsim .venv/bin/python scripts/batsim_corpus.py -j 2
    BATSIM=... .venv/bin/python scripts/batsim_corpus.py /path/to/batsim-repository \\
        --scheduler easyBackfill                      # a Batsim git repository: tag v4.2.1

The argument is a folder holding Batsim's ``platforms/`` and ``workloads/`` folders (default
``$COBURST_BATSIM_DATA``, else ``../shared/data/batsim-4.2.1`` beside the checkout: Batsim's
own at tag v4.2.1, not in this repository), or a Batsim git repository (bare or not), whose
tag ``--tag`` (default ``v4.2.1``) is extracted into a temporary folder.  coburst itself
never reads these files.

Pairs: every ``*.xml`` platform under ``platforms/`` with every ``*.json`` workload under
``workloads/`` (sub-folders included) whose ``nb_res`` is at most the platform's number of
compute hosts (hosts other than ``master_host`` and those whose ``role`` is ``master`` or
``storage``, counted by SimGrid in a child process), each with the schedulers of
``--scheduler`` (default pybatsim's ``fillerSched``, ``easyBackfill`` and ``schedFcfs``).

Each run uses the cross-engine harness of ``tests/`` (``simharness.run_sim``: one pybatsim
process per engine behind a recording proxy) and ``crossengine.differences`` (every message
the scheduler receives, ``_jobs.csv``, ``_schedule.csv``, ``_machine_states.csv``,
``_schedule.trace``).  It prints one row per run: pair, scheduler, Batsim's status,
coburst's status, and ``identical`` or the first differences.  Known limits of the
comparison: pybatsim's ``fillerSched`` iterates over a set of Job objects (its choices with
two or more waiting jobs change from run to run, on either engine), so it runs as
``tests/schedulers/fillerSchedById.py`` (the same code, Job objects hashed by id: a fixed
order) on both engines; ``schedFcfs`` needs integer job ids.  ``tests/test_batsim_corpus.py``
runs every case of this table in the test suite, each with the outcome it must have.  Exit status 0 when every pair Batsim runs also runs on coburst with the
same outputs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from shared_data import batsim_data, missing  # noqa: E402  (tests/ is on sys.path)

SCHEDULERS = ("fillerSched", "easyBackfill", "schedFcfs")
#: the scheduler each name runs as: pybatsim's fillerSched with a fixed order (tests/schedulers/)
RUN_AS = {"fillerSched": "fillerSchedById"}

_COUNT_HOSTS = r"""
import sys
from coburst.simulator._simgrid import simgrid
e = simgrid.Engine(["count", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
n = 0
for h in e.all_hosts:
    role = h.get_properties().get("role", "")
    if h.name != "master_host" and role not in ("master", "storage"):
        n += 1
print(n)
"""


@dataclass
class Outcome:
    platform: str
    workload: str
    scheduler: str
    batsim: str
    coburst: str
    result: str
    identical: bool


def corpus_root(source: Path, tag: str, tmp: Path) -> Path:
    """The folder holding ``platforms/`` and ``workloads/``: ``source`` itself, or ``tag`` of
    the git repository ``source`` extracted under ``tmp``."""
    if (source / "platforms").is_dir() and (source / "workloads").is_dir():
        return source
    if not source.exists():
        sys.exit(f"batsim_corpus: {missing(source) if source == batsim_data() else f'{source}: not found'}")
    archive = subprocess.run(["git", "-C", str(source), "archive", tag, "platforms", "workloads"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        sys.exit(f"batsim_corpus: {source}: neither a folder with platforms/ and workloads/ nor a git "
                 f"repository with tag {tag}: {archive.stderr.decode(errors='replace').strip()}")
    tmp.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    return tmp


def compute_hosts(platform: Path) -> int | None:
    """How many compute hosts SimGrid finds in ``platform`` (None: SimGrid cannot load it)."""
    proc = subprocess.run([sys.executable, "-c", _COUNT_HOSTS, str(platform)], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        return int(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pass
    # SimGrid 4.1 cannot load it (e.g. a configuration key 3.32 knew): count the declarations
    text = platform.read_text(errors="replace")
    hosts = len(re.findall(r"<host\b", text)) - len(re.findall(r"<host\b[^>]*\bid=[\"']master_host[\"']", text))
    hosts -= len(re.findall(r"<prop\s+id=[\"']role[\"']\s+value=[\"'](?:storage|master)[\"']", text))
    for radical in re.findall(r"<cluster\b[^>]*\bradical=[\"']([^\"']*)[\"']", text):
        for part in radical.split(","):
            lo, _, hi = part.partition("-")
            hosts += int(hi or lo) - int(lo) + 1 if (lo.strip().isdigit() and (hi or lo).strip().isdigit()) else 0
    return hosts if hosts > 0 else None


def nb_res(workload: Path) -> int | None:
    try:
        value = json.loads(workload.read_text(errors="replace")).get("nb_res")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pairs(root: Path, platform_glob: str, workload_glob: str) -> tuple[list[tuple[Path, Path]], list[str]]:
    """The (platform, workload) pairs to run, and the reasons other combinations were left out."""
    platforms = sorted(p for p in (root / "platforms").rglob("*.xml")
                       if fnmatch.fnmatch(str(p.relative_to(root)), platform_glob))
    workloads = sorted(w for w in (root / "workloads").rglob("*.json")
                       if fnmatch.fnmatch(str(w.relative_to(root)), workload_glob))
    out, skipped = [], []
    sizes = {w: nb_res(w) for w in workloads}
    for p in platforms:
        hosts = compute_hosts(p)
        if hosts is None:
            skipped.append(f"{p.relative_to(root)}: SimGrid cannot load it (every workload run on it is left out)")
            continue
        for w in workloads:
            if sizes[w] is None:
                continue
            if sizes[w] <= hosts:
                out.append((p, w))
    for w, size in sizes.items():
        if size is None:
            skipped.append(f"{w.relative_to(root)}: no integer nb_res (left out)")
    return out, skipped


def status(run) -> str:
    if run.returncode == 0:
        return "ok"
    lines = [ln.strip() for ln in run.stderr.splitlines() if ln.strip()]
    pick = next((ln for ln in reversed(lines) if "error" in ln.lower() or "critical" in ln.lower()),
                lines[-1] if lines else f"exit {run.returncode}")
    if run.returncode and "Traceback" in run.sched_output:
        tb = [ln for ln in run.sched_output.splitlines() if ln.strip()]
        pick += f" [scheduler: {tb[-1].strip()[:120]}]"
    return f"exit {run.returncode}: {pick[:240]}"


def run_one(root: Path, platform: Path, workload: Path, scheduler: str, work: Path, wait: float) -> Outcome:
    from crossengine import differences
    from simharness import run_sim

    name = f"{platform.stem}--{workload.stem}--{scheduler}"
    tmp = work / name
    tmp.mkdir(parents=True, exist_ok=True)
    runs, st = {}, {}
    for engine in ("batsim", "coburst"):
        try:
            runs[engine] = run_sim(tmp, engine=engine, prefix=engine, transcript=True, wait=wait, timeout=60,
                                   platform=platform, workloads=[workload], scheduler=RUN_AS.get(scheduler, scheduler),
                                   sched_timeout_ms=int(wait * 1000))
            st[engine] = status(runs[engine])
        except subprocess.TimeoutExpired:  # the engine process was killed after `wait` seconds
            runs[engine] = None
            st[engine] = f"hangs (killed after {wait:g} s)"
    b, c = runs["batsim"], runs["coburst"]
    sb, sc = st["batsim"], st["coburst"]
    if b is None or c is None:
        same = (b is None or b.returncode != 0) and (c is None or c.returncode != 0)
        return Outcome(str(platform.relative_to(root)), str(workload.relative_to(root)), scheduler, sb, sc,
                       "both refuse or hang" if same else "one engine refuses or hangs", same)
    if b.returncode == 0 and c.returncode == 0:
        try:
            diffs = differences(b, c)
        except Exception as exc:  # a missing output file, a truncated transcript
            diffs = [f"comparison failed: {type(exc).__name__}: {exc}"]
        result = "identical" if not diffs else " | ".join(d.splitlines()[0] for d in diffs)[:400]
        same = not diffs
    elif b.returncode != 0 and c.returncode != 0:
        result, same = "both refuse", True
    else:
        result, same = "one engine refuses", False
    return Outcome(str(platform.relative_to(root)), str(workload.relative_to(root)), scheduler, sb, sc, result, same)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, nargs="?", default=batsim_data(),
                        help="folder with platforms/ and workloads/, or a Batsim git repository "
                             "(default $COBURST_BATSIM_DATA, else ../shared/data/batsim-4.2.1)")
    parser.add_argument("--tag", default="v4.2.1", help="git tag to extract from a repository (default v4.2.1)")
    parser.add_argument("--scheduler", action="append", help="pybatsim scheduler (repeatable; default the three "
                        "example schedulers)")
    parser.add_argument("--platforms", default="*", help="glob on platforms/... paths (default all)")
    parser.add_argument("--workloads", default="*", help="glob on workloads/... paths (default all)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument("--wait", type=float, default=60.0, help="wall-clock limit of one engine's run (s)")
    parser.add_argument("--keep", type=Path, help="keep the runs' outputs in this folder")
    args = parser.parse_args(argv)
    if not os.environ.get("BATSIM"):
        print("batsim_corpus: set BATSIM to the real Batsim 4.2.1 binary", file=sys.stderr)
        return 2
    schedulers = args.scheduler or list(SCHEDULERS)
    with tempfile.TemporaryDirectory(prefix="batsim-corpus-") as tmpdir:
        tmp = Path(tmpdir)
        root = corpus_root(args.source.resolve(), args.tag, tmp / "corpus")
        work = args.keep.resolve() if args.keep else tmp / "runs"
        todo, skipped = pairs(root, args.platforms, args.workloads)
        for line in skipped:
            print(f"# {line}")
        # smallest first (workload file size, then platform size): every kind of input early
        tasks = sorted(((p, w, s) for p, w in todo for s in schedulers),
                       key=lambda t: (t[0].stat().st_size * t[1].stat().st_size, str(t[0]), str(t[1])))
        print(f"# {len(todo)} pairs x {len(schedulers)} schedulers = {len(tasks)} runs", flush=True)
        print("platform | workload | scheduler | batsim | coburst | result", flush=True)
        t0 = time.monotonic()
        outcomes: list[Outcome] = []
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_one, root, p, w, s, work, args.wait) for p, w, s in tasks]
            for fut in as_completed(futures):  # progress as runs end; the sorted table at the end
                o = fut.result()
                outcomes.append(o)
                print(f"{o.platform} | {o.workload} | {o.scheduler} | {o.batsim} | {o.coburst} | {o.result}",
                      flush=True)
        outcomes.sort(key=lambda o: (o.platform, o.workload, o.scheduler))
        print("\n# table (sorted)\nplatform | workload | scheduler | batsim | coburst | result")
        for o in outcomes:
            print(f"{o.platform} | {o.workload} | {o.scheduler} | {o.batsim} | {o.coburst} | {o.result}")
    bad = [o for o in outcomes if not o.identical]
    refused = [o for o in outcomes if o.batsim != "ok"]
    print(f"# {len(outcomes)} runs in {time.monotonic() - t0:.0f} s: {len(outcomes) - len(bad)} agree "
          f"({len(refused)} refused by Batsim), {len(bad)} differ")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
