"""Run L07 reference scenarios (see l07_driver.cpp for the format) on coburst's kernel.

``run_many(platform, specs)`` returns, per scenario, ``{"NAME EVENT": date}`` as the C++
driver prints them with libsimgrid 3.32 (one SimGrid engine loads the platform; each scenario
runs in a kernel of its own).  SimGrid allows one engine per process: ``python scenario.py
PLATFORM < specs.json`` does it in a child process and prints the results as JSON (used by
tests/test_sim_l07.py and ``regenerate.py --check``).
"""

from __future__ import annotations

import sys
import warnings


def parse(spec: str) -> list[tuple]:
    items = []
    for line in spec.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "task":
            name, start, timeout, cancel_at, n = words[1], float(words[2]), float(words[3]), float(words[4]), int(words[5])
            hosts = words[6:6 + n]
            flops = [float(x) for x in words[6 + n:6 + 2 * n]]
            bytes_ = [float(x) for x in words[6 + 2 * n:6 + 2 * n + n * n]]
            assert len(bytes_) == n * n, line
            items.append(("task", name, start, timeout, cancel_at, hosts, flops, bytes_))
        elif words[0] == "msg":
            items.append(("msg", words[1], float(words[2]), words[3], words[4]))
        else:
            raise ValueError(f"bad scenario line {line!r}")
    return items


def run_many(platform: str, specs: list[str]) -> list[dict[str, float]]:
    from coburst.simulator._simgrid import simgrid

    engine = simgrid.Engine(["l07", "--cfg=host/model:ptask_L07", "--log=root.thresh:critical"])
    engine.load_platform(platform)
    results: list[dict[str, float]] = []

    def body():
        for spec in specs:
            results.append(run_one(spec))

    with warnings.catch_warnings():  # SimGrid 4.1's Engine.add_actor binding is unusable
        warnings.simplefilter("ignore", DeprecationWarning)
        simgrid.Actor.create("kernel", engine.all_hosts[0], body)
    engine.run()
    return results


def run_one(spec: str) -> dict[str, float]:
    """One scenario in a kernel of its own (inside a SimGrid actor: routes are asked there)."""
    from coburst.simulator._simgrid import simgrid
    from coburst.simulator.kernel import Get, Kernel, Mailbox, Put, Run, Sleep

    kernel = Kernel()
    out: dict[str, float] = {}
    host = simgrid.Host.by_name

    def say(name: str, event: str) -> None:
        out[f"{name} {event}"] = kernel.now

    def task(item, state):
        _, name, start, timeout, _, hosts, flops, bytes_ = item
        if start > 0:
            yield Sleep(start)
        outcome = yield Run([host(h) for h in hosts], flops, bytes_, timeout)
        state["over"] = outcome != "timeout"
        say(name, outcome)
        if outcome == "timeout":  # the task keeps running until cancelled (as in Batsim)
            yield Sleep(item[4] - kernel.now)
            kernel.end_zombie(state["proc"])
            say(name, "cancelled")

    def killer(item, state):
        yield Sleep(item[4])
        proc = state["proc"]
        if not state["over"] and proc.activity is not None:
            kernel.cancel_activity(proc)

    def receiver(name, box):
        yield Get(box)
        say(name, "received")

    def sender(item, box):
        _, name, start, src, dst = item
        if start > 0:
            yield Sleep(start)
        route = kernel.network.route(host(src), host(dst))
        yield Put(box, None, route)
        say(name, "sent")

    for item in parse(spec):
        if item[0] == "task":
            state = {"over": False}
            state["proc"] = kernel.spawn(task(item, state), item[1])
            if item[4] >= 0 and item[3] < 0:
                kernel.spawn(killer(item, state), item[1] + "_killer")
        else:
            box = Mailbox(item[1])
            kernel.spawn(receiver(item[1], box), item[1] + "_rcv")
            kernel.spawn(sender(item, box), item[1] + "_snd")
    kernel.main()
    return out


if __name__ == "__main__":
    import json

    if len(sys.argv) == 3:  # PLATFORM SCENARIO.txt: print the events as the C++ driver does
        result = run_many(sys.argv[1], [open(sys.argv[2]).read()])[0]
        for key, date in sorted(result.items(), key=lambda kv: kv[1]):
            print(key, "%.17g" % date)
    else:  # PLATFORM, a JSON list of scenarios on stdin: a JSON list of results on stdout
        print(json.dumps(run_many(sys.argv[1], json.load(sys.stdin))))
