"""Small heterogeneous platforms and workloads in the shared format of ``coburst platform
hetero`` / ``coburst workload hetero``, written here so the policy tests control
every node and job, and the invariants the engine tests check on ``_jobs.csv``
(tests/test_hetero_policies.py, tests/test_hetero_crossengine.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest


def platform(path: Path, nodes: Sequence[tuple[int, float]], *, mem: Sequence[float] | None = None,
             power: Sequence[tuple[float, float]] | None = None) -> Path:
    """A SimGrid 4.1 platform: node i has ``nodes[i] = (cores, core speed in flops/s)``; one host
    per core ``nNN_cCC`` with the format's properties, a master host, one shared backbone,
    Full routing with a route between every pair of hosts (tiny platforms only)."""
    hosts = []
    for i, (cores, speed) in enumerate(nodes):
        for c in range(cores):
            props = {"role": "compute_node", "node": i, "core": c, "cores": cores, "type": f"t{i}",
                     "speed": repr(float(speed))}
            if mem is not None:
                props["mem"] = mem[i]
                props["mem_bw"] = mem[i] * 2
            if power is not None:
                props["static_power"], props["dynamic_power"] = power[i]
            hosts.append((f"n{i:02d}_c{c:02d}", float(speed), props))
    names = [h[0] for h in hosts] + ["master_host"]
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '  <zone id="root" routing="Full">',
             '    <prop id="platform" value="hetero"/>']
    for name, speed, props in hosts:
        lines.append(f'    <host id="{name}" speed="{speed!r}f">')
        lines += [f'      <prop id="{k}" value="{v}"/>' for k, v in props.items()]
        lines.append("    </host>")
    lines.append('    <host id="master_host" speed="1Gf"/>')
    lines.append('    <link id="bb" bandwidth="10GBps" latency="1us"/>')
    lines.append('    <link id="lo" bandwidth="100GBps" latency="0us" sharing_policy="FATPIPE"/>')
    for a in range(len(names)):
        lines.append(f'    <route src="{names[a]}" dst="{names[a]}"><link_ctn id="lo"/></route>')
        for b in range(a + 1, len(names)):
            lines.append(f'    <route src="{names[a]}" dst="{names[b]}"><link_ctn id="bb"/></route>')
    lines += ["  </zone>", "</platform>"]
    path.write_text("\n".join(lines) + "\n")
    return path


def workload(path: Path, jobs: Sequence[dict], nb_res: int) -> Path:
    """Jobs ``{"id", "subtime", "res", "ops", ...extra}`` as Batsim jobs with one
    ``parallel_homogeneous`` profile per job (cpu = ops per core, com = 0), ``req_ops``."""
    out_jobs, profiles = [], {}
    for j in jobs:
        j = dict(j)
        ops = j.pop("ops")
        pid = f"p{j['id']}"
        profiles[pid] = {"type": "parallel_homogeneous", "cpu": ops, "com": 0}
        out_jobs.append({"id": j.pop("id"), "subtime": j.pop("subtime"), "res": j.pop("res"), "profile": pid,
                         "walltime": -1, "req_ops": ops, **j})
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": out_jobs, "profiles": profiles}) + "\n")
    return path


# ---------------------------------------------------------------------- the engine tests' platform
NODES = [(1, 1e9), (2, 2e9), (1, 4e9), (4, 1.5e9)]   # 8 cores in 4 nodes


def node_of_core() -> dict[int, int]:
    out, rid = {}, 0
    for i, (cores, _) in enumerate(NODES):
        for _ in range(cores):
            out[rid] = i
            rid += 1
    return out


def ids_of(alloc: str) -> list[int]:
    out = []
    for part in alloc.split():
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def check_invariants(rows: list[dict], jobs: list[dict]) -> None:
    """From the engine's _jobs.csv: every job completed, on ``res`` cores of one node, for
    ops / speed seconds; no core held by two jobs at any instant."""
    where = node_of_core()
    speed = {i: s for i, (_, s) in enumerate(NODES)}
    assert len(rows) == len(jobs)
    by_id = {str(j["id"]): j for j in jobs}
    spans = []
    for r in rows:
        assert r["final_state"] == "COMPLETED_SUCCESSFULLY", r
        ids = ids_of(r["allocated_resources"])
        nodes = {where[i] for i in ids}
        assert len(nodes) == 1 and len(ids) == int(r["requested_number_of_resources"]), r
        job = by_id[r["job_id"]]
        assert float(r["execution_time"]) == pytest.approx(job["ops"] / speed[nodes.pop()], abs=1e-5)
        spans.append((float(r["starting_time"]), float(r["finish_time"]), set(ids), r["job_id"]))
    for t in sorted({s[0] for s in spans}):
        held: dict[int, str] = {}
        for start, end, ids, jid in spans:
            if start <= t < end:
                for i in ids:
                    assert i not in held, f"core {i} held by {held[i]} and {jid} at {t}"
                    held[i] = jid


def random_jobs(seed: int, n: int, arrival: str) -> list[dict]:
    rng = np.random.default_rng(seed)
    t = 0.0
    jobs = []
    for i in range(n):
        if arrival == "poisson":
            t += float(np.round(rng.exponential(0.5), 3))
        elif arrival == "batches":
            t = float(i // 4)
        jobs.append({"id": i, "subtime": t, "res": int(rng.choice([1, 1, 1, 2, 3])),
                     "ops": float(np.round(rng.uniform(1e8, 3e9), -6)), "req_time": float(rng.integers(1, 4)),
                     "mem": int(rng.integers(0, 5)), "mem_vol": int(rng.integers(0, 5))})
    return jobs


#: IRMaSim's example files (MIT; read, never copied into coburst): the environment variable
#: IRMASIM_EXAMPLES, else the shared reference copy beside the checkout (where CI has it)
IRMASIM = Path(os.environ.get("IRMASIM_EXAMPLES") or
               Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "irmasim" / "examples")
needs_irmasim = pytest.mark.skipif(
    not IRMASIM.is_dir(), reason=f"IRMaSim's example files not found at {IRMASIM}: set IRMASIM_EXAMPLES to "
                                 "the examples/ folder of an IRMaSim checkout")
