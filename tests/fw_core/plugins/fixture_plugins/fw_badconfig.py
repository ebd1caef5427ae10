"""A plugin whose fw_configure raises: it is reported failed, its inspector is dropped, and the
rest keeps working."""

from fw_core import hookimpl
from fw_core.records import Inspector


@hookimpl
def fw_register_inspectors():
    return [Inspector(name="fw_badconfig.watch", on_op=print)]


@hookimpl
def fw_configure(config):
    raise RuntimeError("license server unreachable")
