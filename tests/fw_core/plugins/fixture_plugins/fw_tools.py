"""A tool plugin: two fusion rules, a memory policy, an inspector, and configure/unconfigure.

Module-level lists record what fw handed it, so a test can check when and with what it was
called.
"""

from fw_core import hookimpl
from fw_core.records import FusionRule, Inspector, MemoryPolicy, Structure

EVENTS: list[tuple] = []  # (phase, op, module) of every op event the inspector saw
BACKWARDS: list[int] = []  # number of roots of every backward pass it saw
CONFIGS: list = []  # the PluginConfig of every fw_configure call
UNCONFIGURED: list[bool] = []


def _generate_chain(group):
    def run(*arrays):
        raise NotImplementedError("test rule: never executed")

    return run


def _on_op(event):
    EVENTS.append((event.phase, event.op.name, event.module))


def _on_backward(roots):
    BACKWARDS.append(len(roots))


@hookimpl
def fw_register_fusion_rules():
    pointwise = frozenset({Structure.ELEMENTWISE, Structure.BROADCAST})
    return [
        FusionRule(name="tools.chain", device="cpu", structures=pointwise,
                   generate=_generate_chain, priority=1),
        FusionRule(name="tools.chain_fast", device="cpu", structures=pointwise,
                   generate=_generate_chain, priority=5),
    ]


@hookimpl
def fw_register_memory_policies():
    return [MemoryPolicy(name="tools.small", device="cpu", size_classes=(256, 4096),
                         release_order=("debug", "temporary", "cache"), limit_bytes=1 << 20)]


@hookimpl
def fw_register_inspectors():
    return [Inspector(name="fw_tools.recorder", on_op=_on_op, on_backward=_on_backward)]


@hookimpl
def fw_configure(config):
    CONFIGS.append(config)


@hookimpl
def fw_unconfigure():
    UNCONFIGURED.append(True)
