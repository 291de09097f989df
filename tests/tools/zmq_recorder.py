"""Record a Batsim <-> scheduler conversation: ``python zmq_recorder.py FRONT BACK LOG``.

Binds a REP socket on FRONT (the simulator connects there), connects a REQ socket to the
scheduler's REP socket at BACK, forwards every request and reply unchanged and appends
``{"dir": "in"|"out", "raw": ...}`` lines to LOG ("in": simulator -> scheduler).  Used by
the cross-engine tests to compare both engines' messages byte for byte (Batsim prints
every date with the shortest round-trip decimal, so ``now`` and the timestamps are exact).
"""

import json
import sys

import zmq


def main() -> None:
    front, back, log_path = sys.argv[1:4]
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.bind(front)
    req = ctx.socket(zmq.REQ)
    req.connect(back)
    with open(log_path, "w", encoding="utf-8") as log:
        while True:
            raw = rep.recv()
            log.write(json.dumps({"dir": "in", "raw": raw.decode()}) + "\n")
            req.send(raw)
            reply = req.recv()
            log.write(json.dumps({"dir": "out", "raw": reply.decode()}) + "\n")
            log.flush()
            rep.send(reply)
            if b'"SIMULATION_ENDS"' in raw:
                break


if __name__ == "__main__":
    main()
