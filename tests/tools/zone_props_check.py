"""Load a platform with SimGrid and print, as JSON, the hosts' zone properties found by
ProtocolHandlers.zone_properties and by walking every zone (the reference): a subprocess
of tests/test_startup.py (one SimGrid engine per process)."""

import json
import sys

from coburst.simulator._simgrid import simgrid
from coburst.simulator.handlers import ProtocolHandlers


class _Holder:
    zone_properties = ProtocolHandlers.zone_properties


engine = simgrid.Engine(["zone-check", "--log=root.thresh:critical"])
engine.load_platform(sys.argv[1])
holder = _Holder()
holder.engine = engine
found = holder.zone_properties()

reference = {}


def visit(zone, inherited):
    props = {**inherited, **dict(zone.get_properties())}
    for host in zone.all_hosts:
        reference[host.name] = props
    for child in zone.get_children():
        visit(child, props)


visit(engine.netzone_root, {})
names = sorted(h.name for h in engine.all_hosts)
print(json.dumps({"found": {n: found.get(n, {}) for n in names}, "reference": {n: reference.get(n, {}) for n in names},
                  "orders": [list(found.get(n, {})) == list(reference.get(n, {})) for n in names]}))
