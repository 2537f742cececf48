"""Hugging Face Transformers → ONNX from a local checkpoint folder (what save_pretrained writes; nothing is
downloaded): the model is loaded for its task, wrapped so that forward() takes exactly the inputs ONNX Runtime
users expect, by name, and returns the task's outputs as tensors, then exported with export_torch."""

import inspect
import os

from .errors import ExportError
from .torch_export import export_torch

# task -> (Auto class, the outputs kept, the kind of inputs)
TASKS = {
    "feature-extraction": ("AutoModel", ["last_hidden_state"], "text"),
    "text-classification": ("AutoModelForSequenceClassification", ["logits"], "text"),
    "text-generation": ("AutoModelForCausalLM", ["logits"], "text"),
    "image-classification": ("AutoModelForImageClassification", ["logits"], "image"),
}


def _wrapper(torch, model, input_names, output_names, extra):
    """An nn.Module whose forward() takes `input_names` by position and passes them to `model` by name."""

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def outputs(self, **inputs):
            result = self.model(**inputs, **extra)
            return {name: result[name] for name in output_names}

    # forward() needs a fixed signature for torch.export's dynamic_shapes and for the tracer.
    if input_names == ["pixel_values"]:
        Wrapped.forward = lambda self, pixel_values: self.outputs(pixel_values=pixel_values)
    elif input_names == ["input_ids", "attention_mask"]:
        Wrapped.forward = lambda self, input_ids, attention_mask: self.outputs(
            input_ids=input_ids, attention_mask=attention_mask)
    else:
        Wrapped.forward = lambda self, input_ids, attention_mask, token_type_ids: self.outputs(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
    return Wrapped()


def _text_inputs(config, parameters, batch, seq_len):
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    specs = [f"input_ids:int64[{batch},{seq_len}]=1..{vocab}", f"attention_mask:int64[{batch},{seq_len}]"]
    types = int(getattr(config, "type_vocab_size", 0) or 0)
    if "token_type_ids" in parameters and types > 0:
        specs.append(f"token_type_ids:int64[{batch},{seq_len}]=0..{types}")
    return specs


def _image_inputs(config, batch):
    size = getattr(config, "image_size", 224)
    height, width = (size, size) if isinstance(size, int) else tuple(size)
    channels = int(getattr(config, "num_channels", 3) or 3)
    return [f"pixel_values:float32[{batch},{channels},{height},{width}]"]


def export_hf(checkpoint, task, out, batch=2, seq_len=16, opset=None, exporter=None, seed=0):
    """Exports the Transformers model in `checkpoint` (a local folder) for `task` to `out`, with references."""
    if task not in TASKS:
        raise ExportError("export.bad-arguments", f"--task '{task}': expected one of {', '.join(TASKS)}",
                          "choose the task the checkpoint was trained for")
    if not os.path.isfile(os.path.join(checkpoint, "config.json")):
        raise ExportError("export.bad-module", f"'{checkpoint}' has no config.json: not a Transformers checkpoint folder",
                          "pass the folder save_pretrained() wrote (config.json and the weights); nothing is downloaded")
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ExportError("export.framework-missing", f"Transformers or PyTorch cannot be imported: {e}",
                          "run scripts/setup.sh (it installs the pinned versions into .deps/python)") from e
    auto_class, output_names, kind = TASKS[task]
    try:
        config = transformers.AutoConfig.from_pretrained(checkpoint, local_files_only=True)
        model = getattr(transformers, auto_class).from_pretrained(checkpoint, local_files_only=True)
    except Exception as e:
        raise ExportError("export.bad-module", f"Transformers cannot load '{checkpoint}' as {auto_class}: "
                          f"{type(e).__name__}: {str(e).splitlines()[0]}",
                          f"check that the checkpoint's architecture fits --task {task}") from e
    parameters = inspect.signature(model.forward).parameters
    extra = {"return_dict": True}
    if "use_cache" in parameters:
        extra["use_cache"] = False  # the cache is an object no exporter can write as outputs
    dim_limits = {}
    if kind == "text":
        positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        if positions:
            # Position embeddings: one row per position, so no sequence is longer (the sweep stays within it).
            dim_limits["seq_len"] = int(positions)
        specs = _text_inputs(config, parameters, batch, seq_len)
        dynamic, sequence_axis = "auto", 1
    else:
        specs = _image_inputs(config, batch)
        dynamic, sequence_axis = "auto", None
    names = [s.split(":")[0] for s in specs]
    wrapped = _wrapper(torch, model, names, output_names, extra).eval()  # from_pretrained gives eval mode too
    record_extra = {"hf": {"checkpoint": os.path.abspath(checkpoint), "task": task, "model_type": config.model_type,
                           "architecture": type(model).__name__, "transformers_version": transformers.__version__,
                           "route": f"ortkit wrapper (inputs by name, {', '.join(output_names)} out) + torch.onnx.export"},
                    "dim_limits": dim_limits}
    return export_torch(wrapped, specs, out, dynamic=dynamic, sequence_axis=sequence_axis, opset=opset,
                        output_names=output_names, seed=seed, module_ref=os.path.abspath(checkpoint),
                        exporter=exporter, record_extra=record_extra)
