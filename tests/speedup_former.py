"""The speedup hook as it was before its neighbour maps (``coburst/simulator/speedup.py`` at
15fc911, verbatim but for the class name), for ``tests/test_speedup_fastpath.py``: attached
with ``coburst sim --speed-hook speedup_former:FormerHook`` (the heatmap and the alone factor
from ``COBURST_FORMER_HEATMAP`` / ``COBURST_FORMER_ALONE``)."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from coburst.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from coburst.models.heatmap import Heatmap
    from coburst.simulator.jobs import SimJob


class FormerHeatmapSpeedup:
    """A speed hook (``on_job_start`` / ``on_job_end``) applying a heatmap, see the module;
    ``sim`` is the running :class:`~coburst.simulator.engine.Simulator`."""

    def __init__(self, sim: Any, heatmap: "Heatmap", alone: str | float = "best"):
        self.sim = sim
        self.heatmap = heatmap
        self.alone = alone
        self.node_of: dict[int, str] = {}
        units: dict[str, int] = defaultdict(int)
        for res in sim.resources:
            if res.role == "storage":
                continue  # burst-buffer / PFS hosts: no application runs there
            node = res.properties.get("node")
            if node is None:
                raise InputError(sim.config.platform, f"host {res.name!r}",
                                 "--heatmap needs a node-sharing platform whose hosts name their node "
                                 "(property 'node', see coburst platform cosched)")
            self.node_of[res.id] = node
            units[node] += 1
        self.units = dict(units)
        self.on_node: dict[str, dict] = defaultdict(dict)  # node -> {job id: running SimJob}
        self.speed: dict[str, float] = {}  # job id -> current factor
        self.since: dict[str, float] = {}  # job id -> date of the last factor change
        self.weighted: dict[str, float] = {}  # job id -> integral of the factor over time
        self._node_count: dict[str, dict[str, int]] = {}  # running job id -> node -> units
        self._compact: dict[str, bool] = {}  # running job id -> holds every unit of its nodes
        self._pairs: dict[tuple, float] = {}  # (app, neighbour app) -> effective speedup
        self._alone_best: dict[str, float] = {}  # app -> speed of a spread job alone ("best")
        for wl in sim.workloads.values():
            for job in wl.iter_jobs():
                app = job.json.get("app")
                if app is not None and app not in heatmap:
                    raise InputError(wl.path, f"jobs[id={job.id.split('!', 1)[1]}].app",
                                     f"application {app!r} is not in the heatmap {sim.config.heatmap}")

    # ------------------------------------------------------------------ rule
    def _nodes(self, sjob: "SimJob") -> dict[str, int]:
        """node -> units of a running job (computed once per job: its allocation is fixed)."""
        count = self._node_count.get(sjob.id)
        if count is None:
            count = defaultdict(int)
            node_of = self.node_of
            for itv in sjob.alloc.intervals():
                for rid in range(itv.inf, itv.sup + 1):
                    count[node_of[rid]] += 1
            self._node_count[sjob.id] = count
            self._compact[sjob.id] = all(n == self.units[node] for node, n in count.items())
        return count

    def factor(self, sjob: "SimJob") -> float:
        """ELiSE's speed of a running job (see the module docstring)."""
        app = sjob.job.json.get("app")
        if app is None:
            return 1.0
        nodes = self._nodes(sjob)
        if self._compact[sjob.id]:
            return 1.0  # compact
        best = None
        sid, on_node, pairs = sjob.id, self.on_node, self._pairs
        for node in nodes:
            for jid, other in on_node[node].items():
                if jid == sid:
                    continue
                value = pairs.get((app, other.job.json.get("app")))
                if value is None:
                    value = self._pair(app, other)
                if best is None or value < best:
                    best = value
        if best is None:  # no neighbour
            if self.alone == "best":
                value = self._alone_best.get(app)
                if value is None:
                    value = self._alone_best[app] = self.heatmap.job_speedup(app, (), co_scheduled=True)
                return value
            return float(self.alone)
        return best

    def _pair(self, app: str, other: "SimJob") -> float:
        other_app = other.job.json.get("app")
        key = (app, other_app)
        value = self._pairs.get(key)
        if value is None:
            if other_app is None:  # unknown neighbour: a missing pair
                mean = self.heatmap.row_mean(app)
                value = 1.0 if mean is None else mean
            else:
                value = self.heatmap.effective(app, other_app)
            self._pairs[key] = value
        return value

    # ------------------------------------------------------------------ hook interface
    def _update(self, jobs: dict) -> None:
        now = self.sim.kernel.now
        for _, sjob in sorted(jobs.items()):
            if sjob.run is None or sjob.state != "RUNNING":
                continue
            new = self.factor(sjob)
            old = self.speed.get(sjob.id)
            if old is None or new != old:
                if old is not None:
                    self.weighted[sjob.id] += old * (now - self.since[sjob.id])
                self.speed[sjob.id] = new
                self.since[sjob.id] = now
                sjob.run.set_rate(new)

    def on_job_start(self, sjob: "SimJob") -> None:
        nodes = self._nodes(sjob)
        affected = {sjob.id: sjob}
        for node in nodes:
            affected.update(self.on_node[node])
            self.on_node[node][sjob.id] = sjob
        self.weighted[sjob.id] = 0.0
        self._update(affected)

    def on_job_end(self, sjob: "SimJob") -> None:
        now = self.sim.kernel.now
        affected: dict = {}
        for node in self._nodes(sjob):
            self.on_node[node].pop(sjob.id, None)
            affected.update(self.on_node[node])
        factor = self.speed.pop(sjob.id, 1.0)
        total = self.weighted.pop(sjob.id, 0.0) + factor * (now - self.since.pop(sjob.id, now))
        elapsed = now - sjob.start
        achieved = total / elapsed if elapsed > 0 else factor
        meta = sjob.job.metadata
        sjob.job.metadata = f"{meta};speedup={achieved:.6f}" if meta else f"speedup={achieved:.6f}"
        self._node_count.pop(sjob.id, None)
        self._compact.pop(sjob.id, None)
        self._update(affected)


class FormerHook(FormerHeatmapSpeedup):
    """``FormerHeatmapSpeedup`` built as ``make_hook`` builds the current one."""

    def __init__(self, sim: Any):
        from coburst.models.heatmap import load_heatmap

        alone = os.environ.get("COBURST_FORMER_ALONE", "best")
        super().__init__(sim, load_heatmap(os.environ["COBURST_FORMER_HEATMAP"]),
                         alone if alone == "best" else float(alone))
