"""Train a 2-layer network with nothing but tensors and autograd (no nn, no optim).

    python examples/raw_autograd.py [--steps 300]

Classifies points of three interleaved spirals; prints the loss and the final accuracy.
"""

import argparse
import math

import fw_core as fw


def spirals(n_per_class: int = 200, classes: int = 3):
    """Points on `classes` noisy spiral arms, and their arm index."""
    radius = fw.linspace(0.05, 1.0, n_per_class).repeat(classes)
    arm = fw.arange(classes).reshape(classes, 1).expand(classes, n_per_class).reshape(-1)
    angle = arm * (2 * math.pi / classes) + radius * 4.0 + fw.randn(radius.shape) * 0.2
    points = fw.stack([radius * fw.cos(angle), radius * fw.sin(angle)], dim=1)
    return points, arm


def main(steps: int) -> float:
    fw.manual_seed(0)
    x, y = spirals()
    w1 = (fw.randn(2, 64) * 0.5).requires_grad_()
    b1 = fw.zeros(64, requires_grad=True)
    w2 = (fw.randn(64, 3) * 0.1).requires_grad_()
    b2 = fw.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    for step in range(steps):
        logits = fw.relu(x @ w1 + b1) @ w2 + b2
        loss = fw.cross_entropy(logits, y)
        for p in params:
            p.grad = None
        loss.backward()
        with fw.no_grad():
            for p in params:
                p -= p.grad * 1.0
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    with fw.no_grad():
        accuracy = (fw.argmax(fw.relu(x @ w1 + b1) @ w2 + b2, dim=1) == y).float().mean().item()
    print(f"train accuracy {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    main(parser.parse_args().steps)
