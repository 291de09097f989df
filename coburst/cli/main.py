"""``coburst`` command line: one sub-command per module of :mod:`coburst.cli`.

Each sub-command module exposes ``register(subparsers)`` which adds its parser and sets
``func`` to a callable taking the parsed namespace and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from coburst.errors import CoburstError

#: sub-command modules, in the order ``coburst --help`` lists them
COMMANDS = ("sim", "run", "demo", "platform", "workload", "model", "analysis")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors name the program and the offending option."""

    def error(self, message: str):  # pragma: no cover - exercised through the CLI tests
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="coburst", description="coburst: burst-buffer-aware and co-scheduling research on an "
                     "embedded Batsim-compatible SimGrid simulator.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"coburst.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"coburst.cli.{name}":
                continue  # sub-command not part of this build yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CoburstError as exc:
        print(f"coburst {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"coburst {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
