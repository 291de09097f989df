"""``coburst`` with SimGrid's ``Engine.run`` entered 3 s late, after touching a marker file.

Usage: ``python slow_engine_run.py MARKER coburst-args...``.  The real engine and CLI, only
delayed: it opens, deterministically, the window a loaded machine opens by chance (actors
created, simulated time still 0), so a test can signal the process inside it.
"""

import os
import sys
import time
from pathlib import Path

os.environ["COBURST_PLATFORM_CACHE"] = "off"  # (a platform from the cache runs no SimGrid engine)

from coburst.simulator._simgrid import simgrid

_run = simgrid.Engine.run


def _late_run(self):
    Path(sys.argv[1]).touch()
    time.sleep(3)
    return _run(self)


simgrid.Engine.run = _late_run

from coburst.cli.main import main  # noqa: E402

sys.exit(main(sys.argv[2:]))
