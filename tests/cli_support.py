"""Running ``coburst`` in the test process (milliseconds a call: nothing reaches SimGrid)."""

from __future__ import annotations

import contextlib
import io

from coburst.cli.main import main


def call(*args) -> tuple[int, str]:
    """``coburst ARGS`` in this process: (status, stderr). Any exception escaping is a failure."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()
