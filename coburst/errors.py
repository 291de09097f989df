"""Error types shared by every coburst component.

Every user-facing failure is one of these.  The CLI prints ``str(error)`` and exits
non-zero; the message always names the file (or peer), the place and the problem.
"""

from __future__ import annotations

from pathlib import Path


class CoburstError(Exception):
    """Base class of every error coburst reports to its user."""

    exit_code = 2


class InputError(CoburstError):
    """Malformed input: a file, an option or a command-line value.

    ``source`` is the file (or the option name), ``where`` the place inside it
    (``"line 12"``, ``"jobs[3].res"``, ``"<host id='x'>"``), ``problem`` the explanation.
    """

    def __init__(self, source: str | Path | None, where: str | None, problem: str):
        self.source = str(source) if source is not None else None
        self.where = where
        self.problem = problem
        parts = [p for p in (self.source, self.where) if p]
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {problem}" if prefix else problem)


class ProtocolError(CoburstError):
    """The scheduler broke the Batsim protocol (unknown job, bad allocation, ...)."""

    exit_code = 3


class SchedulerGone(CoburstError):
    """The scheduler disconnected or stayed silent past the timeout."""

    exit_code = 4


class Interrupted(BaseException):
    """SIGINT or SIGTERM: the command stops cleanly (outputs removed, scheduler told or
    stopped) and exits with 128 + the signal number (130, 143).

    A ``BaseException`` like ``KeyboardInterrupt``, so that no ``except Exception`` on the
    way turns it into another error.
    """

    def __init__(self, signum: int):
        import signal

        self.signum = int(signum)
        self.exit_code = 128 + self.signum
        try:
            self.name = signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover
            self.name = f"signal {self.signum}"
        super().__init__(f"interrupted by {self.name}")
