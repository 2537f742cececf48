"""Export failures as diagnoses: a stable code (the same codes `ortkit explain` lists), what failed,
and what to do. Exporter messages are matched against a table and translated."""

import os
import re
import sys
import traceback


class ExportError(Exception):
    """An export that could not finish. `code` is an ortkit diagnosis code (export.*)."""

    def __init__(self, code, message, fix="", location=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.fix = fix
        self.location = location  # {"file", "line", "source"}: the user's line the failure points at

    def to_json(self):
        json = {"code": self.code, "message": self.message, "fix": self.fix}
        if self.location:
            json["location"] = self.location
        return json

    def render(self):
        text = f"error  {self.code}  {self.message}"
        if self.location:
            text += f"\n  at:  {self.location['file']}:{self.location['line']}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


# Operators whose replacement is better than a newer opset (when the exporter has none at any opset).
REPLACEMENTS = {
    "aten::unique_dim": "call torch.unique without dim= (flatten first), or compute the result outside the model",
    "aten::nonzero_numpy": "use torch.nonzero(x) instead of torch.where(x) with one argument",
    "aten::fft_fft": "torch 1.13 cannot export FFTs: compute them outside the model or use torch.stft via a matmul",
    "aten::fft_rfft": "torch 1.13 cannot export FFTs: compute them outside the model",
    "aten::_transformer_encoder_layer_fwd": "export in eval mode with torch.no_grad() off, or disable the fast path "
                                            "(torch.backends.mha.set_fastpath_enabled(False) where available)",
    "aten::scaled_dot_product_attention": "write attention out as matmul + softmax, or export with a newer torch",
}

_UNSUPPORTED = re.compile(r"Exporting the operator '?([\w:.]+)'? to ONNX opset version (\d+) is not supported")
_ADDED_IN = re.compile(r"added in version (\d+)")


def translate_torch_error(error, opset, probe=None, max_opset=17):
    """An ExportError for an exception torch.onnx.export raised at `opset`.

    `probe(opset) -> bool` retries the export at another opset; when the exporter's message does not
    say which opset added the operator, the opsets above `opset` up to `max_opset` (the installed
    exporter's) are tried in order to find one.
    """
    text = str(error).strip()
    first_line = text.splitlines()[0] if text else type(error).__name__
    match = _UNSUPPORTED.search(text)
    if match:
        op = match.group(1)
        added = _ADDED_IN.search(text)
        works = int(added.group(1)) if added else None
        if works is None and probe is not None:
            for candidate in range(opset + 1, max_opset + 1):
                if probe(candidate):
                    works = candidate
                    break
        message = f"the exporter cannot express operator '{op}' at ONNX opset {opset}"
        if works is not None:
            message += f"; opset {works} supports it"
            fix = f"export again with --opset {works} (torch.onnx.export(..., opset_version={works}))"
            if works > 17:
                fix += "; ONNX Runtime 1.29 runs opsets up to 21"
        elif op in REPLACEMENTS:
            fix = REPLACEMENTS[op]
        else:
            fix = (f"no opset up to the exporter's maximum supports '{op}': replace it in the model with operators "
                   "that export, or register a custom symbolic (torch.onnx.register_custom_op_symbolic)")
        if works is not None and op in REPLACEMENTS:
            fix += "; or " + REPLACEMENTS[op]
        return ExportError("export.unsupported-operator", message, fix)
    clash = re.search(r"(\w+)\.forward\(\) got multiple values for argument '(\w+)'", text)
    if clash:
        return ExportError("export.bad-inputs",
                           f"{clash.group(1)}.forward() received '{clash.group(2)}' twice: the TorchScript exporter passes "
                           "the example inputs by position, and forward() takes them in another order (Transformers 5 "
                           "models take use_cache and other options positionally)",
                           "export with the default exporter (--exporter dynamo), which passes them by name; or "
                           "`ortkit export hf` for a Transformers model; or wrap the model in a module whose forward() "
                           "takes exactly the inputs, in order")
    if "Unsupported value kind" in text or "Could not export Python function" in text:
        return ExportError("export.failed", f"the tracer met something it cannot record: {first_line}",
                           "replace the Python-level construct named above with tensor operations")
    return ExportError("export.failed", f"torch.onnx.export raised {type(error).__name__}: {first_line}",
                       "read the exporter's message above; exporting with another --opset, or in eval mode, often helps")


def translate_tf_error(error, opset):
    text = str(error).strip()
    first_line = text.splitlines()[0] if text else type(error).__name__
    match = re.search(r"(?:Unsupported ops|unsupported op).*?[:\s]+Counter\(\{'?([\w]+)", text)
    if match:
        op = match.group(1)
        return ExportError("export.unsupported-operator",
                           f"tf2onnx cannot convert TensorFlow op '{op}' at ONNX opset {opset}",
                           "export again with a higher --opset (tf2onnx 1.17 goes up to 18), or replace the op")
    return ExportError("export.failed", f"tf2onnx raised {type(error).__name__}: {first_line}",
                       "read the converter's message above; another --opset, or an explicit input signature, often helps")


def classify_warning(category, message):
    """The export.* code for a warning the exporter raised (None: not worth a diagnosis)."""
    if category == "TracerWarning":
        if "Python boolean" in message:
            return "export.traced-branch"
        if re.search(r"Python (float|integer|number|index)|to a Python|Using len to get tensor shape", message):
            return "export.traced-constant"
        return "export.tracer-warning"
    return None


# What the torch.export-based exporter (torch.onnx.export(..., dynamo=True)) raises, by step:
# 1/3 torch.export captures the graph, 2/3 decomposes it, 3/3 translates it to ONNX.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SUMMARY = re.compile(r"<class '([\w.]+)'>: (.*)")
_USER_CALL = re.compile(r'File "([^"]+)", line (\d+), in (\w+)\n\s*(.*)')
_NO_FUNCTION = re.compile(r"No ONNX function found for <OpOverload\(op='([\w.]+)', overload='(\w+)'\)>")
_SPECIALIZED = re.compile(r"inferred a static shape of (\d+) for dimension inputs\[(\d+)\]\.shape\[(\d+)\]")
_NOT_KNOWN_TYPE = re.compile(r"Found <class '([\w.]+)'> in (output|input), which is not a known type")


# torch.export's graph dump annotates each node with the user's line: "# File: /m.py:12 in forward, code: if ...".
_GRAPH_ANNOTATION = re.compile(r"# File: (.+?):(\d+) in (\w+), code: (.*)")
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _is_users(file):
    """Whether `file` is the user's code: not an installed package, not the companion, not Python's own."""
    return not any(part in file for part in ("site-packages", "dist-packages", "<frozen", "<string>")) and \
        not os.path.abspath(file).startswith(_PACKAGE + os.sep) and not file.startswith(sys.prefix + os.sep)


def user_frame(error, text=None):
    """{"file", "line", "source"} of the user's line a failure points at, or None: the first frame of user code
    the framework's message shows (torch.export's "The following call raised this error", its graph dump's
    "# File: ..." annotations), else the innermost frame of user code in the exception's own traceback (the
    traced forward(), the Keras call())."""
    text = _ANSI.sub("", str(error)) if text is None else text
    for file, line, _, source in _USER_CALL.findall(text):
        if _is_users(file):
            return {"file": file, "line": int(line), "source": source.strip()}
    for file, line, _, source in _GRAPH_ANNOTATION.findall(text):
        if _is_users(file):
            return {"file": file, "line": int(line), "source": source.strip()}
    found = None
    for frame in traceback.extract_tb(error.__traceback__) if error.__traceback__ else ():
        if _is_users(frame.filename):
            found = {"file": frame.filename, "line": frame.lineno, "source": (frame.line or "").strip()}
    return found


def _user_location(text):
    """' at FILE:LINE: `source`' for the first frame outside the installed packages the message shows."""
    for file, line, _, source in _USER_CALL.findall(text):
        if "site-packages" not in file and "dist-packages" not in file:
            return f" at {file}:{line}: `{source.strip()}`"
    return ""


def located(translated, error):
    """`translated` (an ExportError) with the user's line that `error` points at, when it has none."""
    if translated.location is None:
        translated.location = user_frame(error)
    return translated


def specialized_axes(error):
    """[(input index, axis, size)] torch.export reports it had to fix although they were asked to be dynamic."""
    return [(int(k), int(a), int(v)) for v, k, a in _SPECIALIZED.findall(_ANSI.sub("", str(error)))]


def _data_dependent_guard(text, kind, detail, where):
    if kind in ("GuardOnDataDependentSymNode", "UserError") and "data-dependent" in detail or \
            "data-dependent expression" in text:
        return ExportError(
            "export.data-dependent-guard",
            f"torch.export cannot capture code that depends on a tensor's value{where} ({detail.split('.')[0]})",
            "write the branch as torch.cond(pred, true_fn, false_fn, (x,)) or compute both sides and pick with "
            "torch.where; avoid .item(), float(), int() and bool() on tensors in forward(). (--exporter torchscript "
            "exports it but records only the branch the example took: wrong for other inputs)")
    return None


def _unknown_output_type(text, kind, detail, where):
    match = _NOT_KNOWN_TYPE.search(text)
    if not match:
        return None
    cls = match.group(1).rpartition(".")[2]
    fix = ("return tensors (a tuple or dict of them) from forward(); or register the class with "
           "torch.utils._pytree.register_pytree_node so torch.export can flatten it")
    if "Cache" in cls:
        fix = ("export Transformers models with `ortkit export hf` (it flattens the cache into past_key_values.N.* "
               "inputs and present.N.* outputs); or call the model with use_cache=False; " + fix)
    return ExportError("export.unsupported-output-type",
                       f"the model's {match.group(2)} holds a {cls}, a type torch.export cannot flatten into tensors",
                       fix)


def _fixed_dynamic_axes(text, kind, detail, where):
    if not _SPECIALIZED.search(text):
        return None
    lines = [m.group(0) for m in _SPECIALIZED.finditer(text)]
    return ExportError("export.dim-specialized",
                       "axes asked to be dynamic were fixed by the trace: " + "; ".join(lines),
                       "use -1 or x.shape[k] in view/reshape and build tensors from the input's shape; or leave "
                       "those axes static")


def _no_translation(text, kind, detail, where):
    match = _NO_FUNCTION.search(text)
    if not match:
        return None
    op = f"{match.group(1).replace('aten.', 'aten::')}"
    return ExportError(
        "export.unsupported-operator",
        f"PyTorch's exporter has no ONNX translation for {op} (torch.ops.{match.group(1)}.{match.group(2)}), at any opset",
        f"replace {op} in the model with operators that export; or give a translation written in onnxscript: "
        f"torch.onnx.export(..., custom_translation_table={{torch.ops.{match.group(1)}.{match.group(2)}: fn}}); "
        "or try --exporter torchscript")


def _untranslatable_use(text, kind, detail, where):
    if kind != "NotImplementedError" or "step 3/3" not in text:
        return None
    return ExportError("export.unsupported-operator",
                       f"PyTorch's exporter cannot translate this use of an operator: {detail}",
                       "change the call's arguments as the message says (e.g. give histc explicit min and max), or "
                       "give a translation through custom_translation_table")


def _decomposition_failed(text, kind, detail, where):
    if "step 2/3" not in text:
        return None
    return ExportError("export.decomposition-failed",
                       f"PyTorch's exporter captured the graph but failed to decompose it (step 2/3): {kind}: {detail}",
                       "export with --exporter torchscript (the tracer does not decompose), or upgrade PyTorch; "
                       "if the model reshapes a non-contiguous tensor with view(), use reshape() or .contiguous()")


def _dynamic_shapes_mismatch(text, kind, detail, where):
    if "When dynamic_shapes" not in text and "When `dynamic_shapes`" not in text and "dynamic_shapes" not in detail:
        return None
    return ExportError("export.dynamic-shapes-mismatch",
                       f"torch.export cannot match the dynamic axes to forward()'s parameters{where}: {detail}",
                       "give forward() one named parameter per input (forward(self, *args) and **kwargs are one "
                       "parameter each to torch.export): wrap the model, e.g. def forward(self, a, b): return "
                       "self.model(a, b); dynamic_shapes must then have one entry per parameter, in order. Or "
                       "--exporter torchscript (dynamic_axes go by input name)")


def _failed_at_step(text, kind, detail, where):
    step = re.search(r"step (\d)/3", text)
    stage = {"1": "capturing the graph (torch.export, step 1/3)", "2": "decomposing the graph (step 2/3)",
             "3": "translating to ONNX (step 3/3)"}.get(step.group(1) if step else "", "exporting")
    return ExportError("export.failed", f"PyTorch's exporter failed while {stage}{where}: {kind}: {detail}",
                       "rewrite the construct the message names; --exporter torchscript may export it (check the result "
                       "with ortkit doctor)")


# What each failure of the torch.export-based exporter is, tried in order: (text, kind, detail, where) ->
# ExportError, or None when the rule does not apply; the first that applies wins.
_DYNAMO_RULES = (_data_dependent_guard, _unknown_output_type, _fixed_dynamic_axes, _no_translation,
                 _untranslatable_use, _decomposition_failed, _dynamic_shapes_mismatch)


def translate_dynamo_error(error, opset):
    """An ExportError for what torch.onnx.export(..., dynamo=True) raised, in that exporter's idiom."""
    text = _ANSI.sub("", str(error)).strip()
    summary = _SUMMARY.findall(text)
    kind, detail = summary[0] if summary else (type(error).__name__, text.splitlines()[0] if text else "")
    kind = kind.rpartition(".")[2]
    where = _user_location(text)
    for rule in _DYNAMO_RULES:
        translated = rule(text, kind, detail, where)
        if translated is not None:
            return translated
    return _failed_at_step(text, kind, detail, where)
