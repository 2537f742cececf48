"""Hugging Face Transformers → ONNX from a local checkpoint folder (what save_pretrained writes; nothing is
downloaded): the model is loaded for its task, wrapped so that forward() takes exactly the inputs ONNX Runtime
users expect, by name, and returns the task's outputs as tensors, then exported with export_torch."""

import inspect
import os

from .errors import ExportError
from .record import ExporterFallback, HfSource
from .torch_export import export_torch

# Model types whose graph torch.export (PyTorch 2.15) captures but fails to decompose (step 2/3): the TorchScript
# exporter is used for them at once instead of after a failed try (which costs seconds per file). Any other
# model that fails the same way falls back too; tests/e2e/export_hf.sh holds T5 to this route.
TORCHSCRIPT_FIRST = {"t5", "mt5", "umt5", "longt5"}

# task -> its routes, each (Auto class, the outputs kept, the kind of inputs): the first whose Auto class maps the
# checkpoint's configuration is taken (speech recognition is sequence-to-sequence for Whisper, CTC for Wav2Vec2).
TASKS = {
    "feature-extraction": (("AutoModel", ["last_hidden_state"], "text"),),
    "text-classification": (("AutoModelForSequenceClassification", ["logits"], "text"),),
    "text-generation": (("AutoModelForCausalLM", ["logits"], "text"),),
    "text-generation-with-past": (("AutoModelForCausalLM", ["logits"], "text-with-past"),),
    "image-classification": (("AutoModelForImageClassification", ["logits"], "image"),),
    "zero-shot-image-classification": (("AutoModelForZeroShotImageClassification",
                                        ["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"],
                                        "text-image"),),
    "text2text-generation": (("AutoModelForSeq2SeqLM", ["logits"], "text2text"),),
    "automatic-speech-recognition": (("AutoModelForSpeechSeq2Seq", ["logits"], "speech"),
                                     ("AutoModelForCTC", ["logits"], "ctc")),
}

# The sampling rate of audio models whose checkpoint folder holds no preprocessor_config.json (Wav2Vec2, HuBERT and
# WavLM were all trained on 16 kHz audio).
DEFAULT_SAMPLING_RATE = 16000


def _wrapper(torch, model, input_names, call):
    """An nn.Module whose forward() takes `input_names` by position and returns call(model, {name: tensor})."""

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def outputs(self, *args):
            return call(self.model, dict(zip(input_names, args)))

    # forward() needs a fixed signature, one parameter per input, for torch.export's dynamic_shapes.
    params = ", ".join(f"input_{i}" for i in range(len(input_names)))
    namespace = {}
    exec(f"def forward(self, {params}):\n    return self.outputs({params})\n", namespace)  # noqa: S102
    Wrapped.forward = namespace["forward"]
    return Wrapped().eval()


def _plain_call(output_names, extra):
    return lambda model, inputs: {name: model(**inputs, **extra)[name] for name in output_names}


def _cache_kwarg(model):
    """The name forward() takes the cache under: Transformers renames past_key_values to cache (deprecated in
    5.24, removed in 5.40)."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _cache_call(layers):
    """past_key_values.N.key|value fill a DynamicCache; the cache the model returns becomes present.N.key|value:
    tensors in and out, which both exporters can write.

    Every layer keeps its full cache, sliding ones included: Transformers applies a layer's window in the attention
    mask (the keys older than the window are masked out), so a full cache decodes as the trimmed one does, and one
    past_len holds for every layer. A DynamicCache built from the config would trim the sliding layers' present to
    the window while the other layers grow, which no single declared past_len describes."""

    def call(model, inputs):
        from transformers.cache_utils import DynamicCache

        cache = DynamicCache()
        for i in range(layers):
            cache.update(inputs.pop(f"past_key_values.{i}.key"), inputs.pop(f"past_key_values.{i}.value"), i)
        result = model(**inputs, **{_cache_kwarg(model): cache}, use_cache=True, return_dict=True)
        found = {"logits": result.logits}
        for i, layer in enumerate(result.past_key_values.layers):
            found[f"present.{i}.key"], found[f"present.{i}.value"] = layer.keys, layer.values
        return found

    return call


def _encoder_call(model, inputs):
    return {"last_hidden_state": model.get_encoder()(**inputs, return_dict=True).last_hidden_state}


def _presents(cache, found, parts=("decoder", "encoder")):
    """present.N.decoder.key|value (self-attention) and present.N.encoder.key|value (cross-attention), layer by
    layer: the names and order ONNX Runtime's sequence-to-sequence users read."""
    caches = {"decoder": cache.self_attention_cache.layers, "encoder": cache.cross_attention_cache.layers}
    for i in range(len(caches["decoder"])):
        for part in parts:
            found[f"present.{i}.{part}.key"], found[f"present.{i}.{part}.value"] = \
                caches[part][i].keys, caches[part][i].values
    return found


def _decoder_call(model, inputs):
    """The first decoding step: the tokens so far and the encoder's output in; logits and both caches out (the
    self-attention cache of these tokens, the cross-attention keys and values of the encoder's output)."""
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache
    from transformers.modeling_outputs import BaseModelOutput

    kwargs = {"decoder_input_ids": inputs["input_ids"], "use_cache": True, "return_dict": True,
              "encoder_outputs": BaseModelOutput(last_hidden_state=inputs["encoder_hidden_states"]),
              _cache_kwarg(model): EncoderDecoderCache(DynamicCache(), DynamicCache())}
    if "encoder_attention_mask" in inputs:
        kwargs["attention_mask"] = inputs["encoder_attention_mask"]
    result = model(**kwargs)
    return _presents(result.past_key_values, {"logits": result.logits})


def _decoder_with_past_call(layers, hidden):
    """Every later step: the new tokens and both caches in; logits and the grown self-attention cache out (the
    cross-attention cache never changes, so it is not returned)."""

    def call(model, inputs):
        import torch
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache
        from transformers.modeling_outputs import BaseModelOutput

        caches = {"decoder": DynamicCache(), "encoder": DynamicCache()}
        for i in range(layers):
            for part, cache in caches.items():
                cache.update(inputs.pop(f"past_key_values.{i}.{part}.key"),
                             inputs.pop(f"past_key_values.{i}.{part}.value"), i)
        ids = inputs["input_ids"]
        # The encoder's output is read only through the cross-attention cache: one position of zeros stands in.
        stand_in = torch.zeros((ids.shape[0], 1, hidden), dtype=torch.float32)
        kwargs = {"decoder_input_ids": ids, "use_cache": True, "return_dict": True,
                  "encoder_outputs": BaseModelOutput(last_hidden_state=stand_in),
                  _cache_kwarg(model): EncoderDecoderCache(caches["decoder"], caches["encoder"])}
        if "encoder_attention_mask" in inputs:
            kwargs["attention_mask"] = inputs["encoder_attention_mask"]
        result = model(**kwargs)
        return _presents(result.past_key_values, {"logits": result.logits}, parts=("decoder",))

    return call


def _seq2seq_cache_layout(config):
    """(decoder layers, heads, head size) of a sequence-to-sequence decoder's caches (T5's or Whisper's names)."""
    layers = getattr(config, "num_decoder_layers", None) or getattr(config, "decoder_layers", None) or \
        config.num_layers
    heads = getattr(config, "decoder_attention_heads", None) or config.num_heads
    head_dim = getattr(config, "d_kv", None) or config.d_model // heads
    return layers, heads, head_dim


# The attention layers whose cache `export hf` writes: the full cache of every layer, a sliding layer's window
# applied in its attention mask (what Transformers does when a DynamicCache is built without the config).
EXPORTED_LAYER_TYPES = ("full_attention", "sliding_attention")


def _attention_windows(config):
    """The window of each decoder layer (None: global attention), as Transformers lays out its cache; an
    ExportError naming the layer type for a layout whose cache past_key_values.N.key|value cannot express."""
    from transformers.cache_utils import get_layer_types_and_kwargs

    text = config.get_text_config(decoder=True)
    types, kwargs = get_layer_types_and_kwargs(text)
    for i, (layer_type, options) in enumerate(zip(types, kwargs)):
        if layer_type not in EXPORTED_LAYER_TYPES:
            window = options.get("sliding_window")
            raise ExportError(
                "export.unsupported-architecture",
                f"{config.model_type}: decoder layer {i} is a '{layer_type}' layer"
                + (f" (window {window})" if window else "") + ": --task text-generation-with-past exports the cache "
                f"of {' and '.join(EXPORTED_LAYER_TYPES)} layers only (the full cache of each, a window applied in "
                "the attention mask), the layouts it proves decode as Transformers does",
                "export without the cache (--task text-generation: every step recomputes the whole sequence), or "
                "write the decoding step yourself and export it with `ortkit export torch`")
    return [options.get("sliding_window") if layer_type == "sliding_attention" else None
            for layer_type, options in zip(types, kwargs)]


def _cache_layout(config):
    """(layers, key/value heads, head size) of a decoder's cache."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return config.num_hidden_layers, kv_heads, head_dim


# The most the past of test_data_set_1 may hold when it is lengthened to pass an attention window.
PAST_WINDOW_BYTES = 64 * 1024 * 1024


def _past_for_window(windows, layers, kv_heads, head_dim, batch, past, new, positions):
    """The past length of test_data_set_1: `past`, or the narrowest window when that is longer, so that its
    reference is a step past the window (where a trimmed cache and a full one part ways); `past` when that cache
    would exceed PAST_WINDOW_BYTES or the positions the model is made for."""
    window = min((w for w in windows if w), default=None)
    if window is None or window <= past:
        return past
    size = 2 * layers * (batch + 1) * kv_heads * window * head_dim * 4
    fits = size <= PAST_WINDOW_BYTES and (positions is None or window + new <= positions)
    return window if fits else past


def _window_facts(windows, total1):
    """export.json's record of the attention windows, for a decoder with any (total1: test_data_set_1's
    total_len)."""
    if not any(windows):
        return {}
    return {"attention_windows": windows, "references_past_window": total1 > min(w for w in windows if w)}


def _with_past_data_sets(config, layers, kv_heads, head_dim, batch, seq_len, seed, past1):
    """Two data sets whose attention mask spans the cache and the new tokens (total_len = past_len + seq_len);
    test_data_set_1 holds `past1` cached positions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    sets = []
    for b, s, p in ((batch, seq_len, seq_len + 1), (batch + 1, seq_len + 2, past1)):
        arrays = [rng.integers(1, vocab, (b, s)).astype(np.int64), np.ones((b, p + s), np.int64)]
        arrays += [rng.standard_normal((b, kv_heads, p, head_dim)).astype(np.float32) for _ in range(2 * layers)]
        sets.append(arrays)
    return sets


def _sub_config(config, kind):
    """The text or vision configuration of a model that nests them (CLIP's text_config, vision_config), else the
    configuration itself."""
    if kind == "text" and hasattr(config, "get_text_config"):
        return config.get_text_config()
    return getattr(config, f"{kind}_config", None) or config


def _text_inputs(config, parameters, batch, seq_len):
    text = _sub_config(config, "text")
    vocab = int(getattr(text, "vocab_size", 0) or 1000)
    specs = [f"input_ids:int64[{batch},{seq_len}]=1..{vocab}"]
    if "attention_mask" in parameters:
        specs.append(f"attention_mask:int64[{batch},{seq_len}]")
    types = int(getattr(text, "type_vocab_size", 0) or 0)
    if "token_type_ids" in parameters and types > 0:
        specs.append(f"token_type_ids:int64[{batch},{seq_len}]=0..{types}")
    return specs


def _image_inputs(config, batch):
    vision = _sub_config(config, "vision")
    size = getattr(vision, "image_size", 224)
    height, width = (size, size) if isinstance(size, int) else tuple(size)
    channels = int(getattr(vision, "num_channels", 3) or 3)
    return [f"pixel_values:float32[{batch},{channels},{height},{width}]"]


def _min_samples(config):
    """The fewest audio samples the convolutional feature encoder turns into one frame (Wav2Vec2's: 400), or None
    for a model without one."""
    kernels, strides = getattr(config, "conv_kernel", None), getattr(config, "conv_stride", None)
    if not kernels or not strides:
        return None
    samples = 1
    for kernel, stride in reversed(list(zip(kernels, strides))):
        samples = (samples - 1) * stride + kernel
    return samples


def _sampling_rate(checkpoint):
    """The sampling rate preprocessor_config.json states, else DEFAULT_SAMPLING_RATE."""
    import json

    try:
        with open(os.path.join(checkpoint, "preprocessor_config.json")) as f:
            return int(json.load(f).get("sampling_rate") or DEFAULT_SAMPLING_RATE)
    except (OSError, ValueError):
        return DEFAULT_SAMPLING_RATE


def _ctc_part(config, checkpoint, batch):
    """Raw audio in (input_values: batch x samples, at the sampling rate recorded), logits per frame out."""
    minimum = _min_samples(config)
    samples = max(1600, 4 * (minimum or 0))
    facts = {"sampling_rate": _sampling_rate(checkpoint)}
    if minimum:
        facts["min_samples"] = minimum
    return Part(None, None, [f"input_values:float32[{batch},{samples}]"], ["input_values:0=batch,1=samples"], None,
                facts=facts)


def _text_image_part(config, model, batch, seq_len):
    """A two-tower model as one file: texts and images in, each with its own batch, their similarities and
    embeddings out."""
    parameters = inspect.signature(model.forward).parameters
    positions = _positions(config, model)
    text = _text_inputs(config, parameters, batch + 1, _example_length(seq_len, positions))
    text_axes = [f"{spec.split(':')[0]}:0=text_batch,1=seq_len" for spec in text]
    return Part(None, None, text + _image_inputs(config, batch), text_axes + ["pixel_values:0=image_batch"], None,
                dim_limits=_limit("seq_len", positions))


def _example_length(seq_len, positions):
    """seq_len, or less when test_data_set_1 (half again as long) would pass the positions the model has."""
    return seq_len if not positions or seq_len * 3 // 2 <= positions else max(2, positions * 2 // 3)


class Part:
    """One ONNX file of an export: the wrapped model, its example inputs, dynamic axes and outputs."""

    def __init__(self, folder, call, specs, dynamic, outputs, sequence_axis=None, data_sets=None, dim_limits=None,
                 dim_sums=None, facts=None):
        self.folder, self.call, self.specs, self.dynamic, self.outputs = folder, call, specs, dynamic, outputs
        self.sequence_axis, self.data_sets = sequence_axis, data_sets
        self.dim_limits, self.dim_sums = dim_limits or {}, dim_sums or {}
        self.facts = facts or {}  # more fields of export.json's hf (HfSource) about this part


# The config's spellings of the positions a part is made for, in the order they are read (a decoder's own limit
# before the model's shared one: Whisper states max_target_positions, BART and Marian max_position_embeddings).
POSITION_NAMES = {
    "text": ("max_position_embeddings", "n_positions", "n_ctx", "max_source_positions"),
    "encoder": ("max_source_positions", "max_position_embeddings", "n_positions", "n_ctx"),
    "decoder": ("max_target_positions", "max_position_embeddings", "n_positions", "n_ctx"),
}


def _positions(config, model, side="text"):
    """The most positions a part runs, or None when the model has no such limit (relative positions, as T5's):
    the first of POSITION_NAMES[side] the config states (a nested model's text config, as CLIP's, when the
    top-level one states none), less the offset of position embeddings that start after padding_idx (RoBERTa
    and its family number positions from padding_idx + 1: 514 embeddings, 512 positions)."""
    configs = [config]
    text = config if not hasattr(config, "get_text_config") else \
        config.get_text_config(decoder=True) if side == "decoder" else config.get_text_config()
    if text is not config:
        configs.append(text)
    limit = next((int(getattr(c, n)) for c in configs for n in POSITION_NAMES[side] if getattr(c, n, None)), None)
    if limit is None or model is None:
        return limit
    import torch

    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Embedding) and name.endswith("position_embeddings") and \
                module.padding_idx is not None and module.num_embeddings <= limit:
            limit = min(limit, module.num_embeddings - module.padding_idx - 1)
    return limit


def _limit(dim, positions):
    return {dim: positions} if positions else {}


def _parts(kind, config, model, checkpoint, batch, seq_len, seed):
    """The files a task exports: one for most tasks, an encoder and a decoder for sequence-to-sequence."""
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    if kind == "image":
        return [Part(None, None, _image_inputs(config, batch), "auto", None)]
    if kind == "ctc":
        return [_ctc_part(config, checkpoint, batch)]
    if kind == "text-image":
        return [_text_image_part(config, model, batch, seq_len)]
    if kind == "text":
        positions = _positions(config, model)
        parameters = inspect.signature(model.forward).parameters
        seq_len = _example_length(seq_len, positions)
        return [Part(None, None, _text_inputs(config, parameters, batch, seq_len), "auto", None, sequence_axis=1,
                     dim_limits={"seq_len": positions} if positions else {})]
    if kind == "text-with-past":
        # One decoding step: new tokens and the cache of the earlier ones in, logits and the grown cache out.
        layers, kv_heads, head_dim = _cache_layout(config)
        windows = _attention_windows(config)
        seq_len = min(seq_len, 4)
        positions = _positions(config, model)
        past1 = _past_for_window(windows, layers, kv_heads, head_dim, batch, seq_len + 3, seq_len + 2, positions)
        past = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
        specs = [f"input_ids:int64[{batch},{seq_len}]", f"attention_mask:int64[{batch},{2 * seq_len + 1}]"] + \
            [f"{n}:float32[{batch},{kv_heads},{seq_len + 1},{head_dim}]" for n in past]
        dynamic = ["input_ids:0=batch,1=seq_len", "attention_mask:0=batch,1=total_len"] + \
            [f"{n}:0=batch,2=past_len" for n in past]
        return [Part(None, _cache_call(layers), specs, dynamic, ["logits"] + [n.replace("past_key_values", "present")
                                                                                for n in past],
                     data_sets=_with_past_data_sets(config, layers, kv_heads, head_dim, batch, seq_len, seed, past1),
                     facts=_window_facts(windows, past1 + seq_len + 2),
                     # positions are shared by the cache and the new tokens
                     dim_limits={"seq_len": positions // 2, "past_len": positions // 2} if positions else {},
                     dim_sums={"total_len": ["past_len", "seq_len"]})]
    hidden = int(getattr(config, "d_model", 0) or config.hidden_size)
    if kind == "text2text":
        encoder = Part("encoder", _encoder_call, [f"input_ids:int64[{batch},{seq_len}]=1..{vocab}",
                                                  f"attention_mask:int64[{batch},{seq_len}]"],
                       "auto", ["last_hidden_state"], sequence_axis=1,
                       dim_limits=_limit("seq_len", _positions(config, model, "encoder")))
        encoder_len, encoder_axis = seq_len, ",1=encoder_len"
    else:
        # Speech: the encoder takes log-mel features of a fixed length (two frames per encoder position).
        frames = 2 * int(config.max_source_positions)
        encoder = Part("encoder", _encoder_call, [f"input_features:float32[{batch},{config.num_mel_bins},{frames}]"],
                       "auto", ["last_hidden_state"])
        encoder_len, encoder_axis = frames // 2, ""
    return [encoder] + _decoder_parts(config, model, vocab, hidden, batch, encoder_len, encoder_axis,
                                      kind == "text2text", seed)


def _decoder_parts(config, model, vocab, hidden, batch, encoder_len, encoder_axis, with_mask, seed):
    """A sequence-to-sequence decoder as ONNX Runtime users run it: OUT/decoder for the first step (it returns
    both caches) and OUT/decoder-with-past for every later one (the new tokens and both caches in)."""
    import numpy as np

    layers, heads, head_dim = _seq2seq_cache_layout(config)
    mask = [f"encoder_attention_mask:int64[{batch},{encoder_len}]"] if with_mask else []
    mask_axes = [f"encoder_attention_mask:0=batch{encoder_axis}"] if with_mask else []
    positions = _positions(config, model, "decoder")
    first = Part("decoder", _decoder_call, [f"input_ids:int64[{batch},4]=0..{vocab}",
                                            f"encoder_hidden_states:float32[{batch},{encoder_len},{hidden}]"] + mask,
                 ["input_ids:0=batch,1=decoder_len", f"encoder_hidden_states:0=batch{encoder_axis}"] + mask_axes,
                 ["logits"] + [f"present.{i}.{part}.{kv}" for i in range(layers) for part in ("decoder", "encoder")
                               for kv in ("key", "value")],
                 dim_limits={"decoder_len": positions} if positions else {})

    past = [(f"past_key_values.{i}.{part}.{kv}", part) for i in range(layers) for part in ("decoder", "encoder")
            for kv in ("key", "value")]
    specs = [f"input_ids:int64[{batch},2]=0..{vocab}"] + mask + \
        [f"{name}:float32[{batch},{heads},{5 if part == 'decoder' else encoder_len},{head_dim}]" for name, part in past]
    dynamic = ["input_ids:0=batch,1=decoder_len"] + mask_axes + \
        [f"{name}:0=batch,2=past_decoder_len" if part == "decoder" else f"{name}:0=batch{encoder_axis.replace('1=', '2=')}"
         for name, part in past]
    rng = np.random.default_rng(seed)
    data_sets = []
    # Sizes chosen so that no two sums of them coincide (present is named past_decoder_len + decoder_len).
    for b, s, p, e in ((batch, 2, 5, encoder_len), (batch + 1, 4, 7, encoder_len + (2 if encoder_axis else 0))):
        arrays = [rng.integers(1, vocab, (b, s)).astype(np.int64)] + ([np.ones((b, e), np.int64)] if with_mask else [])
        arrays += [rng.standard_normal((b, heads, p if part == "decoder" else e, head_dim)).astype(np.float32)
                   for _, part in past]
        data_sets.append(arrays)
    with_past = Part("decoder-with-past", _decoder_with_past_call(layers, hidden), specs, dynamic,
                     ["logits"] + [name.replace("past_key_values", "present") for name, part in past
                                   if part == "decoder"], data_sets=data_sets,
                     # positions are shared by the cached tokens and the new ones
                     dim_limits={"decoder_len": positions // 2, "past_decoder_len": positions // 2} if positions
                     else {})
    return [first, with_past]


def _check_arguments(checkpoint, task):
    if task not in TASKS:
        raise ExportError("export.bad-arguments", f"--task '{task}': expected one of {', '.join(TASKS)}",
                          "choose the task the checkpoint was trained for")
    if not os.path.isfile(os.path.join(checkpoint, "config.json")):
        raise ExportError("export.bad-module", f"'{checkpoint}' has no config.json: not a Transformers checkpoint folder",
                          "pass the folder save_pretrained() wrote (config.json and the weights); nothing is downloaded")


def _import():
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ExportError("export.framework-missing", f"Transformers or PyTorch cannot be imported: {e}",
                          "run scripts/setup.sh (it installs the pinned versions into .deps/python)") from e
    return torch, transformers


def _tasks_for(transformers, config):
    """The tasks whose routes can load a checkpoint of this configuration."""
    return [task for task, routes in TASKS.items()
            if any(type(config) in getattr(transformers, auto)._model_mapping for auto, _, _ in routes)]


def _route_for(transformers, config, task):
    """(Auto class, outputs, kind) of `task` for this configuration, or the refusal naming the tasks that fit."""
    for route in TASKS[task]:
        if type(config) in getattr(transformers, route[0])._model_mapping:
            return route
    fitting = _tasks_for(transformers, config)
    architectures = ", ".join(getattr(config, "architectures", None) or []) or config.model_type
    raise ExportError(
        "export.unsupported-architecture",
        f"{architectures} ({config.model_type}) has no --task {task} route in `ortkit export hf`: "
        f"{' or '.join(r[0] for r in TASKS[task])} maps no {type(config).__name__}",
        (f"export it for a task it has: --task {' or --task '.join(fitting)}; " if fitting else
         f"`export hf` exports no task of {config.model_type} checkpoints (its tasks: {', '.join(TASKS)}); ")
        + "or wrap the model in a module whose forward() takes the inputs you will feed and export it with "
        "`ortkit export torch --module FILE.py:FACTORY --inputs ...`")


def _inputs_fix(transformers, config, task):
    """The fix of export.bad-inputs for `export hf`, which builds the inputs itself from the task."""
    others = [t for t in _tasks_for(transformers, config) if t != task]
    return (f"the inputs are the ones --task {task} feeds; " + (f"export for another task (--task {' or --task '.join(others)}), or "
                                                                if others else "")
            + "wrap the model in a module whose forward() takes the inputs you will feed and export it with "
            "`ortkit export torch --module FILE.py:FACTORY --inputs ...`")


def _load(transformers, checkpoint, task, allow_new_weights):
    """(config, model, route): the checkpoint loaded with the task's Auto class, from the folder only. Weights the
    model has and the checkpoint lacks (a head Transformers initialises at random) are an error unless
    `allow_new_weights`."""
    try:
        config = transformers.AutoConfig.from_pretrained(checkpoint, local_files_only=True)
    except Exception as e:
        raise ExportError("export.bad-module", f"Transformers cannot read the configuration in '{checkpoint}': "
                          f"{type(e).__name__}: {str(e).splitlines()[0]}",
                          "pass the folder save_pretrained() wrote (config.json and the weights)") from e
    route = _route_for(transformers, config, task)
    try:
        model, info = getattr(transformers, route[0]).from_pretrained(checkpoint, local_files_only=True,
                                                                       output_loading_info=True)
    except Exception as e:
        raise ExportError("export.bad-module", f"Transformers cannot load '{checkpoint}' as {route[0]}: "
                          f"{type(e).__name__}: {str(e).splitlines()[0]}",
                          f"check that the checkpoint's architecture fits --task {task}") from e
    missing = sorted(info.get("missing_keys") or [])
    if missing and not allow_new_weights:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        saved = ", ".join(getattr(config, "architectures", None) or []) or config.model_type
        raise ExportError(
            "export.new-weights",
            f"{type(model).__name__} has weights the checkpoint (saved as {saved}) does not hold, which "
            f"Transformers initialises at random: {shown}; the exported model's outputs would be noise",
            f"export the checkpoint for the task it was saved for (--task {' or --task '.join(_tasks_for(transformers, config)) or '...'}"
            "), or pass --allow-new-weights to export the untrained head on purpose (e.g. to fine-tune it later)")
    return config, model, route, missing


def _plain_options(model):
    """The keyword arguments of a plain forward() call: a dict back, and no cache (an object no exporter can write
    as outputs)."""
    extra = {"return_dict": True}
    if "use_cache" in inspect.signature(model.forward).parameters:
        extra["use_cache"] = False
    return extra


def _route(names, outputs):
    return f"ortkit wrapper ({', '.join(names)} in by name, {', '.join(outputs[:3])}" + \
        (" ..." if len(outputs) > 3 else "") + " out) + torch.onnx.export"


def _export_choosing_exporter(export, source, model_type, exporter):
    """export(exporter)'s record, with the TorchScript exporter where torch.export is known to fail (or, when no
    exporter was asked for, has just failed) to decompose the model; the route in `source` says which."""
    if exporter is None and model_type in TORCHSCRIPT_FIRST:
        source.route += f" with the TorchScript exporter: torch.export fails to decompose {model_type} models"
        return export("torchscript")
    try:
        return export(exporter)
    except ExportError as error:
        # T5 on Transformers 5 fails torch.export's decomposition; the tracer exports it correctly
        # (the wrapper passes inputs by name, so TorchScript's positional clash does not arise).
        if exporter is not None or error.code != "export.decomposition-failed":
            raise
        source.route += (" with the TorchScript exporter: the default one failed to decompose "
                         f"the graph ({error.message})")
        source.fallback = ExporterFallback(
            failed="dynamo", used="torchscript", step="decomposing the captured graph (step 2/3)",
            reason=error.message,
            dynamic_shapes="the TorchScript tracer records the example's sizes where the model reads them as Python "
                           "numbers, so an axis named dynamic may hold only at the exported size: the dynamic axes "
                           "are checked in the file (export.dim-specialized) and by ortkit doctor's sweep")
        return export("torchscript")


def export_hf(checkpoint, task, out, batch=2, seq_len=16, opset=None, exporter=None, seed=0, allow_new_weights=False):
    """Exports the Transformers model in `checkpoint` (a local folder) for `task` to `out`, with references.
    Sequence-to-sequence tasks write three export folders, OUT/encoder, OUT/decoder and OUT/decoder-with-past.
    allow_new_weights: export a model whose head the checkpoint lacks (Transformers initialises it at random);
    refused by default. Returns the export.json record (a list of them for several folders)."""
    _check_arguments(checkpoint, task)
    torch, transformers = _import()
    config, model, (_, output_names, kind), missing = _load(transformers, checkpoint, task, allow_new_weights)
    extra = _plain_options(model)
    records = []
    for part in _parts(kind, config, model, checkpoint, batch, seq_len, seed):
        names = [spec.split(":")[0] for spec in part.specs]
        outputs = part.outputs or output_names
        wrapped = _wrapper(torch, model, names, part.call or _plain_call(outputs, extra))
        source = HfSource(checkpoint=os.path.abspath(checkpoint), task=task, part=part.folder,
                          model_type=config.model_type, architecture=type(model).__name__,
                          transformers_version=transformers.__version__, route=_route(names, outputs), **part.facts)
        if missing:
            source.new_weights = missing

        def export(with_exporter, part=part, wrapped=wrapped, outputs=outputs, source=source):
            return export_torch(wrapped, part.specs, os.path.join(out, part.folder) if part.folder else out,
                                dynamic=part.dynamic, sequence_axis=part.sequence_axis, opset=opset,
                                output_names=outputs, seed=seed, data_sets=part.data_sets,
                                module_ref=os.path.abspath(checkpoint), exporter=with_exporter,
                                record_extra={"hf": source, "dim_limits": part.dim_limits, "dim_sums": part.dim_sums},
                                inputs_fix=_inputs_fix(transformers, config, task))

        records.append(_export_choosing_exporter(export, source, config.model_type, exporter))
    return records[0] if len(records) == 1 else records
