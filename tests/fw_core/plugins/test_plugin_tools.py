"""Tool plugins: fusion rules, memory policies, inspectors, and fw_configure's PluginConfig."""


def test_fusion_rules_and_memory_policies_are_collected_per_device(site):
    site.install("fw_tools")
    out = site.python("""
        rules = fw.plugins.fusion_rules("cpu")
        out["rules"] = [[r.name, r.priority, sorted(s.value for s in r.structures)] for r in rules
                        if r.name.startswith("tools.")]  # fw_cpu registers its own too
        out["generate"] = callable(rules[0].generate(group=()))
        out["toy_rules"] = fw.plugins.fusion_rules("toy")
        policies = fw.plugins.memory_policies("cpu")
        small = policies["tools.small"]
        out["policies"] = sorted(policies)
        out["small"] = [small.size_classes, small.release_order, small.limit_bytes]
        out["provides"] = {i.name: i.provides for i in fw.plugins.info()}["fw_tools"]
    """)
    assert out["rules"] == [["tools.chain_fast", 5, ["broadcast", "elementwise"]],
                            ["tools.chain", 1, ["broadcast", "elementwise"]]]
    assert out["generate"] is True
    assert out["toy_rules"] == []
    assert out["policies"] == ["default", "tools.small"]  # fw_cpu's default stays
    assert out["small"] == [[256, 4096], ["debug", "temporary", "cache"], 1048576]
    assert out["provides"]["fusion_rules"] == ["tools.chain", "tools.chain_fast"]
    assert out["provides"]["memory_policies"] == ["tools.small@cpu"]
    assert out["provides"]["inspectors"] == ["fw_tools.recorder"]


def test_inspector_sees_ops_only_while_activated(site):
    site.install("fw_tools")
    out = site.python("""
        import fw_tools
        from fw_core.nn.module import Module

        class Scaled(Module):
            def forward(self, x):
                return fw.relu(x) * 2.0

        class Encoder(Module):
            def __init__(self):
                super().__init__()
                self.fc1 = Scaled()

            def forward(self, x):
                return self.fc1(x)

        encoder = Encoder()
        x = fw.tensor([1.0, -2.0], requires_grad=True)
        out["registered"], out["active_before"] = fw.inspectors.registered(), fw.inspectors.active()
        y = encoder(x)
        out["events_inactive"] = list(fw_tools.EVENTS)
        with fw.inspectors.activated("fw_tools.recorder"):
            out["active"] = fw.inspectors.active()
            y = encoder(x)
            out["forward"] = list(fw_tools.EVENTS)
            del fw_tools.EVENTS[:]
            y.backward(fw.ones_like(y))
        out["events"] = list(fw_tools.EVENTS)
        out["backwards"] = list(fw_tools.BACKWARDS)
        out["active_after"] = fw.inspectors.active()
        fw.relu(x)
        out["events_after"] = len(fw_tools.EVENTS)
        out["grad"] = x.grad.tolist()
        try:
            fw.inspectors.activate("fw_tools.recorderr")
        except errors.PluginError as e:
            out["unknown"] = str(e)
    """)
    # other installed tool plugins (fw_debugger) register inactive inspectors of their own
    assert "fw_tools.recorder" in out["registered"] and out["active_before"] == []
    assert out["events_inactive"] == []
    assert out["active"] == ["fw_tools.recorder"]
    assert out["forward"] == [["forward", "relu", "fc1"], ["forward", "mul", "fc1"]]
    backward = [e for e in out["events"] if e[0] == "backward"]
    assert [e[1] for e in backward] == ["mul", "relu"]
    assert {e[2] for e in backward} == {"fc1"}  # the module path is kept on the tape
    assert out["backwards"] == [1]
    assert out["active_after"] == [] and out["events_after"] == len(out["events"])
    assert out["grad"] == [2.0, 0.0]
    assert out["unknown"].splitlines()[0] == "no inspector named 'fw_tools.recorderr'"
    assert "registered inspectors: " in out["unknown"] and "fw_tools.recorder" in out["unknown"]


def test_configure_receives_the_loaded_plugins_devices_and_ops(site):
    site.install("fw_tools").install("fw_broken")
    out = site.python("""
        import fw_tools
        (config,) = fw_tools.CONFIGS
        out["plugins"], out["devices"] = list(config.plugins), list(config.devices)
        out["ops"] = sorted(config.ops) == sorted(fw.OPS)
        out["unconfigured"] = len(fw_tools.UNCONFIGURED)
    """)
    assert {"fw_core", "fw_tools", "fw_cpu"} <= set(out["plugins"])
    assert "fw_broken" not in out["plugins"]  # it failed
    assert "cpu" in out["devices"]
    assert out["ops"] is True
    assert out["unconfigured"] == 0


def test_unconfigure_runs_at_interpreter_exit(site):
    site.install("fw_tools")
    out = site.python("""
        import atexit, fw_tools
        out["before"] = len(fw_tools.UNCONFIGURED)
        atexit._run_exitfuncs()  # what the interpreter does on exit
        out["after"] = len(fw_tools.UNCONFIGURED)
    """)
    assert out == {"before": 0, "after": 1}
