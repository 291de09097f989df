"""The Batsim 4 JSON protocol over ZeroMQ, simulator side.

The simulator connects a REQ socket to the scheduler's REP socket (pybatsim binds
``tcp://*:28000``), sends ``{"now": t, "events": [...]}`` and waits for the reply.  A
scheduler that stays silent past ``timeout`` seconds, or whose peer disconnects, stops
the simulation with :class:`~coburst.errors.SchedulerGone`; a reply that is not a valid
message raises :class:`~coburst.errors.ProtocolError`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from coburst.errors import ProtocolError, SchedulerGone


class SchedulerLink:
    """REQ side of the Batsim request/reply exchange."""

    def __init__(self, endpoint: str, timeout: float, peer_alive=None):
        self.endpoint = endpoint
        self.timeout = timeout
        #: optional callable returning None while the scheduler process lives, else a reason
        self.peer_alive = peer_alive
        self.context = zmq.Context.instance()
        self.socket = self.context.socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.monitor = self.socket.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        try:
            self.socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise SchedulerGone(f"cannot connect to scheduler endpoint {endpoint!r}: {exc}") from None
        self.poller = zmq.Poller()
        self.poller.register(self.socket, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        self.connected_once = False
        self.wall_time_waiting = 0.0  # seconds spent waiting for the scheduler (scheduling_time)
        self.nb_exchanges = 0

    def exchange(self, now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
        """Send one message and return the decoded reply."""
        payload = encode_message(now, events)
        start = time.perf_counter()
        self.socket.send_string(payload)
        deadline = start + self.timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                what = "answer" if self.connected_once else "connect"
                raise SchedulerGone(
                    f"the scheduler at {self.endpoint} did not {what} within {self.timeout:g} s "
                    f"(simulated time {now:.6f}); is it running and listening on that endpoint?")
            ready = dict(self.poller.poll(timeout=min(remaining, 0.25) * 1000))
            if self.monitor in ready:
                event = recv_monitor_message(self.monitor)
                if event["event"] == zmq.EVENT_CONNECTED:
                    self.connected_once = True
                elif event["event"] == zmq.EVENT_DISCONNECTED and self.socket not in ready:
                    reason = self._peer_exit_reason()
                    raise SchedulerGone(reason + f" (simulated time {now:.6f})" if reason else
                                        f"the scheduler at {self.endpoint} disconnected "
                                        f"before answering (simulated time {now:.6f})")
            if self.socket in ready:
                raw = self.socket.recv_string()
                break
            if self.peer_alive is not None:
                reason = self.peer_alive()
                if reason:
                    raise SchedulerGone(f"{reason} (simulated time {now:.6f})")
        self.wall_time_waiting += time.perf_counter() - start
        self.nb_exchanges += 1
        return decode_reply(raw)

    def _peer_exit_reason(self) -> str | None:
        """When the scheduler process is known (``coburst run``), its exit explains a disconnect."""
        if self.peer_alive is None:
            return None
        deadline = time.perf_counter() + 2.0
        while time.perf_counter() < deadline:
            reason = self.peer_alive()
            if reason:
                return reason
            time.sleep(0.05)
        return None

    def close(self) -> None:
        for sock in (getattr(self, "monitor", None), getattr(self, "socket", None)):
            if sock is not None and not sock.closed:
                sock.close(linger=0)


_encode_string = json.encoder.encode_basestring  # C-accelerated, keeps non-ASCII as is (UTF-8)


def encode_value(value: Any, out: list) -> None:
    """Append the JSON text of ``value`` to ``out``, Batsim 4.2's way: compact, every
    floating-point number printed with ``"%6f"`` (six decimals, ``protocol.hpp``'s custom
    RapidJSON ``Writer``), integers as integers."""
    kind = type(value)
    if kind is float:
        out.append("%6f" % value)
    elif kind is str:
        out.append(_encode_string(value))
    elif kind is dict or (kind is not list and isinstance(value, dict)):
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(",")
            first = False
            out.append(_encode_string(str(key)))
            out.append(":")
            encode_value(item, out)
        out.append("}")
    elif kind is list or kind is tuple:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            encode_value(item, out)
        out.append("]")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append("%6f" % value)
    elif isinstance(value, Mapping):
        encode_value(dict(value), out)
    elif isinstance(value, (list, tuple)):
        encode_value(list(value), out)
    else:
        raise TypeError(f"cannot encode {value!r} in a Batsim message")


def encode_message(now: float, events: list[dict[str, Any]]) -> str:
    """``{"now":..,"events":[..]}`` as Batsim 4.2.1 writes it (dates to the microsecond:
    the scheduler sees, and answers with, rounded dates)."""
    out = ['{"now":', "%6f" % now, ',"events":']
    encode_value(events, out)
    out.append("}")
    return "".join(out)


def decode_reply(raw: str) -> dict[str, Any]:
    """Parse and check the envelope of a scheduler message."""
    try:
        msg = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"malformed message from the scheduler (invalid JSON: {exc.msg} at "
                            f"column {exc.colno}): {raw[:200]!r}") from None
    if not isinstance(msg, dict) or "now" not in msg or "events" not in msg:
        raise ProtocolError(f"malformed message from the scheduler: expected an object with 'now' and "
                            f"'events', got {raw[:200]!r}")
    now = msg["now"]
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise ProtocolError(f"malformed message from the scheduler: 'now' is not a number: {now!r}")
    events = msg["events"]
    if not isinstance(events, list):
        raise ProtocolError("malformed message from the scheduler: 'events' is not a list")
    for i, event in enumerate(events):
        if not isinstance(event, dict) or "type" not in event or "timestamp" not in event:
            raise ProtocolError(f"malformed event #{i} from the scheduler (needs 'timestamp' and 'type'): "
                                f"{json.dumps(event)[:200]}")
        ts = event["timestamp"]
        if isinstance(ts, bool) or not isinstance(ts, (int, float)):
            raise ProtocolError(f"event #{i} ({event['type']}) has a non-numeric timestamp {ts!r}")
        if ts > now + 1e-9:
            raise ProtocolError(f"event #{i} ({event['type']}) is dated {ts} after the message's now={now}")
        # (Batsim 4.2 accepts events out of chronological order: an event dated before the
        # current time is applied at once, like coburst's request-reply actor does)
    return msg
