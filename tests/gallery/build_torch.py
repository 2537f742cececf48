"""Exports the PyTorch cases of the gallery into OUT/<case>/ (one process: torch is imported once).

usage: build_torch.py OUT [CASE ...]"""

import os
import shutil
import sys
import tempfile

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


def tensor_scale_data_sets():
    rng0, rng1 = np.random.default_rng(0), np.random.default_rng(1)
    return [[rng0.standard_normal((1, 3, 16, 16)).astype(np.float32), np.array([2.0], np.float32)],
            [rng1.standard_normal((2, 3, 24, 24)).astype(np.float32), np.array([2.0], np.float32)]]


def branch_data_sets():
    """Set 0 takes the branch the tracer recorded (sum > 0); set 1 takes the other one."""
    rng = np.random.default_rng(0)
    return [[np.abs(rng.standard_normal((2, 8))).astype(np.float32)],
            [-np.abs(rng.standard_normal((3, 8))).astype(np.float32)]]


def default_export(out):
    """torch.onnx.export with every default, as a user writes it: no output names, weights in model.onnx.data."""
    import torch

    os.makedirs(out, exist_ok=True)
    torch.onnx.export(m.encoder().eval(), (torch.randn(2, 16, 64),), os.path.join(out, "model.onnx"))


def data_left_behind(out):
    """The same export with only model.onnx copied: the weights stayed behind in model.onnx.data."""
    with tempfile.TemporaryDirectory() as tmp:
        default_export(tmp)
        os.makedirs(out, exist_ok=True)
        shutil.copy(os.path.join(tmp, "model.onnx"), out)


def llama_torchscript(out):
    """torch.onnx.export(model, (input_ids, attention_mask), dynamo=False) on a Transformers causal LM, as a user
    writes it: the tracer records forward()'s logits_to_keep as a third input."""
    import torch

    os.makedirs(out, exist_ok=True)
    ids = torch.randint(1, 1000, (2, 8), generator=torch.Generator().manual_seed(30))
    axes = {"input_ids": {0: "batch", 1: "seq_len"}, "attention_mask": {0: "batch", 1: "seq_len"}}
    torch.onnx.export(m.hf_llama().eval(), (ids, torch.ones_like(ids)), os.path.join(out, "model.onnx"), dynamo=False,
                      input_names=list(axes), dynamic_axes=axes)


def ts(**kwargs):
    return dict(exporter="torchscript", **kwargs)


BERT_INPUTS = ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]", "token_type_ids:int64[2,16]=0..2"]

CASES = {
    # Healthy exports with the default exporter (torch.export-based from PyTorch 2.9).
    "01-encoder": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic="x:0=batch,1=seq_len",
                                           output_names=["y"], module_ref=f"{HERE}:encoder"),
    "02-bert": lambda out: export_torch(
        m.bert(), BERT_INPUTS, out, dynamic="auto", sequence_axis=1, output_names=["last_hidden_state"],
        data_sets=bert_data_sets(), module_ref=f"{HERE}:bert"),
    "03-resnet18": lambda out: export_torch(m.resnet18(), "x:float32[2,3,64,64]", out, dynamic="auto",
                                            output_names=["logits"], module_ref=f"{HERE}:resnet18"),
    "04-static-batch": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic=None,
                                                output_names=["y"], module_ref=f"{HERE}:encoder"),
    "05-training-mode": lambda out: export_torch(m.training_mode(), "x:float32[2,3,16,16]", out, dynamic="auto",
                                                 training=True, output_names=["logits"], module_ref=f"{HERE}:training_mode"),
    # The tracer's classic mistakes (TorchScript exporter, dynamo=False).
    "06-baked-batch": lambda out: export_torch(m.baked_batch(), "x:float32[2,16,64]", out,
                                               dynamic="x:0=batch,1=seq_len", output_names=["y"],
                                               module_ref=f"{HERE}:baked_batch", **ts()),
    "07-float64-leak": lambda out: export_torch(m.float64_leak(), "x:float32[2,16]", out, dynamic="auto",
                                                output_names=["y"], module_ref=f"{HERE}:float64_leak"),
    "08-tensor-scale": lambda out: export_torch(
        m.tensor_scale(), ["x:float32[1,3,16,16]", "scale:float32[1]"], out, dynamic="x:0=batch,2=height,3=width",
        output_names=["y"], data_sets=tensor_scale_data_sets(), module_ref=f"{HERE}:tensor_scale", **ts()),
    "09-traced-branch": lambda out: export_torch(m.branch(), "x:float32[2,8]", out, dynamic="auto", output_names=["y"],
                                                 data_sets=branch_data_sets(), module_ref=f"{HERE}:branch", **ts()),
    # The same models under the default exporter: it refuses what the tracer got silently wrong.
    "13-dynamo-data-dependent": lambda out: export_torch(m.branch(), "x:float32[2,8]", out, dynamic="auto",
                                                         output_names=["y"], module_ref=f"{HERE}:branch"),
    "14-dynamo-item-scale": lambda out: export_torch(
        m.tensor_scale(), ["x:float32[1,3,16,16]", "scale:float32[1]"], out, dynamic="x:0=batch,2=height,3=width",
        output_names=["y"], data_sets=tensor_scale_data_sets(), module_ref=f"{HERE}:tensor_scale"),
    "15-dynamo-cache-output": lambda out: export_torch(m.returns_cache(), "x:float32[2,16]", out, dynamic="auto",
                                                       module_ref=f"{HERE}:returns_cache"),
    "16-hf-t5-cache": lambda out: export_torch(
        m.hf_t5(), ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]", "decoder_input_ids:int64[2,4]=1..1000"],
        out, dynamic="input_ids:0=batch,1=seq_len attention_mask:0=batch,1=seq_len decoder_input_ids:0=batch,1=decoder_len".split(),
        module_ref=f"{HERE}:hf_t5"),
    "17-dynamo-no-translation": lambda out: export_torch(m.singular_values(), "x:float32[2,4,4]", out, dynamic="auto",
                                                         module_ref=f"{HERE}:singular_values"),
    "18-dynamo-histc": lambda out: export_torch(m.histogram(), "x:float32[8]", out, module_ref=f"{HERE}:histogram"),
    "19-dynamo-fixed-size-buffer": lambda out: export_torch(m.fixed_size_buffer(), "x:float32[2,16,64]", out,
                                                            dynamic="x:0=batch,1=seq_len", output_names=["y"],
                                                            module_ref=f"{HERE}:fixed_size_buffer"),
    "20-dynamo-opset-13": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic="x:0=batch,1=seq_len",
                                                   opset=13, output_names=["y"], module_ref=f"{HERE}:encoder"),
    "21-dynamo-opset-17": lambda out: export_torch(m.encoder(), "x:float32[2,16,64]", out, dynamic="x:0=batch,1=seq_len",
                                                   opset=17, output_names=["y"], module_ref=f"{HERE}:encoder"),
    "22-default-export": default_export,
    "23-data-left-behind": data_left_behind,
    "24-hf-bert-torchscript": lambda out: export_torch(m.hf_bert(), BERT_INPUTS, out, dynamic="auto", sequence_axis=1,
                                                       module_ref=f"{HERE}:hf_bert", **ts()),
    "25-hf-bert": lambda out: export_torch(m.hf_bert(), BERT_INPUTS, out, dynamic="auto", sequence_axis=1,
                                           data_sets=bert_data_sets(), module_ref=f"{HERE}:hf_bert"),
    "28-hf-t5-decomposition": lambda out: export_torch(
        m.hf_t5_encoder(), ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]"], out, dynamic="auto",
        sequence_axis=1, module_ref=f"{HERE}:hf_t5_encoder"),
    "30-hf-llama-torchscript": llama_torchscript,
    "31-dynamo-varargs": lambda out: export_torch(m.stack_inputs(), ["a:float32[2,4]", "b:float32[2,4]"], out,
                                                  dynamic="auto", module_ref=f"{HERE}:stack_inputs"),
}

# The cases whose export must fail, and with which code.
FAILING = {
    "13-dynamo-data-dependent": "export.data-dependent-guard",
    "14-dynamo-item-scale": "export.data-dependent-guard",
    "15-dynamo-cache-output": "export.unsupported-output-type",
    "16-hf-t5-cache": "export.unsupported-output-type",
    "17-dynamo-no-translation": "export.unsupported-operator",
    "18-dynamo-histc": "export.unsupported-operator",
    "24-hf-bert-torchscript": "export.bad-inputs",
    "28-hf-t5-decomposition": "export.decomposition-failed",
    "31-dynamo-varargs": "export.dynamic-shapes-mismatch",
}


def main():
    return export_cases(CASES, sys.argv[1], sys.argv[2:], FAILING)


if __name__ == "__main__":
    sys.exit(main())
