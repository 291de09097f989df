"""A content-addressed cache of what a run needs from a SimGrid platform, so that a run on a
platform seen before neither imports nor loads SimGrid.

What the simulator asks SimGrid while it runs is small: every host's name, speed, core count,
pstates and properties, the netzones' properties, and the routes its messages take (each
resource to the master host, the master to each resource and to itself) and, on platforms
whose resource pairs the pre-check asks all (``platform.MAX_CHECKED_PAIRS``: up to ~140
resources), the routes between every two resources that communicating parallel tasks take,
each route's links with their bandwidth, latency and sharing policy.  The platform's pre-check
(:func:`coburst.simulator.platform.prevalidate`, a forked child that loads the platform with
SimGrid and asks every one of those routes) writes them down here; a later run on the same
platform reads them back (:class:`CachedPlatform`, a stand-in for SimGrid's engine with the
same attributes) instead of importing SimGrid (~10 ms), loading the file (~65 ms parse and
seal on 800 Grvingt nodes; ~45 ms on the 2.9 MB dragonfly96.xml), asking the routes (one
Dijkstra per node zone on the linear co-scheduling layout: ~70 ms for 3200 hosts; ~11,900
pybind calls and Route objects on the dragonfly) and running one SimGrid actor.

**Key** (:func:`entry_path`): the SHA-256 of the platform file's bytes, the SimGrid library
(its extension module's path, size and modification date, and its version), the SimGrid
options given to the engine (``--sg-cfg``, ``--sg-log``: all of ``engine_args``), the master
host's name, the ``-r`` roles, the Python version (the entry is :mod:`marshal` data) and
:data:`FORMAT`.  A platform that references other files (``*_file=`` attributes, ``<trace>``,
``<include>``) is never cached: its meaning is not in its bytes.

**When it is used** (:func:`usable`, :func:`lookup`): the workloads' profiles need no route
but those to and from the master (``delay``, and parallel tasks that only compute:
``parallel`` with a zero communication matrix, ``parallel_homogeneous[_total]`` with ``com`` =
0, and ``composed`` profiles of those), or they are parallel tasks that communicate between
the resources (``parallel``, ``parallel_homogeneous[_total|_pfs]``, ``data_staging``) and the
entry holds every resource pair's route; no ``--events``, no workflows, no dynamic jobs and no
``--speed-hook`` (they reach further into the platform); elastic jobs whose models move data
(communication or I/O tasks, redistributions) take it as communicating parallel tasks do;
``-E`` is fine (a host's pstate sets its speed, as SimGrid's ``set_pstate``).  A route the entry does not hold (a scheduler's
``additional_io_job`` reaches storage hosts; a host listed twice in a task communicates with
itself) is asked from SimGrid, loaded then, as the same call would be in a run without the
cache: never a different result.

**Where**: ``$COBURST_CACHE/platform-descriptions/`` (default ``$XDG_CACHE_HOME/coburst`` or
``~/.cache/coburst``), the routes between resources in a ``.pairs`` file beside the entry
(read only by the runs that need them, :func:`lookup`); ``COBURST_CACHE=off`` turns every coburst cache off,
``COBURST_PLATFORM_CACHE=off`` this one only.  An entry is written atomically (a temporary
file renamed); one that is corrupt (its SHA-256 does not match), of another key or format is
ignored and written again by the next pre-check.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import sys
from pathlib import Path

#: format of an entry (change it whenever what is written or how it is read changes)
FORMAT = b"coburst platform description 3\n"
_REFERENCES = re.compile(rb"<(?:trace|trace_connect|include)\b|\b[\w-]*file\s*=")


def cache_root() -> Path | None:
    """The folder of the entries; None when this cache is off."""
    if os.environ.get("COBURST_PLATFORM_CACHE") == "off":
        return None
    from coburst.fileio import cache_dir

    base = cache_dir()
    return None if base is None else base / "platform-descriptions"


_SIMGRID_ID: list[str] = []


def simgrid_identity() -> str:
    """The SimGrid library this process would load, without importing it: the path, size and
    modification date of its extension module (the environment's, or the distribution's: see
    :mod:`coburst._simgrid_finder`) and of the ``libsimgrid.so*`` beside it."""
    if _SIMGRID_ID:
        return _SIMGRID_ID[0]
    from coburst._simgrid_finder import extension_path

    found = ""
    origin = extension_path()
    if origin:
        folder = os.path.dirname(origin)
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        parts = []
        for name in [os.path.basename(origin)] + sorted(n for n in names if n.startswith("libsimgrid.so")):
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
        parts += sorted(n for n in names if n.startswith("simgrid-") and n.endswith(".dist-info"))
        found = "|".join(parts)
    _SIMGRID_ID.append(found or "?")
    return _SIMGRID_ID[0]


def cacheable(data: bytes) -> bool:
    """A platform whose meaning is all in its bytes (no file it references, no trace)."""
    if b"file" not in data and b"<trace" not in data and b"<include" not in data:
        return True  # (the regular expression alone: ~50 ms on a 2 MB file)
    return _REFERENCES.search(data) is None


def entry_key(data: bytes, master_name: str, roles: dict[str, str], engine_args: list[str]) -> str:
    h = hashlib.sha256(FORMAT)
    h.update(repr((master_name, sorted(roles.items()), list(engine_args), simgrid_identity(),
                   sys.version_info[:2], marshal.version)).encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


def entry_path(path: str | Path, master_name: str, roles: dict[str, str], engine_args: list[str]
               ) -> tuple[Path, str] | None:
    """(where the entry of this platform and these options is, its key); None when the cache
    is off or the file cannot be read.  (Whether the platform is :func:`cacheable` is asked
    before writing: an entry found was written for these very bytes.)"""
    root = cache_root()
    if root is None:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    key = entry_key(data, master_name, roles, engine_args)
    return root / key[:2] / key, key


# ---------------------------------------------------------------------------- which runs

#: profile types whose parallel tasks run between the resources of the job (its allocation
#: and the storage hosts): routes an entry holds when it has every resource pair's
_BETWEEN_RESOURCES = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total",
                      "parallel_homogeneous_pfs", "data_staging")


def _route_free(profile) -> bool:
    """A leaf profile that sends nothing but the job's messages to the master: a delay or a
    parallel task that only computes."""
    ptype, data = profile.type, profile.data
    if ptype == "delay":
        return True
    if ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        try:
            return float(data.get("com", 1)) == 0
        except (TypeError, ValueError):
            return False
    if ptype == "parallel":
        com = data.get("com")
        try:
            return isinstance(com, list) and all(float(x) == 0 for x in com)
        except (TypeError, ValueError):
            return False
    return False


def _between_resources(profile) -> bool:
    """A leaf profile that takes no route but between resources and to and from the master."""
    return profile.type in _BETWEEN_RESOURCES or _route_free(profile)


def _leaves_are(profiles: dict, name: str, leaf_ok, seen: set) -> bool:
    """Profile ``name`` is a leaf ``leaf_ok`` accepts, or a ``composed`` sequence of such
    profiles (``seen``: composed profiles already met)."""
    profile = profiles.get(name)
    if profile is None:
        return False
    if profile.type != "composed":
        return leaf_ok(profile)
    if name in seen:
        return True
    seen.add(name)
    seq = profile.data.get("seq")
    return isinstance(seq, list) and all(isinstance(s, str) and _leaves_are(profiles, s, leaf_ok, seen) for s in seq)


def _elastic_network(wl) -> bool:
    """Some elastic application model of the workload has communication, I/O or gpu tasks, a
    compute task with bytes or a data redistribution (:mod:`coburst.models.elastic`): text of a
    task type or key it needs."""
    apps = [p.data.get("elastic") for p in wl.profiles.values()]
    apps += [(j.json.get("elastic") or {}).get("application") for j in (wl.jobs or ())
             if isinstance(j.json.get("elastic"), dict)]
    for app in apps:
        if isinstance(app, dict):
            text = repr(app)
            if "redistribution" in text or "'bytes'" in text or any(f"'{t}'" in text for t in _NETWORK_TASKS):
                return True
    return False


#: elastic task types that run on the network
_NETWORK_TASKS = ("communication", "pfs_read", "pfs_write", "bb_read", "bb_write", "gpu")


def usable(config, workloads: dict, options: dict) -> bool | str:
    """Whether a run may take the platform from the cache (see the module's documentation;
    ``options``: Batsim's options, none of which rules it out today): True, ``"pairs"`` (only
    from an entry holding every resource pair's route) or False."""
    if (config.events or config.workflows or config.cut_workflows or config.dynamic_jobs
            or config.speed_hook):
        return False
    answer: bool | str = True
    if getattr(config, "elastic", False) and any(_elastic_network(wl) for wl in workloads.values()):
        answer = "pairs"  # (elastic jobs' transfers run between their resources and the storage hosts)
    for wl in workloads.values():
        profiles = wl.profiles
        seen: set = set()
        if answer is True and all(_leaves_are(profiles, name, _route_free, seen) for name in list(profiles)):
            continue
        seen = set()
        if not all(_leaves_are(profiles, name, _between_resources, seen) for name in list(profiles)):
            return False
        answer = "pairs"
    return answer


def lookup(record: tuple[Path, str] | None, wanted: bool | str) -> tuple[dict | None, bool]:
    """(the entry a run :func:`usable` answered ``wanted`` for takes its platform from, or
    None; whether the pre-check must run to write it).  An entry without the resource pairs
    for a run that wants them (a platform with more pairs than the pre-check asks) is not
    written again: the run loads SimGrid, as without the cache.  The pairs are read only for a
    run that wants them (:func:`read_pairs`)."""
    if not wanted:
        return None, False
    doc = read(record)
    if doc is None:
        return None, not unavailable(record)
    if wanted == "pairs":
        if not doc["pairs"]:
            return None, False
        pair_routes = read_pairs(record)
        if pair_routes is None:  # (lost or damaged: the pre-check writes both files again)
            return None, not unavailable(record)
        doc["routes"].update(pair_routes)
    return doc, False


# ---------------------------------------------------------------------------- writing


def describe(engine, routes: dict, missing: list[str], master: str | None = None) -> dict:
    """What :class:`CachedPlatform` needs, from a loaded SimGrid engine (in the pre-check's
    child) and the routes it asked: ``{(source, destination): (links, latency)}``.  ``master``
    (its name) when those are every resource pair's too: the routes between resources then go
    to ``pair_routes``, written to a file of their own (:func:`write`) that only the runs
    needing them read (a run of delay jobs on a 100-node cluster would read 10,000 routes it
    never takes: ~5 ms)."""
    hosts = []
    for h in engine.all_hosts:
        count = h.pstate_count
        hosts.append((h.name, float(h.speed), int(h.core_count), int(h.pstate),
                      tuple(float(h.pstate_speed(i)) for i in range(count)), dict(h.get_properties())))

    def zone(z):
        return (z.name, dict(z.get_properties()), [h.name for h in z.all_hosts],
                [zone(child) for child in z.get_children()])

    links: dict[str, tuple] = {}
    table: dict[tuple[str, str], tuple] = {}
    pair_table: dict[tuple[str, str], tuple] = {}
    shared: dict[tuple, tuple] = {}  # equal routes written once (marshal refers to an object seen before)
    # one string object per name, so that marshal writes each name once (then a reference)
    host_names = {name: name for name, *_ in hosts}
    link_names: dict[str, str] = {}
    for (a, b), (route_links, latency) in routes.items():
        names = []
        for link in route_links:
            name = link.name
            known = link_names.get(name)
            if known is None:
                links[name] = (float(link.bandwidth), float(link.latency), link.get_sharing_policy().name)
                known = link_names[name] = name
            names.append(known)
        value = (tuple(names), float(latency))
        into = table if master is None or a == master or b == master else pair_table
        into[(host_names.get(a, a), host_names.get(b, b))] = shared.setdefault(value, value)
    doc = {"hosts": hosts, "zones": zone(engine.netzone_root), "links": links, "routes": table,
           "missing": list(missing), "pairs": master is not None}
    if master is not None:
        doc["pair_routes"] = pair_table
    return doc


def pairs_path(record: tuple[Path, str]) -> Path:
    """Where an entry's routes between resources are (beside the entry)."""
    return record[0].with_name(record[0].name + ".pairs")


def write(record: tuple[Path, str], description: dict, platform: str | Path) -> None:
    """Write an entry atomically (best effort: no cache, no harm); nothing for a platform that
    is not :func:`cacheable`.  Its ``pair_routes`` (:func:`describe`) go to
    :func:`pairs_path`, written first."""
    path, key = record
    try:
        if not cacheable(Path(platform).read_bytes()):
            return
    except OSError:
        return
    description = dict(description)
    pair_routes = description.pop("pair_routes", None)
    if pair_routes is not None:
        _write(pairs_path(record), {"key": key, "pair_routes": pair_routes})
    _write(path, {"key": key, **description})


def _write(path: Path, doc: dict) -> None:
    payload = marshal.dumps(doc)
    blob = FORMAT + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    from coburst.fileio import atomic_write

    try:
        with atomic_write(path, "wb") as fh:
            fh.write(blob)
    except OSError:
        pass


def mark_unavailable(record: tuple[Path, str] | None) -> None:
    """The pre-check passed but wrote no entry (a platform this module cannot describe): note it,
    so that later runs do not run the pre-check again for it (:func:`unavailable`)."""
    if record is not None and not record[0].exists():
        try:
            record[0].parent.mkdir(parents=True, exist_ok=True)
            record[0].with_name(record[0].name + ".none").touch()
        except OSError:
            pass


def unavailable(record: tuple[Path, str] | None) -> bool:
    return record is not None and record[0].with_name(record[0].name + ".none").exists()


# ---------------------------------------------------------------------------- reading


def read(record: tuple[Path, str] | None) -> dict | None:
    """The entry, checked (format, SHA-256 of its content, key); None if absent or unusable."""
    if record is None:
        return None
    return _read(record[0], record[1], ("hosts", "zones", "links", "routes", "missing", "pairs"))


def read_pairs(record: tuple[Path, str]) -> dict | None:
    """The routes between resources of an entry written with them (checked as :func:`read`
    checks the entry); None if absent or unusable."""
    doc = _read(pairs_path(record), record[1], ("pair_routes",))
    return None if doc is None else doc["pair_routes"]


def _read(path: Path, key: str, fields: tuple) -> dict | None:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    head = len(FORMAT)
    if not blob.startswith(FORMAT) or len(blob) < head + 65 or blob[head + 64:head + 65] != b"\n":
        return None
    payload = blob[head + 65:]
    if hashlib.sha256(payload).hexdigest().encode() != blob[head:head + 64]:
        return None
    try:
        doc = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    if not all(k in doc for k in fields):
        return None
    return doc


class SharingPolicy:
    """The names of SimGrid's ``Link.SharingPolicy`` (``l07`` compares with ``FATPIPE``)."""

    FATPIPE = "FATPIPE"


class CachedLink:
    __slots__ = ("name", "bandwidth", "latency", "policy")
    SharingPolicy = SharingPolicy

    def __init__(self, name: str, bandwidth: float, latency: float, policy: str):
        self.name, self.bandwidth, self.latency, self.policy = name, bandwidth, latency, policy

    def get_sharing_policy(self) -> str:
        return self.policy

    def __repr__(self) -> str:
        return f"Link({self.name})"


class CachedHost:
    """A host as SimGrid's binding shows it to the simulator (``pstate`` set: ``speed`` becomes
    that pstate's, as ``Host::set_pstate`` does)."""

    __slots__ = ("name", "speed", "core_count", "_pstate", "_speeds", "_props", "_platform")

    def __init__(self, platform: "CachedPlatform", name: str, speed: float, cores: int, pstate: int,
                 speeds: tuple, props: dict):
        self._platform = platform
        self.name, self.speed, self.core_count, self._pstate = name, speed, cores, pstate
        self._speeds, self._props = speeds, props

    @property
    def pstate(self) -> int:
        return self._pstate

    @pstate.setter
    def pstate(self, pstate: int) -> None:
        if not 0 <= pstate < len(self._speeds):
            raise ValueError(f"host {self.name}: no pstate {pstate}")
        self._pstate = pstate
        self.speed = self._speeds[pstate]

    @property
    def pstate_count(self) -> int:
        return len(self._speeds)

    def pstate_speed(self, i: int) -> float:
        return self._speeds[i]

    def get_properties(self) -> dict:
        return dict(self._props)

    def route_to(self, other: "CachedHost") -> tuple[list, float]:
        return self._platform.route(self, other)

    def __repr__(self) -> str:
        return f"Host({self.name})"


class CachedZone:
    __slots__ = ("name", "_props", "all_hosts", "_children")

    def __init__(self, name: str, props: dict, hosts: list, children: list):
        self.name, self._props, self.all_hosts, self._children = name, props, hosts, children

    def get_properties(self) -> dict:
        return dict(self._props)

    def get_children(self) -> list:
        return list(self._children)


class CachedPlatform:
    """A stand-in for a SimGrid engine that loaded the platform: ``all_hosts``,
    ``netzone_root``, hosts' ``route_to``.  A route it does not hold is asked from SimGrid,
    loaded the first time (:meth:`_simgrid_route`)."""

    def __init__(self, doc: dict, platform: str, engine_args: list[str]):
        self.platform = platform
        self.engine_args = list(engine_args)
        self.all_hosts = [CachedHost(self, *entry) for entry in doc["hosts"]]
        self._by_name = {h.name: h for h in self.all_hosts}
        by_name = self._by_name

        def zone(entry):
            name, props, hosts, children = entry
            return CachedZone(name, props, [by_name[h] for h in hosts], [zone(c) for c in children])

        self.netzone_root = zone(doc["zones"])
        self._link_values = doc["links"]
        self._links: dict[str, CachedLink] = {}  # (made when a route first needs them)
        self._routes = doc["routes"]
        self.missing = doc["missing"]
        self._sg = None  # (simgrid module, engine, hosts by name) once a route needs SimGrid
        #: routes asked from SimGrid (tests)
        self.simgrid_routes = 0

    def route(self, a: CachedHost, b: CachedHost) -> tuple[list, float]:
        known = self._routes.get((a.name, b.name))
        if known is not None:
            names, latency = known
            return [self.link(name) for name in names], latency
        self.simgrid_routes += 1
        return self._simgrid_route(a.name, b.name)

    def link(self, name: str) -> CachedLink:
        """The link ``name`` of a route the entry holds."""
        link = self._links.get(name)
        if link is None:
            link = self._links[name] = CachedLink(name, *self._link_values[name])
        return link

    def route_names(self, a: CachedHost, b: CachedHost) -> tuple[tuple, float] | None:
        """(the link names, latency) of the route from ``a`` to ``b`` when the entry holds it
        (``l07.PairTable`` reads routes so), else None."""
        return self._routes.get((a.name, b.name))

    def _simgrid_route(self, a: str, b: str) -> tuple[list, float]:
        """``route_to`` from SimGrid itself, the platform loaded now with the run's options.
        A host's route to itself is asked inside a SimGrid actor (SimGrid 4.1 crashes on some
        asked from outside), as the simulation asks every route without the cache."""
        if self._sg is None:
            from coburst import signals
            from coburst.simulator._simgrid import simgrid

            engine = simgrid.Engine(self.engine_args)
            signals.reinstall()
            engine.load_platform(str(Path(self.platform).resolve()))
            # (sealed as a simulation seals it when it starts: on an unsealed platform SimGrid
            # 4.1 has no routes between zones yet and answers unordered_map::at; a binding
            # without seal, SimGrid 3.32's as coburst reads it, answers them unsealed)
            seal = getattr(engine.netzone_root, "seal", None)
            if seal is not None:
                seal()
            self._sg = (simgrid, engine, {h.name: h for h in engine.all_hosts})
        simgrid, engine, hosts = self._sg
        ha, hb = hosts[a], hosts[b]
        if ha is not hb:
            return ha.route_to(hb)
        answer: list = []

        def ask():
            try:
                answer.append(ha.route_to(hb))
            except Exception as exc:  # noqa: BLE001 - raised again below, as route_to would
                answer.append(exc)

        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            simgrid.Actor.create("coburst_route", ha, ask)
        engine.run()
        if isinstance(answer[0], Exception):
            raise answer[0]
        return answer[0]
