"""Running the engine in the environment's own thread: the kernel pauses at a decision point.

The simulator's process ``request_reply`` asks its link for the scheduler's reply; the link
of :class:`~coburst.gym.env.BatsimExactEnv` (:class:`SteppedLink`) gives pybatsim the
message as :class:`~coburst.simulator.protocol.InProcessLink` does, and when the agent is to
decide, the adapter's decider stops ``onNoMoreEvents`` there (:class:`AskAgent`) and the link
answers :data:`~coburst.simulator.actors.DEFERRED`.  ``request_reply`` yields it, and
:class:`SteppedKernel` pauses *inside* its scheduling round: the processes of the round not
yet run, and the requests of those that ran, are kept; ``Simulator.run_steps`` yields
``"paused"``.  When the agent has decided, :meth:`SteppedLink.finish` applies its decisions
(the rest of ``onNoMoreEvents``, then the rest of pybatsim's message handling: the reply)
and the run goes on from the very point it paused -- the same rounds, in the same order, as
when the scheduler answers at once.  No thread, no hand-over: a step costs what the engine
and the environment compute.

Only a run outside SimGrid (a platform of coburst's platform cache) can pause; a run in
SimGrid's actor goes on in a thread of its own (``env.py``), the thread that read its inputs
(SimGrid's engine runs in the thread that made it).
"""

from __future__ import annotations

from typing import Any

from coburst.simulator.actors import DEFERRED
from coburst.simulator.kernel import Kernel
from coburst.simulator.protocol import InProcessLink, check_reply

__all__ = ["AskAgent", "SteppedKernel", "SteppedLink"]


class AskAgent(BaseException):
    """Raised by the decider where the agent is to decide (a ``BaseException``: pybatsim and
    the in-process link let it through)."""


class SteppedKernel(Kernel):
    """A :class:`~coburst.simulator.kernel.Kernel` that pauses where a process yields
    :data:`DEFERRED` and goes on, with :attr:`resume_value` sent to that process, at the next
    :meth:`main` (module doc).  The rounds are the base kernel's: every ready process runs
    until its next request, in order, then the requests are carried out in order."""

    _paused: tuple | None = None
    #: what the paused process gets when the run goes on (the scheduler's reply)
    resume_value: Any = None

    @property
    def paused(self) -> bool:
        return self._paused is not None

    def _round(self) -> None:
        batch, self._ready = self._ready, []
        self._run_batch(batch, 0, [])

    def _run_batch(self, batch: list, i: int, requests: list) -> None:
        n = len(batch)
        while i < n:
            proc, value = batch[i]
            i += 1
            if not proc.alive:
                continue
            try:
                req = proc.gen.send(value)
            except StopIteration:
                proc.alive = False
                continue
            if req is DEFERRED:
                self._paused = (proc, batch, i, requests)
                self.stopped = True  # (the main loop returns)
                return
            if self.stopped:
                return
            requests.append((proc, req))
        handle = self._handle
        for proc, req in requests:
            handle(proc, req)

    def _main(self) -> None:
        paused = self._paused
        if paused is not None:
            proc, batch, i, requests = paused
            self._paused = None
            self.stopped = False
            value, self.resume_value = self.resume_value, None
            try:
                req = proc.gen.send(value)
            except StopIteration:
                proc.alive = False
            else:
                if req is DEFERRED:  # pragma: no cover - one exchange per request_reply
                    raise RuntimeError("a process asked twice for a deferred reply")
                if self.stopped:
                    return
                requests.append((proc, req))
            self._run_batch(batch, i, requests)
            if self.stopped:
                return
        super()._main()


class SteppedLink(InProcessLink):
    """The in-process link whose reply may come later (module doc).  ``scheduler``: the
    agent-driven adapter (:mod:`coburst.adapter.agent`)."""

    def __init__(self, scheduler: Any):
        super().__init__(scheduler, timeout=0)
        self.deferred = False

    def exchange(self, now: float, events: list) -> Any:
        try:
            return super().exchange(now, events)
        except AskAgent:
            if self.bs is None:  # pragma: no cover - the first message builds pybatsim's Batsim
                raise RuntimeError("the agent was asked before the simulation began") from None
            self.deferred = True
            return DEFERRED

    def finish(self, decisions: Any) -> dict:
        """The reply to the message whose decision the agent took: the adapter applies
        ``decisions`` and pybatsim sends its events (``Batsim._read_bat_msg`` after
        ``onNoMoreEvents``)."""
        self.deferred = False
        self.scheduler.finish_decisions(decisions)
        bs = self.bs
        if bs._events_to_send:
            bs._events_to_send = sorted(bs._events_to_send, key=lambda event: event["timestamp"])
        bs.network.send({"now": bs._current_time, "events": bs._events_to_send})
        reply, self.channel.outgoing = self.channel.outgoing, None
        self.nb_exchanges += 1
        return check_reply(reply)
