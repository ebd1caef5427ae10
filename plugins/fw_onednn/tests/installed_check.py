"""A check of an installed fw-onednn (no work tree on sys.path): the plugin loads with its
library, serves a float32 product and a linear layer's gradients, leaves float64 to fw_cpu.

    ../shared/tools/fresh-install-check plugins/fw_onednn/tests/installed_check.py
"""

import numpy as np

import fw_core as fw
import fw_onednn

info = fw.plugins.require("fw_onednn")
print(info.notes[-1])
rng = np.random.default_rng(0)
x = fw.tensor(rng.standard_normal((128, 784)).astype(np.float32), requires_grad=True)
layer = fw.nn.Linear(784, 512)
out = layer(x)
(out * out).sum().backward()
reference = x.detach().numpy() @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
np.testing.assert_allclose(out.detach().numpy(), reference, rtol=1e-4, atol=1e-4)
served = fw_onednn.cache_info()
assert served.size - served.refusals >= 3, served  # forward, grad_x and grad_w on oneDNN
double = fw.tensor(rng.standard_normal((256, 256)))
assert np.allclose((double @ double).numpy(), double.numpy() @ double.numpy())
assert fw_onednn.cache_info().misses == served.misses  # float64: refused before oneDNN
print("fw-onednn installed OK:", fw_onednn.cache_info())
