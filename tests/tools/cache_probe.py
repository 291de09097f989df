"""``coburst ARGS`` that says at exit whether SimGrid was imported (``PROBE simgrid=True|False`` on
stderr): a run that took its platform from coburst.simulator.platform_cache never imports it."""

import atexit
import sys


def _report():
    sys.stderr.write(f"PROBE simgrid={'simgrid' in sys.modules}\n")


atexit.register(_report)

from coburst.cli.main import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
