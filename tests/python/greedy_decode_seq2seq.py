"""Greedy decoding with an exported sequence-to-sequence model (`ortkit export hf --task text2text-generation` or
`automatic-speech-recognition`) against Transformers, token for token and logits step by step: generate() for
text (T5, BART, Marian), the plain greedy loop without a cache for Whisper (its generate() adds logits processing of
its own).

usage: greedy_decode_seq2seq.py CHECKPOINT_DIR EXPORT_DIR [TOKENS] [TOLERANCE]
EXPORT_DIR holds encoder/, decoder/ and decoder-with-past/. The encoder runs once; the first decoding step
(decoder/) returns the self-attention cache and the cross-attention cache; each later step feeds the one new token
with both caches to decoder-with-past/, whose present.N.decoder.* become the next step's past_key_values. The tokens
must be equal, and the logits of every step within TOLERANCE (default 1e-4) of Transformers' (absolute, scaled by
the largest logit of that step when it exceeds 1): a cache or mask that is slightly wrong shows in the logits before
it changes a token."""

import sys

import numpy as np
import onnxruntime
import torch
import transformers


def session(folder, part):
    return onnxruntime.InferenceSession(f"{folder}/{part}/model.onnx", providers=["CPUExecutionProvider"])


def main():
    checkpoint, folder = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    tolerance = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    config = transformers.AutoConfig.from_pretrained(checkpoint, local_files_only=True)
    speech = config.model_type == "whisper"
    auto = transformers.AutoModelForSpeechSeq2Seq if speech else transformers.AutoModelForSeq2SeqLM
    model = auto.from_pretrained(checkpoint, local_files_only=True).eval()
    encoder, first, later = (session(folder, p) for p in ("encoder", "decoder", "decoder-with-past"))

    torch.manual_seed(0)
    if speech:
        features = torch.randn(1, config.num_mel_bins, 2 * config.max_source_positions)
        source, mask = {"input_features": features}, {}
    else:
        ids = torch.randint(1, config.vocab_size, (1, 7))
        source, mask = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, {}
    start = config.decoder_start_token_id
    with torch.no_grad():
        if speech:
            # Whisper's generate() adds its own logits processing (begin-suppressed tokens, timestamps): the
            # reference is Transformers' plain greedy loop, the whole sequence recomputed at each step, no cache.
            ids, expected_logits = torch.tensor([[start]]), []
            for _ in range(count):
                logits = model(**source, decoder_input_ids=ids).logits
                expected_logits.append(logits[0, -1].numpy())
                ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], 1)
            expected = ids[0, 1:].tolist()
        else:
            generated = model.generate(**source, max_new_tokens=count, min_new_tokens=count, do_sample=False,
                                       num_beams=1, output_logits=True, return_dict_in_generate=True)
            expected = generated.sequences[0, 1:].tolist()  # after the decoder start token
            expected_logits = [step[0].float().numpy() for step in generated.logits]

    arrays = {k: v.numpy() for k, v in source.items()}
    hidden = encoder.run(["last_hidden_state"], arrays)[0]
    if not speech:
        mask = {"encoder_attention_mask": arrays["attention_mask"]}
    outputs = first.run(None, {"input_ids": np.array([[start]], np.int64), "encoder_hidden_states": hidden, **mask})
    named = dict(zip([o.name for o in first.get_outputs()], outputs))
    cross = {k.replace("present.", "past_key_values."): v for k, v in named.items() if ".encoder." in k}
    tokens, worst = [], (0.0, 0)
    while True:
        logits, reference = named["logits"][0, -1], expected_logits[len(tokens)]
        difference = float(np.abs(logits - reference).max()) / max(1.0, float(np.abs(reference).max()))
        worst = max(worst, (difference, len(tokens)))
        token = int(logits.argmax())
        tokens.append(token)
        if len(tokens) == count:
            break
        past = {k.replace("present.", "past_key_values."): v for k, v in named.items() if ".decoder." in k}
        outputs = later.run(None, {"input_ids": np.array([[token]], np.int64), **mask, **past, **cross})
        named = dict(zip([o.name for o in later.get_outputs()], outputs))
    print(f"onnxruntime  {tokens}\ntransformers {expected}")
    if tokens != expected:
        print("FAIL: greedy decoding differs", file=sys.stderr)
        return 1
    if worst[0] > tolerance:
        print(f"FAIL: the logits of step {worst[1]} differ from Transformers' by {worst[0]:.3g} (relative to the "
              f"largest logit; tolerance {tolerance:g})", file=sys.stderr)
        return 1
    print(f"ok: {count} tokens equal, {len(set(tokens))} distinct, logits within {worst[0]:.2g} at every step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
