"""Greedy decoding with an exported decoder and its cache (`ortkit export hf --task text-generation-with-past`)
against Transformers' own generate(), token for token.

usage: greedy_decode.py CHECKPOINT_DIR MODEL.onnx [TOKENS] [TOLERANCE]
The first step feeds the whole prompt with an empty cache (past_len 0); each later step feeds the one new
token with the cache the previous step returned (present.N.* become past_key_values.N.*). The tokens must be
equal, and the logits of every step within TOLERANCE (default 1e-4) of generate()'s: a cache that is wrong past an
attention window shows in the logits long before it changes a token. The decode is said to pass the window when
prompt and tokens together are longer than the model's sliding_window."""

import sys

import numpy as np
import onnxruntime
import torch
import transformers


def main():
    checkpoint, model_path = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    tolerance = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    model = transformers.AutoModelForCausalLM.from_pretrained(checkpoint, local_files_only=True).eval()
    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    past = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    presents = [o.name for o in session.get_outputs() if o.name.startswith("present.")]
    assert [p.name.replace("past_key_values.", "present.") for p in past] == presents, (past, presents)

    torch.manual_seed(0)
    prompt = torch.randint(1, model.config.vocab_size, (1, 6))
    with torch.no_grad():
        generated = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=count,
                                   min_new_tokens=count, do_sample=False, pad_token_id=0, output_logits=True,
                                   return_dict_in_generate=True)
    expected = generated.sequences[0, prompt.shape[1]:].tolist()
    expected_logits = [step[0].float().numpy() for step in generated.logits]

    cache = {p.name: np.zeros((1, p.shape[1], 0, p.shape[3]), np.float32) for p in past}
    tokens, step_ids, length, worst = [], prompt.numpy(), prompt.shape[1], (0.0, 0)
    for step in range(count):
        outputs = session.run(None, {"input_ids": step_ids, "attention_mask": np.ones((1, length), np.int64), **cache})
        difference = float(np.abs(outputs[0][0, -1] - expected_logits[step]).max())
        worst = max(worst, (difference, step))
        token = int(outputs[0][0, -1].argmax())
        tokens.append(token)
        named = dict(zip([o.name for o in session.get_outputs()], outputs))
        cache = {p.name: named[p.name.replace("past_key_values.", "present.")] for p in past}
        step_ids, length = np.array([[token]], np.int64), length + 1
    print(f"onnxruntime  {tokens}\ntransformers {expected}")
    if tokens != expected:
        print("FAIL: greedy decoding differs", file=sys.stderr)
        return 1
    if worst[0] > tolerance:
        print(f"FAIL: the logits of step {worst[1]} differ from generate()'s by {worst[0]:.3g} (tolerance {tolerance:g})",
              file=sys.stderr)
        return 1
    window = getattr(model.config.get_text_config(decoder=True), "sliding_window", None)
    past = f", past the window of {window} from step {max(0, window - prompt.shape[1])}" if window else ""
    print(f"ok: {count} tokens equal, {len(set(tokens))} distinct, logits within {worst[0]:.2g}{past}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
