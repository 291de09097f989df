"""Platform loading: SimGrid XML loaded by SimGrid itself, Batsim 4.2 roles and ids.

* The master host is the host named ``-m NAME`` (default ``master``) or the host whose
  ``role`` property is ``master``; it is never a resource.
* Every other host is a resource.  Its role is ``storage`` when its ``role`` property says
  so or ``-r`` gives it; otherwise ``compute``.
* Resource ids follow SimGrid's host order in Batsim 4, which is lexicographic by host
  name (``node_0, node_1, node_10, node_100, ...``), compute and storage hosts in one id
  space, so that a scheduler file means the same hosts on both engines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from coburst.errors import InputError
from coburst.fileio import cache_dir
from coburst.validate import cut


@dataclass
class Resource:
    id: int
    name: str
    role: str  # "compute" or "storage"
    properties: dict[str, str]
    host: object = field(repr=False, default=None)  # simgrid.Host


@dataclass
class Machines:
    master: object  # simgrid.Host
    resources: list[Resource]

    @property
    def compute(self) -> list[Resource]:
        return [r for r in self.resources if r.role == "compute"]

    @property
    def storage(self) -> list[Resource]:
        return [r for r in self.resources if r.role == "storage"]

    def by_name(self, name: str) -> Resource | None:
        for res in self.resources:
            if res.name == name:
                return res
        return None


@dataclass(frozen=True)
class _Scan:
    root: str
    version: str | None
    host_zone: dict[str, str | None]  # host id -> routing of the zone directly holding it
    decl_line: int = 0  # line of a <?xml ...?> declaration preceded by white space (SimGrid skips it), else 0


_SCANS: dict[tuple, _Scan] = {}


_TAG = re.compile(rb"<(/?)(zone|AS|host|platform)\b([^>]*)>")
_ATTR = re.compile(rb"""\b(id|routing|version)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _scan(path: str | Path) -> _Scan:
    """One pass over a platform file, cached per file state: well-formedness (expat, no
    handlers: C speed), then the root element, its version and the routing of the zone of
    every host declared directly in a zone (a regular-expression pass over the tags; a
    50 MB platform costs well under a second).  Raises ``expat.ExpatError``."""
    from xml.parsers import expat

    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key in _SCANS:
        return _SCANS[key]
    data = p.read_bytes()
    remembered = _scan_record(data)
    scan = _read_scan(remembered)
    if scan is not None:
        _SCANS.clear()
        _SCANS[key] = scan
        return scan
    # SimGrid's XML reader (and so Batsim) accepts white space before the <?xml ...?>
    # declaration, which strict XML (expat) refuses: skip it, keeping line numbers right
    blank, decl_line = 0, 0
    body = data.lstrip()
    if body.startswith(b"<?xml") and len(body) != len(data):
        blank = data[:len(data) - len(body)].count(b"\n")
        decl_line = blank + 1
    try:
        expat.ParserCreate().Parse(body if decl_line else data, True)
    except expat.ExpatError as exc:
        exc.lineno += blank
        raise
    text = re.sub(rb"<!--.*?-->", b"", data, flags=re.S) if b"<!--" in data else data
    root = re.search(rb"<([A-Za-z_][\w.-]*)", re.sub(rb"<[?!][^>]*>", b"", text[:65536]))
    zones: list[str | None] = []
    host_zone: dict[str, str | None] = {}
    version = None
    for m in _TAG.finditer(text):
        closing, tag, rest = m.group(1), m.group(2), m.group(3)
        attrs = {k.decode(): (v1 or v2).decode() for k, v1, v2 in _ATTR.findall(rest)} if not closing else {}
        if tag == b"platform":
            if not closing:
                version = attrs.get("version")
            continue
        if tag == b"host":
            if not closing and zones:
                host_zone[attrs.get("id")] = zones[-1]
            continue
        if closing:
            zones.pop()
        elif not rest.rstrip().endswith(b"/"):
            zones.append(attrs.get("routing"))
    scan = _Scan(root.group(1).decode() if root else "", version, host_zone, decl_line)
    _SCANS.clear()
    _SCANS[key] = scan
    _write_scan(remembered, scan)
    return scan


#: format of the remembered scans (change it when :func:`_scan` changes what it finds)
_SCAN_FORMAT = b"coburst platform scan 1\n"


def _scan_record(data: bytes) -> Path | None:
    """Where the scan of a platform file of this content is remembered (a well-formed file
    scanned once is not parsed again: ~35 ms of every run on an 800-node co-scheduling
    platform); None when caching is off."""
    import hashlib

    base = cache_dir()
    if base is None:
        return None
    return base / "platform-scans" / (hashlib.sha256(_SCAN_FORMAT + data).hexdigest() + ".json")


def _read_scan(record: Path | None) -> _Scan | None:
    if record is None:
        return None
    import json

    try:
        doc = json.loads(record.read_text(encoding="utf-8"))
        scan = _Scan(doc["root"], doc["version"], doc["host_zone"], doc["decl_line"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(scan.root, str) and isinstance(scan.host_zone, dict) and isinstance(scan.decl_line, int)):
        return None
    return scan


def _write_scan(record: Path | None, scan: _Scan) -> None:
    """Remember a successful scan (best effort; a host without an id is not remembered)."""
    if record is None or None in scan.host_zone:
        return
    import json
    import os
    import tempfile

    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=record.parent, prefix=".scan-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"root": scan.root, "version": scan.version, "host_zone": scan.host_zone,
                       "decl_line": scan.decl_line}, fh)
        os.replace(tmp, record)
    except OSError:
        pass


#: the longest warning text printed (the rest cut, its size said)
WARNING_MAX = 2000


def warn(source: str, where: str | None, problem: str) -> None:
    """A check Batsim does not make: ``coburst sim: warning: FILE: PLACE: PROBLEM`` on stderr;
    a name from the platform quoted in it never printed whole (each part cut, see
    :func:`coburst.validate.cut`)."""
    import sys

    place = f"{cut(where)}: " if where else ""
    print(f"coburst sim: warning: {cut(source, 1000)}: {place}{cut(problem, WARNING_MAX)}", file=sys.stderr)


def check_xml(path: str | Path) -> None:
    """Fail early, with file/line/column, on a platform SimGrid would choke on.

    SimGrid aborts the whole process on some malformed files, so the obvious problems
    (missing file, not XML, wrong root element) are caught here first.
    """
    from xml.parsers import expat

    source = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(source, None, "platform file not found")
    try:
        scan = _scan(p)
    except expat.ExpatError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.offset + 1}",
                         f"malformed XML: {expat.ErrorString(exc.code)}") from None
    if scan.root != "platform":
        raise InputError(source, "line 1", f"root element is <{scan.root}>, expected <platform>")
    if scan.decl_line:
        warn(source, f"line {scan.decl_line}", "white space before the <?xml ...?> declaration: SimGrid (and "
             "Batsim) read the file, strict XML parsers refuse it")
    with open(p, "rb") as fh:
        head = fh.read(65536).split(b"<platform", 1)[0]
    if b"<!DOCTYPE platform" not in head:
        raise InputError(source, "before <platform>", "no <!DOCTYPE platform ...> declaration; SimGrid needs "
                         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\"> after the <?xml ...?> line")
    version = scan.version
    if version is None or not version.replace(".", "").isdigit():
        raise InputError(source, "<platform>", f"missing or invalid version attribute ({version!r}); SimGrid needs e.g. version=\"4.1\"")


def assign_resources(engine, source: str, master_name: str, roles: dict[str, str],
                     max_compute: int | None = None) -> Machines:
    """Classify the loaded hosts into master, compute and storage resources (``max_compute``:
    Batsim's ``--mmax``: keep only the first compute machines, in id order)."""
    # each host's name and properties asked once (binding calls; platforms of thousands of hosts)
    hosts = sorted(((h.name, h, dict(h.get_properties()) if hasattr(h, "get_properties") else {})
                    for h in engine.all_hosts), key=lambda entry: entry[0])
    by_name = {name for name, _, _ in hosts}
    from coburst.platforms.roles import merge_roles, zone_role_items

    # roles carried by the file (coburst-roles zone properties): applied, -r must agree
    roles = merge_roles(source, zone_role_items(engine.netzone_root), roles)
    for name in roles:
        if name not in by_name:
            raise InputError("-r/--add-role-to-hosts", name, f"no host named {name!r} in {source}")
    masters = []
    for name, host, props in hosts:
        role = roles.get(name, props.get("role"))
        if name == master_name and props.get("role") == "master":
            raise InputError(source, f"host {name!r}",
                             f"the master host is both named {master_name!r} (-m) and tagged role=master; "
                             "Batsim 4.2 rejects this: keep only one of the two")
        if name == master_name or role == "master":
            masters.append(host)
    if not masters:
        raise InputError(source, None, f"no master host: name a host {master_name!r} (or pass -m NAME) "
                                       "or give one host the property role=master")
    if len(masters) > 1:
        names = ", ".join(h.name for h in masters)
        raise InputError(source, None, f"several master hosts ({names}): a host named {master_name!r} and "
                                       "role=master must designate exactly one host, once")
    master = masters[0]
    resources: list[Resource] = []
    storage: list[Resource] = []
    for name, host, props in hosts:
        if host is master:
            continue
        role = roles.get(name, props.get("role", ""))
        if role not in ("", "compute", "compute_node", "storage"):
            raise InputError(source, f"host {name!r}", f"unknown role {role!r} (expected compute, storage or master)")
        # Batsim always announces a "role" property ("" for plain compute hosts)
        props["role"] = "storage" if role == "storage" else props.get("role", "")
        kind = "storage" if role == "storage" else "compute"
        if kind == "compute" and host.speed <= 0:
            raise InputError(source, f"host {name!r}", "a compute host needs a speed > 0 "
                             "(give storage hosts the property role=storage)")
        (storage if kind == "storage" else resources).append(
            Resource(id=-1, name=name, role=kind, properties=props, host=host))
    # Batsim 4.2: compute hosts get ids 0..C-1, then storage hosts C..C+S-1, each group in
    # SimGrid's (lexicographic) host order
    if max_compute is not None:
        if max_compute > len(resources):
            raise InputError(source, None, f"Impossible to compute on M={max_compute} machines: only "
                                           f"{len(resources)} machines are described in the PLATFORM_FILE.")
        del resources[max_compute:]
    resources.extend(storage)
    for rid, res in enumerate(resources):
        res.id = rid
    if not any(r.role == "compute" for r in resources):
        raise InputError(source, None, "the platform has no compute host")
    return Machines(master=master, resources=resources)


def master_zone_routing(path: str | Path, master: str) -> str | None:
    """The ``routing`` attribute of the zone that directly holds host ``master``."""
    return _scan(path).host_zone.get(master)


#: ordered host pairs whose routes are all checked before a simulation; above that, only
#: the routes to and from the master and the first compute host
MAX_CHECKED_PAIRS = 20000


def _checked_stamp(path: str | Path, master_name: str, roles: dict[str, str], engine_args: list[str]) -> Path | None:
    """Where the success of :func:`prevalidate` on this platform content is remembered:
    ``$COBURST_CACHE`` (default ``$XDG_CACHE_HOME/coburst`` or ``~/.cache/coburst``)
    ``/platforms/<sha256 of content, master, roles, engine options, SimGrid version>``; None
    when caching is off (``COBURST_CACHE=off``) or the file cannot be read."""
    import hashlib

    base = cache_dir()
    if base is None:
        return None
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    # the loaded library's version (importlib.metadata's lookup cost ~10 ms of every run)
    from coburst.simulator._simgrid import simgrid

    sg = str(getattr(simgrid, "simgrid_version", "?"))
    h.update(repr((master_name, sorted(roles.items()), list(engine_args), sg)).encode())
    return base / "platforms" / h.hexdigest()


def prevalidate(path: str | Path, master_name: str, roles: dict[str, str],
                engine_args: list[str], describe_to: tuple | None = None,
                force: bool = False) -> frozenset[tuple[str, str]]:
    """Load the platform in a forked child process first, and check its routes there.

    SimGrid *aborts the whole process* on some semantically wrong platforms (a cluster whose
    topology does not match its radical, a zero core count, a duplicated link, an unknown
    routing model...) and on a route asked inside a ``routing="None"`` zone; it also returns
    an empty route between two hosts nobody connected.  The child loads the platform like
    the simulator does, then asks SimGrid every route the simulation may need (each resource
    to and from the master, and between resources).  An abort of the child or a link
    without bandwidth becomes an :class:`InputError` here, before anything runs.  Errors
    SimGrid reports as exceptions are left to the caller's own loading (same message as
    without this check).

    A *missing* route is not an error: Batsim 4.2.1 does not check routes (its own
    ``small_platform_pfs0.xml`` has a host nobody connected to the master), and SimGrid 3.32
    answers an undeclared route of a ``Full`` zone with an empty one: no latency, no
    bandwidth limit, so messages and transfers over it take no time.  coburst does the same
    (measured identical on Batsim, tests/test_batsim_accepts.py); the missing routes are
    named in one warning and returned as (source, destination) host names.

    A platform that passed is remembered by content (:func:`_checked_stamp`): later runs on
    the same file skip the child (an 800-node co-scheduling platform: ~3 s per run).

    ``describe_to``: the :mod:`~coburst.simulator.platform_cache` entry the child writes when
    the platform passed (hosts, zones and the routes it asked); ``force``: run the child even
    when the platform passed before (to write that entry).
    """
    import os
    import tempfile

    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return frozenset()
    stamp = _checked_stamp(path, master_name, roles, engine_args)
    source = str(path)
    if stamp is not None and stamp.exists() and not force:
        # this very file passed the check before (same content, options and SimGrid)
        try:
            lines = stamp.read_text().splitlines()
        except OSError:
            lines = []
        return _missing(source, [line for line in lines if line.startswith("MISSING ")])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # child: only os-level I/O, always leave through os._exit
            try:
                _die_with(parent)
                _prevalidate_child(str(Path(path).resolve()), source, master_name, roles, engine_args,
                                   out.fileno(), err.fileno(), describe_to)
            finally:
                os._exit(0)
        try:
            _, status = os.waitpid(pid, 0)
        except BaseException:  # SIGINT / SIGTERM (Interrupted) while the child checks: stop it too
            _kill_and_reap(pid)
            raise
        out.seek(0)
        lines = out.read().decode("utf-8", "replace").splitlines()
        err.seek(0)
        err_text = err.read().decode("utf-8", "replace")
    problems = [line[len("PROBLEM "):] for line in lines if line.startswith("PROBLEM ")]
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise InputError(source, None, "; ".join(problems[:3]) + more)
    if lines and lines[-1] == "OK" and os.WIFEXITED(status):
        missing = [line for line in lines if line.startswith("MISSING ")]
        if describe_to is not None:
            from coburst.simulator import platform_cache

            platform_cache.mark_unavailable(describe_to)  # (when the child could not write the entry)
        if stamp is not None:
            try:
                stamp.parent.mkdir(parents=True, exist_ok=True)
                stamp.write_text("".join(f"{line}\n" for line in missing))
            except OSError:
                pass  # no cache: the check runs again next time
        return _missing(source, missing)
    stage = next((line.split(" ", 1)[1] for line in reversed(lines) if line.startswith("STEP ")),
                 "loading the platform")
    critical = [line.split("CRITICAL]", 1)[1].strip() for line in err_text.splitlines() if "CRITICAL]" in line]
    if critical:
        reason = critical[-1]
    else:
        tail = [line for line in err_text.splitlines() if line.strip()]
        reason = tail[-1].strip() if tail else (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                                               else f"exit status {os.WEXITSTATUS(status)}")
    raise InputError(source, None, f"SimGrid aborted while {stage}: {reason}")


def _missing(source: str, lines: list[str]) -> frozenset[tuple[str, str]]:
    """The ``MISSING a\tb`` lines of the route check as pairs, named in one warning."""
    pairs = [tuple(line[len("MISSING "):].split("\t", 1)) for line in lines]
    pairs = [p for p in pairs if len(p) == 2]
    if pairs:
        shown = ", ".join(f"{cut(a)} -> {cut(b)}" for a, b in pairs[:4])
        if len(pairs) > 4:
            shown += f" (and {len(pairs) - 4} more)"
        warn(source, None, f"no route between some hosts: {shown}; as in Batsim (SimGrid 3.32), messages and "
             "transfers between them take no time (no latency, no bandwidth limit)")
    return frozenset(pairs)


def _die_with(parent: int) -> None:
    """In the forked check: default SIGINT/SIGTERM (not the parent's raising handler), and
    SIGKILL when the parent dies (Linux ``PR_SET_PDEATHSIG``), so no check outlives its run."""
    import signal

    from coburst.signals import die_with_parent

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    die_with_parent(signal.SIGKILL, parent)


def _kill_and_reap(pid: int) -> None:
    import os
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _prevalidate_child(path: str, source: str, master_name: str, roles: dict[str, str],
                       engine_args: list[str], out_fd: int, err_fd: int, describe_to: tuple | None = None) -> None:
    import os

    os.dup2(err_fd, 2)
    os.dup2(err_fd, 1)

    def say(line: str) -> None:
        os.write(out_fd, (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))

    from coburst.simulator._simgrid import simgrid

    say("STEP loading the platform")
    engine = simgrid.Engine(engine_args)
    try:
        engine.load_platform(path)
        machines = assign_resources(engine, source, master_name, roles)
    except Exception:  # reported by the caller's own loading
        say("OK")
        return
    master = machines.master
    hosts = [r.host for r in machines.resources]
    pairs = [(h, master) for h in hosts] + [(master, h) for h in hosts]
    if master_zone_routing(path, master.name) != "None":
        pairs.append((master, master))
    all_pairs = len(hosts) * (len(hosts) - 1) <= MAX_CHECKED_PAIRS
    if all_pairs:
        pairs += [(a, b) for a in hosts for b in hosts if a is not b]
    else:
        first = machines.compute[0].host
        pairs += [(h, first) for h in hosts if h is not first] + [(first, h) for h in hosts if h is not first]

    zone_of = _scan(path).host_zone
    routes: dict = {}  # the routes to and from the master, and all_pairs' (platform_cache)
    missing: list[str] = []
    problems = []

    def check() -> None:
        nb_problems = 0
        for a, b in pairs:
            say(f"STEP computing the route from host {a.name!r} to host {b.name!r}")
            links, latency = a.route_to(b)
            if all_pairs or a is master or b is master:
                routes[(a.name, b.name)] = (links, latency)
            problem = None
            # a Vivaldi zone routes without links (latency from the coordinates, possibly 0)
            vivaldi = zone_of.get(a.name) == zone_of.get(b.name) == "Vivaldi"
            if not links and latency <= 0 and a is not b and not vivaldi:
                say(f"MISSING {a.name}\t{b.name}")  # a warning: Batsim only needs the routes it uses
                missing.append(f"MISSING {a.name}\t{b.name}")
                continue
            for link in links:
                if not link.bandwidth > 0:
                    problem = f"link {link.name!r} (route {a.name} -> {b.name}) has bandwidth {link.bandwidth:g}"
            if problem:
                say(f"PROBLEM {problem}")
                problems.append(problem)
                nb_problems += 1
                if nb_problems >= 5:
                    break

    simgrid.Actor.create("coburst_route_check", master, check)
    engine.run()
    if describe_to is not None and not problems:
        from coburst.simulator import platform_cache

        try:
            description = platform_cache.describe(engine, routes, missing, master.name if all_pairs else None)
            platform_cache.write(describe_to, description, path)
        except Exception:  # noqa: BLE001 - no entry: later runs load the platform with SimGrid
            pass
    say("OK")
