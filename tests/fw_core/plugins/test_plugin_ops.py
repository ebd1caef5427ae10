"""Op plugins: a custom op with its contract and kernels, and a kernel overriding fw_cpu's."""


def test_custom_op_has_its_contract_kernel_and_gradients(site):
    site.install("fw_cube")
    out = site.python("""
        import fw_cube
        from fw_core.ops.dispatch import apply
        from fw_core.testing import conformance as cf

        contract = fw.ops.get("cube")
        out["contract"] = [contract.family, contract.signature, contract.structure.value,
                           contract.anchor.kind, contract is fw_cube.CUBE]
        x = fw.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = fw_cube.cube(x)
        out["forward"], out["op"] = y.tolist(), y.op
        out["apply"] = apply(contract, (fw.tensor([2.0]),)).tolist()
        n = fw_cube.cube(fw.tensor([2, 3]))
        out["int"] = [n.tolist(), n.dtype.name]
        y.backward(fw.ones_like(y))
        out["grad"] = x.grad.tolist()
        (g,) = fw.autograd.grad(fw_cube.cube(x), x, fw.ones_like(x), create_graph=True)
        (gg,) = fw.autograd.grad(g, x, fw.ones_like(x))
        out["second_derivative"] = gg.tolist()

        case = cf.OpCase("cube", "matrix", [cf.arg(3, 4)], lambda fw, x: fw_cube.cube(x),
                         lambda x: x ** 3)
        for dtype in ("float32", "float64"):
            cf.check_forward(fw, case, "cpu", dtype)
            cf.check_meta(fw, case, "cpu", dtype)
        cf.check_grad(fw, case, "cpu")
        cf.check_double_grad(fw, case, "cpu")
        out["conformance"] = "passed"
        out["provides"] = next(i.provides for i in fw.plugins.info() if i.name == "fw_cube")
    """)
    assert out["contract"] == ["custom", "cube(x: Tensor) -> Tensor", "elementwise", "smooth",
                               True]
    assert out["forward"] == [1.0, -8.0, 27.0] and out["op"] == "cube"
    assert out["apply"] == [8.0]
    assert out["int"] == [[8, 27], "int64"]
    assert out["grad"] == [3.0, 12.0, 27.0]
    assert out["second_derivative"] == [6.0, -12.0, 18.0]
    assert out["conformance"] == "passed"
    assert out["provides"]["ops"] == ["cube"] and out["provides"]["kernels"] == ["cube@cpu"]


def test_kernel_for_an_optional_partner_op_is_used_or_noted(site):
    site.install("fw_toy")
    alone = site.python("""
        info = {i.name: i for i in fw.plugins.info()}["fw_toy"]
        out["state"], out["notes"] = info.state, info.notes
    """)
    assert alone["state"] == "loaded"
    assert alone["notes"] == ["kernel cube@toy ignored: no op 'cube' is loaded"]

    site.install("fw_cube")
    together = site.python("""
        import fw_cube, fw_toy
        out["cube"] = fw_cube.cube(fw.tensor([2.0]).to("toy")).tolist()
        out["calls"] = fw_toy.CALLS
        out["notes"] = {i.name: i.notes for i in fw.plugins.info()}["fw_toy"]
    """)
    assert together == {"cube": [8.0], "calls": ["cube"], "notes": []}


def test_higher_priority_kernel_overrides_fw_cpu(site):
    site.install("fw_fastadd")
    out = site.python("""
        import fw_fastadd
        x = fw.tensor([1.0, 2.0])
        out["results"] = [(x + x).tolist(), fw.add(x, 1.0).tolist(), (x - x).tolist()]
        out["calls"] = fw_fastadd.CALLS
        rows = fw.plugins.dispatch_table()
        out["add"] = next(r for r in rows if (r["op"], r["device"]) == ("add", "cpu"))
        out["sub"] = next(r for r in rows if (r["op"], r["device"]) == ("sub", "cpu"))
        out["states"] = {i.name: i.state for i in fw.plugins.info()}
    """)
    assert out["results"] == [[2.0, 4.0], [2.0, 3.0], [0.0, 0.0]]
    assert out["calls"] == ["add", "add"]  # sub stayed with fw_cpu
    assert out["add"] == {"op": "add", "device": "cpu", "plugin": "fw_fastadd",
                          "why": "priority 10 beats fw_cpu (priority 0)"}
    assert out["sub"]["plugin"] == "fw_cpu"
    assert set(out["states"].values()) <= {"loaded", "no device"}  # fw_cuda without a GPU
