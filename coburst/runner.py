"""One run: a scheduler and the embedded simulator together (the library entry of ``coburst
run`` and of campaign runs).

The scheduler is a pybatsim scheduler file (``schedulers/coburstEasy.py``, pybatsim's
own ``easyBackfill``...) or the name of a coburst policy (``fcfs``, ``easy``,
``backfill-sjf-1``...) resolved to its entry file (:func:`resolve_scheduler`).  It runs
in the simulator's process (pybatsim's scheduler over a memory link, the default) or as a
real ``pybatsim`` process talking ZeroMQ on a private endpoint.  Everything is checked
before a scheduler starts: options, output places, workloads and platform.

    >>> from coburst.runner import run
    >>> result = run("easy", platform="platforms/kth_sp2.xml",
    ...              workloads=["workloads/kth_sp2_head.json"], export="/tmp/out")  # doctest: +SKIP
    >>> result.jobs_csv                                                               # doctest: +SKIP

The typed library entry is :mod:`coburst.api` (``RunConfig``, ``run``), which calls
:func:`run_options` here with the options under this module's argparse names.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from coburst.errors import InputError
from coburst.simulator.arguments import add_sim_options, simulator_config_from_args

REPO_SCHEDULERS = Path(__file__).resolve().parents[1] / "schedulers"


def cosched_platform(platform: str | None) -> dict[str, str] | None:
    """The root-zone properties of a node-sharing platform (``coburst platform cosched``:
    ``platform=cosched``, ``nodes``, ``cores_per_unit``...), or None for any other platform."""
    if not platform:
        return None
    try:
        with open(platform, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192)
    except OSError:
        return None  # the simulator reports unreadable platforms
    import re

    props = dict(re.findall(r'<prop id="([^"]+)" value="([^"]*)"/>', head.split("<host", 1)[0]))
    return props if props.get("platform") == "cosched" else None


#: registry family -> the entry file that runs any policy of the family by name
ENTRY_FILES = {"bb": "coburstBackfill.py", "cosched": "coschedPolicy.py", "hetero": "heteroPolicy.py"}
#: the entry file that runs any registered policy (plugins included) by name
ANY_POLICY = "coburstPolicy.py"


def pybatsim_bundled(name: str) -> bool:
    """Whether ``name`` is one of pybatsim's bundled schedulers (``schedulers/<name>.py`` of
    its package; the package is located, not imported)."""
    import importlib.util

    if not name.isidentifier():
        return False
    try:
        spec = importlib.util.find_spec("schedulers")
    except (ImportError, ValueError):
        return False
    locations = spec.submodule_search_locations if spec is not None else None
    return any((Path(loc) / f"{name}.py").is_file() for loc in locations or ())


def resolve_scheduler(spec: str, options: dict, platform: str | None = None) -> tuple[str, dict]:
    """A scheduler file path, a coburst policy name (:mod:`coburst.registry`: ``[FAMILY:]NAME``),
    or a pybatsim bundled name, as ``(scheduler, options)``.

    A built-in policy runs through its family's entry file (:data:`ENTRY_FILES`); a name
    several families share is the co-scheduling policy on a node-sharing platform, else the
    first family's (``fcfs`` is ``bb:fcfs``).  A name that is neither a built-in policy nor a
    pybatsim bundled scheduler is looked up among the plugins (read only then), which run
    through ``schedulers/coburstPolicy.py``."""
    path = Path(spec)
    if spec.endswith(".py"):
        if not path.is_file():
            raise InputError(spec, None, "scheduler file not found")
        return str(path.resolve()), options
    from coburst import registry

    # the registry's name tables: no policy module is imported for a pybatsim name
    families = registry.builtin_families(spec)
    if families:
        family = families[0]
        if len(families) > 1 and "cosched" in families and cosched_platform(platform) is not None:
            family = "cosched"
        if family == "elastic":  # (run_args runs them: coburst.adapter.elastic, no pybatsim entry file)
            raise InputError(spec, None, "an elastic policy runs through coburst run (coburst.adapter.elastic), "
                                         "not as a pybatsim scheduler file")
        return str(REPO_SCHEDULERS / ENTRY_FILES[family]), {"policy": spec, **options}
    if pybatsim_bundled(spec):  # pybatsim's bundled schedulers (schedFcfs, easyBackfill, ...)
        return spec, options
    if registry.lookup(spec) is not None:
        return str(REPO_SCHEDULERS / ANY_POLICY), {"policy": spec, **options}
    family, _ = registry.split_name(spec)
    if family is not None and family not in registry.FAMILIES:
        raise InputError(spec, None, f"unknown policy family {family!r} (families: {', '.join(registry.FAMILIES)})")
    raise InputError(spec, None, "neither a coburst policy nor a pybatsim scheduler (a .py file or a name of "
                     f"pybatsim's schedulers){registry.unknown_message(spec).removeprefix('unknown policy')}")


def launch_scheduler(spec: str, options: dict, endpoint: str, log_path: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "batsim.cmds.launcher", spec, "-o", json.dumps(options),
           "-s", endpoint, "-t", "30000", "-v", "warning"]
    with open(log_path, "w", encoding="utf-8") as log:  # the child keeps its own descriptor
        # its own session: a Ctrl-C on the terminal reaches coburst only, which then stops it cleanly
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(),
                                start_new_session=True)


def preflight(args: argparse.Namespace):
    """Everything checked before a scheduler starts (``coburst run`` never starts one for bad
    input): options, output places, the workloads (fully validated, as the simulator loads
    them) and the platform file; returns the simulator configuration and the job count."""
    from coburst.simulator.platform import check_xml
    from coburst.simulator.workload import load_workload

    config = simulator_config_from_args(args)
    # the simulator takes these (a workload is read and checked once per run)
    config.loaded_workloads = [load_workload(path, f"w{i}", stream="auto") for i, path in enumerate(args.workload)]
    total = sum(wl.nb_jobs for wl in config.loaded_workloads)
    check_xml(args.platform)
    return config, total


def _simulate(args: argparse.Namespace, config, total: int, link=None):
    """Run the simulation with a progress bar on a terminal."""
    from coburst.simulator.engine import Simulator

    show = not args.quiet and sys.stderr.isatty()
    if not show:  # no bar: rich is not even imported (start-up time)
        sim = Simulator(config)
        sim.link = link(sim) if link is not None else None
        return sim.run()
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]simulating"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs"),
                  TextColumn("t={task.fields[now]:.0f}s"), TimeElapsedColumn(), disable=not show,
                  transient=True) as progress:
        task = progress.add_task("sim", total=total or None, now=0.0)
        config.on_progress = lambda now, done, submitted: progress.update(task, completed=done, now=now)
        sim = Simulator(config)
        sim.link = link(sim) if link is not None else None
        return sim.run()


def stop_process(proc: subprocess.Popen, grace: float) -> None:
    """Wait ``grace`` seconds for ``proc`` to end, then SIGTERM, then SIGKILL; always reaped."""
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


#: longest path of a Unix-domain socket (sun_path is 108 bytes with its terminating NUL)
_MAX_IPC_PATH = 107


def _run_over_zmq(args: argparse.Namespace, spec: str, options: dict, config, total: int, launch=None):
    """The scheduler as a real ``pybatsim`` process on a private IPC endpoint (no port to
    pick, so no race with other runs on the machine).  On every exit path the scheduler is
    stopped and reaped and the temporary folder removed."""
    sock_dir = tempfile.mkdtemp(prefix="coburst-run-")
    if len(os.fsencode(sock_dir)) + len("/scheduler.sock") > _MAX_IPC_PATH:
        # a Unix socket path has at most 107 bytes: a deep TMPDIR cannot hold the socket
        os.rmdir(sock_dir)
        sock_dir = tempfile.mkdtemp(prefix=f"coburst-run-{os.getpid()}-", dir="/tmp")
    endpoint = f"ipc://{sock_dir}/scheduler.sock"
    args.socket_endpoint = config.socket_endpoint = endpoint
    log_path = Path(sock_dir) / "scheduler.log"
    proc = None
    ok = False
    try:
        proc = (launch or launch_scheduler)(spec, options, endpoint, log_path)

        def peer_alive():
            code = proc.poll()
            if code is None:
                return None
            tail = log_path.read_text(errors="replace").strip().splitlines()[-8:]
            return (f"the scheduler process exited with code {code} before the end of the simulation; its last "
                    "output:\n    " + "\n    ".join(tail))

        config.peer_alive = peer_alive
        result = _simulate(args, config, total)
        ok = True
        return result
    finally:
        sched_log = ""
        try:
            if proc is not None:
                # after a normal end pybatsim exits by itself; after a failure, it is stopped
                stop_process(proc, 10.0 if ok else 0.5)
                sched_log = log_path.read_text(errors="replace") if log_path.exists() else ""
        finally:
            shutil.rmtree(sock_dir, ignore_errors=True)
        if ok and proc is not None and proc.returncode not in (0, None) and "Traceback" in sched_log:
            print(sched_log, file=sys.stderr)


def pass_heatmap(args: argparse.Namespace, spec: str, options: dict) -> None:
    """A co-scheduling policy that reads a heatmap (popularity, pop-filler, pair-greedy, a
    plugin's...) gets the simulator's ``--heatmap`` when its options name none (one heatmap
    for the speed hook and the decisions)."""
    if getattr(args, "heatmap", None) is None or "heatmap" in options:
        return
    if Path(spec).name not in (ENTRY_FILES["cosched"], ANY_POLICY):
        return
    from coburst import registry

    family = "cosched" if Path(spec).name == ENTRY_FILES["cosched"] else None  # as each file reads names
    found = registry.lookup(options.get("policy"), platform_family=family)
    if found is not None and found.entry.family == "cosched" and any(p.name == "heatmap" for p in found.cls.params):
        options["heatmap"] = args.heatmap


def check_scheduler_options(spec: str, options: dict) -> None:
    """The options of a coburst scheduler file (a subclass of the pybatsim adapter that keeps
    the adapter's ``__init__``: every entry file in ``schedulers/``), checked before anything starts -- with either
    transport -- with the adapter's own rules: a bad option is an InputError naming it
    (status 2), never a scheduler that exits after the simulation began."""
    if not spec.endswith(".py"):
        return
    import importlib.util

    from coburst.adapter.scheduler import CoburstScheduler

    path = Path(spec)
    name = path.stem[:1].upper() + path.stem[1:]  # pybatsim's rule: the class is named after its file
    module_spec = importlib.util.spec_from_file_location(f"_coburst_check_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        return
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - not ours to judge here: pybatsim reports its own load errors
        return
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, CoburstScheduler)):
        return
    if not getattr(cls.__init__, "__module__", "").startswith(("coburst.adapter", "coburst.gym")):
        return  # its own __init__ may take options of its own: only it can judge them
    try:
        cls.check_options(options)
    except InputError as err:
        raise InputError("-o/--options", err.where, err.problem) from None


#: pybatsim 3.2.1's ``batsim/__init__.py`` and ``schedulers/__init__.py`` (its bundled
#: schedulers): both only ask ``importlib.metadata`` for pybatsim's version (~10 ms CPU of
#: every run's start-up: the import of importlib.metadata and a scan of the installed
#: distributions), which nothing in a run reads
_PYBATSIM_INIT = b"""import sys

if sys.version_info >= (3, 8):
    from importlib import metadata
else:
    import importlib_metadata as metadata

__version__ = metadata.version('pybatsim')

__all__ = [__version__]
"""
#: the packages of pybatsim whose ``__init__`` is :data:`_PYBATSIM_INIT`
PYBATSIM_PACKAGES = ("batsim", "schedulers")


def light_pybatsim() -> list[str]:
    """Make ``import batsim`` (and pybatsim's bundled ``schedulers``) skip the version lookup
    of their package ``__init__`` when that file is the known one (:data:`_PYBATSIM_INIT`):
    the package module is made from its spec without running the file, and the file's names
    (``__version__``, ``__all__``, ``metadata``) are computed as the file computes them when
    first read (PEP 562).  Every module of the packages (``batsim.batsim``, its tools,
    ``schedulers.easyBackfill``, a scheduler file's imports) loads as before.  Returns the
    packages so made; a package already imported, absent or not pybatsim 3.2.1's (another
    file, a namespace folder) is left to the ordinary import."""
    import importlib.util

    done = []
    for name in PYBATSIM_PACKAGES:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not spec.origin or spec.submodule_search_locations is None:
            continue
        try:
            with open(spec.origin, "rb") as fh:
                if fh.read() != _PYBATSIM_INIT:
                    continue
        except OSError:
            continue
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = _lazy_version(module)
        module.sys = sys
        sys.modules[name] = module
        done.append(name)
    return done


def _lazy_version(module):
    def __getattr__(name: str):
        if name in ("__version__", "__all__", "metadata"):
            from importlib import metadata

            module.metadata = metadata
            module.__version__ = metadata.version("pybatsim")
            module.__all__ = [module.__version__]
            return module.__dict__[name]
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    return __getattr__


def scheduler_options(text: str) -> dict:
    """``-o/--options``: the scheduler options as a JSON object (an InputError naming the
    option otherwise)."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("-o/--options", f"column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    if not isinstance(options, dict):
        raise InputError("-o/--options", None, "must be a JSON object")
    return options


def run_args(args: argparse.Namespace):
    """Run what a parsed ``coburst run`` command line asks (``args.scheduler``, ``args.options``
    as JSON text, ``args.transport`` and Batsim's options); returns the
    :class:`~coburst.simulator.engine.SimResult`."""
    return run_options(args, scheduler_options(args.options))


def run_options(args: argparse.Namespace, options: dict):
    """:func:`run_args` with the scheduler options already read (a dict: ``args.options`` is
    not read); ``args`` holds the other options under ``coburst run``'s argparse names
    (:func:`add_run_arguments`, :meth:`coburst.api.RunConfig.namespace`)."""
    light_pybatsim()
    from coburst.simulator.protocol import InProcessLink

    options = dict(options)
    from coburst import registry

    if registry.builtin_families(args.scheduler)[:1] == ["elastic"]:
        return _run_elastic(args, options)
    spec, options = resolve_scheduler(args.scheduler, options, args.platform)
    pass_heatmap(args, spec, options)
    check_scheduler_options(spec, options)
    if args.transport == "inprocess":
        args.socket_endpoint = "in-process"
    else:
        args.socket_endpoint = "ipc://pending"  # the private endpoint is made after the checks
    config, total = preflight(args)
    if args.transport == "inprocess":
        result = _simulate(args, config, total, lambda sim: InProcessLink(
            spec, options, timeout=args.timeout, on_timeout=lambda message: sim.abort_outputs()))
    else:
        result = _run_over_zmq(args, spec, options, config, total)
    result.scheduler_options = options
    return result


def _run_elastic(args: argparse.Namespace, options: dict):
    """An elastic policy (:mod:`coburst.policies.elastic`): the simulator's elastic mode, the policy
    in process (:class:`coburst.adapter.elastic.ElasticLink`)."""
    from coburst import registry
    from coburst.adapter.elastic import ElasticLink, forward_profiles

    policy = registry.get(args.scheduler, **options)  # (its options checked before anything starts)
    if args.transport == "inprocess":
        args.socket_endpoint = "in-process"
        config, total = preflight(args)
        config.elastic = True
        forward_profiles(config, policy)
        result = _simulate(args, config, total, lambda sim: ElasticLink(policy))
    else:  # python -m coburst.adapter.elastic as the scheduler process
        args.socket_endpoint = "ipc://pending"
        config, total = preflight(args)
        config.elastic = True
        forward_profiles(config, policy)
        result = _run_over_zmq(args, args.scheduler, options, config, total, launch=launch_elastic)
    result.scheduler_options = options
    return result


def launch_elastic(spec: str, options: dict, endpoint: str, log_path: Path) -> subprocess.Popen:
    """An elastic policy as a scheduler process (:func:`coburst.adapter.elastic.main`)."""
    cmd = [sys.executable, "-m", "coburst.adapter.elastic", spec, "-o", json.dumps(options), "-s", endpoint]
    with open(log_path, "w", encoding="utf-8") as log:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(),
                                start_new_session=True)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``coburst run``'s arguments: the scheduler, its options, the transport, Batsim's options."""
    parser.add_argument("scheduler", help="pybatsim scheduler file (.py), pybatsim bundled scheduler name, "
                                          "or coburst policy name (fcfs, easy, backfill-sjf-1, ...)")
    parser.add_argument("-o", "--options", default="{}", help="scheduler options as a JSON object")
    parser.add_argument("--transport", choices=("inprocess", "zmq"), default="inprocess",
                        help="inprocess: load the pybatsim scheduler into the simulator's process and exchange "
                             "the Batsim messages through memory (default); zmq: run it as a separate pybatsim "
                             "process over ZeroMQ, as with the batsim command")
    add_sim_options(parser)


class _ArgumentError(argparse.ArgumentParser):
    def error(self, message: str):
        raise InputError("simulator options", None, message)


def run(scheduler: str, *, platform: str, workloads: Sequence[str], export: str, options: dict | None = None,
        sim_args: Sequence[str] = (), transport: str = "inprocess", timeout: float = 30.0, quiet: bool = True):
    """One run, as ``coburst run SCHEDULER -o OPTIONS -p PLATFORM -w W... -e EXPORT --transport T
    --timeout S SIM_ARGS...`` would do it, without printing its summary: for callers that hold
    Batsim's options as command-line strings (a campaign's ``sim_args``); with typed options,
    :func:`coburst.api.run` (a :class:`coburst.api.RunConfig`).  ``sim_args`` are
    Batsim's options as command-line strings (``["--enable-dynamic-jobs", "-E"]``); a bad one
    is an :class:`~coburst.errors.InputError`.  Returns the
    :class:`~coburst.simulator.engine.SimResult` (its ``scheduler_options``: the scheduler
    options used, after a policy name was resolved)."""
    parser = _ArgumentError(prog="coburst run", add_help=False, allow_abbrev=False)
    add_run_arguments(parser)
    argv = [scheduler, "-o", json.dumps(options or {}), "--transport", transport, "-p", platform,
            *(a for w in workloads for a in ("-w", w)), "-e", export, "--timeout", repr(float(timeout)),
            *(["-q"] if quiet else []), *sim_args]
    return run_args(parser.parse_args(argv))
