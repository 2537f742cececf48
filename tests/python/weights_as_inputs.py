#!/usr/bin/env python3
"""Exports the gallery's encoder with TorchScript and keep_initializers_as_inputs=True, as many
third-party converters write models: every weight is also listed as a graph input.

usage: weights_as_inputs.py OUT_DIR   (writes OUT_DIR/model.onnx; tests/e2e/fix.sh, scripts/compare_peers.sh)
"""
import os, sys
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gallery"))
import torch_models as m
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
model = m.encoder().eval()
torch.onnx.export(model, (torch.randn(2, 16, 64),), f"{out}/model.onnx", dynamo=False, opset_version=17,
                  keep_initializers_as_inputs=True, input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch", 1: "seq_len"}, "y": {0: "batch", 1: "seq_len"}})
