"""fw_mpi's tests launch their workers through mpiexec (see mpirun.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
