"""Export failures as diagnoses: a stable code (the same codes `ortkit explain` lists), what failed,
and what to do. Exporter messages are matched against a table and translated."""

import re


class ExportError(Exception):
    """An export that could not finish. `code` is an ortkit diagnosis code (export.*)."""

    def __init__(self, code, message, fix=""):
        super().__init__(message)
        self.code = code
        self.message = message
        self.fix = fix

    def to_json(self):
        return {"code": self.code, "message": self.message, "fix": self.fix}

    def render(self):
        text = f"error  {self.code}  {self.message}"
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


def translate_torch_error(error, opset, probe=None):
    """An ExportError for an exception torch.onnx.export raised at `opset`.

    `probe(opset) -> bool` retries the export at another opset; when the exporter's message does not
    say which opset added the operator, the opsets above `opset` are tried in order to find one.
    """
    text = str(error).strip()
    first_line = text.splitlines()[0] if text else type(error).__name__
    match = _UNSUPPORTED.search(text)
    if match:
        op = match.group(1)
        added = _ADDED_IN.search(text)
        works = int(added.group(1)) if added else None
        if works is None and probe is not None:
            from .torch_export import MAX_TORCH_OPSET

            for candidate in range(opset + 1, MAX_TORCH_OPSET + 1):
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
