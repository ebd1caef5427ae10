import fw_core as fw
fw.manual_seed(0)
x = fw.randn(256, 2); y = ((x[:, 0] * x[:, 1]) > 0).long()          # XOR-like quadrants
w1 = (fw.randn(2, 32) * 0.7).requires_grad_(); w2 = (fw.randn(32, 2) * 0.2).requires_grad_()
for step in range(500):
    loss = fw.cross_entropy(fw.tanh(x @ w1) @ w2, y)
    w1.grad = w2.grad = None; loss.backward()
    with fw.no_grad(): w1 -= 0.5 * w1.grad; w2 -= 0.5 * w2.grad
acc = (fw.argmax(fw.tanh(x @ w1) @ w2, dim=1) == y).float().mean().item()
print(f"loss {loss.item():.3f}  accuracy {acc:.3f}"); assert acc > 0.9
