"""How a network task of an elastic job spreads its bytes over the job's nodes, and how a
resized job's data moves (:mod:`coburst.models.elastic`): pure functions, no simulator."""

from __future__ import annotations

__all__ = ["COMM_PATTERNS", "GPU_PATTERNS", "IO_PATTERNS", "communication_matrix", "gpu_matrices", "gpu_link_bytes",
           "io_vector", "redistribution_matrix"]

#: ElastiSim's matrix distribution patterns (``matrix`` itself, for rigid jobs only, is not taken)
COMM_PATTERNS = ("all_to_all", "gather", "scatter", "ring", "ring_clockwise", "ring_counter_clockwise",
                 "master_worker")
#: the patterns of a gpu task's bytes (ElastiSim's ``Utility::createMatrices``)
GPU_PATTERNS = ("all_to_all", "ring", "ring_clockwise", "ring_counter_clockwise")
#: ElastiSim's vector distribution patterns (``total`` is ``all_ranks``; ``vector`` is not taken)
IO_PATTERNS = ("uniform", "total", "all_ranks", "root_only", "even_ranks", "odd_ranks")


def communication_matrix(pattern: str, n: int, size: float) -> list[float]:
    """The ``n`` x ``n`` bytes matrix (row: sender) of ``size`` bytes spread by ``pattern``, as
    ElastiSim's ``Utility::createMatrix`` spreads them: ``all_to_all`` size / (n(n-1)) on every
    pair; ``gather`` size / n from every other node to the first; ``scatter`` size / n from the
    first to every other; ``ring`` size / 2n to each neighbour; ``ring_clockwise`` and
    ``ring_counter_clockwise`` size / n to the right or left neighbour; ``master_worker``
    2 size / (n-1) each way between the first node and every other -- ElastiSim's code, which
    moves 4 x size in all (kept, so that the two simulators read a workload alike).  One node:
    nothing moves."""
    if n <= 1:
        return [0.0] * (n * n)
    m = [0.0] * (n * n)
    if pattern == "all_to_all":
        each = size / (n * n - n)
        for i in range(n):
            for j in range(n):
                if i != j:
                    m[i * n + j] = each
    elif pattern == "gather":
        for i in range(1, n):
            m[i * n] = size / n
    elif pattern == "scatter":
        for i in range(1, n):
            m[i] = size / n
    elif pattern == "ring":
        each = size / (n * 2)
        for i in range(n):
            m[i * n + (i - 1) % n] += each
            m[i * n + (i + 1) % n] += each
    elif pattern in ("ring_clockwise", "ring_counter_clockwise"):
        step = 1 if pattern == "ring_clockwise" else -1
        for i in range(n):
            m[i * n + (i + step) % n] += size / n
    elif pattern == "master_worker":
        each = size / ((n - 1) / 2.0)
        for i in range(1, n):
            m[i] = m[i * n] = each
    else:  # pragma: no cover - parsing refuses other patterns
        raise ValueError(pattern)
    return m


def gpu_matrices(pattern: str, n: int, g: int, size: float) -> tuple[list[float], list[float]]:
    """A gpu task's ``size`` bytes between the ``n * g`` GPUs of a job (``g`` on each of its
    ``n`` nodes) spread by ``pattern``, as ElastiSim's ``Utility::createMatrices``: the part
    within a node (the ``g`` x ``g`` matrix of one node's GPUs, over its GPU link) and the part
    between nodes (the ``n`` x ``n`` matrix of the nodes, over the network).  One GPU a node:
    all between nodes.  ``all_to_all``: size / (G (G-1)) between every two of the G GPUs, the
    node's share of the pairs within nodes, all the pairs across; ``ring``: size / 2G to each
    neighbour; ``ring_clockwise`` / ``ring_counter_clockwise``: size / G to one neighbour."""
    total = n * g
    if g == 1:
        intra, inter = 0.0, size
    elif pattern == "all_to_all":
        each = size / (total * (total - 1))
        intra, inter = total * (g - 1) * each / n, total * (total - g) * each
    elif pattern == "ring":
        each = size / (total * 2)
        intra, inter = (each * g * 2, 0.0) if n == 1 else (each * (g - 1) * 2, each * n * 2)
    elif pattern in ("ring_clockwise", "ring_counter_clockwise"):
        each = size / total
        intra, inter = (each * g, 0.0) if n == 1 else (each * (g - 1), each * n)
    else:  # pragma: no cover - parsing refuses other patterns
        raise ValueError(pattern)
    return communication_matrix(pattern, g, intra), communication_matrix(pattern, n, inter)


def gpu_link_bytes(matrix: list[float], g: int) -> float:
    """The bytes a node's GPU link carries for a ``g`` x ``g`` matrix of its GPUs: the busiest
    pair's, both ways (ElastiSim's ``Node::execGpuTransferAsync``: the link moves the dominant
    pair's bytes, the others alongside)."""
    return max((matrix[i * g + j] + matrix[j * g + i] for i in range(g) for j in range(i + 1, g)), default=0.0)


def io_vector(pattern: str, n: int, size: float) -> list[float]:
    """Bytes per node of ``size`` bytes spread by ``pattern`` (ElastiSim's ``createVector``):
    ``uniform`` each node ``size``; ``total`` / ``all_ranks`` size / n each; ``root_only`` the
    first node; ``even_ranks`` / ``odd_ranks`` split evenly over nodes 0, 2, ... / 1, 3, ...
    (``odd_ranks`` on one node: nothing)."""
    v = [0.0] * n
    if pattern == "uniform":
        v = [size] * n
    elif pattern in ("total", "all_ranks"):
        v = [size / n] * n
    elif pattern == "root_only":
        v[0] = size
    elif pattern in ("even_ranks", "odd_ranks"):
        first = 0 if pattern == "even_ranks" else 1
        ranks = range(first, n, 2)
        for i in ranks:
            v[i] = size / len(ranks)
    else:  # pragma: no cover - parsing refuses other patterns
        raise ValueError(pattern)
    return v


def redistribution_matrix(old: list[int], new: list[int], size: float) -> tuple[list[int], list[float]]:
    """``size`` bytes block-distributed over ``old`` (rank i holds [i size / |old|, (i+1) size /
    |old|)) moved to the block distribution over ``new``: the resources taking part (``old``
    then the new ones, in that order) and the bytes matrix between them (row: sender).  What a
    node keeps (its old and new blocks overlap on the same resource) does not move."""
    hosts = list(old) + [r for r in new if r not in set(old)]
    pos = {r: k for k, r in enumerate(hosts)}
    m = len(hosts)
    matrix = [0.0] * (m * m)
    no, nn = len(old), len(new)
    for i, src in enumerate(old):
        lo, hi = i * size / no, (i + 1) * size / no
        for j, dst in enumerate(new):
            a, b = max(lo, j * size / nn), min(hi, (j + 1) * size / nn)
            if b > a and src != dst:
                matrix[pos[src] * m + pos[dst]] += b - a
    return hosts, matrix
