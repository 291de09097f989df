"""SIGINT and SIGTERM: a clean stop for every coburst command.

:func:`install` (called by ``coburst.cli.main``) sets a handler that raises
:class:`~coburst.errors.Interrupted` in the main thread, so ``finally`` blocks and
:class:`~coburst.simulator.output.StagedFiles` remove partial outputs, ``coburst run`` stops
its scheduler process and removes its temporary folder; the CLI then prints one line and
exits with 130 (SIGINT) or 143 (SIGTERM).

The simulation itself runs in SimGrid actor threads, where Python never calls signal
handlers; the handler is also registered as the wake-up file descriptor's writer
(``signal.set_wakeup_fd``), so the simulator's threads see the signal through
:func:`pending` (and can wait on :func:`wakeup_fd` next to the scheduler's socket).
"""

from __future__ import annotations

import os
import signal

from coburst.errors import Interrupted

_state = {"signum": 0, "read": -1}


def install() -> None:
    """Handle SIGINT and SIGTERM (main thread only; a no-op elsewhere)."""
    _state["done"] = False
    if _state["read"] < 0:  # once per process (main() may be called again, e.g. by tests)
        try:
            r, w = os.pipe()
            os.set_blocking(r, False)
            os.set_blocking(w, False)
            signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:  # not the main thread
            return
        _state["read"] = r
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)


def reinstall() -> None:
    """Take SIGINT and SIGTERM back after a library replaced the handlers (SimGrid's Engine
    installs its own SIGINT handler, which aborts the process at simulated time 0)."""
    if _state["read"] >= 0:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _handler)


def finish() -> None:
    """The command is over: later signals only set the status, they raise nothing."""
    _state["done"] = True


def _handler(signum, frame) -> None:
    if _state["signum"] or _state.get("done"):
        return  # already stopping: a second Ctrl-C does not break the clean-up
    _state["signum"] = signum
    raise Interrupted(signum)


def pending() -> int:
    """The number of the stop signal received, 0 if none (callable from any thread)."""
    if not _state["signum"] and _state["read"] >= 0:
        try:
            data = os.read(_state["read"], 512)
        except (BlockingIOError, OSError):
            data = b""
        for byte in data:
            if byte in (signal.SIGINT, signal.SIGTERM):
                _state["signum"] = byte
                break
    return _state["signum"]


def check() -> None:
    """Raise :class:`Interrupted` when a stop signal was received."""
    signum = pending()
    if signum:
        raise Interrupted(signum)


def wakeup_fd() -> int | None:
    """A file descriptor readable as soon as a stop signal arrives (for ``poll``), or None."""
    return _state["read"] if _state["read"] >= 0 else None


def die_with_parent(sig: int, parent: int | None) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``).
    False when that is not available (not Linux).  ``parent``: the pid the parent had; if this
    process already has another parent (it died before the request took effect), ``sig`` is
    raised at once."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, sig, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        signal.raise_signal(sig)
    return True


class deferred:
    """While the simulation runs in the main thread (a platform from the cache: no SimGrid actor
    thread), SIGINT/SIGTERM raise nothing where they land: as in a SimGrid actor, the simulator
    sees them through :func:`pending` at its own points (a scheduler exchange), and a signal it
    did not see raises :class:`Interrupted` when the block ends (as the handler did when
    SimGrid's run returned).  A no-op when :func:`install` did not set the handlers."""

    def __enter__(self):
        import threading

        self.noted = 0
        self.saved = {}
        if threading.current_thread() is not threading.main_thread():
            return self  # (handlers run in the main thread only: nothing lands here)
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is _handler:
                self.saved[sig] = _handler
                signal.signal(sig, self._note)
        return self

    def _note(self, signum, frame) -> None:
        self.noted = self.noted or signum

    def __exit__(self, *exc) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        if self.noted and exc[0] is None:
            _handler(self.noted, None)  # (nothing if the simulator saw it already)
