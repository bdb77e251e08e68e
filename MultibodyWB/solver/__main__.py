"""``python3 -m MultibodyWB.solver``: see :mod:`MultibodyWB.solver.cli`."""

import sys

from .cli import main

sys.exit(main())
