"""Regression with parameter groups, a cosine schedule and checkpoint/resume: train, save the
model, optimizer and scheduler state with torch.save, rebuild everything, torch.load the
checkpoint (weights_only), load the states and continue."""

import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, 16), nn.SiLU())
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


def build():
    return Regressor()


def make_optimizer(model):
    optimizer = torch.optim.Adam([
        {"params": model.body.parameters(), "lr": 1e-2},
        {"params": model.head.parameters(), "lr": 3e-3, "weight_decay": 1e-3},
    ])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=8, eta_min=1e-4)
    return optimizer, scheduler


def run_steps(model, optimizer, scheduler, x, y, steps):
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def train(model, data):
    x = torch.tensor(data["x"], dtype=torch.float32)
    y = torch.tensor(data["y"], dtype=torch.float32)
    optimizer, scheduler = make_optimizer(model)
    losses = run_steps(model, optimizer, scheduler, x, y, 4)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": 4}, data["path"])

    checkpoint = torch.load(data["path"], map_location="cpu", weights_only=True)
    resumed = build()
    resumed.load_state_dict(checkpoint["model"])
    optimizer, scheduler = make_optimizer(resumed)
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    losses += run_steps(resumed, optimizer, scheduler, x, y, 4)
    with torch.no_grad():
        predicted = resumed(x)
    return {"losses": losses, "step": checkpoint["step"], "lr": scheduler.get_last_lr(),
            "predicted": predicted.numpy()}
