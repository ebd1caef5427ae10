"""MLP classifier: a custom Dataset and collate_fn, a DataLoader, CrossEntropyLoss with label
smoothing, SGD with momentum and weight decay, then accuracy and probabilities in eval mode."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class PointsDataset(Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x, dtype=torch.float32)
        self.y = torch.tensor(y, dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.stack(ys)


class MLP(nn.Module):
    def __init__(self, features=8, hidden=32, classes=3):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        return self.net(x)


def build():
    return MLP()


def train(model, data, epochs=3):
    loader = DataLoader(PointsDataset(data["x"], data["y"]), batch_size=16, shuffle=False,
                        collate_fn=collate)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    losses = []
    model.train()
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor(data["x"], dtype=torch.float32))
        accuracy = (logits.argmax(dim=1) == torch.tensor(data["y"])).float().mean().item()
        probs = F.softmax(logits, dim=-1)
    return {"losses": losses, "accuracy": accuracy, "probs": probs.numpy()}
