"""GPU tasks and coupled compute tasks of elastic jobs (:mod:`coburst.simulator.elastic`).

**GPUs.**  A compute host has GPUs when the platform gives it ElastiSim's host properties
``num_gpus`` (how many), ``flops_per_gpu`` (a SimGrid speed, ``"10Gf"``) and, for hosts of more
than one GPU whose jobs' gpu tasks move bytes, ``gpu_to_gpu_bw`` (a SimGrid bandwidth,
``"50GBps"``: the link between a node's GPUs).  As in ElastiSim the speed and the bandwidth are
whole numbers (ElastiSim keeps them as ``long``): fractions are dropped.

A job with ``num_gpus_per_node`` = g uses g GPUs of each of its nodes, all the time it runs
(a fixed count: ElastiSim's scheduler may give a malleable job another count at each
reconfiguration, which coburst's protocol has no message for).  A gpu task of ``flops`` spread
over the job's n nodes (split, or ``per_node``) and ``bytes`` spread by a pattern
(:func:`coburst.models.patterns.gpu_matrices`) runs as ElastiSim's ``CombinedGpuTask``, its three
parts at once, and ends when the last does:

* each node's flops split evenly over its g GPUs, each computing at ``flops_per_gpu`` (a GPU
  computes alone: the task takes ``flops / g / flops_per_gpu`` on the node with most);
* the bytes between a node's GPUs over its GPU link: the busiest pair's bytes (both ways)
  at ``gpu_to_gpu_bw`` (:func:`coburst.models.patterns.gpu_link_bytes`);
* the bytes between nodes: one parallel task of SimGrid's ``ptask_L07`` model on the job's
  hosts, sharing the platform's links with every other transfer.

A node's GPUs are the job's alone (a node runs one job): a GPU is never busy with another
job's kernel, so ElastiSim's queueing of a kernel on a busy GPU does not arise.  GPUs draw no
energy (``-E`` counts the hosts only: a GPU task leaves them idle, its transfer loads them).

**Coupled tasks.**  A compute task with ``flops`` and ``bytes`` (a communication pattern) is one
parallel task of both amounts on the job's hosts, as Batsim's ``parallel`` profile is (and
ElastiSim's ``cpu`` task with ``coupled``): computation and communication progress together
and the task takes the longer of the two when nothing else shares its resources.

Checks: before the run, a GPU job whose minimum size the platform's GPU hosts cannot hold,
or whose gpu tasks move bytes between GPUs with no ``gpu_to_gpu_bw``, is refused naming the
workload, the job and the problem (:func:`check_job`); a scheduler that starts or resizes it
on a host with fewer GPUs gets a protocol error (:func:`check_allocation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generator

from coburst.errors import InputError, ProtocolError
from coburst.models.patterns import communication_matrix, gpu_link_bytes, gpu_matrices, io_vector
from coburst.platforms.units import parse_bandwidth, parse_speed

if TYPE_CHECKING:  # pragma: no cover
    from coburst.models.elastic import ElasticJob, Task

__all__ = ["NodeGpus", "platform_gpus", "check_job", "check_allocation", "run_gpu_task", "run_coupled_task"]

def parse_quantity(text: str, unit: str) -> float | None:
    """A SimGrid quantity, ``"12.5Gf"`` (``unit`` ``"f"``: flop/s, ``"flops"`` too) or
    ``"50GBps"`` / ``"400Gbps"`` (``unit`` ``"Bps"``; bits are an eighth of bytes); a bare number
    is in the base unit (:mod:`coburst.platforms.units`).  None when unreadable."""
    try:
        return parse_speed(str(text)) if unit == "f" else parse_bandwidth(str(text))
    except InputError:
        return None


@dataclass(frozen=True)
class NodeGpus:
    """A host's GPUs: how many, the flop/s of each, its GPU link's bytes/s (0: none given)."""

    count: int
    speed: float
    bandwidth: float


def platform_gpus(resources, source: str) -> dict[int, NodeGpus]:
    """The GPUs of the compute resources that have some (``num_gpus`` > 0), by resource id."""
    out: dict[int, NodeGpus] = {}
    for res in resources:
        props = res.properties
        if res.role != "compute" or "num_gpus" not in props:
            continue
        where = f"host {res.name!r}"
        text = str(props["num_gpus"]).strip()
        if not text.isdigit():
            raise InputError(source, where, f"num_gpus: expected a non-negative integer, got {text!r}")
        count = int(text)
        if count == 0:
            continue
        speed = parse_quantity(props.get("flops_per_gpu", ""), "f")
        if speed is None or int(speed) <= 0:
            raise InputError(source, where, f"a host with num_gpus needs flops_per_gpu, a speed such as '10Gf' "
                                            f"(got {props.get('flops_per_gpu')!r})")
        bandwidth = 0.0
        if "gpu_to_gpu_bw" in props:
            bw = parse_quantity(props["gpu_to_gpu_bw"], "Bps")
            if bw is None or int(bw) <= 0:
                raise InputError(source, where, f"gpu_to_gpu_bw: expected a bandwidth such as '50GBps', got "
                                                f"{props['gpu_to_gpu_bw']!r}")
            bandwidth = float(int(bw))
        out[res.id] = NodeGpus(count, float(int(speed)), bandwidth)
    return out


def _needs_link(spec: "ElasticJob") -> bool:
    """The job's gpu tasks may move bytes between the GPUs of one node."""
    return spec.gpus_per_node > 1 and any(t.type == "gpu" and t.comm is not None
                                          for ph in spec.app.phases for t in ph.tasks)


def check_job(spec: "ElasticJob", gpus: dict[int, NodeGpus], source: str, where: str) -> None:
    """Before the run: the platform has enough hosts of the job's GPUs for its minimum size."""
    g = spec.gpus_per_node
    if not g:
        return
    fit = sorted(rid for rid, node in gpus.items() if node.count >= g)
    lo = min(spec.start_sizes()[0], spec.num_nodes_min)
    if len(fit) < lo:
        most = max((node.count for node in gpus.values()), default=0)
        raise InputError(source, where, f"the job asks for {g} GPU(s) per node on at least {lo} node(s), but "
                                        f"{len(fit)} compute host(s) of the platform have that many (the most GPUs "
                                        f"a host has: {most})")
    if _needs_link(spec):
        bare = [rid for rid in fit if gpus[rid].bandwidth <= 0]
        if bare:
            raise InputError(source, where, f"its gpu tasks move bytes between a node's {g} GPUs, but resource "
                                            f"{bare[0]} (and {len(bare) - 1} other(s)) has no gpu_to_gpu_bw")


def check_allocation(sim, sjob, spec: "ElasticJob", ids: list[int], etype: str) -> None:
    """A start or a resize gives the job hosts of its GPUs."""
    g = spec.gpus_per_node
    if not g:
        return
    gpus = sim.elastic.gpus
    for rid in ids:
        node = gpus.get(rid)
        if node is None or node.count < g:
            raise ProtocolError(f"{etype} {sjob.id}: resource {rid} ({sim.resources[rid].name}) has "
                                f"{0 if node is None else node.count} GPU(s), the job uses {g} per node")


def node_flops(task: "Task", n: int, flops: float) -> list[float]:
    """The flops of each of ``n`` nodes: ``flops`` each (``per_node``) or split evenly."""
    return io_vector("uniform" if task.per_node else "total", n, flops)


def run_gpu_task(run, task: "Task", flops: float, size: float) -> Generator:
    """A gpu task of ``flops`` and ``size`` bytes on the job's nodes (see the module's
    documentation); False if the walltime ends first (or the job is killed)."""
    sim, spec = run.sim, run.spec
    g, n = spec.gpus_per_node, run.n
    nodes = [sim.elastic.gpus[rid] for rid in run.ids]
    seconds = max(f / g / node.speed for f, node in zip(node_flops(task, n, flops), nodes))
    start = sim.kernel.now
    if task.comm is not None and size > 0:
        intra, inter = gpu_matrices(task.comm_pattern, n, g, size)
        link = gpu_link_bytes(intra, g)
        if link > 0:
            seconds = max(seconds, max(link / node.bandwidth for node in nodes))
        if any(inter) and not (yield from run.ptask([sim.resources[i].host for i in run.ids], inter)):
            return False
    left = seconds - (sim.kernel.now - start)
    if left > 0:
        return (yield from run.sleep(left))
    return True


def run_coupled_task(run, task: "Task", flops: float, size: float) -> Generator:
    """A compute task with a communication: one parallel task of both amounts."""
    hosts = [run.sim.resources[i].host for i in run.ids]
    matrix = communication_matrix(task.comm_pattern, run.n, size)
    return (yield from run.ptask(hosts, matrix, node_flops(task, run.n, flops)))
