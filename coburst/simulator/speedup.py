"""The co-execution speedup hook (``coburst sim --heatmap FILE``): ELiSE's rule on the engine.

Jobs name their application in their workload entry (field ``app``).  On a node-sharing
platform (``coburst platform cosched``: every resource's properties name its ``node``), each
running job runs at a speed factor set by the heatmap (:mod:`coburst.models.heatmap`):

* a **compact** job — it holds every unit of each node it touches — runs at 1.0;
* a **co-scheduled** job runs at the minimum pairwise speedup over every running job that
  shares any of its nodes (a missing pair counts as the job's average speedup, a neighbour
  without ``app`` as a missing pair);
* a co-scheduled job with **no neighbour** runs at the best value of its heatmap row by
  default (``alone="best"``), or at a given factor (e.g. 1.0, or a measured spread-alone
  speedup).

At every change of neighbours the job's speed changes through ``JobRun.set_rate``: the work
done is kept and the rest runs at the new speed, i.e. ``remaining = remaining * old_speedup
/ new_speedup`` for its time.  The speed applies to every profile type (a delay shrinks or
stretches, a parallel task's work is rescaled and still shares the network).  Each job's
achieved speedup (work time at speed 1 / time taken, i.e. the time-weighted mean of its
factors) is appended to its ``metadata`` as ``speedup=<x>``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from coburst.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from coburst.models.heatmap import Heatmap
    from coburst.simulator.jobs import SimJob


class HeatmapSpeedup:
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
        #: node_of as a list by resource id (None: not a compute resource), counted slice by slice
        self._node_list: list = [None] * (max(self.node_of, default=-1) + 1)
        for rid, node in self.node_of.items():
            self._node_list[rid] = node
        self.on_node: dict[str, dict] = defaultdict(dict)  # node -> {job id: running SimJob}
        self.speed: dict[str, float] = {}  # job id -> current factor
        self.since: dict[str, float] = {}  # job id -> date of the last factor change
        self.weighted: dict[str, float] = {}  # job id -> integral of the factor over time
        self._node_count: dict[str, dict[str, int]] = {}  # running job id -> node -> units
        self._compact: dict[str, bool] = {}  # running job id -> holds every unit of its nodes
        self._pairs: dict[tuple, float] = {}  # (app, neighbour app) -> effective speedup
        #: running job id -> {neighbour id: nodes shared}: the jobs sharing any of its nodes,
        #: kept up to date at starts and ends (what ``factor`` would otherwise collect node by node)
        self._near: dict[str, dict[str, int]] = {}
        self._app: dict[str, Any] = {}  # running job id -> its application (None: unknown)
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
            count = Counter()
            node_list = self._node_list
            for itv in sjob.alloc.intervals():
                part = node_list[itv.inf:itv.sup + 1]
                if itv.sup >= len(node_list) or None in part:  # not only compute resources: as before
                    node_of = self.node_of
                    for rid in range(itv.inf, itv.sup + 1):
                        count[node_of[rid]] += 1
                else:
                    count.update(part)  # (first-seen order, as the loop)
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
        sid, pairs = sjob.id, self._pairs
        near = self._near.get(sid)
        if near is not None:
            # the distinct neighbours (the minimum of finite values does not depend on the order)
            apps = self._app
            for jid in near:
                other_app = apps[jid]
                value = pairs.get((app, other_app))
                if value is None:
                    value = self._pair_of(app, other_app)
                if best is None or value < best:
                    best = value
        else:  # a job not started through on_job_start: its nodes' residents
            on_node = self.on_node
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
        return self._pair_of(app, other.job.json.get("app"))

    def _pair_of(self, app: str, other_app: Any) -> float:
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
        sid = sjob.id
        all_near = self._near
        if sid in all_near:  # started again: its former neighbours forgotten first
            self._forget_near(sid)
        affected = {sid: sjob}
        near: dict[str, int] = {}
        all_near[sid] = near
        self._app[sid] = sjob.job.json.get("app")
        for node in nodes:
            residents = self.on_node[node]
            affected.update(residents)
            for jid in residents:
                if jid == sid:
                    continue
                near[jid] = near.get(jid, 0) + 1
                theirs = all_near.get(jid)
                if theirs is not None:
                    theirs[sid] = theirs.get(sid, 0) + 1
            residents[sid] = sjob
        self.weighted[sid] = 0.0
        self._update(affected)

    def on_job_end(self, sjob: "SimJob") -> None:
        now = self.sim.kernel.now
        affected: dict = {}
        for node in self._nodes(sjob):
            self.on_node[node].pop(sjob.id, None)
            affected.update(self.on_node[node])
        self._forget_near(sjob.id)
        factor = self.speed.pop(sjob.id, 1.0)
        total = self.weighted.pop(sjob.id, 0.0) + factor * (now - self.since.pop(sjob.id, now))
        elapsed = now - sjob.start
        achieved = total / elapsed if elapsed > 0 else factor
        meta = sjob.job.metadata
        sjob.job.metadata = f"{meta};speedup={achieved:.6f}" if meta else f"speedup={achieved:.6f}"
        self._node_count.pop(sjob.id, None)
        self._compact.pop(sjob.id, None)
        self._update(affected)

    def _forget_near(self, sid: str) -> None:
        """Take a job out of the neighbour maps (it ended, or starts again)."""
        mine = self._near.pop(sid, None)
        self._app.pop(sid, None)
        if mine:
            all_near = self._near
            for jid in mine:
                theirs = all_near.get(jid)
                if theirs is not None:
                    theirs.pop(sid, None)


def make_hook(sim: Any) -> Any:
    """The hook ``coburst sim --heatmap FILE [--heatmap-alone best|FACTOR]`` asks for."""
    from coburst.models.heatmap import load_heatmap

    alone = sim.config.heatmap_alone
    if alone != "best":
        try:
            value = float(alone)
        except ValueError:
            raise InputError("--heatmap-alone", alone, "expected 'best' or a positive speed factor") from None
        if not value > 0 or value == float("inf"):
            raise InputError("--heatmap-alone", alone, "expected 'best' or a positive, finite speed factor")
        alone = value
    return HeatmapSpeedup(sim, load_heatmap(sim.config.heatmap), alone)
