"""Quickstart: an MLP learns 4,000 real MNIST digits on the CPU; test accuracy ~0.94 in seconds.

    python examples/quickstart.py
"""

import fw_core as fw

fw.manual_seed(0)
train = fw.data.datasets.load_mnist_sample("train", flatten=True)  # 4,000 images, 784 pixels
test = fw.data.datasets.load_mnist_sample("test", flatten=True)    # the other 1,000
model = fw.Sequential([
    fw.nn.Linear(784, 256), fw.nn.ReLU(), fw.nn.Dropout(0.2),
    fw.nn.Linear(256, 10),
])
model.compile(optimizer="adam", lr=2e-3, loss="cross_entropy", metrics=["accuracy"])
model.fit(train, epochs=12, batch_size=64)
print(f"test accuracy {model.evaluate(test)['accuracy']:.4f}")
