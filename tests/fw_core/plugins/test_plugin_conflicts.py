"""What two plugins both claim: one keeps it, the other's record is refused with a note naming
both, and the rest of that plugin loads. Load order is by name (fw_core first), never by the
order of ``sys.path``. Real plugins in the ``zoo`` first, then :func:`settle` on records alone
for the cases the zoo has no plugins for."""

import numpy as np

import fw_core as fw
from fw_core.plugin_conflicts import settle
from fw_core.records import DeviceSpec, Inspector, KernelSpec, MemoryPolicy

FIX = "or block one of the two with FW_DISABLE_PLUGINS="


def row(loaded, name):
    return loaded["plugins"][name]


# -- real plugins (the zoo) --------------------------------------------------------------------
def test_tie_with_the_device_plugin_refuses_only_the_third_party_kernel(loaded):
    # fw_betterrelu sorts before fw_cpu and comes first on sys.path: fw_cpu still keeps relu
    assert row(loaded, "fw_cpu")["state"] == row(loaded, "fw_betterrelu")["state"] == "loaded"
    assert loaded["dispatch"]["relu@cpu"] == [
        "fw_cpu", "priority 0, tied with fw_betterrelu (fw_cpu provides the device cpu)"]
    assert row(loaded, "fw_betterrelu")["notes"] == [
        "kernel relu@cpu refused: plugin fw_cpu has one of the same priority 0, which runs "
        "(fw_cpu provides the device cpu). Give yours priority=1 or more to replace it, "
        f"{FIX}fw_betterrelu"]
    # the rest of it loads: its exp kernel, of a higher priority, replaces fw_cpu's
    assert row(loaded, "fw_betterrelu")["provides"]["kernels"] == ["exp@cpu"]
    assert loaded["dispatch"]["exp@cpu"] == ["fw_betterrelu",
                                             "priority 1 beats fw_cpu (priority 0)"]
    assert loaded["betterrelu_calls"] == ["exp"]
    assert loaded["relu"] == [0.0, 2.0] and loaded["exp"] == [1.0, 1.0]


def test_tie_between_two_third_parties_goes_to_the_first_by_name(loaded):
    # the zoo installs fw_fastadd before fw_dupadd on sys.path; fw_dupadd sorts first
    assert loaded["dispatch"]["add@cpu"] == [
        "fw_dupadd", "priority 10, tied with fw_fastadd (fw_dupadd loads first: fw_core, then "
        "plugins by name)"]
    fastadd = row(loaded, "fw_fastadd")
    assert fastadd["state"] == "loaded" and fastadd["provides"]["kernels"] == []
    assert fastadd["notes"] == [
        "kernel add@cpu refused: plugin fw_dupadd has one of the same priority 10, which runs "
        "(fw_dupadd loads first: fw_core, then plugins by name). Give yours priority=11 or more "
        f"to replace it, {FIX}fw_fastadd"]
    assert loaded["fastadd_calls"] == [] and loaded["add"] == [2.0, 4.0]
    # refused a kernel, it is still a loaded plugin: configured once, and listed as loaded
    assert len(loaded["fastadd_configured"]) == 1
    assert {"fw_fastadd", "fw_dupadd"} <= set(loaded["fastadd_configured"][0])


def test_a_device_stays_with_its_own_plugin_with_what_was_registered_for_it(loaded):
    altcpu = row(loaded, "fw_altcpu")  # sorts before fw_cpu, registers "cpu" and "alt"
    assert altcpu["state"] == "loaded"
    assert altcpu["notes"] == [
        "device 'cpu' refused: plugin fw_cpu provides it (it is the device's own plugin); its "
        "records for cpu are refused with it (kernels: 1). Rename yours, "
        f"{FIX}fw_altcpu"]
    assert altcpu["provides"]["devices"] == ["alt"]
    assert altcpu["provides"]["kernels"] == ["add@alt"]
    assert loaded["dispatch"]["relu@cpu"][0] == "fw_cpu"  # not its priority-3 relu for "cpu"
    assert loaded["dispatch"]["add@alt"][0] == "fw_altcpu" and loaded["alt"] == [2.0, 4.0]

    fork = row(loaded, "fw_toyfork")
    assert fork["state"] == "loaded"
    assert fork["notes"] == [
        "device 'toy' refused: plugin fw_toy provides it (it is the device's own plugin); its "
        f"records for toy are refused with it (kernels: 1). Rename yours, {FIX}fw_toyfork"]
    assert loaded["dispatch"]["mul@toy"] == ["fw_toy", "only kernel registered"]
    assert fork["provides"]["inspectors"] == ["fw_toyfork.watch"]
    assert "fw_toyfork.watch" in loaded["inspectors"]


def test_an_op_stays_with_fw_core_and_the_refused_contracts_kernels_go_with_it(loaded):
    addop = row(loaded, "fw_addop")
    assert addop["state"] == "loaded"
    assert addop["notes"] == [
        "op 'add' refused: plugin fw_core registers an op of that name (it loads first: "
        "fw_core, then plugins by name); its kernels for add are refused with it (kernels: 1). "
        f"Rename yours, {FIX}fw_addop"]
    assert addop["provides"]["ops"] == [] and addop["provides"]["kernels"] == []
    assert loaded["add"] == [2.0, 4.0]  # its priority-20 kernel (a subtraction) never runs
    assert "fw_addop.watch" in loaded["inspectors"]


def test_plugins_load_by_name_whatever_the_order_of_sys_path(site):
    site.install("fw_fastadd").install("fw_dupadd")
    out = site.python("""
        import importlib, sys

        def seen():
            rows = {r["op"]: r["plugin"] for r in fw.plugins.dispatch_table()
                    if r["device"] == "cpu"}
            return [rows["add"], [i.name for i in fw.plugins.info()]]

        out["first"] = seen()
        fastadd, dupadd = (sys.path.index(p) for p in sys.path if "-fw-" in p)
        sys.path[fastadd], sys.path[dupadd] = sys.path[dupadd], sys.path[fastadd]
        importlib.invalidate_caches()
        fw.plugins.load()
        out["swapped"] = seen()
    """)
    assert out["first"] == out["swapped"]
    owner, order = out["first"]
    assert owner == "fw_dupadd"
    assert order[0] == "fw_core" and order[1:] == sorted(order[1:])


# -- settle() on records -------------------------------------------------------------------------
def device(name):
    return DeviceSpec(name=name, xp=np, array_type=np.ndarray, from_numpy=lambda a, i: a,
                      to_numpy=lambda a: a)


def kernel(op, dev, priority=0):
    return KernelSpec(op=op, device=dev, fn=np.negative, priority=priority)


def plugin(ops=(), devices=(), kernels=(), fusion_rules=(), memory_policies=(), inspectors=()):
    return {"ops": list(ops), "devices": list(devices), "kernels": list(kernels),
            "fusion_rules": list(fusion_rules), "memory_policies": list(memory_policies),
            "inspectors": list(inspectors)}


NEG = fw.ops.get("neg")


def test_a_device_without_its_own_plugin_stays_with_the_first_by_name():
    settled = settle({
        "fw_core": plugin(ops=[NEG]),
        "acme": plugin(devices=[device("npu")], kernels=[kernel("neg", "npu")]),
        "zeta": plugin(devices=[device("npu")], kernels=[kernel("neg", "npu", 9)],
                       memory_policies=[MemoryPolicy("default", "npu")],
                       inspectors=[Inspector("zeta.watch")]),
    })
    assert settled.device_owner == {"npu": "acme"}
    assert settled.notes["zeta"] == [
        "device 'npu' refused: plugin acme provides it (it loads first: fw_core, then plugins "
        "by name); its records for npu are refused with it (kernels: 1, memory policies: 1). "
        f"Rename yours, {FIX}zeta"]
    assert settled.records["zeta"] == plugin(inspectors=[Inspector("zeta.watch")])
    assert settled.kernels[("neg", "npu")][1] == "acme"  # zeta's priority 9 went with its device


def test_inspector_names_stay_with_the_first_and_policies_with_the_device_plugin():
    settled = settle({
        "fw_core": plugin(),
        "fw_aaa": plugin(memory_policies=[MemoryPolicy("default", "cpu", size_classes=(8,))],
                         inspectors=[Inspector("shared.watch")]),
        "fw_cpu": plugin(devices=[device("cpu")], memory_policies=[MemoryPolicy("default", "cpu")]),
        "fw_zzz": plugin(inspectors=[Inspector("shared.watch")]),
    })
    assert settled.notes["fw_aaa"] == [
        "memory policy 'default' for cpu refused: plugin fw_cpu registers one of that name (it "
        f"provides the device cpu). Rename yours, {FIX}fw_aaa"]
    assert settled.notes["fw_zzz"] == [
        "inspector 'shared.watch' refused: plugin fw_aaa registers one of that name (it loads "
        f"first: fw_core, then plugins by name). Rename yours, {FIX}fw_zzz"]
    assert settled.records["fw_aaa"]["inspectors"] == [Inspector("shared.watch")]
    assert settled.records["fw_aaa"]["memory_policies"] == []
    assert settled.notes["fw_cpu"] == [] and settled.notes["fw_core"] == []


def test_kernel_ties_refuse_only_the_tied_kernels_of_other_plugins():
    settled = settle({
        "fw_core": plugin(ops=[NEG]),
        "b_fast": plugin(kernels=[kernel("neg", "cpu", 5)]),
        "c_fast": plugin(kernels=[kernel("neg", "cpu", 5)]),
        "fw_cpu": plugin(devices=[device("cpu")], kernels=[kernel("neg", "cpu")]),
        "own_twice": plugin(kernels=[kernel("neg", "cpu", 1), kernel("neg", "cpu", 1)]),
    })
    spec, owner = settled.kernels[("neg", "cpu")]
    assert (owner, spec.priority) == ("b_fast", 5)  # the device's plugin is not among the tied
    assert settled.why[("neg", "cpu")] == ("priority 5, tied with c_fast (b_fast loads first: "
                                           "fw_core, then plugins by name)")
    assert settled.records["c_fast"]["kernels"] == []
    assert [n.split(":")[0] for n in settled.notes["c_fast"]] == ["kernel neg@cpu refused"]
    # lower priorities, and one plugin's own two kernels, are no conflict: kept, not running
    assert len(settled.records["fw_cpu"]["kernels"]) == 1 and settled.notes["fw_cpu"] == []
    assert len(settled.records["own_twice"]["kernels"]) == 2 and settled.notes["own_twice"] == []


def test_a_tie_below_a_guarded_kernel_is_settled_as_at_the_top():
    # fw_onednn's guarded kernel above: the calls it refuses go to the device's plugin, never to
    # the third party that sorts first
    guarded = KernelSpec(op="neg", device="cpu", fn=np.negative, priority=10, guard=bool)
    settled = settle({
        "fw_core": plugin(ops=[NEG]),
        "fw_better": plugin(kernels=[kernel("neg", "cpu")]),
        "fw_cpu": plugin(devices=[device("cpu")], kernels=[kernel("neg", "cpu")]),
        "fw_onednn": plugin(kernels=[guarded]),
    })
    assert [owner for _, owner in settled.chains[("neg", "cpu")]] == ["fw_onednn", "fw_cpu"]
    assert settled.why[("neg", "cpu")] == "priority 10 beats fw_cpu (priority 0)"
    assert settled.records["fw_better"]["kernels"] == []
    assert settled.notes["fw_better"] == [
        "kernel neg@cpu refused: plugin fw_cpu has one of the same priority 0, which runs what the "
        "kernels above it refuse (fw_cpu provides the device cpu). Give yours priority=1 or more "
        f"to replace it, {FIX}fw_better"]


def test_a_kernel_for_an_op_or_device_that_is_not_loaded_is_ignored_and_kept():
    settled = settle({"fw_core": plugin(ops=[NEG]),
                      "toyish": plugin(kernels=[kernel("cube", "cpu"), kernel("neg", "gpu")])})
    assert settled.notes["toyish"] == ["kernel cube@cpu ignored: no op 'cube' is loaded",
                                       "kernel neg@gpu ignored: no device 'gpu' is loaded"]
    assert len(settled.records["toyish"]["kernels"]) == 2 and settled.kernels == {}
