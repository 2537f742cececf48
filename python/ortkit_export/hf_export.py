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
    "text-generation-with-past": ("AutoModelForCausalLM", ["logits"], "text-with-past"),
    "image-classification": ("AutoModelForImageClassification", ["logits"], "image"),
}


def _wrapper(torch, model, input_names, output_names, extra, layers=0):
    """An nn.Module whose forward() takes `input_names` by position and passes them to `model` by name.
    With `layers`, the inputs past_key_values.N.key|value fill a DynamicCache and the cache the model returns
    becomes the outputs present.N.key|value: tensors in and out, which both exporters can write."""

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def outputs(self, *args):
            inputs = dict(zip(input_names, args))
            if not layers:
                result = self.model(**inputs, **extra)
                return {name: result[name] for name in output_names}
            from transformers.cache_utils import DynamicCache

            cache = DynamicCache(config=self.model.config)
            for i in range(layers):
                cache.update(inputs.pop(f"past_key_values.{i}.key"), inputs.pop(f"past_key_values.{i}.value"), i)
            result = self.model(**inputs, past_key_values=cache, use_cache=True, return_dict=True)
            found = {name: result[name] for name in output_names}
            for i, layer in enumerate(result.past_key_values.layers):
                found[f"present.{i}.key"], found[f"present.{i}.value"] = layer.keys, layer.values
            return found

    # forward() needs a fixed signature, one parameter per input, for torch.export's dynamic_shapes.
    params = ", ".join(f"input_{i}" for i in range(len(input_names)))
    namespace = {}
    exec(f"def forward(self, {params}):\n    return self.outputs({params})\n", namespace)  # noqa: S102
    Wrapped.forward = namespace["forward"]
    return Wrapped()


def _cache_layout(config):
    """(layers, key/value heads, head size) of a decoder's cache."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return config.num_hidden_layers, kv_heads, head_dim


def _with_past_data_sets(config, layers, kv_heads, head_dim, batch, seq_len, seed):
    """Two data sets whose attention mask spans the cache and the new tokens (total_len = past_len + seq_len)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    sets = []
    for b, s, p in ((batch, seq_len, seq_len + 1), (batch + 1, seq_len + 2, seq_len + 3)):
        arrays = [rng.integers(1, vocab, (b, s)).astype(np.int64), np.ones((b, p + s), np.int64)]
        arrays += [rng.standard_normal((b, kv_heads, p, head_dim)).astype(np.float32) for _ in range(2 * layers)]
        sets.append(arrays)
    return sets


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
    if kind.startswith("text"):
        positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        if positions:
            # Position embeddings: one row per position, so no sequence is longer (the sweep stays within it).
            dim_limits["seq_len"] = int(positions)
        specs = _text_inputs(config, parameters, batch, seq_len)
        dynamic, sequence_axis = "auto", 1 if kind == "text" else None
    else:
        specs = _image_inputs(config, batch)
        dynamic, sequence_axis = "auto", None
    layers, data_sets, dim_sums = 0, None, {}
    if kind == "text-with-past":
        # The decoder step: new tokens and the cache of the earlier ones in, logits and the grown cache out.
        layers, kv_heads, head_dim = _cache_layout(config)
        seq_len = min(seq_len, 4)
        data_sets = _with_past_data_sets(config, layers, kv_heads, head_dim, batch, seq_len, seed)
        past_names = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
        specs = [f"input_ids:int64[{batch},{seq_len}]", f"attention_mask:int64[{batch},{2 * seq_len + 1}]"] + \
            [f"{n}:float32[{batch},{kv_heads},{seq_len + 1},{head_dim}]" for n in past_names]
        dynamic = ["input_ids:0=batch,1=seq_len", "attention_mask:0=batch,1=total_len"] + \
            [f"{n}:0=batch,2=past_len" for n in past_names]
        dim_sums = {"total_len": ["past_len", "seq_len"]}
        if "seq_len" in dim_limits:  # positions are shared by the cache and the new tokens
            dim_limits = {"seq_len": dim_limits["seq_len"] // 2, "past_len": dim_limits["seq_len"] // 2}
        extra = {}
    names = [s.split(":")[0] for s in specs]
    wrapped = _wrapper(torch, model, names, output_names, extra, layers).eval()  # from_pretrained gives eval too
    record_extra = {"hf": {"checkpoint": os.path.abspath(checkpoint), "task": task, "model_type": config.model_type,
                           "architecture": type(model).__name__, "transformers_version": transformers.__version__,
                           "route": f"ortkit wrapper (inputs by name, {', '.join(output_names)} out) + torch.onnx.export"},
                    "dim_limits": dim_limits, "dim_sums": dim_sums}
    outputs = output_names + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    return export_torch(wrapped, specs, out, dynamic=dynamic, sequence_axis=sequence_axis, opset=opset,
                        output_names=outputs, seed=seed, data_sets=data_sets, module_ref=os.path.abspath(checkpoint),
                        exporter=exporter, record_extra=record_extra)
