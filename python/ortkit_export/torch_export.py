"""PyTorch → ONNX through torch.onnx.export, with either exporter: the torch.export-based one (`dynamo`, the
default of PyTorch 2.9 and newer) or the TorchScript tracer; the framework's outputs are saved as references,
and the dynamic axes and the opset asked for are checked against what the file holds."""

import inspect
import io
import os
import re
import warnings

import numpy as np

from . import common, testdata
from .errors import ExportError, specialized_axes, translate_dynamo_error, translate_torch_error
from .spec import parse_dynamic, parse_inputs, second_shapes, synthesize

MAX_TORCH_OPSET = 17  # torch 1.13's TorchScript exporter; newer torch raises it (read at run time when available)
INLINE_LIMIT = 1800 * 1024 * 1024  # protobuf's 2 GiB limit on one file, less room for the graph itself


def _max_opset(torch):
    try:
        from torch.onnx import _constants

        return int(getattr(_constants, "ONNX_MAX_OPSET", MAX_TORCH_OPSET))
    except ImportError:
        return MAX_TORCH_OPSET


def default_exporter(torch):
    """What torch.onnx.export does when not told: `dynamo` from PyTorch 2.9 on, the TorchScript tracer before."""
    parameter = inspect.signature(torch.onnx.export).parameters.get("dynamo")
    return "dynamo" if parameter is not None and parameter.default is True else "torchscript"


def _flatten_outputs(result, output_names):
    import torch

    if isinstance(result, torch.Tensor):
        items = [("output", result)]
    elif isinstance(result, dict):
        items = [(k, v) for k, v in result.items() if v is not None]
    elif isinstance(result, (tuple, list)):
        items = [(f"output_{i}", t) for i, t in enumerate(result)]
    else:
        items = [("output", result)]
    for name, value in items:
        if not isinstance(value, torch.Tensor):
            cls = type(value).__name__
            where = f"output '{name}'" if isinstance(result, dict) else \
                "the output" if len(items) == 1 else f"element {name.rpartition('_')[2]} of the returned {type(result).__name__}"
            raise ExportError("export.unsupported-output-type",
                              f"the model returns an object of type {cls} as {where}: the exporters write only tensors (in tuples, "
                              "lists and dicts) as outputs",
                              "return tensors from forward()" + (
                                  "; for a Transformers model use `ortkit export hf` (the cache becomes present.N.key|"
                                  "value outputs) or pass use_cache=False" if "Cache" in cls else
                                  "; flatten the object into its tensors, or register it with "
                                  "torch.utils._pytree.register_pytree_node"))
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


def _weight_bytes(model):
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))


def _forward_location(model, module_ref):
    """(file, line) of the model's forward(), for findings about the export as a whole."""
    try:
        forward = type(model).forward
        return inspect.getsourcefile(forward) or "", inspect.getsourcelines(forward)[1]
    except (TypeError, OSError):
        return (module_ref or "").rpartition(":")[0], 0


def check_dynamic_axes(model_path, dyn, shapes0, exporter, where, specialized=()):
    """export.dim-specialized findings: every axis asked to be dynamic must be symbolic in the file's inputs.
    `specialized`: (input, axis, size) torch.export refused as dynamic (exported static on a second try)."""
    import onnx

    graph = onnx.load(model_path, load_external_data=False).graph
    dims = {i.name: i.type.tensor_type.shape.dim for i in graph.input}
    refused = {(name, axis) for name, axis, _ in specialized}
    findings = []
    for name, axes in dyn.items():
        for axis, symbol in sorted(axes.items()):
            if name not in dims or axis >= len(dims[name]) or not dims[name][axis].HasField("dim_value"):
                continue
            value, example = dims[name][axis].dim_value, shapes0[name][axis]
            if (name, axis) in refused:
                cause = ("torch.export found that forward() only works at that size (a view/reshape with the size "
                         "written out, a comparison of the size with a number, or a tensor of fixed size combined "
                         "with this input), so it was exported static")
                fix = ("use -1 or x.shape[k] in view/reshape and build tensors from the input's shape; "
                       "torch.export.export(model, args, dynamic_shapes=...) with torch.export.Dim names the guard")
            elif example <= 1:
                cause = (f"the example input's size there is {example}, and the exporter specialises sizes 0 and 1")
                fix = f"export with an example of size 2 or more on that axis (e.g. {name}[{axis}] = 2)"
            elif exporter == "dynamo":
                cause = "the exporter wrote the example's size in its place"
                fix = "export with --exporter torchscript, or leave the axis static"
            else:
                cause = "the tracer recorded the example's size as a constant (int(x.size(k)), len(x))"
                fix = "keep sizes as tensors (x.shape[k], -1 in reshape) so the tracer records them as operations"
            findings.append({
                "category": "", "code": "export.dim-specialized", "file": where[0], "line": where[1], "source": "",
                "message": f"input '{name}' axis {axis} was asked to be dynamic ('{symbol}') but the exported graph "
                           f"fixes it to {value}: {cause}",
                "fix": fix, "input": name, "axis": axis, "value": value})
    return findings


def opset_written(model_path):
    import onnx

    model = onnx.load(model_path, load_external_data=False)
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def check_opset(requested, written, exporter, torch_version, where):
    """export.opset-raised when the file's opset is not the one asked for (the default exporter raises
    anything below 18 to 18 and only logs it)."""
    if requested is None or written == requested:
        return []
    return [{"category": "", "code": "export.opset-raised", "file": where[0], "line": where[1], "source": "",
             "message": f"opset {requested} was asked for, but torch {torch_version}'s {exporter} exporter wrote "
                        f"opset {written}",
             "fix": f"ask for opset {written} or newer, or convert the file and prove it by the numbers: "
                    f"ortkit convert model.onnx --opset {requested} --out model-opset{requested}.onnx; "
                    "--exporter torchscript still writes older opsets (deprecated in PyTorch 2.9)"}]


def export_torch(model, inputs, out, dynamic=None, opset=None, sequence_axis=None, training=False, output_names=None,
                 data_sets=None, seed=0, module_ref=None, exporter=None, constant_folding=True, external_data=None,
                 record_extra=None):
    """Exports `model` (a torch.nn.Module) to `out`/model.onnx with references and export.json.

    inputs: input specs ("x:float32[2,3,64,64]", a list of them, or InputSpec objects), in forward() order.
    dynamic: "auto", "x:0=batch,1=seq_len" strings, or {name: {axis: symbol}}; None for static shapes.
    opset: the ONNX opset to write (None: the exporter's default); a file at another opset is reported.
    exporter: "dynamo" (torch.export-based) or "torchscript"; None: what the installed torch defaults to.
    external_data: weights in model.onnx.data beside the model; None: only when they exceed 1.8 GB.
    training: export in training mode (Dropout active, BatchNorm on batch statistics); by default the
      module is put in eval() mode first, and export.json says whether it had to be.
    data_sets: optional [inputs for set 0, inputs for set 1], each a list of numpy arrays in spec order;
      default: synthesised, set 1 at another size along every dynamic axis.
    record_extra: more fields for export.json (export_hf records the checkpoint and task).
    Returns the export.json record; raises ExportError (its code and fix) when the export fails.
    """
    try:
        import torch
    except ImportError as e:
        raise ExportError("export.framework-missing", f"PyTorch cannot be imported: {e}",
                          "run scripts/setup.sh (it installs the pinned PyTorch into .deps/python)") from e
    exporter = exporter or default_exporter(torch)
    if exporter not in ("torchscript", "dynamo"):
        raise ExportError("export.bad-arguments", f"--exporter '{exporter}': expected dynamo or torchscript",
                          "use --exporter dynamo (torch.export-based) or --exporter torchscript (the tracer)")
    if exporter == "dynamo" and "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        raise ExportError("export.bad-arguments",
                          f"torch {torch.__version__} has no torch.export-based exporter in torch.onnx.export",
                          "use --exporter torchscript, or install PyTorch 2.5 or newer")
    if not isinstance(model, torch.nn.Module):
        raise ExportError("export.bad-module", f"the factory returned {type(model).__name__}, not a torch.nn.Module",
                          "return the model object (an nn.Module instance) from the factory")
    specs = parse_inputs(inputs)
    dyn = parse_dynamic(dynamic, specs, sequence_axis)
    max_opset = _max_opset(torch)
    if opset is not None and not 7 <= opset <= max_opset:
        raise ExportError("export.bad-arguments", f"--opset {opset}: torch {torch.__version__} exports opsets 7..{max_opset}",
                          f"choose an opset between 7 and {max_opset}")
    exporter_name = "torch.onnx.export (torch.export)" if exporter == "dynamo" else "torch.onnx.export (TorchScript)"
    record = common.base_record("torch", torch.__version__, exporter_name, torch.__version__, opset, specs, dyn)
    record["exporter_kind"] = exporter
    record["opset_requested"] = opset
    record["module"] = module_ref
    record["module_was_training"] = bool(model.training)
    record["training"] = bool(training)
    record["eval_enforced"] = not training
    record["constant_folding"] = bool(constant_folding)
    record.update(record_extra or {})
    where = _forward_location(model, module_ref)
    os.makedirs(out, exist_ok=True)
    try:
        if training:
            model.train()
        else:
            model.eval()
        if external_data is None:
            external_data = _weight_bytes(model) > INLINE_LIMIT
        record["external_data"] = bool(external_data)

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
        requested_dyn = {n: dict(a) for n, a in dyn.items()}
        out_axes = common.output_axes(outputs0, outputs1, dyn, shapes0, shapes1) if dyn and outputs1 else {}
        record["output_dynamic_axes"] = {n: {str(a): s for a, s in sorted(ax.items())} for n, ax in out_axes.items()}

        def do_export(target, at_opset):
            kwargs = dict(opset_version=at_opset, input_names=[s.name for s in specs], output_names=names_out,
                          do_constant_folding=constant_folding,
                          training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL)
            if exporter == "dynamo":
                # Named dimensions as strings: the exporter makes each a Dim.DYNAMIC (no error when the trace
                # specialises one; check_dynamic_axes reports that) and writes the names into the file.
                kwargs.update(dynamo=True, external_data=external_data,
                              dynamic_shapes=tuple({a: s for a, s in dyn.get(spec.name, {}).items()} or None
                                                   for spec in specs) if dyn else None)
            else:
                if "dynamo" in inspect.signature(torch.onnx.export).parameters:
                    kwargs["dynamo"] = False
                kwargs["dynamic_axes"] = {**{n: dict(a) for n, a in dyn.items()}, **out_axes} or None
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
        for stale in (model_path, model_path + ".data"):
            if os.path.exists(stale):
                os.remove(stale)
        specialized = []
        with common.recorded_warnings() as records, common.quiet_exporter():
            try:
                try:
                    do_export(model_path, opset)
                except Exception as e:
                    # torch.export refuses a dynamic axis the trace fixed: export with it static, and say so.
                    fixed = specialized_axes(e) if exporter == "dynamo" else []
                    if not fixed:
                        raise
                    for index, axis, _ in fixed:
                        dyn.get(specs[index].name, {}).pop(axis, None)
                    specialized = [(specs[index].name, axis, size) for index, axis, size in fixed]
                    do_export(model_path, opset)
            except Exception as e:
                if exporter == "dynamo":
                    raise translate_dynamo_error(e, opset) from e
                raise translate_torch_error(e, opset or 17, probe, max_opset) from e
        # One name on several inputs' axes is what ortkit asks for: the exporter's note about it is noise.
        record["warnings"] = [w for w in common.finish_warnings(records)
                              if not re.search(r"axis name: (\w+) will not be used, .* another axis: \1\.$", w["message"])]
        written = opset_written(model_path)
        record["opset"] = written
        record["warnings"] += check_opset(opset, written, exporter, torch.__version__, where)
        record["warnings"] += check_dynamic_axes(model_path, requested_dyn, shapes0, exporter, where, specialized)
        record["dynamic_axes"] = {n: {str(a): s for a, s in sorted(ax.items())} for n, ax in dyn.items() if ax}
        if training:
            model.train()
        record["data_sets"], record["inputs_dropped"], onnx_model, _ = common.write_data_sets(
            out, model_path, specs, [(arrays0, outputs0)] + ([(arrays1, outputs1)] if outputs1 else []))
        record["onnx_checker"] = common.check_model(model_path)
        if exporter == "dynamo" and opset is not None and opset < 18 and written == opset \
                and record["onnx_checker"] != "passed":
            record["warnings"].append({
                "category": "", "code": "export.opset-conversion-broken", "file": where[0], "line": where[1],
                "source": "", "message": f"torch {torch.__version__}'s exporter writes opset 18 and up and converted the "
                f"file down to opset {opset}; the ONNX checker rejects the result ({record['onnx_checker']})",
                "fix": f"export at opset 18 or newer (leave --opset out), then convert and prove the result by the numbers: "
                       f"ortkit convert model.onnx --opset {opset} --out model-opset{opset}.onnx"})
        record["outputs"] = [{"name": n, **testdata.describe(a)} for n, a in outputs0]
    except ExportError as error:
        common.write_error_record(out, record, error)
        raise
    testdata.write_export_json(out, record)
    return record
