"""PyTorch → ONNX through torch.onnx.export, with either exporter: the torch.export-based one (`dynamo`, the
default of PyTorch 2.9 and newer) or the TorchScript tracer; the framework's outputs are saved as references,
and the dynamic axes and the opset asked for are checked against what the file holds."""

import dataclasses
import inspect
import io
import os
import re
import warnings

import numpy as np

from . import common
from .errors import ExportError, located, specialized_axes, translate_dynamo_error, translate_torch_error
from .record import ExportRecord, ExportWarning, TensorInfo, axes_json
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


def _finding(code, where, message, fix, **about):
    """A finding of the companion's own about this export: no category (it is no exporter's warning), a fix."""
    return ExportWarning(category="", code=code, file=where[0], line=where[1], source="", message=message, fix=fix,
                         **about)


def _specialized_cause(name, axis, example, exporter, refused):
    """(cause, fix) of an axis asked to be dynamic that the file holds at a fixed size."""
    if (name, axis) in refused:
        return ("torch.export found that forward() only works at that size (a view/reshape with the size "
                "written out, a comparison of the size with a number, or a tensor of fixed size combined "
                "with this input), so it was exported static",
                "use -1 or x.shape[k] in view/reshape and build tensors from the input's shape; "
                "torch.export.export(model, args, dynamic_shapes=...) with torch.export.Dim names the guard")
    if example <= 1:
        return (f"the example input's size there is {example}, and the exporter specialises sizes 0 and 1",
                f"export with an example of size 2 or more on that axis (e.g. {name}[{axis}] = 2)")
    if exporter == "dynamo":
        return "the exporter wrote the example's size in its place", \
            "export with --exporter torchscript, or leave the axis static"
    return ("the tracer recorded the example's size as a constant (int(x.size(k)), len(x))",
            "keep sizes as tensors (x.shape[k], -1 in reshape) so the tracer records them as operations")


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
            value = dims[name][axis].dim_value
            cause, fix = _specialized_cause(name, axis, shapes0[name][axis], exporter, refused)
            findings.append(_finding(
                "export.dim-specialized", where,
                f"input '{name}' axis {axis} was asked to be dynamic ('{symbol}') but the exported graph fixes it to "
                f"{value}: {cause}", fix, input=name, axis=axis, value=value))
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
    return [_finding("export.opset-raised", where,
                     f"opset {requested} was asked for, but torch {torch_version}'s {exporter} exporter wrote "
                     f"opset {written}",
                     f"ask for opset {written} or newer, or convert the file and prove it by the numbers: "
                     f"ortkit convert model.onnx --opset {requested} --out model-opset{requested}.onnx; "
                     "--exporter torchscript still writes older opsets (deprecated in PyTorch 2.9)")]


def check_opset_conversion(onnx_checker, requested, written, exporter, torch_version, where):
    """export.opset-conversion-broken when the exporter converted the file down to the opset asked for and the
    ONNX checker rejects the result."""
    if exporter != "dynamo" or requested is None or requested >= 18 or written != requested or onnx_checker == "passed":
        return []
    return [_finding("export.opset-conversion-broken", where,
                     f"torch {torch_version}'s exporter writes opset 18 and up and converted the file down to opset "
                     f"{requested}; the ONNX checker rejects the result ({onnx_checker})",
                     f"export at opset 18 or newer (leave --opset out), then convert and prove the result by the "
                     f"numbers: ortkit convert model.onnx --opset {requested} --out model-opset{requested}.onnx")]


@dataclasses.dataclass
class _Request:
    """What export_torch was asked for, checked: the exporter named, and (once the weights are counted) whether
    they go to model.onnx.data."""

    exporter: str
    opset: int | None
    max_opset: int
    training: bool
    constant_folding: bool
    external_data: bool | None
    output_names: list | None


def _import_torch():
    try:
        import torch
    except ImportError as e:
        raise ExportError("export.framework-missing", f"PyTorch cannot be imported: {e}",
                          "run scripts/setup.sh (it installs the pinned PyTorch into .deps/python)") from e
    return torch


def _check_exporter(torch, exporter, model):
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


def _check_opset_range(torch, opset):
    """The installed exporter's highest opset, after checking that `opset` (when given) is in its range."""
    max_opset = _max_opset(torch)
    if opset is not None and not 7 <= opset <= max_opset:
        raise ExportError("export.bad-arguments", f"--opset {opset}: torch {torch.__version__} exports opsets 7..{max_opset}",
                          f"choose an opset between 7 and {max_opset}")
    return max_opset


def _start_record(torch, model, request, specs, dyn, module_ref, record_extra):
    exporter = "torch.onnx.export (torch.export)" if request.exporter == "dynamo" else "torch.onnx.export (TorchScript)"
    record = ExportRecord.start("torch", torch.__version__, exporter, torch.__version__, request.opset, specs, dyn,
                                exporter_kind=request.exporter, opset_requested=request.opset, module=module_ref,
                                module_was_training=bool(model.training), training=bool(request.training),
                                eval_enforced=not request.training, constant_folding=bool(request.constant_folding))
    record.update(record_extra or {})
    return record


def _example_data(specs, dyn, data_sets, seed):
    """(arrays0, shapes0, arrays1, shapes1): the data sets given, or synthesised; set 1 with every dynamic axis
    at another size than set 0's."""
    arrays0 = data_sets[0] if data_sets else synthesize(specs, seed=seed)
    shapes0 = {s.name: list(a.shape) for s, a in zip(specs, arrays0)}
    shapes1 = second_shapes([s.__class__(s.name, s.dtype, shapes0[s.name], s.low, s.high) for s in specs], dyn)
    arrays1 = data_sets[1] if data_sets and len(data_sets) > 1 else synthesize(specs, shapes1, seed=seed + 1)
    shapes1 = {s.name: list(a.shape) for s, a in zip(specs, arrays1)}
    return arrays0, shapes0, arrays1, shapes1


INPUTS_FIX = "make --inputs match what forward() takes: names in order, element types and shapes"


def _run_first(model, arrays, specs, output_names, torch, inputs_fix):
    """([(output name, array)], input tensors) on data set 0: the references, and the example the exporter traces."""
    try:
        return _run(model, arrays, output_names, torch)
    except ExportError:
        raise
    except Exception as e:
        raise ExportError("export.bad-inputs", f"the model does not run on the given inputs "
                          f"({', '.join(s.describe() for s in specs)}): {type(e).__name__}: {str(e).splitlines()[0]}",
                          inputs_fix) from e


def _run_second(model, arrays, shapes, output_names, torch, record):
    """The outputs on data set 1, or None with the reason recorded."""
    try:
        return _run(model, arrays, output_names, torch)[0]
    except Exception as e:
        # The framework itself fails at the other size: the model is not dynamic along those axes. The
        # export still serves data set 0's shapes; the second data set is left out and the reason recorded.
        record.second_data_set_error = f"{type(e).__name__} at {shapes}: {str(e).splitlines()[0]}"
        return None


def _export_arguments(torch, request, specs, output_names, dyn, out_axes):
    """torch.onnx.export's keyword arguments, from the dynamic axes as they are now (a retry drops some)."""
    kwargs = dict(input_names=[s.name for s in specs], output_names=output_names,
                  do_constant_folding=request.constant_folding,
                  training=torch.onnx.TrainingMode.TRAINING if request.training else torch.onnx.TrainingMode.EVAL)
    if request.exporter == "dynamo":
        # Named dimensions as strings: the exporter makes each a Dim.DYNAMIC (no error when the trace
        # specialises one; check_dynamic_axes reports that) and writes the names into the file.
        kwargs.update(dynamo=True, external_data=request.external_data,
                      dynamic_shapes=tuple({a: s for a, s in dyn.get(spec.name, {}).items()} or None
                                           for spec in specs) if dyn else None)
    else:
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            kwargs["dynamo"] = False
        kwargs["dynamic_axes"] = {**{n: dict(a) for n, a in dyn.items()}, **out_axes} or None
    return kwargs


def _exporter_call(torch, model, tensors, request, specs, output_names, dyn, out_axes):
    """export(target, opset): torch.onnx.export of `model` on the example `tensors`; target a path or a buffer."""

    def export(target, at_opset):
        kwargs = _export_arguments(torch, request, specs, output_names, dyn, out_axes)
        torch.manual_seed(0)
        torch.onnx.export(model, tensors, target, opset_version=at_opset, **kwargs)

    return export


def _probe(export):
    """works_at(opset) -> bool: whether the export succeeds at another opset (written to memory, warnings muted)."""

    def works_at(at_opset):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                export(io.BytesIO(), at_opset)
                return True
            except Exception:
                return False

    return works_at


def _export_keeping_what_works(export, model_path, request, specs, dyn):
    """Exports to model_path. When torch.export refuses a dynamic axis the trace fixed, exports again with it
    static (removed from `dyn`) and returns [(input, axis, size)] of those axes."""
    try:
        export(model_path, request.opset)
        return []
    except Exception as e:
        fixed = specialized_axes(e) if request.exporter == "dynamo" else []
        if not fixed:
            raise
        for index, axis, _ in fixed:
            dyn.get(specs[index].name, {}).pop(axis, None)
        export(model_path, request.opset)
        return [(specs[index].name, axis, size) for index, axis, size in fixed]


def _write_model(export, model_path, request, specs, dyn):
    """Writes model_path; returns (the axes made static, the warnings raised meanwhile). An exporter's failure
    becomes an ExportError in its own idiom."""
    for stale in (model_path, model_path + ".data"):
        if os.path.exists(stale):
            os.remove(stale)
    with common.recorded_warnings() as captured, common.quiet_exporter():
        try:
            specialized = _export_keeping_what_works(export, model_path, request, specs, dyn)
        except Exception as e:
            if request.exporter == "dynamo":
                raise located(translate_dynamo_error(e, request.opset), e) from e
            raise located(translate_torch_error(e, request.opset or 17, _probe(export), request.max_opset), e) from e
    return specialized, captured


# One name on several inputs' axes is what ortkit asks for: the exporter's note about it is noise.
_SHARED_AXIS_NAME = re.compile(r"axis name: (\w+) will not be used, .* another axis: \1\.$")


def _check_file(record, torch, model_path, captured, request, requested_dyn, shapes0, specialized, where):
    """The exporter's warnings, and the companion's findings on the file: the opset and the dynamic axes."""
    record.warnings = [w for w in common.finish_warnings(captured) if not _SHARED_AXIS_NAME.search(w.message)]
    record.opset = opset_written(model_path)
    record.warnings += check_opset(request.opset, record.opset, request.exporter, torch.__version__, where)
    record.warnings += check_dynamic_axes(model_path, requested_dyn, shapes0, request.exporter, where, specialized)


def _write_references(record, out, model_path, specs, sets, outputs0):
    """test_data_set_K beside the model, the ONNX checker's verdict, the outputs of data set 0."""
    record.data_sets, record.inputs_dropped, _, _ = common.write_data_sets(out, model_path, specs, sets)
    record.onnx_checker = common.check_model(model_path)
    record.outputs = [TensorInfo(name=n, dtype=str(a.dtype), shape=list(a.shape)) for n, a in outputs0]


def _export(torch, model, out, request, specs, dyn, record, data_sets, seed, where, inputs_fix):
    """The export's steps once the arguments are checked; each adds to `record`."""
    if request.training:
        model.train()
    else:
        model.eval()
    if request.external_data is None:
        request.external_data = _weight_bytes(model) > INLINE_LIMIT
    record.external_data = bool(request.external_data)
    arrays0, shapes0, arrays1, shapes1 = _example_data(specs, dyn, data_sets, seed)
    outputs0, tensors0 = _run_first(model, arrays0, specs, request.output_names, torch, inputs_fix)
    outputs1 = _run_second(model, arrays1, shapes1, request.output_names, torch, record)
    requested_dyn = {n: dict(a) for n, a in dyn.items()}
    out_axes = common.output_axes(outputs0, outputs1, dyn, shapes0, shapes1) if dyn and outputs1 else {}
    record.output_dynamic_axes = axes_json(out_axes)

    model_path = os.path.join(out, "model.onnx")
    export = _exporter_call(torch, model, tensors0, request, specs, [n for n, _ in outputs0], dyn, out_axes)
    specialized, captured = _write_model(export, model_path, request, specs, dyn)
    _check_file(record, torch, model_path, captured, request, requested_dyn, shapes0, specialized, where)
    record.dynamic_axes = axes_json({n: ax for n, ax in dyn.items() if ax})
    if request.training:
        model.train()
    _write_references(record, out, model_path, specs,
                      [(arrays0, outputs0)] + ([(arrays1, outputs1)] if outputs1 else []), outputs0)
    record.warnings += check_opset_conversion(record.onnx_checker, request.opset, record.opset, request.exporter,
                                              torch.__version__, where)


def export_torch(model, inputs, out, dynamic=None, opset=None, sequence_axis=None, training=False, output_names=None,
                 data_sets=None, seed=0, module_ref=None, exporter=None, constant_folding=True, external_data=None,
                 record_extra=None, inputs_fix=INPUTS_FIX):
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
    record_extra: more fields of ExportRecord by name (export_hf records the checkpoint and task).
    inputs_fix: the fix of export.bad-inputs when the model does not run on the inputs (export_hf names no --inputs).
    Returns the export.json record (ExportRecord.to_json()); raises ExportError (its code and fix) when the
    export fails, after writing export.json with the error.
    """
    torch = _import_torch()
    exporter = exporter or default_exporter(torch)
    _check_exporter(torch, exporter, model)
    specs = parse_inputs(inputs)
    dyn = parse_dynamic(dynamic, specs, sequence_axis)
    request = _Request(exporter, opset, _check_opset_range(torch, opset), training, constant_folding, external_data,
                       output_names)
    record = _start_record(torch, model, request, specs, dyn, module_ref, record_extra)
    where = _forward_location(model, module_ref)
    os.makedirs(out, exist_ok=True)
    try:
        _export(torch, model, out, request, specs, dyn, record, data_sets, seed, where, inputs_fix)
    except ExportError as error:
        record.write_failure(out, error)
        raise
    record.write(out)
    return record.to_json()
