"""A pytest plugin that sends every product, eltwise, softmax and normalisation oneDNN can run to
fw_onednn, however small, so a suite of small shapes (fw's shipped conformance suite) exercises
oneDNN rather than the guards' size policies; it fails the run at once if fw_onednn is not
loaded:

    PYTHONPATH=plugins/fw_onednn/tests python -m pytest -p onednn_every_product tests/conformance
"""

import fw_core  # first: it loads fw_onednn, which must not be half-imported at that point
import fw_onednn


def pytest_configure(config):
    fw_core.plugins.require("fw_onednn")
    fw_onednn.set_min_work(0, matrix_vector=True)
    fw_onednn.set_min_elements(0)
