"""The PyTorch models of the gallery: small, random weights, each one showing one real export failure
(or none). build_torch.py exports them; the factories also work with `ortkit export torch --module`."""

import math

import torch
import torch.nn.functional as F
from torch import nn

HIDDEN, HEADS, FFN = 64, 4, 128


class EncoderBlock(nn.Module):
    """A Transformer encoder block: multi-head self-attention, feed-forward, post-LayerNorm.

    `baked_batch` reproduces the classic tracing mistake: the batch size read as a Python int (int(x.size(0)),
    len(x)) and passed to view/reshape is written into the graph as the constant 2, the example's batch."""

    def __init__(self, hidden=HIDDEN, heads=HEADS, ffn=FFN, baked_batch=None):
        super().__init__()
        self.heads, self.head_dim, self.baked_batch = heads, hidden // heads, baked_batch
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(), nn.Linear(ffn, hidden))

    def split(self, t, batch):
        return t.reshape(batch, -1, self.heads, self.head_dim).transpose(1, 2)

    def attention(self, x, additive_mask=None):
        batch = int(x.size(0)) if self.baked_batch else x.shape[0]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self.split(q, batch), self.split(k, batch), self.split(v, batch)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if additive_mask is not None:
            scores = scores + additive_mask
        context = (scores.softmax(dim=-1) @ v).transpose(1, 2)
        if self.baked_batch:
            context = context.reshape(batch, -1, self.heads * self.head_dim)
        else:
            context = context.reshape(x.shape[0], x.shape[1], self.heads * self.head_dim)
        return self.proj(context)

    def forward(self, x, additive_mask=None):
        x = self.norm1(x + self.attention(x, additive_mask))
        return self.norm2(x + self.ffn(x))


class BertLike(nn.Module):
    """A small BERT-like encoder: token, position and segment embeddings, masked self-attention."""

    def __init__(self, vocab=1000, hidden=HIDDEN, layers=2, max_positions=512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_positions, hidden)
        self.segments = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(EncoderBlock(hidden) for _ in range(layers))

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.norm(self.tokens(input_ids) + self.positions(positions) + self.segments(token_type_ids))
        # Padded keys get a large negative score: every row's softmax ignores them.
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive)
        return x


class TrainingModeNet(nn.Module):
    """Conv → BatchNorm → ReLU → Dropout → Linear: harmless in eval mode, wrong when exported in training mode."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = self.drop(F.relu(self.bn(self.conv(x))))
        return self.head(x.mean(dim=(2, 3)))


class Float64Leak(nn.Module):
    """A float32 model where a float64 constant slips in (torch.tensor(..., dtype=torch.float64))."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 4)
        self.register_buffer("temperature", torch.tensor(0.5, dtype=torch.float64))

    def forward(self, x):
        h = torch.tanh(self.a(x)).double() / self.temperature
        return self.b(h.float())


class TensorScaleUpsample(nn.Module):
    """F.interpolate(x, scale_factor=1/float(scale)) with `scale` a tensor input, then pixel_shuffle."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)

    def forward(self, x, scale):
        y = F.interpolate(self.conv(x), scale_factor=1 / float(scale), mode="bilinear", align_corners=False)
        return F.pixel_shuffle(y, 2)


class DataDependentBranch(nn.Module):
    """`if x.sum() > 0` in forward(): tracing records only the branch the example input took."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        if x.sum() > 0:
            return self.linear(x) * 2
        return self.linear(x) - 1


class UpperTriangle(nn.Module):
    """torch.triu: ONNX's Trilu came in opset 14, so exporting at 13 fails."""

    def forward(self, x):
        return torch.triu(x) + 1


def encoder():
    torch.manual_seed(1)
    return EncoderBlock()


def bert():
    torch.manual_seed(2)
    return BertLike()


def resnet18():
    import torchvision

    torch.manual_seed(3)
    return torchvision.models.resnet18(weights=None, num_classes=10)


def training_mode():
    torch.manual_seed(5)
    return TrainingModeNet()


def baked_batch():
    torch.manual_seed(6)
    return EncoderBlock(baked_batch=True)


def float64_leak():
    torch.manual_seed(7)
    return Float64Leak()


def tensor_scale():
    torch.manual_seed(8)
    return TensorScaleUpsample()


def branch():
    torch.manual_seed(9)
    return DataDependentBranch()


def upper_triangle():
    return UpperTriangle()


class KeyValueCache:
    """A cache object as language models return one (Transformers' DynamicCache is the common case)."""

    def __init__(self, keys, values):
        self.keys, self.values = keys, values


class ReturnsCache(nn.Module):
    """forward() returns (logits, cache): torch.export cannot flatten the cache into outputs."""

    def __init__(self):
        super().__init__()
        self.key, self.value, self.head = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 10)

    def forward(self, x):
        return self.head(x), KeyValueCache(self.key(x), self.value(x))


class SingularValues(nn.Module):
    """torch.linalg.svd: the exporter has no ONNX translation for aten._linalg_svd."""

    def forward(self, x):
        return torch.linalg.svd(x)[1]


class Histogram(nn.Module):
    """torch.histc without min and max: its ONNX translation needs them fixed."""

    def forward(self, x):
        return torch.histc(x, bins=4)


class FixedSizeBuffer(nn.Module):
    """Adds a buffer made for one batch size and length: the trace ties batch and length to the example's."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 64)
        self.register_buffer("offset", torch.zeros(2, 16, 64))

    def forward(self, x):
        return self.linear(x + self.offset)


def returns_cache():
    torch.manual_seed(10)
    return ReturnsCache()


def singular_values():
    return SingularValues()


class StackInputs(nn.Module):
    """forward(self, *xs): torch.export sees one parameter holding every input."""

    def forward(self, *xs):
        return torch.stack(xs).sum(0)


def stack_inputs():
    return StackInputs()


def histogram():
    return Histogram()


def fixed_size_buffer():
    torch.manual_seed(12)
    return FixedSizeBuffer()


def hf_bert():
    """Transformers' BertModel from a tiny config, random weights (nothing downloaded)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(13)
    return BertModel(BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                intermediate_size=128, max_position_embeddings=512))


def hf_t5():
    """Transformers' T5Model from a tiny config: its forward() returns an EncoderDecoderCache."""
    from transformers import T5Config, T5Model

    torch.manual_seed(14)
    return T5Model(T5Config(vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                            decoder_start_token_id=0))


def hf_t5_encoder():
    """Transformers' T5EncoderModel: torch.export captures it, then fails to decompose a view (step 2/3)."""
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(15)
    return T5EncoderModel(T5Config(vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4))


def hf_llama():
    """Transformers' LlamaForCausalLM from a tiny config, without a cache."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(16)
    return LlamaForCausalLM(LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=128, num_key_value_heads=2, max_position_embeddings=256,
                                        bos_token_id=0, eos_token_id=0, use_cache=False))
