"""Parallel tasks as Batsim builds them (``task_execution.cpp``): hosts, flops vector and
bytes matrix of a profile leaf, the storage hosts of I/O profiles, and what SimGrid's
``ptask_L07`` model makes of a task coburst counts down itself.

:class:`ParallelTasks` is one part of :class:`coburst.simulator.engine.Simulator`.
"""

from __future__ import annotations

import math

from coburst.errors import ProtocolError
from coburst.simulator.jobs import SimJob
from coburst.simulator.workload import Profile


class ParallelTasks:
    """Building and sizing the parallel tasks of job profiles."""

    def computed_rate(self, hosts: list, flops: list[float], matrix: list[float]) -> float | None:
        """The rate (fraction of the task per second) SimGrid's ``ptask_L07`` solver gives a
        parallel task that only computes, on distinct single-core hosts no other task uses:
        ``min(speed / flops)`` over the hosts that compute (``inf``: nothing to do), so that
        the kernel counts it down itself, exactly as SimGrid would.  None when the task
        communicates or hosts may be shared: SimGrid simulates it then."""
        if self.options["enable_compute_sharing"] or len(set(map(id, hosts))) != len(hosts):
            return None
        if self.io_hosts and any(id(h) in self.io_hosts for h in hosts):
            return None  # another job's merged I/O task may share it (see io_touched)
        if any(matrix) and not self._free_comm(hosts, matrix):
            return None
        rate = math.inf
        for host, amount in zip(hosts, flops):
            if amount > 0:
                if host.core_count != 1 or host.speed <= 0:
                    return None
                rate = min(rate, host.speed / amount)
        return rate

    def _free_comm(self, hosts: list, matrix: list[float]) -> bool:
        """Every communication of the task crosses no link and has no latency (hosts of a
        Vivaldi zone at the same coordinates, e.g. Batsim's ``*_no_net`` energy platforms):
        under ``ptask_L07`` it then constrains nothing and the task runs at its compute rate."""
        n = len(hosts)
        routes = self._free_routes
        for k, amount in enumerate(matrix):
            if amount > 0:
                a, b = hosts[k // n], hosts[k % n]
                key = (a.name, b.name)
                free = routes.get(key)
                if free is None:
                    try:
                        links, latency = a.route_to(b) if a is not b else ([None], 0.0)
                    except Exception:  # noqa: BLE001 - SimGrid: no usable route, let it simulate
                        links, latency = [None], 0.0
                    free = routes[key] = not links and latency == 0
                if not free:
                    return False
        return True

    def check_ptask_permission(self, sjob: SimJob, flops: list[float]) -> None:
        """Batsim's ``check_ptask_execution_permission``, when a parallel task starts: no
        computation on a storage machine (the i-th flops against the i-th machine of the
        allocation, mapping or not, as Batsim does)."""
        for rid, amount in zip(sjob.alloc, flops):
            if abs(amount) > 1e-10 and self.resources[rid].role == "storage":
                res = self.resources[rid]
                raise ProtocolError(f"job {sjob.id}: some computation ({amount:g}) is assigned to storage node "
                                    f"(id={rid}, name='{res.name}') (Batsim 4.2.1 aborts here too)")

    def io_touched(self, hosts: list, sjob: SimJob) -> None:
        """A merged I/O task of ``sjob`` (EXECUTE_JOB's ``additional_io_job``) runs on ``hosts``
        outside ``sjob``'s allocation, which Batsim does not reserve: another job may compute
        there too.  From now on the parallel tasks on these hosts are kernel L07 actions (never
        computed by coburst itself, see :meth:`computed_rate`), and the running ones become so."""
        new = {id(h) for h in hosts} - self.io_hosts
        if not new:
            return
        self.io_hosts |= new
        for other in list(self.jobs.values()):
            run = other.run
            if other is not sjob and run is not None and other.state == "RUNNING":
                run.io_shared(new)

    def storage_host(self, sjob: SimJob, label: str, only_by_label: bool = False):
        """The host of storage ``label`` (``storage_mapping``); with no storage_mapping, the
        platform's only storage host — except for ``only_by_label`` (``data_staging``: Batsim
        4.2.1 then looks the label up in an empty mapping and aborts)."""
        smap = sjob.storage_mapping
        if smap is None and only_by_label:
            raise ProtocolError(f"job {sjob.id}: data_staging profile uses storage {label!r} but EXECUTE_JOB gave no "
                                "storage_mapping (Batsim 4.2.1 aborts: 'Cannot generate a data staging task: : "
                                f"Unknown storage label='{label}'')")
        if smap is None:
            storages = [r for r in self.resources if r.role == "storage"]
            if len(storages) != 1:
                raise ProtocolError(f"job {sjob.id}: profile uses storage {label!r} but EXECUTE_JOB gave no "
                                    f"storage_mapping and the platform has {len(storages)} storage hosts")
            return storages[0].host
        if label not in smap:
            raise ProtocolError(f"job {sjob.id}: unknown storage label {label!r} (storage_mapping has "
                                f"{sorted(smap)})")
        return self.resources[smap[label]].host

    def build_ptask(self, sjob: SimJob, profile: Profile, hosts: list) -> tuple[list, list[float], list[float]]:
        """Hosts, flops vector and bytes matrix of a ptask leaf (Batsim's task_execution.cpp)."""
        d = profile.data
        n = len(hosts)
        ptype = profile.type
        if ptype == "parallel":
            return hosts, [float(x) for x in d["cpu"]], [float(x) for x in d["com"]]
        if ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
            cpu, com = float(d["cpu"]), float(d["com"])
            if ptype == "parallel_homogeneous_total":
                cpu, com = cpu / n, com / n
            if com == 0:
                return hosts, [cpu] * n, []
            matrix = [com] * (n * n)  # com between every two hosts, 0.0 from a host to itself
            matrix[::n + 1] = [0.0] * n
            return hosts, [cpu] * n, matrix
        if ptype == "parallel_homogeneous_pfs":
            storage = self.storage_host(sjob, d.get("storage", "pfs"))
            read, write = float(d.get("bytes_to_read", 0)), float(d.get("bytes_to_write", 0))
            all_hosts = list(hosts) + [storage]
            m = n + 1
            matrix = [0.0] * (m * m)
            for i in range(n):
                matrix[n * m + i] = read  # storage -> host i
                matrix[i * m + n] = write  # host i -> storage
            return all_hosts, [0.0] * m, matrix
        if ptype == "data_staging":
            src, dst = self.storage_host(sjob, d["from"], True), self.storage_host(sjob, d["to"], True)
            return [src, dst], [0.0, 0.0], [0.0, float(d["nb_bytes"]), 0.0, 0.0]
        raise ProtocolError(f"profile type {ptype!r} cannot run as a parallel task")  # pragma: no cover
