"""``coburst`` command line: one sub-command per module of :mod:`coburst.cli`.

Each sub-command module exposes ``register(subparsers)`` which adds its parser and sets
``func`` to a callable taking the parsed namespace and returning an exit code.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from coburst.errors import CoburstError, InputError, Interrupted, shorten

#: sub-command modules, in the order ``coburst --help`` lists them
COMMANDS = ("sim", "run", "demo", "platform", "workload", "model", "theory", "analyze", "plot", "report", "campaign",
            "policies")
#: sub-commands that simulate (see :func:`main`: one BLAS thread)
SIMULATING = ("sim", "run", "demo", "campaign")
#: sub-commands that run one simulation per process (see :func:`main`: the start-up's gc)
ONE_SIMULATION = ("sim", "run")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors name the program and the offending option."""

    def error(self, message: str):  # pragma: no cover - exercised through the CLI tests
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``coburst`` parser with every sub-command, or with ``only`` that one (a command
    line naming its sub-command first imports no other sub-command's module: start-up time)."""
    parser = _Parser(prog="coburst", description="coburst: burst-buffer-aware and co-scheduling research on an "
                     "embedded Batsim-compatible SimGrid simulator.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in (only,) if only in COMMANDS else COMMANDS:
        try:
            module = importlib.import_module(f"coburst.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"coburst.cli.{name}":
                continue  # sub-command not part of this build yet
            raise
        module.register(sub)
    return parser


#: exit statuses (docs/reference/errors.md)
EXIT_OK, EXIT_INPUT, EXIT_PROTOCOL, EXIT_SCHEDULER_GONE = 0, 2, 3, 4


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; every failure ends with one message on stderr and a status:
    0 success, 2 bad input or option, 3 protocol violation by the scheduler (or a stalled
    simulation), 4 scheduler gone, 130 SIGINT, 143 SIGTERM (docs/reference/errors.md)."""
    from coburst import signals

    signals.install()
    command = "coburst"
    process_entry = argv is None  # the console script (``coburst ...``): the process ends after
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SIMULATING:
        # one BLAS thread: OpenBLAS starts (and spins) a thread per core when numpy is imported,
        # ~0.05 s of a run's start-up on a loaded machine; a simulation makes no large BLAS call
        # (a value set by the user is kept)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if argv and argv[0] in ONE_SIMULATION:
        # no automatic garbage collection during the start-up (imports, workload and platform
        # reading: ~160 young and one full collection, ~20 ms of a delay5000 run, few cycles
        # to find): the kernel collects every GC_THRESHOLD allocations while it simulates
        # (``Kernel.main`` raises a threshold of 0 to it and restores it after the run); the
        # caller's thresholds are back when main returns (main called in a process that goes on)
        thresholds = gc.get_threshold()
        gc.set_threshold(0, *thresholds[1:])
    else:
        thresholds = None
    try:
        parser = build_parser(argv[0] if argv else None)
        args = parser.parse_args(argv)
        command = f"coburst {args.command}"
        return int(args.func(args) or 0)
    except CoburstError as exc:
        text = str(exc) if isinstance(exc, InputError) else shorten(str(exc))  # (an InputError cut its parts)
        print(f"{command}: error: {text}", file=sys.stderr)
        return exc.exit_code
    except (Interrupted, KeyboardInterrupt) as exc:
        return _interrupted(command, exc)
    except Exception as exc:
        # a signal that came while a C extension called back into Python (ijson's parser
        # building a mapping): the extension reports a SystemError caused by the Interrupted
        stop = _signal_cause(exc)
        if stop is None:
            raise
        return _interrupted(command, stop)
    finally:
        signals.finish()  # a signal during the interpreter's exit must not print a traceback
        if thresholds is not None:
            gc.set_threshold(*thresholds)
            if process_entry:
                # the process ends next: what is alive (modules, the workload, the scheduler's
                # jobs: ~70,000 objects after a 5,000-job run) goes out of the sight of the
                # interpreter's exit-time collections, which traversed it several times over
                # (~0.1 s, 7 % of a delay5000 run); files are closed and atexit handlers
                # (logging's flush) run as before, objects are still freed by reference count
                gc.freeze()


def _signal_cause(exc: BaseException) -> BaseException | None:
    """The Interrupted / KeyboardInterrupt in ``exc``'s chain of causes, if any."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (Interrupted, KeyboardInterrupt)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _interrupted(command: str, exc: BaseException) -> int:
    signum = exc.signum if isinstance(exc, Interrupted) else 2
    name = exc.name if isinstance(exc, Interrupted) else "SIGINT"
    print(f"{command}: interrupted by {name}: stopped, no partial output left", file=sys.stderr)
    return 128 + signum


if __name__ == "__main__":
    sys.exit(main())
