"""Choosing compute nodes and placing burst-buffer requests (Kopański 2020, §2.2).

* :func:`select_nodes` picks ``count`` compute nodes among free ones: the smallest run of
  consecutive free indices (topology order) that fits, lowest index first; when no single run
  fits, the longest runs first (lowest index on ties), the last one cut.  This is the
  resource filter of the thesis' scheduler (``alloc_only.py``, ``_create_resource_filter``):
  it keeps a job inside as few chassis as possible, hence close to their BB node.
* :func:`place_bb` gives every allocated compute node its whole BB request on **one** BB
  node (the space of a node is never split), nearest first — same chassis, then same group,
  then anywhere — among BB nodes with enough free capacity over the job's interval; nodes
  are served in index order, ties between BB nodes go to the lowest BB index.

Feasibility of a BB request does not depend on which compute nodes were chosen: it holds iff
``sum_b floor(avail_b / bb) >= count`` (:func:`bb_slots`); the greedy placement always
succeeds then, since its last preference layer is "anywhere".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from procset import ProcInt, ProcSet

__all__ = ["Allocation", "select_nodes", "place_bb", "bb_slots", "procset_of", "node_mask", "select_mask",
           "mask_indices"]

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True, eq=False)
class Allocation:
    """Resources of one job, in cluster *indices*.

    ``nodes``: compute indices, ascending.  ``bb_nodes``: BB index of each compute node
    (aligned with ``nodes``), empty when the job has no BB request or the allocation holds
    compute only (then ``bb == 0``).  ``bb``: bytes held per compute node.  ``bb_use``: bytes
    taken on every BB node (length ``cluster.n_bb``), or None when nothing is taken.
    """

    nodes: np.ndarray
    bb_nodes: np.ndarray
    bb: int
    bb_use: np.ndarray | None
    mask: int | None = None  # ``nodes`` as a bit mask once known (:func:`node_mask`)

    @classmethod
    def make(cls, n_bb: int, nodes: np.ndarray, bb_nodes: np.ndarray | None = None, bb: int = 0) -> "Allocation":
        nodes = np.asarray(nodes, dtype=np.int64)
        if bb_nodes is None or bb == 0 or len(bb_nodes) == 0:
            return cls(nodes, _EMPTY, 0, None)
        bb_nodes = np.asarray(bb_nodes, dtype=np.int64)
        use = np.bincount(bb_nodes, minlength=n_bb).astype(np.int64) * int(bb)
        return cls(nodes, bb_nodes, int(bb), use)

    def __len__(self) -> int:
        return len(self.nodes)

    def compute_ids(self, cluster) -> ProcSet:
        """The compute resource ids (a ProcSet, as Batsim's ``alloc``).

        Built from its runs of consecutive ids (:func:`procset_of`): the same set as
        ``ProcSet(*ids)``, without merging the ids one by one."""
        return procset_of(cluster.compute_ids[self.nodes].tolist())

    def storage_map(self, cluster) -> dict[int, int]:
        """compute resource id -> BB resource id (empty without BB)."""
        if not len(self.bb_nodes):
            return {}
        return dict(zip(cluster.compute_ids[self.nodes].tolist(), cluster.bb_ids[self.bb_nodes].tolist()))

    def bb_bytes(self, cluster) -> dict[int, int]:
        """BB resource id -> bytes taken on it."""
        if self.bb_use is None:
            return {}
        ids = cluster.bb_ids
        return {int(ids[b]): v for b, v in enumerate(self.bb_use.tolist()) if v}

    def __repr__(self) -> str:
        return f"Allocation(nodes={self.nodes.tolist()}, bb_nodes={self.bb_nodes.tolist()}, bb={self.bb})"


def node_mask(alloc: Allocation) -> int:
    """``alloc.nodes`` as a bit mask (bit i: compute index i), computed once per allocation."""
    m = alloc.mask
    if m is None:
        nodes = alloc.nodes
        n = len(nodes)
        if not n:
            m = 0
        else:
            ids = nodes.tolist()
            lo = ids[0]
            if ids[-1] - lo == n - 1 and ids == list(range(lo, lo + n)):  # one run
                m = ((1 << n) - 1) << lo
            else:
                m = 0
                for i in ids:
                    m |= 1 << i
        object.__setattr__(alloc, "mask", m)
    return m


def mask_indices(mask: int) -> np.ndarray:
    """The set bits of ``mask`` as ascending int64 indices (:func:`node_mask`'s inverse)."""
    if not mask:
        return _EMPTY
    lo = (mask & -mask).bit_length() - 1
    run = mask >> lo
    if not run & (run + 1):  # one run of ones
        return np.arange(lo, lo + run.bit_length(), dtype=np.int64)
    if (mask & ~(mask << 1)).bit_count() > 8:  # many runs: numpy's unpacking
        raw = np.frombuffer(mask.to_bytes((mask.bit_length() + 7) // 8, "little"), dtype=np.uint8)
        return np.flatnonzero(np.unpackbits(raw, bitorder="little")).astype(np.int64, copy=False)
    ids: list[int] = []
    x = mask
    while x:  # run by run
        low = x & -x
        y = x + low  # clears the lowest run of ones
        s = low.bit_length() - 1
        ids.extend(range(s, s + (x & ~y).bit_count()))
        x &= y
    return np.array(ids, dtype=np.int64)


def select_mask(mask: int, count: int) -> int | None:
    """:func:`select_nodes` over a bit mask: the chosen nodes as a bit mask (same choice: the
    smallest run of consecutive free indices that fits, lowest index first; else the longest
    runs first, lowest index on ties, the last one cut), or None when fewer than ``count``
    are free."""
    c = mask.bit_count()
    if c < count:
        return None
    if c == count:
        return mask
    runs = []   # (start, length) in index order
    x = mask
    best_s = best_l = -1
    while x:
        low = x & -x
        y = x + low                  # clears the lowest run of ones
        ln = (x & ~y).bit_count()
        s = low.bit_length() - 1
        runs.append((s, ln))
        if ln >= count and (best_l < 0 or ln < best_l):
            best_s, best_l = s, ln
        x &= y
    if best_l >= 0:
        return ((1 << count) - 1) << best_s
    runs.sort(key=lambda r: (-r[1], r[0]))
    out, left = 0, count
    for s, ln in runs:
        take = ln if ln < left else left
        out |= ((1 << take) - 1) << s
        left -= take
        if not left:
            break
    return out


def procset_of(ids: list[int]) -> ProcSet:
    """``ProcSet(*ids)`` of distinct ids >= 0, built from their runs of consecutive values
    (one interval each) instead of merging the ids one by one (the adapter's allocations)."""
    if not ids:
        return ProcSet()
    if any(a > b for a, b in zip(ids, ids[1:])):
        ids = sorted(ids)
    if ids[0] < 0:
        return ProcSet(*ids)  # ProcSet's own error
    itvs = []
    lo = prev = ids[0]
    for k in range(1, len(ids)):
        i = ids[k]
        if i == prev + 1:
            prev = i
            continue
        if i <= prev:
            return ProcSet(*ids)  # repeated ids: the constructor's union
        itvs.append(ProcInt(lo, prev))
        lo = prev = i
    itvs.append(ProcInt(lo, prev))
    out = ProcSet()
    out._itvs = itvs  # noqa: SLF001 - disjoint, ascending, non-adjacent: ProcSet's own form
    return out


def select_nodes(mask: np.ndarray, count: int) -> np.ndarray | None:
    """``count`` indices among the True entries of ``mask`` (see module doc), or None.

    The runs of free indices are found with numpy, the run chosen in Python (there are
    few runs): the same indices as :func:`select_nodes_numpy`, the former all-numpy form
    (tests/test_policy_fastpaths.py), at a fraction of its per-call overhead."""
    idx = mask.nonzero()[0]
    n = idx.shape[0]
    if n < count:
        return None
    if count == 0:
        return _EMPTY
    if n == count or idx[n - 1] - idx[0] == n - 1:  # all of them, or one run
        return idx[:count].astype(np.int64, copy=False)
    breaks = ((idx[1:] - idx[:-1]) != 1).nonzero()[0].tolist()
    starts = [0]
    starts += [b + 1 for b in breaks]
    ends = starts[1:]
    ends.append(n)
    best, best_len = -1, n + 1
    for s, e in zip(starts, ends):  # smallest fitting run, first on ties
        ln = e - s
        if count <= ln < best_len:
            best, best_len = s, ln
    if best >= 0:
        return idx[best:best + count].astype(np.int64, copy=False)
    runs = sorted(zip(starts, ends), key=lambda r: (r[0] - r[1], r[0]))  # longest first, lowest start
    chosen = []
    left = count
    for s, e in runs:
        take = min(e - s, left)
        chosen.append(idx[s:s + take])
        left -= take
        if not left:
            break
    return np.sort(np.concatenate(chosen)).astype(np.int64, copy=False)


def select_nodes_numpy(mask: np.ndarray, count: int) -> np.ndarray | None:
    """The former all-numpy :func:`select_nodes` (the reference of its test)."""
    idx = np.flatnonzero(mask)
    n = len(idx)
    if n < count:
        return None
    if count == 0:
        return _EMPTY
    if n == count:
        return idx.astype(np.int64, copy=False)
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    if not len(breaks):  # one run
        return idx[:count].astype(np.int64, copy=False)
    starts = np.concatenate(([0], breaks))
    lengths = np.diff(np.concatenate((starts, [n])))
    fitting = np.flatnonzero(lengths >= count)
    if len(fitting):
        best = fitting[np.argmin(lengths[fitting])]  # smallest fitting run, first on ties
        s = starts[best]
        return idx[s:s + count].astype(np.int64, copy=False)
    order = np.lexsort((starts, -lengths))  # longest first, lowest start on ties
    chosen = []
    left = count
    for r in order:
        s, ln = starts[r], lengths[r]
        take = min(ln, left)
        chosen.append(idx[s:s + take])
        left -= take
        if not left:
            break
    return np.sort(np.concatenate(chosen)).astype(np.int64, copy=False)


#: up to this many BB nodes, :func:`bb_slots` and :func:`place_bb` divide the capacities in
#: Python (numpy's per-call cost is larger than the work; the same integer floor divisions)
_FEW_BB = 32


def bb_slots(avail: np.ndarray, bb: int) -> int:
    """How many per-node requests of ``bb`` bytes fit in free capacities ``avail``."""
    if bb <= 0:
        return 1 << 62
    if len(avail) <= _FEW_BB:
        return sum([x // bb for x in avail.tolist()])
    return int((avail // bb).sum())


def place_bb(preference, nodes: np.ndarray, bb: int, avail: np.ndarray) -> np.ndarray | None:
    """BB index for each compute index in ``nodes`` (module doc), or None if impossible.

    ``preference``: ``cluster.bb_preference`` (BB indices nearest first, per compute index).
    ``avail``: free bytes per BB node over the whole interval of the job.
    """
    if bb <= 0:
        return _EMPTY
    slots = [x // bb for x in avail.tolist()] if len(avail) <= _FEW_BB else (avail // bb).tolist()
    if sum(slots) < len(nodes):
        return None
    out: list[int] = []  # BB index of each node, in order (one array at the end)
    pos = 0
    n = len(nodes)
    node_list = nodes.tolist()
    while pos < n:
        pref = preference[node_list[pos]]
        run_end = pos + 1  # nodes sharing the same preference list are served together
        while run_end < n and preference[node_list[run_end]] is pref:
            run_end += 1
        need = run_end - pos
        for b in pref:
            s = slots[b]
            if s:
                take = s if s < need else need
                out += [b] * take
                slots[b] = s - take
                pos += take
                need -= take
                if not need:
                    break
        if need:  # unreachable given the slot test above
            return None
    return np.array(out, dtype=np.int64)
