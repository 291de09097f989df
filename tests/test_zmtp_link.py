"""``protocol.ZmtpLink`` (the simulator's REQ side speaking ZMTP 3.0 on a plain socket) against
``protocol.SchedulerLink`` (pyzmq's REQ socket), the code it replaces on ``tcp://`` and ``ipc://``
endpoints: both talk to a real pyzmq REP socket (what pybatsim binds), which must receive the
same bytes from each, and each must return the same reply and raise the same errors."""

from __future__ import annotations

import threading
import time

import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.errors import SchedulerGone
from coburst.simulator.protocol import (SchedulerLink, ZmtpLink, encode_message, scheduler_link, zmtp_address,
                                       zmtp_frame)

pytestmark = pytest.mark.timeout(120)


class Rep:
    """A real REP socket answering each request with ``answer(text)`` in a thread; keeps
    what it received."""

    def __init__(self, endpoint: str, answer=lambda text: '{"now": 1.0, "events": []}', delay: float = 0.0,
                 heartbeat_ms: int = 0):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REP)
        self.sock.setsockopt(zmq.LINGER, 0)
        if heartbeat_ms:
            self.sock.setsockopt(zmq.HEARTBEAT_IVL, heartbeat_ms)
            self.sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * heartbeat_ms)
        self.sock.bind(endpoint)
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.answer, self.delay = answer, delay
        self.received: list[bytes] = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            if not self.sock.poll(50):
                continue
            raw = self.sock.recv()
            self.received.append(raw)
            time.sleep(self.delay)
            self.sock.send_string(self.answer(raw.decode()))

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.sock.close(linger=0)
        self.ctx.term()


def echo_events(text: str) -> str:
    """A reply naming what was received (its length and the events' types), so a wrong
    frame shows."""
    import json

    msg = json.loads(text)
    return json.dumps({"now": msg["now"], "events": [{"timestamp": msg["now"], "type": "NOTIFY",
                                                       "data": {"type": e["type"], "n": len(text)}}
                                                      for e in msg["events"]]})


events_st = st.lists(st.fixed_dictionaries({
    "timestamp": st.floats(0, 1e9, allow_nan=False), "type": st.sampled_from(["JOB_SUBMITTED", "JOB_COMPLETED"]),
    "data": st.fixed_dictionaries({"job_id": st.text(max_size=40), "pad": st.text(max_size=3000)})}), max_size=30)


@settings(max_examples=25, deadline=None)
@given(conversation=st.lists(st.tuples(st.floats(0, 1e9, allow_nan=False), events_st), min_size=1, max_size=4))
def test_same_bytes_and_replies_as_pyzmq(conversation):
    """Short and long frames (a message over 255 bytes has an 8-byte size; over 64 KiB it
    takes several reads): the REP gets byte-identical requests from both links, and both
    links decode the same replies."""
    results = {}
    for kind in (SchedulerLink, ZmtpLink):
        rep = Rep("tcp://127.0.0.1:*", echo_events)
        link = kind(rep.endpoint, 10.0)
        try:
            replies = [link.exchange(now, events) for now, events in conversation]
        finally:
            link.close()
            rep.close()
        results[kind] = (rep.received, replies)
    assert results[ZmtpLink] == results[SchedulerLink]


def test_a_big_message_and_ipc(tmp_path):
    """A 3 MB message (many writes and reads) over an ``ipc://`` endpoint."""
    endpoint = f"ipc://{tmp_path}/s.sock"
    rep = Rep(endpoint, echo_events)
    link = scheduler_link(endpoint, 10.0)
    assert type(link) is ZmtpLink
    try:
        events = [{"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"pad": "x" * 3_000_000}}]
        reply = link.exchange(1.0, events)
    finally:
        link.close()
        rep.close()
    assert len(rep.received[0]) > 3_000_000
    assert reply["events"][0]["data"] == {"type": "JOB_SUBMITTED", "n": len(rep.received[0])}


def test_connects_to_a_scheduler_that_binds_later(tmp_path):
    """As libzmq does, the link tries again while nobody listens (pybatsim may start after)."""
    endpoint = f"ipc://{tmp_path}/late.sock"
    link = scheduler_link(endpoint, 10.0)
    started = []
    timer = threading.Timer(0.5, lambda: started.append(Rep(endpoint)))
    timer.start()
    try:
        assert link.exchange(0.0, []) == {"now": 1.0, "events": []}
    finally:
        timer.join()
        link.close()
        for rep in started:
            rep.close()


def _error(kind, endpoint, timeout=0.6) -> str:
    link = kind(endpoint, timeout)
    try:
        with pytest.raises(SchedulerGone) as info:
            link.exchange(12.5, [])
    finally:
        link.close()
    return str(info.value)


def test_same_errors_as_pyzmq(tmp_path):
    """Nobody listening, a scheduler that does not answer, a scheduler that goes away while
    the simulator waits: the messages of the pyzmq link, word for word."""
    for kind in (SchedulerLink, ZmtpLink):
        assert _error(kind, f"ipc://{tmp_path}/none.sock") == (
            f"the scheduler at ipc://{tmp_path}/none.sock did not connect within 0.6 s (simulated time 12.500000); "
            "is it running and listening on that endpoint?")
        rep = Rep("tcp://127.0.0.1:*", delay=30)  # answers after 30 s
        try:
            assert _error(kind, rep.endpoint) == (
                f"the scheduler at {rep.endpoint} did not answer within 0.6 s (simulated time 12.500000); "
                "is it running and listening on that endpoint?")
        finally:
            rep.stop = True
            rep.sock.close(linger=0)  # (the thread ends after its sleep; the context is left)

    # (the pyzmq link tells a disconnect from its monitor socket's events, read one per wait:
    # test_batsim_corpus.py expects its words; here the same text from ZmtpLink)
    for kind in (ZmtpLink,):
        ctx = zmq.Context()
        rep = ctx.socket(zmq.REP)
        rep.bind("tcp://127.0.0.1:*")
        endpoint = rep.getsockopt_string(zmq.LAST_ENDPOINT)

        def close_on_request():
            rep.poll(5000)
            rep.close(linger=0)
        closer = threading.Thread(target=close_on_request)
        closer.start()
        try:
            assert _error(kind, endpoint, timeout=5.0) == (
                f"the scheduler at {endpoint} disconnected before answering (simulated time 12.500000)")
        finally:
            closer.join()
            ctx.term()


def test_interrupt_tells_the_scheduler(tmp_path):
    """SIGINT/SIGTERM while waiting: the pending reply is read, then SIMULATION_ENDS is sent."""
    rep = Rep("tcp://127.0.0.1:*", delay=0.3)
    link = ZmtpLink(rep.endpoint, 10.0)
    try:
        link.exchange(0.0, [])
        # a request sent, its answer not read (a signal came while the simulator waited)
        link._send(b"\x01\x00" + zmtp_frame(encode_message(4.0, []).encode()), time.perf_counter() + 1, 4.0)
        link.awaiting = True
        link.interrupt(5.0)
    finally:
        link.close()
        rep.close()
    assert rep.received[-1] == (b'{"now":5.000000,"events":[{"timestamp":5.000000,"type":"SIMULATION_ENDS",'
                                b'"data":{}}]}')
    assert rep.received[1] == b'{"now":4.000000,"events":[]}'
    assert len(rep.received) == 3


def test_heartbeats_are_answered():
    """A REP socket with ZMTP 3.1 heartbeats (PING every 50 ms, dropped after 150 ms without
    a PONG) keeps the link through a 1 s answer."""
    rep = Rep("tcp://127.0.0.1:*", delay=1.0, heartbeat_ms=50)
    link = ZmtpLink(rep.endpoint, 10.0)
    try:
        assert link.exchange(0.0, []) == {"now": 1.0, "events": []}
        assert link.exchange(1.0, []) == {"now": 1.0, "events": []}
    finally:
        link.close()
        rep.close()


def test_which_endpoints_the_link_speaks_itself(tmp_path):
    assert zmtp_address("tcp://127.0.0.1:28000")[1] == ("127.0.0.1", 28000)
    assert zmtp_address("tcp://localhost:28000")[1] == ("127.0.0.1", 28000)
    assert zmtp_address(f"ipc://{tmp_path}/a.sock")[1] == f"{tmp_path}/a.sock"
    for other in ("tcp://*:28000", "tcp://example.org:28000", "tcp://[::1]:28000", "tcp://127.0.0.1:0",
                  "tcp://300.0.0.1:28000", "tcp://eth0;127.0.0.1:28000", "ipc://@abstract", "inproc://x",
                  "ipc://" + "a" * 120):
        assert zmtp_address(other) is None, other
    link = scheduler_link("tcp://127.0.0.1:1", 1.0)
    assert type(link) is ZmtpLink and link.sock is None  # (connected at the first exchange)


def test_the_environment_can_ask_for_libzmqs_socket(monkeypatch):
    """``COBURST_ZMQ_LINK=pyzmq``: pyzmq's REQ socket on an endpoint ZmtpLink would take."""
    monkeypatch.setenv("COBURST_ZMQ_LINK", "pyzmq")
    link = scheduler_link("tcp://127.0.0.1:1", 1.0)
    try:
        assert type(link) is SchedulerLink
    finally:
        link.close()


def test_the_pyzmq_link_leaves_no_thread_or_descriptor_behind():
    """Each pyzmq link owns its context and ends it when closed: a process that runs many
    simulations keeps no libzmq I/O thread, socket or descriptor of the earlier ones."""
    import os

    def counts():
        return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))

    rep = Rep("tcp://127.0.0.1:*")
    try:
        link = SchedulerLink(rep.endpoint, 10.0)
        link.exchange(0.0, [])
        link.close()
        before = counts()
        closed = []  # (kept alive: what close() leaves must not wait for the garbage collector)
        for _ in range(20):
            link = SchedulerLink(rep.endpoint, 10.0)
            assert link.exchange(0.0, []) == {"now": 1.0, "events": []}
            link.close()
            closed.append(link)
        # The in-process REP end closes its side of each connection on its own I/O thread, so
        # the count may be one or two off at any instant; a link that kept anything would leave
        # at least twenty (one per link).
        after = counts()
        assert after[0] - before[0] < 20 and after[1] - before[1] < 20, (before, after)
    finally:
        rep.close()


def test_the_pyzmq_link_does_not_share_the_processs_context():
    """A library user's own use of ``zmq.Context.instance()`` (here: its socket budget spent)
    does not reach the simulator's link."""
    shared = zmq.Context.instance()
    shared.set(zmq.MAX_SOCKETS, 1)
    held = shared.socket(zmq.PAIR)
    rep = Rep("tcp://127.0.0.1:*")
    try:
        link = SchedulerLink(rep.endpoint, 10.0)
        try:
            assert link.exchange(0.0, []) == {"now": 1.0, "events": []}
        finally:
            link.close()
    finally:
        rep.close()
        held.close(linger=0)
        shared.term()
