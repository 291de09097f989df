"""The Batsim 4 JSON protocol over ZeroMQ, simulator side.

The simulator connects a REQ socket to the scheduler's REP socket (pybatsim binds
``tcp://*:28000``), sends ``{"now": t, "events": [...]}`` and waits for the reply.  A
scheduler that stays silent past ``timeout`` seconds, or whose peer disconnects, stops
the simulation with :class:`~coburst.errors.SchedulerGone`; a reply that is not a valid
message raises :class:`~coburst.errors.ProtocolError`.  On ``tcp://`` (IPv4) and ``ipc://``
endpoints the REQ side is :class:`ZmtpLink` (ZeroMQ's wire protocol on a plain socket),
elsewhere :class:`SchedulerLink` (pyzmq).
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import re
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from coburst import signals
from coburst.errors import CoburstError, InputError, ProtocolError, SchedulerGone


def signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:  # pragma: no cover
        return f"signal {signum}"


class _Link:
    """What both REQ sides (:class:`SchedulerLink`, :class:`ZmtpLink`) keep and say alike: the
    exchange's bookkeeping (``scheduling_time``), the periodic look at the stop signals, and
    the errors of a scheduler that does not connect, answer or stay."""

    def __init__(self, endpoint: str, timeout: float, peer_alive=None):
        self.endpoint = endpoint
        self.timeout = timeout
        #: optional callable returning None while the scheduler process lives, else a reason
        self.peer_alive = peer_alive
        self.awaiting = False  # a request was sent and its reply not received
        self.connected_once = False
        self.wall_time_waiting = 0.0  # seconds spent waiting for the scheduler (scheduling_time)
        self.nb_exchanges = 0
        self._signals_due = 0.0  # perf_counter date of the next look at the stop signals

    def _begin(self) -> float:
        """An exchange starts: its perf_counter date (the stop signals looked at, at most every 20 ms)."""
        start = time.perf_counter()
        if start >= self._signals_due:  # a read of the wake-up fd per exchange: ~1 % of a run
            signals.check()  # (the waits look at that fd; the main thread raises at the end)
            self._signals_due = start + 0.02
        return start

    def _end(self, start: float, raw: str) -> dict[str, Any]:
        """The reply ``raw`` of the exchange begun at ``start``, decoded and checked."""
        self.awaiting = False
        self.wall_time_waiting += time.perf_counter() - start
        self.nb_exchanges += 1
        return decode_reply(raw)

    def _timed_out(self, now: float) -> SchedulerGone:
        what = "answer" if self.connected_once else "connect"
        return SchedulerGone(f"the scheduler at {self.endpoint} did not {what} within {self.timeout:g} s "
                             f"(simulated time {now:.6f}); is it running and listening on that endpoint?")

    def _gone(self, now: float) -> SchedulerGone:
        reason = self._peer_exit_reason()
        return SchedulerGone(reason + f" (simulated time {now:.6f})" if reason else
                             f"the scheduler at {self.endpoint} disconnected before answering "
                             f"(simulated time {now:.6f})")

    def _check_peer(self, now: float) -> None:
        """The scheduler process, when known, has not exited."""
        if self.peer_alive is not None:
            reason = self.peer_alive()
            if reason:
                raise SchedulerGone(f"{reason} (simulated time {now:.6f})")

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


class SchedulerLink(_Link):
    """REQ side of the Batsim request/reply exchange."""

    def __init__(self, endpoint: str, timeout: float, peer_alive=None):
        import zmq  # (here: a run on a tcp:// or ipc:// endpoint does not import pyzmq, see ZmtpLink)

        super().__init__(endpoint, timeout, peer_alive)
        # its own context (an I/O thread ended by close()): nothing shared with other links or
        # with a library user's sockets in the same process
        self.context = zmq.Context()
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
        self.signal_fd = signals.wakeup_fd()  # SIGINT/SIGTERM wake the wait up
        if self.signal_fd is not None:
            self.poller.register(self.signal_fd, zmq.POLLIN)

    def exchange(self, now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
        """Send one message and return the decoded reply."""
        payload = encode_message(now, events)
        start = self._begin()
        self.socket.send_string(payload)
        self.awaiting = True
        if self.connected_once and self.socket.poll(timeout=100):
            # the usual case: an answer within 100 ms, no need to look at the monitor socket
            return self._end(start, self.socket.recv_string())
        import zmq

        deadline = start + self.timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise self._timed_out(now)
            ready = dict(self.poller.poll(timeout=min(remaining, 0.25) * 1000))
            signals.check()
            if self.monitor in ready:
                event = monitor_event(self.monitor)
                if event == zmq.EVENT_CONNECTED:
                    self.connected_once = True
                elif event == zmq.EVENT_DISCONNECTED and self.socket not in ready:
                    raise self._gone(now)
            if self.socket in ready:
                return self._end(start, self.socket.recv_string())
            self._check_peer(now)

    def interrupt(self, now: float) -> None:
        """Stopped by SIGINT/SIGTERM: tell the scheduler the simulation ends (SIMULATION_ENDS,
        as at a normal end, so pybatsim exits at once), waiting at most about a second."""
        import zmq

        try:
            if self.awaiting:  # the REQ socket must receive the pending reply first
                if not self.socket.poll(timeout=500):
                    return
                self.socket.recv()
                self.awaiting = False
            self.socket.send_string(encode_message(now, [{"timestamp": now, "type": "SIMULATION_ENDS",
                                                          "data": {}}]))
            if self.socket.poll(timeout=1000):
                self.socket.recv()
        except zmq.ZMQError:
            pass

    def close(self) -> None:
        for sock in (getattr(self, "monitor", None), getattr(self, "socket", None)):
            if sock is not None and not sock.closed:
                sock.close(linger=0)
        context = getattr(self, "context", None)
        if context is not None and not context.closed:
            context.term()


def scheduler_link(endpoint: str, timeout: float, peer_alive=None):
    """The simulator's side of the exchange with an external scheduler: :class:`ZmtpLink` on a
    ``tcp://`` endpoint of a numeric IPv4 address or ``localhost``, or an ``ipc://`` path;
    :class:`SchedulerLink` (pyzmq) on any other endpoint, or on every one with
    ``COBURST_ZMQ_LINK=pyzmq`` in the environment (libzmq's own socket, e.g. to rule the
    hand-written ZMTP side out when a scheduler does not answer)."""
    address = zmtp_address(endpoint)
    if address is None or os.environ.get("COBURST_ZMQ_LINK") == "pyzmq":
        return SchedulerLink(endpoint, timeout, peer_alive)
    return ZmtpLink(endpoint, timeout, peer_alive, address)


_TCP_ENDPOINT = re.compile(r"tcp://(localhost|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})")


def zmtp_address(endpoint: str) -> tuple[int, Any] | None:
    """``(socket family, address)`` of an endpoint :class:`ZmtpLink` connects to itself, None
    for the others (host names, wildcards, IPv6, abstract or too long IPC names: pyzmq)."""
    found = _TCP_ENDPOINT.fullmatch(endpoint)
    if found:
        host, port = found.group(1), int(found.group(2))
        if host == "localhost":
            host = "127.0.0.1"
        if 0 < port < 65536 and all(int(part) < 256 for part in host.split(".")):
            return socket.AF_INET, (host, port)
        return None
    if endpoint.startswith("ipc://") and hasattr(socket, "AF_UNIX"):
        path = endpoint[len("ipc://"):]
        if path and not path.startswith("@") and path != "*" and len(os.fsencode(path)) <= 107:
            return socket.AF_UNIX, path
    return None


#: ZMTP 3.0's greeting of a client (RFC 23): signature, version 3.0, the NULL mechanism, as-server 0
_ZMTP_GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + b"\x00" + bytes(31)


def zmtp_frame(body: bytes, flags: int = 0) -> bytes:
    """One ZMTP 3 frame: flags (bit 0 more, bit 1 long size, bit 2 command), size, body."""
    if len(body) < 256:
        return bytes((flags, len(body))) + body
    return bytes((flags | 2,)) + len(body).to_bytes(8, "big") + body


def zmtp_command(name: bytes, body: bytes = b"") -> bytes:
    return zmtp_frame(bytes((len(name),)) + name + body, 4)


#: the client's READY command (NULL mechanism): its socket type, as libzmq's REQ socket sends it
_ZMTP_READY = zmtp_command(b"READY", b"\x0bSocket-Type" + (3).to_bytes(4, "big") + b"REQ")
#: what a REQ socket puts before each request: the empty delimiter frame, more to come
_ZMTP_DELIMITER = b"\x01\x00"


class ZmtpLink(_Link):
    """:class:`SchedulerLink`'s exchange (same messages, errors, timeouts and signals) over a
    plain TCP or Unix socket speaking ZeroMQ's wire protocol, ZMTP 3.0, as a REQ socket does
    (NULL mechanism; each request is an empty delimiter frame then the message).

    Why not pyzmq: libzmq hands every message to its I/O thread and back, two thread wake-ups
    per exchange in this process; the run is a strict ping-pong, so they are on its critical
    path (measured: ~45 us of CPU per exchange with pyzmq, ~10 us here). The scheduler's side
    is unchanged (pybatsim's real ZeroMQ REP socket)."""

    #: libzmq's default reconnection interval (``ZMQ_RECONNECT_IVL``) while the scheduler is not there
    RECONNECT = 0.1

    def __init__(self, endpoint: str, timeout: float, peer_alive=None, address=None):
        super().__init__(endpoint, timeout, peer_alive)
        self.family, self.address = address if address is not None else zmtp_address(endpoint)
        self.sock: socket.socket | None = None
        self.poller = select.poll()
        self.signal_fd = signals.wakeup_fd()  # SIGINT/SIGTERM wake the wait up
        if self.signal_fd is not None:
            self.poller.register(self.signal_fd, select.POLLIN)
        self._rbuf = bytearray()  # bytes received and not yet read as a whole frame
        self._greeted = False  # the scheduler's 64-byte greeting was read
        self._handshaken = False  # the scheduler's READY command was read
        self._frames: list[bytes] = []  # the frames of the message being received
        self._sent_partly = False  # a send stopped in the middle of a message (the stream is unusable)
        self._stopping = False  # interrupted: the waits no longer look at signals

    def exchange(self, now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
        """Send one message and return the decoded reply."""
        payload = encode_message(now, events).encode()
        start = self._begin()
        deadline = start + self.timeout
        if self.sock is None:
            self._connect(deadline, now)
        self._send(_ZMTP_DELIMITER + zmtp_frame(payload), deadline, now)
        self.awaiting = True
        return self._end(start, self._receive(deadline, now).decode())

    def _wait(self, deadline: float, now: float, until: float | None = None) -> bool:
        """Wait for what the socket is polled for, up to 0.25 s (or ``until``; signals and the
        scheduler process looked at in between, as :class:`SchedulerLink` does); True when it came."""
        date = time.perf_counter()
        remaining = deadline - date
        if remaining <= 0:
            raise self._timed_out(now)
        if until is not None:
            remaining = min(remaining, max(until - date, 0.0))
        ready = self.poller.poll(math.ceil(min(remaining, 0.25) * 1000))
        for fd, _ in ready:
            if fd != self.signal_fd:
                return True
        if self._stopping:  # (the signal is known: the last messages go out regardless)
            return False
        signals.check()
        self._check_peer(now)
        return False

    def _connect(self, deadline: float, now: float) -> None:
        """Connect (retried every :attr:`RECONNECT` s until ``deadline``, as libzmq does while
        nobody listens) and send the greeting and READY command."""
        while True:
            sock = socket.socket(self.family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                err = sock.connect_ex(self.address)
            except OSError as exc:
                sock.close()
                raise SchedulerGone(f"cannot connect to scheduler endpoint {self.endpoint!r}: {exc}") from None
            if err in (errno.EINPROGRESS, errno.EAGAIN):
                fd = sock.fileno()
                self.poller.register(fd, select.POLLOUT)
                try:
                    while not self._wait(deadline, now):
                        pass
                except BaseException:
                    sock.close()
                    raise
                finally:
                    self.poller.unregister(fd)
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err == 0:
                break
            sock.close()
            if err not in (errno.ECONNREFUSED, errno.ENOENT, errno.ECONNRESET, errno.ETIMEDOUT,
                           errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EAGAIN):
                raise SchedulerGone(f"cannot connect to scheduler endpoint {self.endpoint!r}: {os.strerror(err)}")
            retry = time.perf_counter() + self.RECONNECT
            while time.perf_counter() < retry:
                self._wait(deadline, now, until=retry)  # (sleeps, watching signals and the deadline)
        sock.setblocking(True)  # reads follow a poll; writes say MSG_DONTWAIT
        if self.family == socket.AF_INET:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (as libzmq)
        self.sock = sock
        self.connected_once = True
        self.poller.register(sock, select.POLLIN)
        self._send(_ZMTP_GREETING + _ZMTP_READY, deadline, now)
        # the first message waits for the scheduler's READY, as libzmq's does: libzmq reads a
        # frame that comes before it has sent its own READY as a wrong handshake command
        while not self._handshaken:
            if self._take_message(now) is not None:
                raise ProtocolError(f"the scheduler at {self.endpoint} sent a message before its READY command")
            if not self._handshaken:
                self._read_more(deadline, now)

    def _send(self, data: bytes, deadline: float, now: float) -> None:
        sock = self.sock
        view = memoryview(data)
        try:
            while view:
                try:
                    sent = sock.send(view, socket.MSG_DONTWAIT)
                except BlockingIOError:  # the scheduler does not read: wait (up to the deadline)
                    self._sent_partly = len(view) < len(data)
                    self.poller.modify(sock, select.POLLIN | select.POLLOUT)
                    try:
                        while not self._wait(deadline, now):
                            pass
                    finally:
                        self.poller.modify(sock, select.POLLIN)
                    continue
                view = view[sent:]
        except (BrokenPipeError, ConnectionResetError):
            raise self._gone(now) from None
        except BaseException:
            self._sent_partly = len(view) < len(data)
            raise
        self._sent_partly = False

    def _receive(self, deadline: float, now: float) -> bytes:
        """The body of the next reply (its first frame after the empty delimiter)."""
        while True:
            body = self._take_message(now)
            if body is not None:
                return body
            self._read_more(deadline, now)

    def _read_more(self, deadline: float, now: float) -> None:
        """Wait for bytes from the scheduler and add them to the read buffer."""
        if not self._wait(deadline, now):
            return
        try:
            chunk = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise self._gone(now)
        self._rbuf += chunk

    def _take_message(self, now: float) -> bytes | None:
        """Read the whole frames received so far: the greeting, commands, then the frames of a
        message; the body of a complete reply, else None."""
        buf = self._rbuf
        if not self._greeted:
            if buf[:1] and buf[0] != 0xFF or len(buf) >= 10 and not buf[9] & 1:
                raise ProtocolError(f"the scheduler at {self.endpoint} does not speak ZeroMQ's protocol "
                                    f"(ZMTP 3): {bytes(buf[:16])!r}")
            if len(buf) < 64:
                return None
            if buf[10] < 3 or bytes(buf[12:32]).rstrip(b"\0") != b"NULL":
                raise ProtocolError(f"the scheduler at {self.endpoint} speaks ZMTP {buf[10]}.{buf[11]} with the "
                                    f"{bytes(buf[12:32]).rstrip(bytes(1)).decode(errors='replace')!r} mechanism "
                                    f"(expected ZMTP 3 with NULL)")
            del buf[:64]
            self._greeted = True
        pos = 0
        end = len(buf)
        try:
            while pos + 2 <= end:
                flags = buf[pos]
                if flags & 2:
                    if pos + 9 > end:
                        break
                    size, head = int.from_bytes(buf[pos + 1:pos + 9], "big"), 9
                else:
                    size, head = buf[pos + 1], 2
                if pos + head + size > end:
                    break
                body = bytes(buf[pos + head:pos + head + size])
                pos += head + size
                if flags & 4:
                    self._command(body, now)
                    continue
                self._frames.append(body)
                if not flags & 1:  # the last frame of a message
                    frames, self._frames = self._frames, []
                    if len(frames) >= 2 and frames[0] == b"":
                        return frames[1]
                    # (a REQ socket drops a reply without its delimiter)
        finally:
            del buf[:pos]
        return None

    def _command(self, body: bytes, now: float) -> None:
        name = body[1:1 + body[0]] if body else b""
        if name == b"PING":  # heartbeat (ZMTP 3.1): answered with its context
            self._send(zmtp_command(b"PONG", body[1 + body[0] + 2:]), time.perf_counter() + self.timeout, now)
        elif name == b"READY":  # (the REP socket's metadata: nothing to check)
            self._handshaken = True
        elif name == b"ERROR":
            raise SchedulerGone(f"the scheduler at {self.endpoint} refused the connection: "
                                f"{body[7:].decode(errors='replace')} (simulated time {now:.6f})")
        # any other command: nothing to do

    def interrupt(self, now: float) -> None:
        """Stopped by SIGINT/SIGTERM: tell the scheduler the simulation ends (as
        :meth:`SchedulerLink.interrupt`), waiting at most about a second."""
        if self.sock is None or self._sent_partly:
            return
        self._stopping = True
        if self.signal_fd is not None:
            self.poller.unregister(self.signal_fd)
        try:
            if self.awaiting:  # the pending reply comes first
                self._receive(time.perf_counter() + 0.5, now)
                self.awaiting = False
            message = encode_message(now, [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}])
            self._send(_ZMTP_DELIMITER + zmtp_frame(message.encode()), time.perf_counter() + 0.5, now)
            self._receive(time.perf_counter() + 1.0, now)
        except (CoburstError, OSError):
            pass

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def monitor_event(monitor) -> int:
    """The event id of the next message of a monitor socket: ``zmq.utils.monitor``'s
    ``recv_monitor_message`` (libzmq 4's event frame: 16-bit id, 32-bit value; then the
    endpoint), without importing that module (it imports asyncio: ~50 ms of every ZeroMQ run)."""
    return monitor_event_id(monitor.recv_multipart())


def monitor_event_id(frames: list[bytes]) -> int:
    """The event id of a monitor message (``zmq.utils.monitor.parse_monitor_message``)."""
    if len(frames) != 2 or len(frames[0]) != 6:
        raise ProtocolError(f"invalid ZeroMQ monitor event: {frames!r}")
    return struct.unpack("=hi", frames[0])[0]


_encode_string = json.encoder.encode_basestring  # C-accelerated, keeps non-ASCII as is (UTF-8)


class RawJSON(str):
    """Text already encoded with :func:`encode_value` (e.g. a job's description, encoded once)."""

    __slots__ = ()


def encode_text(value: Any) -> RawJSON:
    out: list = []
    encode_value(value, out)
    return RawJSON("".join(out))


def encode_value(value: Any, out: list) -> None:
    """Append the JSON text of ``value`` to ``out``, Batsim 4.2's way: compact, every
    floating-point number printed with ``"%6f"`` (six decimals, ``protocol.hpp``'s custom
    RapidJSON ``Writer``), integers as integers."""
    kind = type(value)
    if kind is float:
        out.append("%6f" % value)
    elif kind is RawJSON:
        out.append(value)
    elif kind is str:
        out.append(_encode_string(value))
    elif kind is dict or (kind is not list and isinstance(value, dict)):
        out.append("{")
        first = True
        for key, item in value.items():
            ik = type(item)
            # the common leaves inline (this runs for every event of every message)
            if ik is str:
                out.append(f'{"" if first else ","}{_encode_string(str(key))}:{_encode_string(item)}')
            elif ik is int:
                out.append(f'{"" if first else ","}{_encode_string(str(key))}:{item}')
            elif ik is float:
                out.append(f'{"" if first else ","}{_encode_string(str(key))}:{item:6f}')
            else:
                out.append(f'{"" if first else ","}{_encode_string(str(key))}:')
                encode_value(item, out)
            first = False
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


_POW10 = [float(f"1e{k}") for k in range(309)]


def rapidjson_double(text: str) -> float:
    """A JSON number as Batsim reads it: RapidJSON's ``Reader::ParseNumber`` with default
    flags (``StrtodNormalPrecision``, 64-bit build), not the correctly rounded value.

    The significand is accumulated as an integer up to 2**53 (integer part, then fraction
    digits), then in double arithmetic ``d * 10 + digit`` up to 17 significant digits, and
    scaled once: ``d * 10**p`` or ``d / 10**-p``.  Up to 15-16 significant digits this is the
    correctly rounded value; with 17 (Python's ``repr`` of a far date, e.g.
    ``100000000000.00003``) it can be one ulp away, and Batsim then dates the decision there.
    """
    if len(text) <= 16 and "e" not in text and "E" not in text:
        # at most 15 digits with a fraction (16 without): an exact integer scaled once by an
        # exact power of ten, i.e. the correctly rounded value -- every date below 1e10
        return float(text)
    s, n, pos = text, len(text), 0
    minus = s.startswith("-")
    pos += minus
    i = i64 = 0
    use64 = use_double = False
    sig = 0
    d = 0.0
    if s[pos] == "0":
        pos += 1
    else:
        i = ord(s[pos]) - 48
        pos += 1
        lim, last = (214748364, "8") if minus else (429496729, "5")
        while pos < n and s[pos].isdigit():
            if i >= lim and (i != lim or s[pos] > last):
                i64, use64 = i, True
                break
            i = i * 10 + ord(s[pos]) - 48
            sig += 1
            pos += 1
    if use64:
        lim, last = (0x0CCCCCCCCCCCCCCC, "8") if minus else (0x1999999999999999, "5")
        while pos < n and s[pos].isdigit():
            if i64 >= lim and (i64 != lim or s[pos] > last):
                d, use_double = float(i64), True
                break
            i64 = i64 * 10 + ord(s[pos]) - 48
            sig += 1
            pos += 1
    if use_double:
        while pos < n and s[pos].isdigit():
            d = d * 10 + (ord(s[pos]) - 48)
            pos += 1
    exp_frac = 0
    if pos < n and s[pos] == ".":
        pos += 1
        if not use_double:
            if not use64:
                i64 = i
            while pos < n and s[pos].isdigit():
                if i64 > 0x1FFFFFFFFFFFFF:
                    break
                i64 = i64 * 10 + ord(s[pos]) - 48
                exp_frac -= 1
                if i64:
                    sig += 1
                pos += 1
            d, use_double = float(i64), True
        while pos < n and s[pos].isdigit():
            if sig < 17:
                d = d * 10.0 + (ord(s[pos]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    sig += 1
            pos += 1
    exp = 0
    if pos < n and s[pos] in "eE":
        if not use_double:
            d, use_double = float(i64 if use64 else i), True
        pos += 1
        exp_minus = pos < n and s[pos] == "-"
        pos += pos < n and s[pos] in "+-"
        exp = int(s[pos:]) if s[pos:].isdigit() else 0
        exp = -exp if exp_minus else exp
    if not use_double:
        value = float(i64 if use64 else i)
        return -value if minus else value

    def fast_path(x: float, e: int) -> float:
        if e < -308:
            return 0.0
        if e > 308:  # (RapidJSON: kParseErrorNumberTooBig)
            raise ValueError(f"number too big to be stored in a double: {text[:40]}")
        return x * _POW10[e] if e >= 0 else x / _POW10[-e]

    p = exp + exp_frac
    d = fast_path(fast_path(d, -308), p + 308) if p < -308 else fast_path(d, p)
    return -d if minus else d


def batsim_rewritten(value: Any) -> Any:
    """A JSON value as Batsim 4.2.1 keeps a profile or job the scheduler registers
    (``REGISTER_PROFILE``, ``REGISTER_JOB``): written back to text with its ``Writer`` (every
    double printed ``"%6f"``, integers as they are) and read again (:func:`rapidjson_double`).
    A registered delay of 13.333333333333334 s lasts 13.333333 s."""
    kind = type(value)
    if kind is float:
        return rapidjson_double("%6f" % value)
    if kind is dict:
        return {k: batsim_rewritten(v) for k, v in value.items()}
    if kind is list:
        return [batsim_rewritten(v) for v in value]
    return value


def batsim_date(value: float | int) -> float:
    """A number of a scheduler message as Batsim gets it: pybatsim writes it with Python's
    ``repr`` (``json.dumps``), Batsim reads it back with RapidJSON (:func:`rapidjson_double`).
    A ``repr`` of at most 16 characters without an exponent is read back as the float it
    came from (``rapidjson_double`` is ``float`` there, and ``float(repr(x)) == x``)."""
    if type(value) is float:
        text = repr(value)
        return value if len(text) <= 16 and "e" not in text else rapidjson_double(text)
    return value


def batsim_dates(msg: Any) -> Any:
    """The dates of a decoded scheduler message (``now``, each event's ``timestamp``, a
    ``CALL_ME_LATER``'s date) as Batsim reads them (:func:`batsim_date`): for messages that
    reach the simulator as Python objects, without JSON text (the in-process link)."""
    if isinstance(msg, dict) and "now" in msg:
        raw = msg["now"]
        msg["now"] = now = batsim_date(raw)
        for event in msg.get("events") or ():
            if isinstance(event, dict) and "timestamp" in event:
                ts = event["timestamp"]
                # (pybatsim dates its events with the very float of the message's now: read once)
                event["timestamp"] = now if ts is raw else batsim_date(ts)
                data = event.get("data")
                if isinstance(data, dict) and "timestamp" in data:
                    data["timestamp"] = batsim_date(data["timestamp"])
    return msg


#: the reading of scheduler messages, made once: ``json.loads(raw, parse_float=...)`` builds a
#: decoder and its scanner at every call (~1.5 us of each ZeroMQ exchange's ~3 us of decoding)
_DECODER = json.JSONDecoder(parse_float=rapidjson_double)  # Batsim's RapidJSON reading of numbers
#: ``json.loads(raw)``'s decoder (Python's ``float`` for numbers: how pybatsim reads Batsim)
_PLAIN = json.JSONDecoder()


def decode_json(raw: str, plain: bool = False) -> Any:
    """``json.loads(raw, parse_float=rapidjson_double)`` (``plain``: ``json.loads(raw)``), its
    errors included: a text with no whitespace around its value (what pybatsim and
    :func:`encode_message` write) is scanned directly by a decoder made once; anything else
    (or an error) is read by ``json.loads`` itself."""
    try:
        value, end = (_PLAIN if plain else _DECODER).scan_once(raw, 0)
    except (StopIteration, json.JSONDecodeError, RecursionError):
        end = -1
    if end == len(raw):
        return value
    return json.loads(raw) if plain else json.loads(raw, parse_float=rapidjson_double)


def decode_reply(raw: str) -> dict[str, Any]:
    """Parse and check the envelope of a scheduler message."""
    try:
        msg = decode_json(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"malformed message from the scheduler (invalid JSON: {exc.msg} at "
                            f"column {exc.colno}): {raw[:200]!r}") from None
    except ValueError as exc:  # a number Batsim's reader refuses (rapidjson_double)
        raise ProtocolError(f"malformed message from the scheduler ({exc}): {raw[:200]!r}") from None
    return check_reply(msg, raw)


def check_reply(msg: Any, raw: str | None = None) -> dict[str, Any]:
    """Check the envelope of a decoded scheduler message (``raw``: its text, for the error
    messages; a message without text is printed only when it is refused)."""
    if not isinstance(msg, dict) or "now" not in msg or "events" not in msg:
        if raw is None:
            raw = repr(msg)
        raise ProtocolError(f"malformed message from the scheduler: expected an object with 'now' and "
                            f"'events', got {raw[:200]!r}")
    now = msg["now"]
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise ProtocolError(f"malformed message from the scheduler: 'now' is not a number: {now!r}")
    events = msg["events"]
    if not isinstance(events, list):
        raise ProtocolError("malformed message from the scheduler: 'events' is not a list")
    if type(now) is not float:  # (an integer date: every check, event by event)
        for i, event in enumerate(events):
            _check_event(i, event, now)
        return msg
    limit = now + 1e-9
    for i, event in enumerate(events):
        # the usual event (a dict with a type, a float date not after now) in one test each
        ts = event.get("timestamp") if type(event) is dict and "type" in event else None
        if type(ts) is not float or ts > limit:
            _check_event(i, event, now)
    return msg


def _check_event(i: int, event: Any, now: float) -> None:
    """:func:`check_reply`'s checks of one event (every check, in their order)."""
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


class _Channel:
    """The two messages of the exchange in progress (see :class:`InProcessLink`)."""

    incoming: str | None = None
    outgoing: Any = None


#: pybatsim's ``Batsim`` class logs every message it receives and sends at INFO level
_PYBATSIM_LOG = logging.getLogger("batsim.batsim")


class _Message(dict):
    """A message handed to pybatsim: a dict, whose text is the JSON it was read from."""

    __slots__ = ("text",)

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


class _MemoryNetwork:
    """pybatsim's ``NetworkHandler`` interface over a :class:`_Channel`."""

    channel: _Channel  # set on the per-link subclass

    def __init__(self, socket_endpoint=None, timeout=None, type=None):
        pass

    def bind(self) -> None:
        pass

    def connect(self) -> None:
        pass

    def close(self) -> None:
        pass

    def recv(self, blocking=False):
        raw = self.recv_string(blocking)
        if raw is None:
            return None
        msg = decode_json(raw, plain=True)
        if not _PYBATSIM_LOG.isEnabledFor(logging.INFO):
            # pybatsim formats every message into an INFO log line, printed or not: a message
            # whose text is the JSON it came from costs nothing to format (same content)
            msg = _Message(msg)
            msg.text = raw
        return msg

    def recv_string(self, blocking=False):
        raw, self.channel.incoming = self.channel.incoming, None
        if raw is None:  # pybatsim asks for a message outside an exchange: nothing to read
            raise ProtocolError("the in-process scheduler read a message outside an exchange")
        return raw

    def send(self, msg) -> None:
        # pybatsim builds a fresh message of JSON types each time: it is read as is (what a
        # socket would carry, without the encoding round trip)
        if type(msg) is dict and not _PYBATSIM_LOG.isEnabledFor(logging.INFO):
            # pybatsim then formats the message it sent into an INFO log line, printed or not
            # (``"...{}".format(new_msg)``: ~1.5 % of a delay run): it keeps no other use of
            # that dict, so its content moves to the simulator's side and the line formats "{}"
            sent = dict(msg)
            msg.clear()
            msg = sent
        self.channel.outgoing = batsim_dates(msg)

    def send_string(self, msg: str) -> None:
        self.channel.outgoing = decode_json(msg)


def slow_decision(thread_id: int | None) -> str | None:
    """What the thread ``thread_id`` computes, if it is inside a policy's ``make_decisions``
    (the scheduling core's interface, coburst/policies/base.py): ``"'NAME' (queue Q jobs, C
    compute nodes, B burst-buffer nodes, per-decision budget OPTION=VALUE)"``, read from its Python frames (``sys._current_frames``, as
    a sampling profiler does); None when it is elsewhere (a scheduler hung in its own code).
    Used by the in-process watchdog to tell a slow decision from a dead or hung scheduler."""
    frame = sys._current_frames().get(thread_id) if thread_id is not None else None
    found = None
    while frame is not None:
        if frame.f_code.co_name == "make_decisions":
            found = frame  # the outermost one (a policy may call another's)
        frame = frame.f_back
    if found is None:
        return None
    loc = found.f_locals
    policy, state = loc.get("self"), loc.get("state")
    name = getattr(policy, "name", type(policy).__name__)
    parts = []
    try:
        queue = getattr(state, "_queue", None)
        parts.append(f"queue {len(queue if queue is not None else state.queue)} jobs")
    except Exception:  # pragma: no cover - a state without a queue
        pass
    cluster = getattr(state, "cluster", None)
    for attr, what in (("n_compute", "compute nodes"), ("n_bb", "burst-buffer nodes"), ("n_nodes", "nodes")):
        value = getattr(cluster, attr, None)
        if isinstance(value, int):
            parts.append(f"{value} {what}")
    params = getattr(policy, "get_params", dict)()
    budgets = [f"{k}={params[k]!r}" for k in ("budget", "time_cap", "steps") if k in params]
    if budgets:
        parts.append("per-decision budget " + ", ".join(budgets))
    return f"{name!r} ({', '.join(parts)})" if parts else repr(name)


class InProcessLink:
    """The scheduler side runs in the simulator's process: an unchanged pybatsim scheduler
    (a file, or a name of pybatsim's bundled ``schedulers`` package, as ``pybatsim`` takes
    it) driven by pybatsim's own ``Batsim`` class, whose network handler passes the same
    Batsim messages through memory instead of ZeroMQ.

    Each exchange hands pybatsim the exact text a socket would carry (``encode_message``:
    dates printed ``%6f``) and takes back the message pybatsim would send, so decisions are
    identical to the ZeroMQ path; only the sockets and the second process are gone.
    """

    def __init__(self, scheduler: Any, options: dict | None = None, *, protect: bool = False,
                 timeout: float = 30.0, on_timeout=None):
        import logging

        from batsim.tools.launcher import instanciate_scheduler

        logging.getLogger("batsim").setLevel(logging.WARNING)
        try:
            # a scheduler object already made (a BatsimScheduler instance) is used as it is
            self.scheduler = (instanciate_scheduler(scheduler, options or {}) if isinstance(scheduler, str)
                              else scheduler)
        except SystemExit as exc:
            if exc.code == 2:  # a coburst scheduler refused its options and said why (adapter)
                raise InputError(scheduler, "options", "the scheduler refused its options (see above)") from None
            raise InputError(scheduler, None, "cannot load this pybatsim scheduler (no such file or bundled "
                                              "scheduler, or no scheduler class named after its file)") from None
        self.protect = protect
        self.timeout = timeout
        #: called (with the message) before the process exits when the scheduler hangs
        self.on_timeout = on_timeout
        self._deadline = None
        self._now = 0.0
        self._signals_due = 0.0  # perf_counter date of the next look at the stop signals
        self._watchdog = None
        self._closed = threading.Event()
        self._thread = None
        self.channel = _Channel()
        self.bs = None
        self.wall_time_waiting = 0.0
        self.nb_exchanges = 0
        self.endpoint = "in-process"

    def _start(self) -> None:
        """pybatsim's ``Batsim()`` builds its network handler and reads SIMULATION_BEGINS."""
        import batsim.batsim as pybatsim

        vm = None
        if self.protect:
            from batsim.validatingmachine import ValidatingMachine as vm
        network = type("InProcessNetwork", (_MemoryNetwork,), {"channel": self.channel})
        original = pybatsim.NetworkHandler
        pybatsim.NetworkHandler = network
        try:
            self.bs = pybatsim.Batsim(self.scheduler, "in-process", 0, None, validatingmachine=vm)
        finally:
            pybatsim.NetworkHandler = original

    def _watch(self) -> None:
        """A scheduler stuck in its own code cannot be interrupted from the simulator's thread:
        past ``timeout`` without an answer, report it, clean up and end the process (status 4,
        as a silent external scheduler)."""
        import os
        import sys

        period = min(1.0, self.timeout / 4)  # wake-ups cost the simulation a GIL hand-over
        while not self._closed.wait(period):  # (ends with the link: no thread left per run)
            signum = signals.pending()
            if signum and self._deadline is not None:
                # stopped while the scheduler computes in its own code: nothing to wait for
                message = f"coburst: interrupted by {signal_name(signum)}: stopped, no partial output left"
                try:
                    if self.on_timeout is not None:
                        self.on_timeout(message)
                finally:
                    print(message, file=sys.stderr, flush=True)
                    os._exit(128 + signum)
            deadline = self._deadline
            if deadline is not None and time.perf_counter() > deadline:
                slow = slow_decision(self._thread)
                if slow is not None:  # alive, still computing one policy decision
                    message = (f"coburst: error: slow decision: the in-process policy {slow} did not decide "
                               f"within {self.timeout:g} s (simulated time {self._now:.6f}); the scheduler is "
                               f"alive, only this decision is slow: give it more time (--timeout) or a "
                               f"per-decision budget (policy option)")
                else:
                    message = (f"coburst: error: the in-process scheduler did not answer within {self.timeout:g} s "
                               f"and is not in a policy decision: hung in its own code "
                               f"(simulated time {self._now:.6f})")
                try:
                    if self.on_timeout is not None:
                        self.on_timeout(message)
                finally:
                    print(message, file=sys.stderr, flush=True)
                    os._exit(4)

    def exchange(self, now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
        start = time.perf_counter()
        if start >= self._signals_due:  # a read of the wake-up fd per exchange cost ~3% of a run
            signals.check()  # (a signal is never lost: the main thread raises it when the run returns)
            self._signals_due = start + 0.02
        if self._watchdog is None and self.timeout and self.timeout > 0:
            self._watchdog = threading.Thread(target=self._watch, name="coburst-scheduler-watchdog", daemon=True)
            self._watchdog.start()
        self._now = now
        self._thread = threading.get_ident()
        self._deadline = start + self.timeout if self.timeout and self.timeout > 0 else None
        channel = self.channel
        channel.incoming = encode_message(now, events)
        channel.outgoing = None
        try:
            if self.bs is None:
                self._start()
            else:
                self.bs.do_next_event()
        except CoburstError:
            raise
        except Exception as exc:  # the scheduler's own error, reported as a dead scheduler
            import traceback

            detail = "".join(traceback.format_exception(exc)[-6:])
            raise SchedulerGone(f"the in-process scheduler raised {type(exc).__name__}: {exc} "
                                f"(simulated time {now:.6f})\n{detail}") from None
        finally:
            self._deadline = None
        reply = channel.outgoing
        self.wall_time_waiting += time.perf_counter() - start
        self.nb_exchanges += 1
        if reply is None:
            raise ProtocolError("the in-process scheduler sent no reply")
        return check_reply(reply)

    def close(self) -> None:
        self._closed.set()
