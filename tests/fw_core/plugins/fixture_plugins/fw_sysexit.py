"""A plugin that calls ``sys.exit(3)`` while it is imported."""

import sys

sys.exit(3)
