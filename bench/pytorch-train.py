# SPDX-License-Identifier: MIT
"""A small PyTorch CPU training loop for bench/pytorch.sh: an MLP learning a
fixed random regression, STEPS steps of forward, backward and SGD on THREADS
threads (1). With READY=FILE it writes FILE once torch is imported and the
model built, so that an attached recorder sees training, not the import;
with RUN_SECONDS it trains until that many seconds have passed instead."""

import os
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("THREADS", "1")))

model = torch.nn.Sequential(
    torch.nn.Linear(64, 256), torch.nn.ReLU(),
    torch.nn.Linear(256, 256), torch.nn.ReLU(),
    torch.nn.Linear(256, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(64, 64)
targets = torch.randn(64, 10)


def step():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


ready = os.environ.get("READY")
if ready:
    with open(ready, "w") as f:
        f.write("ready\n")
seconds = float(os.environ.get("RUN_SECONDS", "0"))
if seconds:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        step()
else:
    for _ in range(int(os.environ.get("STEPS", "300"))):
        step()
