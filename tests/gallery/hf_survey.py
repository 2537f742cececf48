"""The architectures `ortkit export hf` is held to: each a tiny checkpoint of tests/gallery/hf_checkpoints.py,
exported for its task, checked by `ortkit doctor` and, for generative ones, by greedy decoding through ONNX
Runtime against Transformers. tests/e2e/export_hf_survey.sh runs the survey; the table of supported architectures
in docs/commands/export.md is generated from this list (scripts/gen-docs.sh) and held to it by the survey.

usage: hf_survey.py cases      one line per architecture: NAME TASK DECODE (none, past, seq2seq)
       hf_survey.py table      the Markdown table of docs/commands/export.md"""

import sys

# (checkpoint name, what it stands for, class, --task, decode check, what the survey shows about it)
SURVEY = [
    ("bert", "BERT", "BertModel", "feature-extraction", "none", "doctor HEALTHY"),
    ("roberta", "RoBERTa", "RobertaModel", "feature-extraction", "none",
     "position limit less the padding offset (66 embeddings, 64 positions)"),
    ("bert-classifier", "BERT classifier", "BertForSequenceClassification", "text-classification", "none",
     "doctor HEALTHY"),
    ("gpt2", "GPT-2", "GPT2LMHeadModel", "text-generation-with-past", "past", "32 tokens equal to generate()"),
    ("llama", "Llama", "LlamaForCausalLM", "text-generation-with-past", "past", "32 tokens equal to generate()"),
    ("mistral-window", "Mistral, every layer sliding (window 8)", "MistralForCausalLM", "text-generation-with-past",
     "past", "32 tokens past the window equal to generate(), logits within 1e-4"),
    ("gemma2-window", "Gemma-2, sliding and global layers (window 8)", "Gemma2ForCausalLM",
     "text-generation-with-past", "past", "32 tokens past the window equal to generate(), logits within 1e-4"),
    ("gemma3-window", "Gemma-3, sliding and global layers (window 8)", "Gemma3ForCausalLM",
     "text-generation-with-past", "past", "32 tokens past the window equal to generate(), logits within 1e-4"),
    ("qwen2-window", "Qwen2, use_sliding_window from layer 1 (window 8)", "Qwen2ForCausalLM",
     "text-generation-with-past", "past", "32 tokens past the window equal to generate(), logits within 1e-4"),
    ("bart", "BART", "BartForConditionalGeneration", "text2text-generation", "seq2seq",
     "three parts HEALTHY within max_position_embeddings; 32 tokens equal to generate(), logits within 1e-4"),
    ("marian", "Marian", "MarianMTModel", "text2text-generation", "seq2seq",
     "three parts HEALTHY within max_position_embeddings; 32 tokens equal to generate(), logits within 1e-4"),
    ("t5", "T5 (v1.1 and Flan-T5 layout: gated-GELU, untied head)", "T5ForConditionalGeneration",
     "text2text-generation", "seq2seq",
     "TorchScript exporter (torch.export fails to decompose T5), said in the route; relative positions, no limit; "
     "three parts HEALTHY; 32 tokens equal to generate(), logits within 1e-4"),
    ("vit", "ViT", "ViTForImageClassification", "image-classification", "none", "doctor HEALTHY"),
    ("swin", "Swin", "SwinForImageClassification", "image-classification", "none",
     "TorchScript fallback said and recorded; doctor HEALTHY"),
    ("wav2vec2-ctc", "Wav2Vec2 (CTC)", "Wav2Vec2ForCTC", "automatic-speech-recognition", "none",
     "sampling rate and 400-sample minimum recorded; doctor HEALTHY"),
    ("hubert-ctc", "HuBERT (CTC)", "HubertForCTC", "automatic-speech-recognition", "none", "doctor HEALTHY"),
    ("wavlm-ctc", "WavLM (CTC)", "WavLMForCTC", "automatic-speech-recognition", "none", "doctor HEALTHY"),
    ("whisper", "Whisper", "WhisperForConditionalGeneration", "automatic-speech-recognition", "seq2seq",
     "log-mel features of a fixed length in; three parts HEALTHY within max_target_positions; 32 tokens equal to "
     "Transformers' greedy loop, logits within 1e-4"),
    ("clip", "CLIP", "CLIPModel", "zero-shot-image-classification", "none",
     "text and image batches of their own; doctor HEALTHY"),
    ("siglip", "SigLIP", "SiglipModel", "zero-shot-image-classification", "none",
     "text and image batches of their own; the pooling head's patch-count reshapes settled by the image batch's "
     "runs (notes); doctor HEALTHY"),
]


def main():
    if sys.argv[1:] == ["cases"]:
        for name, _, _, task, decode, _ in SURVEY:
            print(name, task, decode)
        return 0
    if sys.argv[1:] == ["table"]:
        print("| architecture | class | `--task` | held to |")
        print("|---|---|---|---|")
        for _, what, cls, task, _, shown in SURVEY:
            print(f"| {what} | {cls} | {task} | {shown} |")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
