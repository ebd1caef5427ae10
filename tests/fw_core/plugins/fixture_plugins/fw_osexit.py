"""A plugin whose import ends the interpreter with ``os._exit(7)``: no exception, no atexit."""

import os

os._exit(7)
