"""Load a platform in SimGrid and dump its hosts and routes as JSON (used by the tests).

    python -m coburst.platforms.simgrid_dump PLATFORM.xml [--routes] [--only PREFIX]

SimGrid allows one engine per process, so each platform is dumped by its own process.
The output is ``{"hosts": {name: {"speed": s, "properties": {...}}}, "routes": {"a b":
[link names]}, "latency": {"a b": seconds}}``; routes only with ``--routes``, and only
between hosts whose name starts with PREFIX with ``--only``.
"""

from __future__ import annotations

import json
import sys


def dump(path: str, routes: bool, only: str = "") -> dict:
    import simgrid

    engine = simgrid.Engine(["coburst-dump", "--log=root.thres:critical"])
    engine.load_platform(path)
    hosts = sorted(engine.all_hosts, key=lambda h: h.name)
    out: dict = {"hosts": {h.name: {"speed": h.speed, "properties": dict(h.get_properties())} for h in hosts}}
    if routes:
        out["routes"] = {}
        out["latency"] = {}
        chosen = [h for h in hosts if h.name.startswith(only)]

        def ask() -> None:
            for a in chosen:
                for b in chosen:
                    links, latency = a.route_to(b)
                    out["routes"][f"{a.name} {b.name}"] = [link.name for link in links]
                    out["latency"][f"{a.name} {b.name}"] = latency

        # asked from an actor, once the engine runs: SimGrid seals the platform then (a
        # Dijkstra zone numbers its graph when sealed; before, a route query aborts)
        simgrid.Actor.create("coburst_dump", hosts[0], ask)
        engine.run()
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    routes = "--routes" in args
    only = ""
    if "--only" in args:
        at = args.index("--only")
        only = args[at + 1] if at + 1 < len(args) else ""
        del args[at:at + 2]
    paths = [a for a in args if a != "--routes"]
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    json.dump(dump(paths[0], routes, only), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
