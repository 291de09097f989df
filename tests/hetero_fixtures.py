"""Small heterogeneous platforms and workloads in the shared format (/tmp/hetero-format.md,
issue 19) for the heterogeneous-policy tests, written here so the tests do not depend on the
generators (``coburst platform hetero`` / ``coburst workload hetero``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence


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
