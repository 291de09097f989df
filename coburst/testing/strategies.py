"""Hypothesis strategies for random platforms and workloads (needs ``hypothesis``).

Two levels:

* the scheduling core's (:func:`clusters`, :func:`workloads`): a
  :class:`~coburst.core.cluster.Cluster` and :class:`~coburst.core.job.Job` lists for
  :func:`coburst.core.replay.replay` (a policy driven without a simulator);
* the simulator's, one per policy family, written to files by their ``write`` method for
  :func:`coburst.testing.run_policy`: :func:`dragonfly_cases` (``bb``: a dragonfly with
  burst-buffer nodes, ``delay`` and ``parallel_homogeneous`` profiles, per-node ``bb``
  requests, jobs killed at their walltime, jobs that never fit), :func:`cosched_cases`
  (``cosched``: a node-sharing platform, whole-node jobs with applications) and
  :func:`hetero_cases` (``hetero``: a heterogeneous cluster, multi-task jobs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from coburst.core.cluster import Cluster
from coburst.core.state import Job

__all__ = ["UNIT", "clusters", "workloads", "GB", "SPEED", "TOPOLOGIES", "DragonflyCase", "dragonfly_cases",
           "PlatformCase", "cosched_cases", "hetero_cases"]

UNIT = 1000  # BB bytes unit in generated cases


@st.composite
def clusters(draw, max_compute: int = 12, max_bb: int = 4, min_bb: int = 0) -> Cluster:
    """A cluster of 1..``max_compute`` compute nodes and ``min_bb``..``max_bb`` BB nodes of
    1..8 ``UNIT`` each, sometimes with a group/chassis topology."""
    n = draw(st.integers(1, max_compute))
    nb = draw(st.integers(min_bb, max_bb))
    caps = draw(st.lists(st.integers(1, 8).map(lambda u: u * UNIT), min_size=nb, max_size=nb))
    topo = draw(st.booleans())
    if topo:
        groups = draw(st.integers(1, 2))
        chassis = draw(st.integers(1, 2))
        def pos(k):
            return (k % groups, (k // groups) % chassis, 0)
        ctopo = [pos(draw(st.integers(0, 7))) for _ in range(n)]
        btopo = [pos(draw(st.integers(0, 7))) for _ in range(nb)]
        return Cluster.build(n, caps, compute_topology=ctopo, bb_topology=btopo)
    return Cluster.build(n, caps)


@st.composite
def workloads(draw, cluster: Cluster, max_jobs: int = 20, allow_unfit: bool = True):
    """``(jobs, runtimes)`` with integer dates; runtimes <= walltimes."""
    n = draw(st.integers(1, max_jobs))
    max_cap = cluster.max_bb_capacity
    jobs, runtimes = [], {}
    t = 0
    for i in range(n):
        t += draw(st.integers(0, 6))
        res_max = cluster.n_compute + (1 if allow_unfit else 0)
        res = draw(st.integers(1, res_max))
        wall = draw(st.integers(1, 30))
        if max_cap and draw(st.booleans()):
            bb = draw(st.integers(1, 2 * max_cap // UNIT + (1 if allow_unfit else 0))) * UNIT // 2
        else:
            bb = 0
        job = Job(f"j{i}", float(t), res, float(wall), bb)
        if not allow_unfit and cluster.never_fits(res, bb):
            continue
        jobs.append(job)
        runtimes[job.id] = float(draw(st.integers(1, wall)))
    return jobs, runtimes


# ---------------------------------------------------------------------- simulator cases
GB = 10**9
SPEED = 1e9  # flop/s of the generated hosts (DragonflySpec default "1Gf")
TOPOLOGIES = ["2,1;2,1;2,1;2", "1,1;2,1;2,1;2", "1,1;2,1;1,1;3", "2,1;1,1;2,1;2"]


@dataclass
class DragonflyCase:
    """A dragonfly platform with burst buffers and a workload for it."""

    topo: str
    bb_per_chassis: int
    bb_capacity: int
    jobs: list[dict]            # Batsim job JSON (with "bb")
    profiles: dict[str, dict]
    runtime: dict[int, float]   # job id -> intended run time (s)
    exact: dict[int, bool]      # job id -> run time exactly known (delay profile)

    def __repr__(self) -> str:
        rows = [(j["id"], j["subtime"], j["res"], j["walltime"], j["bb"] // (GB // 2), self.runtime[j["id"]],
                 "delay" if self.exact[j["id"]] else "ptask") for j in self.jobs]
        return (f"Case(topo={self.topo!r}, bb_per_chassis={self.bb_per_chassis}, "
                f"bb_capacity={self.bb_capacity // GB}GB, jobs (id, sub, res, wall, bb/0.5GB, run, kind)={rows})")

    def platform_xml(self) -> str:
        from coburst.platforms.dragonfly import parse_topology, render_xml, spec_from_options

        spec = spec_from_options(**parse_topology(self.topo), bb_per_chassis=self.bb_per_chassis,
                                 bb_capacity=self.bb_capacity)
        return render_xml(spec)

    def write(self, folder: str | Path) -> tuple[Path, Path]:
        """Write ``platform.xml`` and ``workload.json`` into ``folder``; return their paths."""
        import json

        from coburst.testing.records import platform_cluster

        folder = Path(folder)
        platform = folder / "platform.xml"
        platform.write_text(self.platform_xml())
        cluster = platform_cluster(platform)
        workload = folder / "workload.json"
        workload.write_text(json.dumps({"nb_res": cluster.n_compute, "jobs": self.jobs, "profiles": self.profiles},
                                       separators=(",", ":")) + "\n", encoding="utf-8")
        return platform, workload


@st.composite
def dragonfly_cases(draw, min_jobs: int = 5, max_jobs: int = 25) -> DragonflyCase:
    """A small dragonfly (one of :data:`TOPOLOGIES`, 1-2 BB nodes per chassis of 1-6 GB) and
    ``min_jobs``..``max_jobs`` jobs: submission times with ties, widths up to one more than the
    compute nodes (never fits), walltimes 2-30 s, per-node BB requests in half-GB up to one more
    than a BB node holds (never fits), run times up to 3 s past the walltime (killed);
    ``delay`` or ``parallel_homogeneous`` profiles."""
    from coburst.platforms.dragonfly import parse_topology

    topo = draw(st.sampled_from(TOPOLOGIES))
    t = parse_topology(topo)
    per_chassis = t["routers"] * t["nodes"]
    bbpc = draw(st.integers(1, min(2, per_chassis - 1)))
    n_chassis = t["groups"] * t["chassis"]
    n_compute = n_chassis * (per_chassis - bbpc)
    cap_units = draw(st.integers(1, 6))  # capacity in GB (per BB node)
    n = draw(st.integers(min_jobs, max_jobs))
    jobs, profiles, runtime, exact = [], {}, {}, {}
    sub = 0
    for i in range(n):
        sub += draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8]))
        res = draw(st.integers(1, n_compute + 1))  # n_compute + 1: never fits
        wall = draw(st.integers(2, 30))
        # per-node request in half-GB; 2 * cap + 1 half-GB is larger than any BB node
        bb = draw(st.one_of(st.just(0), st.integers(1, 2 * cap_units + 1))) * (GB // 2)
        run = draw(st.integers(1, wall + 3))
        if draw(st.booleans()):
            profiles[f"p{i}"] = {"type": "delay", "delay": run}
            exact[i] = True
        else:
            profiles[f"p{i}"] = {"type": "parallel_homogeneous", "cpu": run * SPEED,
                                 "com": draw(st.sampled_from([0, 10**6]))}
            exact[i] = False
        runtime[i] = float(run)
        jobs.append({"id": i, "subtime": sub, "walltime": wall, "res": res, "profile": f"p{i}", "bb": bb})
    return DragonflyCase(topo, bbpc, cap_units * GB, jobs, profiles, runtime, exact)


# ---------------------------------------------------------------------- the other families
@dataclass
class PlatformCase:
    """A platform (its XML text) and a Batsim workload for it, for one policy family."""

    family: str
    platform_xml: str
    workload: dict

    def write(self, folder: str | Path) -> tuple[Path, Path]:
        """Write ``platform.xml`` and ``workload.json`` into ``folder``; return their paths."""
        import json

        folder = Path(folder)
        platform = folder / "platform.xml"
        platform.write_text(self.platform_xml)
        workload = folder / "workload.json"
        workload.write_text(json.dumps(self.workload, separators=(",", ":")) + "\n", encoding="utf-8")
        return platform, workload


@st.composite
def cosched_cases(draw, max_nodes: int = 4, min_jobs: int = 3, max_jobs: int = 12,
                  apps: tuple[str, ...] = ("cg.E.512", "mg.E.128", "lu.E.512", "ft.E.512")) -> PlatformCase:
    """A node-sharing platform (``coburst platform cosched``: 2..``max_nodes`` ARIS nodes, four
    half-socket units each) and jobs of whole nodes (``res`` = nodes x 4; now and then one
    node more than the machine, or a width that is not whole nodes: rejected), applications
    of the ARIS NAS heatmap (or none), delay profiles sometimes past the walltime (killed)."""
    from coburst.platforms.cosched import CoschedSpec, render_xml

    spec = CoschedSpec(nodes=draw(st.integers(2, max_nodes)))
    per_node = spec.units_per_node
    jobs, profiles, sub = [], {}, 0
    for i in range(draw(st.integers(min_jobs, max_jobs))):
        sub += draw(st.sampled_from([0, 0, 1, 3, 7]))
        nodes = draw(st.integers(1, spec.nodes + 1))
        res = nodes * per_node if draw(st.integers(0, 9)) else max(1, nodes * per_node - 1)
        wall = draw(st.integers(5, 40))
        run = draw(st.integers(1, wall + 3))
        profiles[f"p{i}"] = {"type": "delay", "delay": run}
        job = {"id": i, "subtime": sub, "walltime": wall, "res": res, "profile": f"p{i}"}
        app = draw(st.sampled_from((None, *apps)))
        if app is not None:
            job["app"] = app
        jobs.append(job)
    return PlatformCase("cosched", render_xml(spec), {"nb_res": spec.nb_units, "jobs": jobs, "profiles": profiles})


@st.composite
def hetero_cases(draw, max_types: int = 3, max_nodes: int = 3, max_cores: int = 4, min_jobs: int = 3,
                 max_jobs: int = 14) -> PlatformCase:
    """A heterogeneous cluster (``coburst platform hetero``: 1..``max_types`` node types of
    1..``max_nodes`` nodes with 1..``max_cores`` cores, clocks drawn in a range) and
    ``parallel_homogeneous`` jobs (``res`` tasks on one node; now and then wider than every
    node: rejected), with or without a walltime."""
    from coburst.platforms.hetero import NodeType, build, render_xml

    types = []
    for k in range(draw(st.integers(1, max_types))):
        lo = draw(st.integers(10, 40)) / 10
        types.append(NodeType(f"t{k}", draw(st.integers(1, max_nodes)), draw(st.integers(1, max_cores)),
                              (lo, lo + draw(st.integers(0, 20)) / 10)))
    plat = build(types, draw(st.integers(0, 1000)))
    widest = max(len(n.cores) for n in plat.nodes)
    jobs, profiles, sub = [], {}, 0
    for i in range(draw(st.integers(min_jobs, max_jobs))):
        sub += draw(st.sampled_from([0, 0, 1, 5, 20]))
        res = draw(st.integers(1, widest + (1 if draw(st.integers(0, 9)) == 0 else 0)))
        profiles[f"p{i}"] = {"type": "parallel_homogeneous", "cpu": draw(st.integers(1, 40)) * 1e9, "com": 0}
        wall = draw(st.sampled_from([-1, -1, 1000]))
        jobs.append({"id": i, "subtime": sub, "walltime": wall, "res": res, "profile": f"p{i}"})
    return PlatformCase("hetero", render_xml(plat), {"nb_res": plat.nb_cores, "jobs": jobs, "profiles": profiles})
