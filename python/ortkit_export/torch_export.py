"""PyTorch → ONNX through torch.onnx.export (the TorchScript tracer), with the framework's outputs as references."""

import io
import os
import warnings

import numpy as np

from . import common, testdata
from .errors import ExportError, translate_torch_error
from .spec import parse_dynamic, parse_inputs, second_shapes, synthesize

MAX_TORCH_OPSET = 17  # torch 1.13's exporter; newer torch raises it (read at run time when available)


def _max_opset(torch):
    try:
        from torch.onnx import _constants

        return int(getattr(_constants, "ONNX_MAX_OPSET", MAX_TORCH_OPSET))
    except ImportError:
        return MAX_TORCH_OPSET


def _flatten_outputs(result, output_names):
    import torch

    if isinstance(result, torch.Tensor):
        items = [("output", result)]
    elif isinstance(result, dict):
        items = list(result.items())
    elif isinstance(result, (tuple, list)):
        items = [(f"output_{i}", t) for i, t in enumerate(result)]
    else:
        raise ExportError("export.bad-inputs", f"the model returned {type(result).__name__}, not tensors",
                          "return a tensor, a tuple of tensors or a dict of tensors from forward()")
    if output_names:
        if len(output_names) != len(items):
            raise ExportError("export.bad-arguments", f"--outputs names {len(output_names)} outputs but the model "
                              f"returns {len(items)}", "give one name per output, in order")
        items = [(n, t) for n, (_, t) in zip(output_names, items)]
    return [(n, t.detach().cpu().numpy()) for n, t in items]


def _run(model, arrays, output_names, torch):
    tensors = tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in arrays)
    torch.manual_seed(0)
    with torch.no_grad():
        return _flatten_outputs(model(*tensors), output_names), tensors


def export_torch(model, inputs, out, dynamic=None, opset=17, sequence_axis=None, training=False, output_names=None,
                 data_sets=None, seed=0, module_ref=None, exporter="torchscript", constant_folding=True):
    """Exports `model` (a torch.nn.Module) to `out`/model.onnx with references and export.json.

    inputs: input specs ("x:float32[2,3,64,64]", a list of them, or InputSpec objects), in forward() order.
    dynamic: "auto", "x:0=batch,1=seq_len" strings, or {name: {axis: symbol}}; None for static shapes.
    training: export in training mode (Dropout active, BatchNorm on batch statistics); by default the
      module is put in eval() mode first, and export.json says whether it had to be.
    data_sets: optional [inputs for set 0, inputs for set 1], each a list of numpy arrays in spec order;
      default: synthesised, set 1 at another size along every dynamic axis.
    Returns the export.json record; raises ExportError (its code and fix) when the export fails.
    """
    try:
        import torch
    except ImportError as e:
        raise ExportError("export.framework-missing", f"PyTorch cannot be imported: {e}",
                          "install torch (scripts/setup.sh installs Debian's python3-torch)") from e
    if exporter not in ("torchscript", "dynamo"):
        raise ExportError("export.bad-arguments", f"--exporter '{exporter}': expected torchscript or dynamo",
                          "use --exporter torchscript (torch.onnx.export)")
    if exporter == "dynamo" and not hasattr(torch.onnx, "dynamo_export"):
        raise ExportError("export.bad-arguments",
                          f"the dynamo exporter needs torch >= 2.0; this is torch {torch.__version__}",
                          "use --exporter torchscript (the default), or install a newer torch")
    if not isinstance(model, torch.nn.Module):
        raise ExportError("export.bad-module", f"the factory returned {type(model).__name__}, not a torch.nn.Module",
                          "return the model object (an nn.Module instance) from the factory")
    specs = parse_inputs(inputs)
    dyn = parse_dynamic(dynamic, specs, sequence_axis)
    max_opset = _max_opset(torch)
    if not 7 <= opset <= max_opset:
        raise ExportError("export.bad-arguments", f"--opset {opset}: torch {torch.__version__} exports opsets 7..{max_opset}",
                          f"choose an opset between 7 and {max_opset}")
    record = common.base_record("torch", torch.__version__,
                                "torch.onnx.export (TorchScript)" if exporter == "torchscript" else "torch.onnx.dynamo_export",
                                torch.__version__, opset, specs, dyn)
    record["module"] = module_ref
    record["module_was_training"] = bool(model.training)
    record["training"] = bool(training)
    record["eval_enforced"] = not training
    record["constant_folding"] = bool(constant_folding)
    os.makedirs(out, exist_ok=True)
    try:
        if training:
            model.train()
        else:
            model.eval()

        shapes0 = {s.name: list(s.shape) for s in specs}
        arrays0 = data_sets[0] if data_sets else synthesize(specs, seed=seed)
        shapes0 = {s.name: list(a.shape) for s, a in zip(specs, arrays0)}
        shapes1 = second_shapes([s.__class__(s.name, s.dtype, shapes0[s.name], s.low, s.high) for s in specs], dyn)
        arrays1 = data_sets[1] if data_sets and len(data_sets) > 1 else synthesize(specs, shapes1, seed=seed + 1)
        shapes1 = {s.name: list(a.shape) for s, a in zip(specs, arrays1)}
        try:
            outputs0, tensors0 = _run(model, arrays0, output_names, torch)
        except ExportError:
            raise
        except Exception as e:
            raise ExportError("export.bad-inputs", f"the model does not run on the given inputs "
                              f"({', '.join(s.describe() for s in specs)}): {type(e).__name__}: {str(e).splitlines()[0]}",
                              "make --inputs match what forward() takes: names in order, element types and shapes") from e
        try:
            outputs1, _ = _run(model, arrays1, output_names, torch)
        except Exception as e:
            # The framework itself fails at the other size: the model is not dynamic along those axes. The
            # export still serves data set 0's shapes; the second data set is left out and the reason recorded.
            outputs1 = None
            record["second_data_set_error"] = (f"{type(e).__name__} at {shapes1}: {str(e).splitlines()[0]}")
        names_out = [n for n, _ in outputs0]
        out_axes = common.output_axes(outputs0, outputs1, dyn, shapes0, shapes1) if dyn and outputs1 else {}
        dynamic_axes = {**{n: dict(a) for n, a in dyn.items()}, **out_axes}
        record["output_dynamic_axes"] = {n: {str(a): s for a, s in sorted(ax.items())} for n, ax in out_axes.items()}

        def do_export(target, at_opset):
            kwargs = dict(opset_version=at_opset, input_names=[s.name for s in specs], output_names=names_out,
                          dynamic_axes=dynamic_axes or None, do_constant_folding=constant_folding,
                          training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL)
            torch.manual_seed(0)
            torch.onnx.export(model, tensors0, target, **kwargs)

        def probe(at_opset):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    do_export(io.BytesIO(), at_opset)
                    return True
                except Exception:
                    return False

        model_path = os.path.join(out, "model.onnx")
        with common.recorded_warnings() as records:
            try:
                do_export(model_path, opset)
            except Exception as e:
                raise translate_torch_error(e, opset, probe) from e
        record["warnings"] = common.finish_warnings(records)
        if training:
            model.train()
        record["data_sets"], record["inputs_dropped"], onnx_model, _ = common.write_data_sets(
            out, model_path, specs, [(arrays0, outputs0)] + ([(arrays1, outputs1)] if outputs1 else []))
        record["onnx_checker"] = common.check_model(onnx_model)
        record["outputs"] = [{"name": n, **testdata.describe(a)} for n, a in outputs0]
    except ExportError as error:
        common.write_error_record(out, record, error)
        raise
    testdata.write_export_json(out, record)
    return record
