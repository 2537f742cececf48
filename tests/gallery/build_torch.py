"""Exports the PyTorch cases of the gallery into OUT/<case>/ (one process: torch is imported once).

usage: build_torch.py OUT [CASE ...]"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch_models as m  # noqa: E402
from gallery_common import export_cases  # noqa: E402
from ortkit_export import export_torch  # noqa: E402

HERE = os.path.abspath(os.path.join(os.path.dirname(__file__), "torch_models.py"))


def bert_data_sets():
    """Set 0: no padding. Set 1: batch 3, the last positions of rows 1 and 2 padded (mask 0, ids of padding)."""
    rng = np.random.default_rng(0)
    ids0 = rng.integers(1, 1000, (2, 16))
    set0 = [ids0, np.ones((2, 16), np.int64), rng.integers(0, 2, (2, 16))]
    ids1 = rng.integers(1, 1000, (3, 24))
    mask1 = np.ones((3, 24), np.int64)
    mask1[1, 20:] = 0
    mask1[2, 9:] = 0
    ids1[mask1 == 0] = 0
    set1 = [ids1, mask1, rng.integers(0, 2, (3, 24))]
    return [set0, set1]


def branch_data_sets():
    """Set 0 takes the branch the tracer recorded (sum > 0); set 1 takes the other one."""
    rng = np.random.default_rng(0)
    return [[np.abs(rng.standard_normal((2, 8))).astype(np.float32)],
            [-np.abs(rng.standard_normal((3, 8))).astype(np.float32)]]


CASES = {
    "01-encoder": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic="x:0=batch,1=seq_len",
                                           opset=17, output_names=["y"], module_ref=f"{HERE}:encoder"),
    "02-bert": lambda out: export_torch(
        m.bert(), ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]", "token_type_ids:int64[2,16]=0..2"],
        out, dynamic="auto", sequence_axis=1, output_names=["last_hidden_state"], data_sets=bert_data_sets(),
        module_ref=f"{HERE}:bert"),
    "03-resnet18": lambda out: export_torch(m.resnet18(), "x:float32[2,3,64,64]", out, dynamic="auto",
                                            output_names=["logits"], module_ref=f"{HERE}:resnet18"),
    "04-static-batch": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic=None,
                                                output_names=["y"], module_ref=f"{HERE}:encoder"),
    "05-training-mode": lambda out: export_torch(m.training_mode(), "x:float32[2,3,16,16]", out, dynamic="auto",
                                                 training=True, output_names=["logits"], module_ref=f"{HERE}:training_mode"),
    "06-baked-batch": lambda out: export_torch(m.baked_batch(), "x:float32[2,16,64]", out,
                                               dynamic="x:0=batch,1=seq_len", output_names=["y"],
                                               module_ref=f"{HERE}:baked_batch"),
    "07-float64-leak": lambda out: export_torch(m.float64_leak(), "x:float32[2,16]", out, dynamic="auto",
                                                output_names=["y"], module_ref=f"{HERE}:float64_leak"),
    "08-tensor-scale": lambda out: export_torch(
        m.tensor_scale(), ["x:float32[1,3,16,16]", "scale:float32[1]"], out, dynamic="x:0=batch,2=height,3=width",
        output_names=["y"], data_sets=[[np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32),
                                        np.array([2.0], np.float32)],
                                       [np.random.default_rng(1).standard_normal((2, 3, 24, 24)).astype(np.float32),
                                        np.array([2.0], np.float32)]],
        module_ref=f"{HERE}:tensor_scale"),
    "09-traced-branch": lambda out: export_torch(m.branch(), "x:float32[2,8]", out, dynamic="auto", output_names=["y"],
                                                 data_sets=branch_data_sets(), module_ref=f"{HERE}:branch"),
}


def main():
    return export_cases(CASES, sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
