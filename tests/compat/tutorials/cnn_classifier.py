"""CNN classifier: Conv2d, BatchNorm2d, MaxPool2d, AdaptiveAvgPool2d, log_softmax + nll_loss,
Adam with a StepLR schedule, then an eval-mode prediction (running statistics)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1, bias=False)  # BatchNorm follows
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3)
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.fc = nn.Linear(16 * 2 * 2, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc(x), dim=1)


def build():
    return Net()


def train(model, data, epochs=4):
    dataset = TensorDataset(torch.from_numpy(data["images"]), torch.from_numpy(data["labels"]))
    loader = DataLoader(dataset, batch_size=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    losses, rates = [], []
    for _ in range(epochs):
        model.train()
        for images, labels in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(data["images"])).exp()
    return {"losses": losses, "rates": rates, "predicted": predicted.numpy()}
