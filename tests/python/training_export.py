#!/usr/bin/env python3
"""Exports a Conv + BatchNormalization + Dropout network the way a forgotten model.eval() does:
torch.onnx.export (TorchScript) with training=TrainingMode.TRAINING writes BatchNormalization with
training_mode=1 and its running-statistics outputs, and Dropout with a constant-true training_mode.
Also writes what PyTorch computes in eval mode, as references: OUT_DIR/eval/x.npy and y.npy.

usage: training_export.py OUT_DIR   (writes OUT_DIR/model.onnx; tests/e2e/fix.sh)
"""
import os
import sys

import numpy as np
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.conv(x))))


out = sys.argv[1]
os.makedirs(f"{out}/eval", exist_ok=True)
torch.manual_seed(0)
net = Net()
with torch.no_grad():  # running statistics that are not the defaults, as after training
    net.bn.running_mean.uniform_(-0.5, 0.5)
    net.bn.running_var.uniform_(0.5, 2.0)
net.train()
torch.onnx.export(net, (torch.randn(2, 3, 8, 8),), f"{out}/model.onnx", dynamo=False, opset_version=17,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
x = torch.from_numpy(np.random.default_rng(3).standard_normal((4, 3, 8, 8)).astype(np.float32))
net.eval()
with torch.no_grad():
    np.save(f"{out}/eval/x.npy", x.numpy())
    np.save(f"{out}/eval/y.npy", net(x).numpy())
