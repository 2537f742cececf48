"""python -m ortkit_export torch|tf ... (what `ortkit export` runs)."""

import argparse
import importlib.util
import json
import os
import sys

from .errors import ExportError, located
from .hf_export import TASKS

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# Refusals of what was asked for, before anything is exported: exit 2, as for wrong arguments.
USAGE_CODES = ("export.bad-arguments", "export.bad-module", "export.framework-missing",
               "export.unsupported-architecture", "export.new-weights")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ExportError("export.bad-arguments", f"{self.prog}: {message}", f"see {self.prog} --help")


def build_parser():
    parser = _Parser(prog="ortkit export", description="Export a PyTorch, Transformers or TensorFlow model to ONNX with reference "
                     "data: OUT/model.onnx, OUT/test_data_set_0 and _1 (inputs and the framework's outputs), OUT/export.json.")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="what to print on stdout")
    sub = parser.add_subparsers(dest="framework", required=True, parser_class=_Parser)

    def common(p):
        p.add_argument("--inputs", nargs="+", metavar="SPEC",
                       help="NAME:TYPE[D0,D1,...] per input in call order, e.g. x:float32[2,3,224,224]; integer inputs "
                            "take an optional value range: input_ids:int64[2,16]=0..30522")
        p.add_argument("--dynamic", action="append", metavar="SPEC",
                       help="NAME:AXIS=SYMBOL[,AXIS=SYMBOL] (repeatable), or auto: axis 0 of every input is 'batch'")
        p.add_argument("--sequence-axis", type=int, metavar="AXIS",
                       help="with --dynamic auto: also mark this axis of every input of higher rank as 'seq_len'")
        p.add_argument("--opset", type=int, help="ONNX opset (default: the exporter's own; a file written at another "
                       "opset than the one asked for is reported)")
        p.add_argument("--out", required=True, help="output folder (created)")
        p.add_argument("--seed", type=int, default=0, help="seed of the synthesised inputs")
        p.add_argument("--format", choices=["text", "json"], default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    torch_p = sub.add_parser("torch", help="PyTorch via torch.onnx.export (torch.export-based or TorchScript)")
    torch_p.add_argument("--module", required=True, metavar="FILE.py:FACTORY",
                         help="a Python file and a function in it that returns the nn.Module (called without arguments)")
    torch_p.add_argument("--outputs", nargs="+", metavar="NAME",
                         help="names of the outputs (default: the keys of a returned dict, else output, output_K)")
    torch_p.add_argument("--training", action="store_true",
                         help="export in training mode (default: eval(), enforced and recorded in export.json)")
    torch_p.add_argument("--exporter", choices=["dynamo", "torchscript"],
                         help="dynamo: the torch.export-based exporter; torchscript: the tracer (default: what the "
                              "installed PyTorch defaults to, dynamo from 2.9 on)")
    torch_p.add_argument("--external-data", action="store_true",
                         help="weights in model.onnx.data beside model.onnx (default: inline, unless over 1.8 GB)")
    torch_p.add_argument("--no-constant-folding", action="store_true", help="keep constant subgraphs")
    common(torch_p)

    hf_p = sub.add_parser("hf", help="a Hugging Face Transformers checkpoint folder (save_pretrained; never downloads)")
    hf_p.add_argument("checkpoint", metavar="CHECKPOINT_DIR", help="the folder save_pretrained() wrote")
    hf_p.add_argument("--task", required=True, choices=sorted(TASKS),
                      help="what the model is exported for; picks the model class, the inputs and the outputs")
    hf_p.add_argument("--batch", type=int, default=2, help="batch of the example inputs (default 2)")
    hf_p.add_argument("--seq-len", type=int, default=16, help="sequence length of text examples (default 16)")
    hf_p.add_argument("--exporter", choices=["dynamo", "torchscript"], help="as for torch (default: PyTorch's own)")
    hf_p.add_argument("--allow-new-weights", action="store_true",
                      help="export a model whose head the checkpoint does not hold (Transformers initialises it at "
                           "random; refused by default, since its outputs are noise)")
    hf_p.add_argument("--opset", type=int, help="ONNX opset (default: the exporter's own)")
    hf_p.add_argument("--out", required=True, help="output folder (created)")
    hf_p.add_argument("--seed", type=int, default=0, help="seed of the synthesised inputs")
    hf_p.add_argument("--format", choices=["text", "json"], default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    tf_p = sub.add_parser("tf", help="TensorFlow via tf2onnx")
    source = tf_p.add_mutually_exclusive_group(required=True)
    source.add_argument("--saved-model", metavar="DIR", help="a SavedModel folder (its serving_default signature)")
    source.add_argument("--keras", metavar="FILE", help="a Keras model file (.keras or .h5)")
    source.add_argument("--module", metavar="FILE.py:FACTORY", help="a Python file and a function returning a Keras model")
    common(tf_p)
    return parser


def load_factory(ref):
    """Calls FACTORY from FILE.py for "FILE.py:FACTORY" and returns what it returns."""
    path, sep, name = ref.rpartition(":")
    if not sep or not path or not name:
        raise ExportError("export.bad-arguments", f"--module '{ref}': expected FILE.py:FACTORY", "e.g. --module model.py:build")
    if not os.path.isfile(path):
        raise ExportError("export.bad-module", f"--module '{ref}': '{path}' is not a file",
                          "give the path of the Python file, relative to the current directory or absolute")
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:
        raise located(ExportError("export.bad-module", f"importing '{path}' raised {type(e).__name__}: {e}",
                                  "run the file with python to see the full traceback"), e) from e
    factory = getattr(module, name, None)
    if not callable(factory):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ExportError("export.bad-module", f"'{path}' has no function '{name}'",
                          "callables in it: " + (", ".join(found) or "none"))
    try:
        return factory()
    except Exception as e:
        raise located(ExportError("export.bad-module", f"{name}() in '{path}' raised {type(e).__name__}: {e}",
                                  "make the factory callable without arguments"), e) from e


def run(args):
    if args.framework == "hf":
        from .hf_export import export_hf

        return export_hf(args.checkpoint, args.task, args.out, batch=args.batch, seq_len=args.seq_len, opset=args.opset,
                         exporter=args.exporter, seed=args.seed, allow_new_weights=args.allow_new_weights)
    if args.framework == "torch":
        from .torch_export import export_torch

        if not args.inputs:
            raise ExportError("export.bad-arguments", "torch needs --inputs", "e.g. --inputs x:float32[2,3,224,224]")
        return export_torch(load_factory(args.module), args.inputs, args.out, dynamic=args.dynamic, opset=args.opset,
                            sequence_axis=args.sequence_axis, training=args.training, output_names=args.outputs,
                            seed=args.seed, module_ref=args.module, exporter=args.exporter,
                            constant_folding=not args.no_constant_folding, external_data=args.external_data or None)
    from .tf_export import export_tf

    model = args.saved_model or args.keras or load_factory(args.module)
    return export_tf(model, args.inputs, args.out, dynamic=args.dynamic, opset=args.opset or 17,
                     sequence_axis=args.sequence_axis, seed=args.seed, module_ref=args.module or args.saved_model or args.keras)


def summary(record, out):
    lines = [f"exported {record['framework']} {record['framework_version']} model with {record['exporter']} "
             f"at opset {record['opset']} to {os.path.join(out, 'model.onnx')}"]
    for s in record["inputs"]:
        axes = record["dynamic_axes"].get(s["name"], {})
        dims = [axes.get(str(i), str(d)) for i, d in enumerate(s["shape"])]
        lines.append(f"  input  {s['name']}: {s['dtype']}[{', '.join(dims)}]")
    for o in record.get("outputs", []):
        axes = record.get("output_dynamic_axes", {}).get(o["name"], {})
        dims = [axes.get(str(i), str(d)) for i, d in enumerate(o["shape"])]
        lines.append(f"  output {o['name']}: {o['dtype']}[{', '.join(dims)}]")
    for d in record.get("data_sets", []):
        shapes = ", ".join(f"{n}{v['shape']}" for n, v in d["inputs"].items())
        lines.append(f"  reference {d['folder']}: {shapes}")
    if record.get("module_was_training") and record.get("eval_enforced"):
        lines.append("  note: the module was in training mode; eval() was called before exporting")
    if record.get("training"):
        lines.append("  warning: exported in training mode (--training): Dropout and BatchNorm behave as in training")
    for name in record.get("inputs_dropped") or []:
        lines.append(f"  warning: input '{name}' is not used by the exported graph and was dropped")
    hf = record.get("hf") or {}
    if hf.get("fallback"):
        fallback = hf["fallback"]
        lines.append(f"  note: the {fallback['failed']} exporter failed while {fallback['step']}; the {fallback['used']} "
                     f"exporter wrote the file instead\n    why: {fallback['reason']}\n    dynamic shapes: "
                     f"{fallback['dynamic_shapes']}")
    if hf.get("new_weights"):
        lines.append(f"  warning: --allow-new-weights: {len(hf['new_weights'])} weights are not in the checkpoint and "
                     f"were initialised at random ({', '.join(hf['new_weights'][:3])}{' ...' if len(hf['new_weights']) > 3 else ''})")
    if hf.get("attention_windows"):
        windows = hf["attention_windows"]
        sliding = [str(i) for i, w in enumerate(windows) if w]
        lines.append(f"  attention: layer{'s' if len(sliding) > 1 else ''} {', '.join(sliding)} of {len(windows)} attend "
                     f"over a window of {min(w for w in windows if w)}; every layer's cache keeps every position and "
                     "the window is applied in the attention mask"
                     + ("; test_data_set_1 is a step past it" if hf.get("references_past_window") else ""))
    if hf.get("sampling_rate"):
        lines.append(f"  audio: {hf['sampling_rate']} Hz" + (f", at least {hf['min_samples']} samples per input"
                                                             if hf.get("min_samples") else ""))
    for w in record.get("warnings", []):
        if w.get("code") and not w.get("category"):
            lines.append(f"  warning  {w['code']}  {w['message']}" + (f"\n    fix: {w['fix']}" if w.get("fix") else ""))
        elif w.get("code"):
            where = f"{w['file']}:{w['line']}" + (f": {w['source']}" if w.get("source") else "")
            lines.append(f"  warning  {w['code']}  {w['category']} at {where}\n    {w['message'].splitlines()[0]}")
    lines.append(f"  wrote {os.path.join(out, 'export.json')}; check it with: ortkit doctor {out}")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    want_json = "--format" in argv and argv[argv.index("--format") + 1:argv.index("--format") + 2] == ["json"]
    try:
        args = build_parser().parse_args(argv)
        want_json = (args.format or "text") == "json"
        record = run(args)
    except ExportError as error:
        if want_json:
            print(json.dumps({"error": error.to_json()}, indent=2))
        else:
            print(error.render(), file=sys.stderr)
        return EXIT_USAGE if error.code in USAGE_CODES \
            else EXIT_FAILED
    if want_json:
        print(json.dumps(record, indent=2))
    elif isinstance(record, list):  # an encoder and a decoder, each in its own folder
        print("\n".join(summary(r, os.path.join(args.out, r["hf"]["part"])) for r in record))
    else:
        print(summary(record, args.out))
    return EXIT_OK
