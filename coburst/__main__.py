import sys

from coburst.cli.main import main

sys.exit(main())
