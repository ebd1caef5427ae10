"""A hook implementation asking for an argument its spec does not pass."""

from fw_core import hookimpl


@hookimpl
def fw_register_kernels(device):
    return []
