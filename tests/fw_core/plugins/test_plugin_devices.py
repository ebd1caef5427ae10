"""Device plugins from real distributions: a usable "toy" device and an unusable "toy2"."""

import math

import pytest


def test_toy_device_runs_its_own_kernels(site):
    site.install("fw_toy")
    out = site.python("""
        import fw_toy
        x = fw.tensor([1.0, 2.0]).to("toy")
        y = x + x
        z = x * x
        out["device"], out["result_device"] = str(x.device), str(y.device)
        out["add"], out["mul"] = y.tolist(), z.to("cpu").tolist()
        out["calls"] = list(fw_toy.CALLS)
        out["available"] = fw.available_devices()
        out["second"] = str(fw.tensor([3.0]).to("toy:1").device)
        out["state"] = states("fw_core", "fw_toy", "fw_cpu")
        out["provides"] = next(i.provides for i in fw.plugins.info() if i.name == "fw_toy")
    """)
    assert out["device"] == out["result_device"] == "toy:0"
    assert out["add"] == [2.0, 4.0]
    assert out["mul"] == [1.0, 4.0]
    assert out["calls"] == ["add", "mul"]
    assert {"cpu", "toy"} <= set(out["available"])
    assert out["second"] == "toy:1"
    assert out["state"] == {"fw_core": "loaded", "fw_toy": "loaded", "fw_cpu": "loaded"}
    assert out["provides"]["devices"] == ["toy"]
    assert out["provides"]["kernels"] == ["add@toy", "mul@toy", "cube@toy"]


def test_missing_toy_kernel_falls_back_to_cpu_and_warns_once(site):
    site.install("fw_toy")
    out = site.python("""
        x = fw.tensor([0.0, 1.0]).to("toy")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first, second = fw.exp(x), fw.exp(x)
        fallback = fw.ops.dispatch.FallbackWarning
        out["warnings"] = [str(w.message) for w in caught if w.category is fallback]
        out["values"], out["device"] = second.to("cpu").tolist(), str(first.device)
        out["why"] = [r for r in fw.plugins.dispatch_table() if r["device"] == "toy"]
        from fw_core.device import registry
        table = registry.kernels["toy"]
        out["table"] = sorted(op.name for op in table)
        out["frozen"] = table is x.device.kernels and fw.ops.get("exp") not in table
    """)
    assert out["table"] == ["add", "mul"] and out["frozen"]  # the fallback lives elsewhere
    assert out["warnings"] == [
        "exp has no kernel on toy; running it on the CPU with transfers (reported once)"]
    assert out["device"] == "toy:0"
    assert out["values"] == pytest.approx([1.0, math.e], rel=1e-7)
    assert {"op": "exp", "device": "toy", "plugin": "cpu fallback",
            "why": "cpu fallback (no kernel on this device)"} in out["why"]
    assert {"op": "add", "device": "toy", "plugin": "fw_toy",
            "why": "only kernel registered"} in out["why"]


def test_toy_device_errors_name_the_plugin_and_the_fix(site):
    site.install("fw_toy")
    out = site.python("""
        x = fw.tensor([1.0, 2.0]).to("toy")
        n = fw.tensor([1, 2]).to("toy")
        for key, call in {"int_mul": lambda: n * n, "mixed": lambda: x + fw.tensor([1.0, 2.0]),
                          "index": lambda: fw.device("toy:5")}.items():
            try:
                call()
            except errors.FwError as e:
                out[key] = [type(e).__name__, str(e)]
    """)
    kind, message = out["int_mul"]
    assert kind == "DTypeError"
    assert "the toy kernel of plugin fw_toy does not handle int64" in message
    assert "convert to one of float32, float64" in message
    kind, message = out["mixed"]
    assert kind == "DeviceError" and "different devices (cpu, toy:0)" in message
    kind, message = out["index"]
    assert kind == "DeviceError" and "2 toy device(s) present" in message


def test_gradients_flow_through_the_toy_device(site):
    site.install("fw_toy")
    out = site.python("""
        a = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.to("toy")
        c = b * b + b
        c.backward(fw.ones_like(c))
        out["grad"], out["grad_device"] = a.grad.tolist(), str(a.grad.device)
    """)
    assert out["grad"] == [3.0, 5.0, 7.0]
    assert out["grad_device"] == "cpu"


def test_unavailable_device_shows_no_device_with_its_reason(site):
    site.install("fw_toy2")
    out = site.python("""
        info = {i.name: i for i in fw.plugins.info()}["fw_toy2"]
        out["state"], out["reason"], out["fix"] = info.state, info.reason, info.fix
        out["available"] = fw.available_devices()
        try:
            fw.tensor([1.0]).to("toy2")
        except errors.DeviceError as e:
            out["error"] = str(e)
        out["cpu_still_works"] = (fw.tensor([1.0]) + 1.0).tolist()
    """)
    assert out["state"] == "no device"
    assert out["reason"] == "toy2: no toy2 card found (driver toy2drv is not loaded)"
    assert "driver" in out["fix"]
    assert "toy2" not in out["available"] and "cpu" in out["available"]
    assert out["error"].splitlines()[0] == (
        "device 'toy2' is installed (plugin fw_toy2) but unusable: no toy2 card found "
        "(driver toy2drv is not loaded)")
    assert "fw plugins" in out["error"]
    assert out["cpu_still_works"] == [2.0]
