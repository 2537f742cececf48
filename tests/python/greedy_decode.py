"""Greedy decoding with an exported decoder and its cache (`ortkit export hf --task text-generation-with-past`)
against Transformers' own generate(), token for token.

usage: greedy_decode.py CHECKPOINT_DIR MODEL.onnx [TOKENS]
The first step feeds the whole prompt with an empty cache (past_len 0); each later step feeds the one new
token with the cache the previous step returned (present.N.* become past_key_values.N.*)."""

import sys

import numpy as np
import onnxruntime
import torch
import transformers


def main():
    checkpoint, model_path = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    model = transformers.AutoModelForCausalLM.from_pretrained(checkpoint, local_files_only=True).eval()
    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    past = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    presents = [o.name for o in session.get_outputs() if o.name.startswith("present.")]
    assert [p.name.replace("past_key_values.", "present.") for p in past] == presents, (past, presents)

    torch.manual_seed(0)
    prompt = torch.randint(1, model.config.vocab_size, (1, 6))
    with torch.no_grad():
        expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=count,
                                  min_new_tokens=count, do_sample=False, pad_token_id=0)[0, prompt.shape[1]:].tolist()

    cache = {p.name: np.zeros((1, p.shape[1], 0, p.shape[3]), np.float32) for p in past}
    tokens, step_ids, length = [], prompt.numpy(), prompt.shape[1]
    for _ in range(count):
        outputs = session.run(None, {"input_ids": step_ids, "attention_mask": np.ones((1, length), np.int64), **cache})
        token = int(outputs[0][0, -1].argmax())
        tokens.append(token)
        named = dict(zip([o.name for o in session.get_outputs()], outputs))
        cache = {p.name: named[p.name.replace("past_key_values.", "present.")] for p in past}
        step_ids, length = np.array([[token]], np.int64), length + 1
    print(f"onnxruntime  {tokens}\ntransformers {expected}")
    if tokens != expected:
        print("FAIL: greedy decoding differs", file=sys.stderr)
        return 1
    print(f"ok: {count} tokens equal, {len(set(tokens))} distinct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
