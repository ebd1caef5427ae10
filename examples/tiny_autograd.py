import fw_core as fw

fw.manual_seed(0)
x = fw.randn(256, 2); y = ((x[:, 0] * x[:, 1]) > 0).long()          # XOR of the signs
w1, b1 = fw.randn(2, 32).requires_grad_(), fw.zeros(32, requires_grad=True)
w2 = (fw.randn(32, 2) * 0.1).requires_grad_()
for step in range(500):
    loss = fw.cross_entropy(fw.tanh(x @ w1 + b1) @ w2, y)
    w1.grad = b1.grad = w2.grad = None; loss.backward()
    with fw.no_grad(): w1 -= 0.5 * w1.grad; b1 -= 0.5 * b1.grad; w2 -= 0.5 * w2.grad
acc = (fw.argmax(fw.tanh(x @ w1 + b1) @ w2, dim=1) == y).float().mean().item()
print(f"loss {loss.item():.3f}  accuracy {acc:.3f}"); assert acc > 0.9
