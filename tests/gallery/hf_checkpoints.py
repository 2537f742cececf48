"""Writes tiny Hugging Face Transformers checkpoints (random weights, from configs; nothing is downloaded) as
save_pretrained() does, for `ortkit export hf`: scripts/demo.sh and tests/e2e/export_hf.sh use them.

usage: hf_checkpoints.py OUT [NAME ...]     (names: the keys of CHECKPOINTS; default: all)"""

import os
import sys

import torch
import transformers as t

TEXT = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
# Decoders with an attention window of 8, so that a 32-token greedy decode runs far past it; wide initialisations (as
# GPT-2's below) keep random weights from repeating one token, except Gemma's, which scales its embeddings up.
WINDOWED = dict(TEXT, num_key_value_heads=2, max_position_embeddings=256, bos_token_id=0, eos_token_id=0)

AUDIO = dict(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
             conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, pad_token_id=0)

CHECKPOINTS = {
    "bert": lambda: t.BertModel(t.BertConfig(**TEXT)),
    "bert-classifier": lambda: t.BertForSequenceClassification(t.BertConfig(**TEXT, num_labels=3)),
    # A wider initialisation than GPT-2's 0.02, so that greedy decoding with random weights does not repeat one token.
    "gpt2": lambda: t.GPT2LMHeadModel(t.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128,
                                                   initializer_range=0.3, bos_token_id=0, eos_token_id=0)),
    "llama": lambda: t.LlamaForCausalLM(t.LlamaConfig(**TEXT, num_key_value_heads=2, max_position_embeddings=256,
                                                      bos_token_id=0, eos_token_id=0)),
    # Every layer sliding.
    "mistral-window": lambda: t.MistralForCausalLM(t.MistralConfig(**WINDOWED, sliding_window=8, initializer_range=0.3)),
    # Mixed: sliding and global layers alternate (layer_types).
    "gemma2-window": lambda: t.Gemma2ForCausalLM(t.Gemma2Config(**WINDOWED, head_dim=16, sliding_window=8)),
    "gemma3-window": lambda: t.Gemma3ForCausalLM(t.Gemma3TextConfig(
        **dict(WINDOWED, num_hidden_layers=3), head_dim=16, sliding_window=8,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"])),
    # Mixed the Qwen2 way: the layers from max_window_layers on slide.
    "qwen2-window": lambda: t.Qwen2ForCausalLM(t.Qwen2Config(**dict(WINDOWED, num_hidden_layers=3), use_sliding_window=True,
                                                             sliding_window=8, max_window_layers=1,
                                                             initializer_range=0.3)),
    # T5 in the layout of T5 v1.1 and Flan-T5 (gated-GELU feed-forward, head untied from the embeddings), which with
    # random weights decodes 31 distinct tokens in 32 where the original layout repeats a few.
    "t5": lambda: t.T5ForConditionalGeneration(t.T5Config(vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                                                          num_heads=4, decoder_start_token_id=0,
                                                          initializer_factor=2.0, feed_forward_proj="gated-gelu",
                                                          tie_word_embeddings=False)),
    # Encoder-decoders whose config states max_position_embeddings (not max_target_positions): 64 positions.
    # (BART's head untied from its embeddings, Marian's default initialisation: random weights that do not repeat one
    # token.)
    "bart": lambda: t.BartForConditionalGeneration(t.BartConfig(
        vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=None,
        tie_word_embeddings=False)),
    "marian": lambda: t.MarianMTModel(t.MarianConfig(
        vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
        pad_token_id=999, eos_token_id=0, decoder_start_token_id=999, forced_eos_token_id=None)),
    # RoBERTa's positions start after padding_idx (1): 66 position embeddings hold 64 usable positions.
    "roberta": lambda: t.RobertaModel(t.RobertaConfig(**TEXT, max_position_embeddings=66, pad_token_id=1)),
    # CTC speech recognition from raw audio: a convolutional feature encoder (400 samples per frame, one frame per
    # 320) and a small transformer.
    "wav2vec2-ctc": lambda: t.Wav2Vec2ForCTC(t.Wav2Vec2Config(**AUDIO)),
    "hubert-ctc": lambda: t.HubertForCTC(t.HubertConfig(**AUDIO)),
    "wavlm-ctc": lambda: t.WavLMForCTC(t.WavLMConfig(**AUDIO)),
    # Two-tower models: a text and a vision transformer, 16 text positions, 32 x 32 images.
    "clip": lambda: t.CLIPModel(t.CLIPConfig(
        text_config=dict(vocab_size=500, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=16, projection_dim=16),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, projection_dim=16), projection_dim=16)),
    "siglip": lambda: t.SiglipModel(t.SiglipConfig(
        text_config=dict(vocab_size=500, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=16),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4))),
    # torch.export fails to decompose Swin (step 2/3): export hf falls back to the TorchScript exporter and says so.
    "swin": lambda: t.SwinForImageClassification(t.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                                                              num_heads=[2, 4], window_size=4, num_labels=3)),
    "whisper": lambda: t.WhisperForConditionalGeneration(t.WhisperConfig(
        vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=80, max_source_positions=32,
        max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
        init_std=0.4)),  # wide enough that greedy decoding does not repeat one token
    "vit": lambda: t.ViTForImageClassification(t.ViTConfig(image_size=32, patch_size=8, hidden_size=64,
                                                            num_hidden_layers=2, num_attention_heads=4,
                                                            intermediate_size=128, num_labels=5)),
}


def main():
    out, names = sys.argv[1], sys.argv[2:] or list(CHECKPOINTS)
    for name in names:
        torch.manual_seed(sum(map(ord, name)))
        CHECKPOINTS[name]().save_pretrained(os.path.join(out, name))
        print(f"wrote {os.path.join(out, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
