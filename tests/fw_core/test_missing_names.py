"""A PyTorch name fw lacks: a MissingNameError (an FwError and an AttributeError) naming fw's
equivalent or saying there is none yet, and never Python's "Did you mean" guess."""

import subprocess
import sys

import pytest

import fw_core as fw
from fw_core.errors import FwError, MissingNameError


@pytest.mark.parametrize("owner, name, says", [
    (fw, "jit", "use fw.compile(fn_or_module) or @fw.traceable"),
    (fw, "Size", "plain tuples"),
    (fw.nn, "DataParallel", "fw_mpi"),
    (fw.optim, "SparseAdam", "fw has no sparse gradients"),
    (fw.nn, "NoSuchLayer", "fw has no nn.NoSuchLayer yet"),
    (fw.nn.functional, "no_such_function", "fw has no nn.functional.no_such_function yet"),
    (fw.optim, "NoSuchOptimizer", "fw has no optim.NoSuchOptimizer yet"),
])
def test_module_attribute_fw_lacks_names_the_equivalent_or_none(owner, name, says):
    with pytest.raises(MissingNameError) as caught:
        getattr(owner, name)
    assert isinstance(caught.value, FwError) and isinstance(caught.value, AttributeError)
    assert says in str(caught.value)
    assert not hasattr(owner, name) and getattr(owner, name, "default") == "default"


def test_tensor_attribute_fw_lacks_names_the_equivalent():
    t = fw.tensor([1.0, 2.0])
    with pytest.raises(MissingNameError, match=r"Tensor\.is_cuda(.|\n)*t\.device\.type"):
        t.is_cuda  # noqa: B018
    with pytest.raises(MissingNameError, match=r"fw has no Tensor\.no_such_method yet"):
        t.no_such_method()
    assert not hasattr(t, "nelement") and getattr(t, "is_pinned", None) is None


def test_private_names_stay_plain_attribute_errors():
    with pytest.raises(AttributeError) as caught:
        fw.tensor([1.0])._no_such_field  # noqa: B018
    assert not isinstance(caught.value, MissingNameError)


def test_submodules_still_import_through_from_imports():
    from fw_core import names  # a submodule, not a missing name

    assert names.EQUIVALENTS["fw.jit"].startswith("fw.compile")


@pytest.mark.parametrize("expression", ["fw.nn.Linea", "fw.tensor([1.0]).numpi()", "fw.jit"])
def test_uncaught_error_shows_no_did_you_mean_guess(expression):
    done = subprocess.run([sys.executable, "-c", f"import fw_core as fw\n{expression}"],
                          capture_output=True, text=True, timeout=120)
    assert "MissingNameError: fw has no" in done.stderr
    assert "Did you mean" not in done.stderr
