"""What `ortkit export` costs over PyTorch's own export: for tiny Transformers checkpoints (BERT, GPT-2, Llama,
ViT; tests/gallery/hf_checkpoints.py) and a plain encoder block, the time of ortkit's export (running the model
for two reference data sets, the export, checking the file's opset and dynamic axes, writing the references
and export.json) against torch.onnx.export alone with the same settings (default exporter, dynamic batch and
sequence, weights inline), measured alternately in one process after a warm-up; the median of each is used.

usage: PYTHONPATH=python .deps/python/bin/python bench/export_overhead.py [--repeats 3]"""

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gallery"))

import torch  # noqa: E402

import hf_checkpoints  # noqa: E402
import torch_models  # noqa: E402
from ortkit_export import export_torch  # noqa: E402
from ortkit_export.hf_export import export_hf  # noqa: E402
from ortkit_export.spec import parse_inputs, synthesize  # noqa: E402


def plain_export(module, specs, dynamic, path):
    """torch.onnx.export as a user calls it for the same file: default exporter, named dynamic axes, inline."""
    parsed = parse_inputs(specs)
    args = tuple(torch.from_numpy(a) for a in synthesize(parsed))
    shapes = tuple({a: s for a, s in dynamic.get(p.name, {}).items()} or None for p in parsed)
    torch.onnx.export(module.eval(), args, path, input_names=[p.name for p in parsed], dynamic_shapes=shapes,
                      external_data=False)


def timed(fn):
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        hf_checkpoints.CHECKPOINTS  # noqa: B018
        for name in ("bert", "gpt2", "llama", "vit"):
            torch.manual_seed(0)
            hf_checkpoints.CHECKPOINTS[name]().save_pretrained(os.path.join(tmp, name))
    import transformers

    text = {"input_ids": {0: "batch", 1: "seq_len"}, "attention_mask": {0: "batch", 1: "seq_len"},
            "token_type_ids": {0: "batch", 1: "seq_len"}}
    cases = {
        "bert": ("feature-extraction", ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]",
                                        "token_type_ids:int64[2,16]=0..2"], text, "AutoModel", ["last_hidden_state"]),
        "gpt2": ("text-generation", ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]"], text,
                 "AutoModelForCausalLM", ["logits"]),
        "llama": ("text-generation", ["input_ids:int64[2,16]=1..1000", "attention_mask:int64[2,16]"], text,
                  "AutoModelForCausalLM", ["logits"]),
        "vit": ("image-classification", ["pixel_values:float32[2,3,32,32]"], {"pixel_values": {0: "batch"}},
                "AutoModelForImageClassification", ["logits"]),
    }
    from ortkit_export.hf_export import _wrapper

    rows = []
    timed(lambda: plain_export(torch_models.encoder(), ["x:float32[2,16,64]"], {"x": {0: "batch"}},
                               os.path.join(tmp, "warm.onnx")))
    for name, (task, specs, dynamic, auto, outputs) in cases.items():
        model = getattr(transformers, auto).from_pretrained(os.path.join(tmp, name))
        names = [s.split(":")[0] for s in specs]
        extra = {"return_dict": True, "use_cache": False} if name in ("gpt2", "llama") else {"return_dict": True}
        wrapped = _wrapper(torch, model, names, outputs, extra)
        plain, ours = [], []
        for _ in range(args.repeats):
            plain.append(timed(lambda: plain_export(wrapped, specs, dynamic, os.path.join(tmp, f"{name}-plain.onnx"))))
            ours.append(timed(lambda: export_hf(os.path.join(tmp, name), task, os.path.join(tmp, f"{name}-ortkit"))))
        rows.append((f"hf {name} ({task})", statistics.median(plain), statistics.median(ours)))
    plain, ours = [], []
    for _ in range(args.repeats):
        plain.append(timed(lambda: plain_export(torch_models.encoder(), ["x:float32[2,16,64]"],
                                                {"x": {0: "batch", 1: "seq_len"}}, os.path.join(tmp, "enc.onnx"))))
        ours.append(timed(lambda: export_torch(torch_models.encoder(), "x:float32[2,16,64]", os.path.join(tmp, "enc"),
                                               dynamic="x:0=batch,1=seq_len", output_names=["y"])))
    rows.append(("torch encoder block", statistics.median(plain), statistics.median(ours)))

    print(f"torch {torch.__version__}, transformers {transformers.__version__}; median of {args.repeats} each, "
          "alternating")
    print(f"{'model':36} {'torch.onnx.export':>18} {'ortkit export':>14} {'ratio':>7}")
    worst = 0.0
    for label, p, o in rows:
        worst = max(worst, o / p)
        print(f"{label:36} {p:16.2f} s {o:12.2f} s {o / p:6.2f}x")
    print(f"worst ratio {worst:.2f}x (target: at most 2x)")
    return 0 if worst <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
