"""What the PyTorch and TensorFlow paths share: warnings capture, output axes, the data sets."""

import contextlib
import linecache
import logging
import os
import sys
import warnings

import numpy as np
import onnx

from . import testdata
from .errors import ExportError, classify_warning
from .record import ArrayInfo, DataSetInfo, ExportWarning


@contextlib.contextmanager
def recorded_warnings(loggers=()):
    """Collects Python warnings (every occurrence) and WARNING records of `loggers` into a list of dicts."""
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append({"category": "log:" + record.name, "message": record.getMessage(),
                            "file": record.pathname, "line": record.lineno})

    handler = Collect(level=logging.WARNING)
    for name in loggers:
        logging.getLogger(name).addHandler(handler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield records
        finally:
            for name in loggers:
                logging.getLogger(name).removeHandler(handler)
            for w in caught:
                records.append({"category": w.category.__name__, "message": str(w.message), "file": w.filename,
                                "line": w.lineno})


def _inside_framework(path):
    parts = os.path.normpath(path or "").split(os.sep)
    return any(p in ("torch", "tensorflow", "keras", "tf2onnx", "onnx", "transformers") for p in parts) and \
        any(p in ("site-packages", "dist-packages") for p in parts)


def finish_warnings(records):
    """Deduplicated ExportWarnings, each with the source line it points at and its export.* code (or None)."""
    seen, result = set(), []
    for r in records:
        key = (r["category"], r["message"], r["file"], r["line"])
        if key in seen:
            continue
        seen.add(key)
        source = linecache.getline(r["file"], r["line"]).strip() if r["file"] and r["line"] else ""
        # A warning raised inside the framework's own code is about its internals, not a line the user can change.
        code = None if _inside_framework(r["file"]) else classify_warning(r["category"], r["message"])
        result.append(ExportWarning(category=r["category"], message=r["message"], file=r["file"], line=r["line"],
                                    source=source, code=code))
    return result


def output_axes(outputs0, outputs1, dynamic, shapes0, shapes1):
    """Symbols for output axes whose size changes between the two data sets like an input symbol's does."""
    symbol_sizes, symbol_axis = {}, {}
    for name, axes in dynamic.items():
        for axis, symbol in axes.items():
            symbol_sizes.setdefault(symbol, (shapes0[name][axis], shapes1[name][axis]))
            symbol_axis.setdefault(symbol, axis)
    result = {}
    for name, a0, a1 in zip([n for n, _ in outputs0], [a for _, a in outputs0], [a for _, a in outputs1]):
        if a0.ndim != a1.ndim:
            continue
        for axis, (d0, d1) in enumerate(zip(a0.shape, a1.shape)):
            if d0 == d1:
                continue
            # Sizes alone can be ambiguous (height and width both 16 -> 24): prefer the symbol at the same axis.
            candidates = sorted((symbol_axis[s] != axis, s) for s, sizes in symbol_sizes.items() if sizes == (d0, d1))
            if not candidates:
                # A cache grows by the new tokens: present's length is past_len + seq_len, named as torch.export does.
                candidates = [(0, f"{a} + {b}") for i, a in enumerate(symbol_sizes) for b in list(symbol_sizes)[i + 1:]
                              if (symbol_sizes[a][0] + symbol_sizes[b][0], symbol_sizes[a][1] + symbol_sizes[b][1])
                              == (d0, d1)]
            symbol = candidates[0][1] if candidates else f"{name}_dim{axis}"
            result.setdefault(name, {})[axis] = symbol
    return result


def write_data_sets(out, model_path, specs, data_sets):
    """Writes test_data_set_K for each (input arrays, [(output name, array)]) pair; inputs are matched to
    the graph's inputs by name (an input the exporter dropped is left out and listed).
    Returns ([DataSetInfo], dropped input names, the graph's ModelProto, its output names)."""
    graph_inputs, graph_outputs, model = testdata.graph_io(model_path)
    dropped = [s.name for s in specs if s.name not in graph_inputs]
    described = []
    for k, (arrays, outputs) in enumerate(data_sets):
        by_name = {s.name: a for s, a in zip(specs, arrays)}
        missing = [n for n in graph_inputs if n not in by_name]
        if missing:
            raise ExportError("export.failed", f"the exported graph has inputs {missing} that --inputs does not name",
                              "name every input the model takes in --inputs (the graph's inputs are: "
                              + ", ".join(graph_inputs) + ")")
        if len(outputs) != len(graph_outputs):
            raise ExportError("export.failed", f"the framework returned {len(outputs)} outputs but the graph has "
                              f"{len(graph_outputs)} ({', '.join(graph_outputs)})",
                              "return a tensor, a tuple of tensors or a dict of tensors from the model")
        named_outputs = [(g, np.asarray(a)) for g, (_, a) in zip(graph_outputs, outputs)]
        folder = os.path.join(out, f"test_data_set_{k}")
        testdata.write_data_set(folder, [(n, by_name[n]) for n in graph_inputs], named_outputs)
        described.append(DataSetInfo(folder=f"test_data_set_{k}",
                                     inputs={n: ArrayInfo.of(by_name[n]) for n in graph_inputs},
                                     outputs={n: ArrayInfo.of(a) for n, a in named_outputs}))
    return described, dropped, model, graph_outputs


@contextlib.contextmanager
def quiet_exporter():
    """The exporters print progress on stdout; it goes to stderr, so that stdout holds only the result."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def check_model(model):
    """The ONNX checker's verdict on a ModelProto or a path (a path lets it find external data)."""
    try:
        onnx.checker.check_model(model)
        return "passed"
    except Exception as e:  # the checker's verdict is information here; ortkit check reports it fully
        return f"failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"


def name_dynamic_dims(model_path, input_axes, output_axes):
    """Gives the graph's dynamic dimensions the names asked for. tf2onnx calls every None dimension
    unk__N, so an output's batch would not be recognisably the input's; the names are replaced
    everywhere they occur (inputs, outputs, value_info)."""
    model = onnx.load(model_path)
    graph = model.graph
    renames = {}
    for values, axes in ((graph.input, input_axes), (graph.output, output_axes)):
        for value in values:
            dims = value.type.tensor_type.shape.dim
            for axis, symbol in axes.get(value.name, {}).items():
                axis = int(axis)
                if axis < len(dims):
                    if dims[axis].dim_param and dims[axis].dim_param != symbol:
                        renames.setdefault(dims[axis].dim_param, symbol)
                    dims[axis].dim_param = symbol
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in renames:
                dim.dim_param = renames[dim.dim_param]
    onnx.save(model, model_path)
