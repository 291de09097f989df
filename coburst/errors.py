"""Error types shared by every coburst component.

Every user-facing failure is one of these.  The CLI prints ``str(error)`` and exits
non-zero; the message always names the file (or peer), the place and the problem.
"""

from __future__ import annotations

import re
from pathlib import Path

#: the longest run of non-blank characters a message prints whole (an input value quoted in it:
#: a 50 MB profile name, a 10-million-digit number), and the longest message
WORD_MAX = 200
MESSAGE_MAX = 4000
_LONG_WORD = re.compile(r"\S{%d,}" % (WORD_MAX + 1))


def shorten(text: str) -> str:
    """``text`` with every run of more than :data:`WORD_MAX` non-blank characters cut, its
    size said (``ppp... (52428800 characters)``), and at most :data:`MESSAGE_MAX` characters."""
    if len(text) <= WORD_MAX:
        return text
    text = _LONG_WORD.sub(lambda m: f"{m.group()[:WORD_MAX]}... ({len(m.group())} characters)", text)
    if len(text) > MESSAGE_MAX:
        text = f"{text[:MESSAGE_MAX]}... (a message of {len(text)} characters, cut)"
    return text


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
        self.where = shorten(where) if where else where
        self.problem = problem = shorten(problem)
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
