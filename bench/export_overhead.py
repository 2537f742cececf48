"""What `ortkit export` costs over PyTorch's own export: for tiny Transformers checkpoints (BERT, GPT-2 and Llama
with and without cache, T5, ViT, Whisper; tests/gallery/hf_checkpoints.py) and a plain encoder block, the time of ortkit's export (running the model
for two reference data sets, the export, checking the file's opset and dynamic axes, writing the references
and export.json) against torch.onnx.export alone with the same settings (default exporter, dynamic batch and
sequence, weights inline, and for T5 the TorchScript exporter that ortkit falls back to), measured alternately in one process after a warm-up; the median of each is used.

usage: PYTHONPATH=python .deps/python/bin/python bench/export_overhead.py [--repeats 3]"""

import argparse
import contextlib
import inspect
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
from ortkit_export.hf_export import TASKS, _parts, _plain_call, _wrapper, export_hf  # noqa: E402
from ortkit_export.spec import parse_dynamic, parse_inputs, synthesize  # noqa: E402


def plain_export(module, specs, dynamic, path):
    """torch.onnx.export as a user calls it for the same file: default exporter, named dynamic axes, inline."""
    parsed = parse_inputs(specs)
    args = tuple(torch.from_numpy(a) for a in synthesize(parsed))
    shapes = tuple({a: s for a, s in dynamic.get(p.name, {}).items()} or None for p in parsed)
    torch.onnx.export(module.eval(), args, path, input_names=[p.name for p in parsed], dynamic_shapes=shapes,
                      external_data=False)


def plain_hf(checkpoint, task, exporters, path):
    """The files `ortkit export hf` writes, each made by one torch.onnx.export call with the exporter ortkit used
    for it (the same wrapper, example inputs and dynamic axes, weights inline), the checkpoint loaded as well."""
    import transformers

    auto_class, output_names, kind = TASKS[task]
    config = transformers.AutoConfig.from_pretrained(checkpoint)
    model = getattr(transformers, auto_class).from_pretrained(checkpoint).eval()
    extra = {"return_dict": True}
    if "use_cache" in inspect.signature(model.forward).parameters:
        extra["use_cache"] = False
    for k, (part, exporter) in enumerate(zip(_parts(kind, config, model, 2, 16, 0), exporters)):
        names = [spec.split(":")[0] for spec in part.specs]
        wrapped = _wrapper(torch, model, names, part.call or _plain_call(part.outputs or output_names, extra))
        specs = parse_inputs(part.specs)
        dyn = parse_dynamic(part.dynamic, specs, part.sequence_axis)
        args = tuple(torch.from_numpy(a) for a in (part.data_sets[0] if part.data_sets else synthesize(specs)))
        target = f"{path}-{k}.onnx"
        if exporter == "dynamo":
            torch.onnx.export(wrapped, args, target, input_names=names, external_data=False,
                              dynamic_shapes=tuple(dyn.get(n) or None for n in names))
        else:
            torch.onnx.export(wrapped, args, target, input_names=names, dynamo=False,
                              dynamic_axes={n: dict(a) for n, a in dyn.items()})


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
        for name in ("bert", "gpt2", "llama", "t5", "vit", "whisper"):
            torch.manual_seed(0)
            hf_checkpoints.CHECKPOINTS[name]().save_pretrained(os.path.join(tmp, name))
    import transformers

    cases = [("bert", "feature-extraction"), ("gpt2", "text-generation"), ("gpt2", "text-generation-with-past"),
             ("llama", "text-generation"), ("llama", "text-generation-with-past"), ("t5", "text2text-generation"),
             ("vit", "image-classification"), ("whisper", "automatic-speech-recognition")]
    rows = []
    timed(lambda: plain_export(torch_models.encoder(), ["x:float32[2,16,64]"], {"x": {0: "batch"}},
                               os.path.join(tmp, "warm.onnx")))
    for name, task in cases:
        checkpoint, out = os.path.join(tmp, name), os.path.join(tmp, f"{name}-{task}")
        records = export_hf(checkpoint, task, out)  # once first: which exporter each file needs
        exporters = [r["exporter_kind"] for r in (records if isinstance(records, list) else [records])]
        plain, ours = [], []
        for _ in range(args.repeats):
            plain.append(timed(lambda: plain_hf(checkpoint, task, exporters, out + "-plain")))
            ours.append(timed(lambda: export_hf(checkpoint, task, out)))
        rows.append((f"hf {name} {task} ({'+'.join(exporters)})", statistics.median(plain), statistics.median(ours)))
    plain, ours = [], []
    for _ in range(args.repeats):
        plain.append(timed(lambda: plain_export(torch_models.encoder(), ["x:float32[2,16,64]"],
                                                {"x": {0: "batch", 1: "seq_len"}}, os.path.join(tmp, "enc.onnx"))))
        ours.append(timed(lambda: export_torch(torch_models.encoder(), "x:float32[2,16,64]", os.path.join(tmp, "enc"),
                                               dynamic="x:0=batch,1=seq_len", output_names=["y"])))
    rows.append(("torch encoder block", statistics.median(plain), statistics.median(ours)))

    print(f"torch {torch.__version__}, transformers {transformers.__version__}; median of {args.repeats} each, "
          "alternating")
    print(f"{'model':64} {'torch.onnx.export':>18} {'ortkit export':>14} {'ratio':>7}")
    worst = 0.0
    for label, p, o in rows:
        worst = max(worst, o / p)
        print(f"{label:64} {p:16.2f} s {o:12.2f} s {o / p:6.2f}x")
    print(f"worst ratio {worst:.2f}x (target: at most 2x)")
    return 0 if worst <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
