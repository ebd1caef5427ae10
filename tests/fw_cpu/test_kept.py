"""KeptForBackward: what a forward kernel files under its output array is found for that very
array only, and goes when the array is freed."""

import gc

import numpy as np

from fw_cpu.kept import KeptForBackward


def test_an_entry_is_found_for_its_own_array_only():
    kept = KeptForBackward()
    out = np.zeros(3)
    kept.keep(out, "gates")
    assert kept.find(out) == "gates"
    assert kept.find(out.copy()) is None
    assert kept.find(out[:2]) is None  # a view is another array


def test_an_entry_goes_with_its_array_and_a_new_array_at_the_same_address_finds_nothing():
    kept = KeptForBackward()
    out = np.zeros(3)
    kept.keep(out, "gates")
    view = out[1:]
    del out
    assert len(kept) == 1  # the view keeps the array alive
    del view
    gc.collect()
    assert len(kept) == 0
    fresh = np.zeros(3)
    assert kept.find(fresh) is None
