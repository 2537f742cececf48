#!/usr/bin/env bash
# `ortkit export hf`: tiny Transformers checkpoints written with save_pretrained (BERT, a BERT classifier,
# GPT-2, Llama, T5, ViT, Whisper), each exported for its task with the default exporter, then `ortkit doctor` HEALTHY
# against Transformers' own outputs at two shapes, with the input and output names ONNX Runtime users
# expect, the weights inline and the route recorded in export.json.
source "$2/tests/support/e2e.sh"
need_python
export PYTHONPATH="$src/python"
"$python" "$src/tests/gallery/hf_checkpoints.py" "$work/checkpoints" >/dev/null 2>"$work/checkpoints.log" \
  || { cat "$work/checkpoints.log" >&2; fail "writing the checkpoints"; }

while read -r name task inputs outputs; do
  "$ortkit" export hf "$work/checkpoints/$name" --task "$task" --out "$work/$name" >"$work/$name.out" 2>"$work/$name.err" \
    || { cat "$work/$name.out" "$work/$name.err" >&2; fail "export hf $name --task $task"; }
  [ ! -e "$work/$name/model.onnx.data" ] || fail "$name: weights written beside the model"
  "$ortkit" doctor "$work/$name" --format json --runs 2 >"$work/$name.json" || { cat "$work/$name.json" >&2; fail "doctor $name"; }
  "$python" - "$work/$name" "$work/$name.json" "$task" "$inputs" "$outputs" <<'PY' || fail "$name"
import json, sys
import onnx
folder, report, task, inputs, outputs = sys.argv[1:]
r = json.load(open(report))
assert r["verdict"] == "healthy", [(d["code"], d["message"]) for d in r["diagnoses"]]
cpu = r["providers"][0]
assert cpu["validation"]["passed"] and len(cpu["validation"]["cases"]) == 2, cpu["validation"]
model = onnx.load(f"{folder}/model.onnx")
got_in, got_out = [i.name for i in model.graph.input], [o.name for o in model.graph.output]
assert got_in == inputs.split(","), got_in
assert got_out == outputs.split(","), got_out
dims = [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim]
assert dims[0] == "batch" and (task == "image-classification" or dims[1] == "seq_len"), dims
record = json.load(open(f"{folder}/export.json"))
assert record["hf"]["task"] == task and "torch.onnx.export" in record["hf"]["route"] and record["exporter_kind"] == "dynamo", record["hf"]
print(f"ok {task}: {got_in} -> {got_out}, sweep {[a['values'] for a in cpu['sweep']['axes']]}")
PY
done <<'CASES'
bert feature-extraction input_ids,attention_mask,token_type_ids last_hidden_state
bert-classifier text-classification input_ids,attention_mask,token_type_ids logits
gpt2 text-generation input_ids,attention_mask logits
llama text-generation input_ids,attention_mask logits
vit image-classification pixel_values logits
CASES

# Decoders with their cache (past_key_values.N.key|value in, present.N.key|value out): doctor HEALTHY, the
# attention mask's total_len computed as past_len + seq_len, and greedy decoding of 16 tokens through ONNX
# Runtime, feeding each step's present.* back as past_key_values.*, equal to Transformers' generate().
for name in gpt2 llama; do
  "$ortkit" export hf "$work/checkpoints/$name" --task text-generation-with-past --out "$work/$name-past" \
    >"$work/$name-past.out" 2>&1 || { cat "$work/$name-past.out" >&2; fail "export hf $name with past"; }
  "$ortkit" doctor "$work/$name-past" --format json --runs 2 >"$work/$name-past.json" \
    || { "$python" -c 'import json,sys; print([(d["code"], d["message"]) for d in json.load(open(sys.argv[1]))["diagnoses"]])' \
         "$work/$name-past.json" >&2; fail "doctor $name with past"; }
  "$python" - "$work/$name-past" <<'PY' || fail "$name with past: names"
import json, sys
import onnx
g = onnx.load(sys.argv[1] + "/model.onnx").graph
ins, outs = [i.name for i in g.input], [o.name for o in g.output]
assert ins[:2] == ["input_ids", "attention_mask"] and ins[2:6] == ["past_key_values.0.key", "past_key_values.0.value",
                                                                   "past_key_values.1.key", "past_key_values.1.value"], ins
assert outs == ["logits", "present.0.key", "present.0.value", "present.1.key", "present.1.value"], outs
record = json.load(open(sys.argv[1] + "/export.json"))
assert record["dim_sums"] == {"total_len": ["past_len", "seq_len"]}, record["dim_sums"]
PY
  "$python" "$src/tests/python/greedy_decode.py" "$work/checkpoints/$name" "$work/$name-past/model.onnx" 16 \
    2>"$work/$name-decode.err" || { cat "$work/$name-decode.err" >&2; fail "$name: greedy decoding differs"; }
done

# Sequence-to-sequence: encoder/, decoder/ (the first step, returning both caches) and decoder-with-past/ (every
# later step), all HEALTHY, with the names ONNX Runtime users read (past_key_values.N.decoder|encoder.key|value in,
# present.N.* out); greedy decoding of 16 tokens through the three sessions equals Transformers token for token.
# T5's graph fails torch.export's decomposition on Transformers 5, so its route says TorchScript was used instead.
for spec in "t5 text2text-generation input_ids,attention_mask input_ids,encoder_hidden_states,encoder_attention_mask input_ids,encoder_attention_mask" \
            "whisper automatic-speech-recognition input_features input_ids,encoder_hidden_states input_ids"; do
  set -- $spec
  "$ortkit" export hf "$work/checkpoints/$1" --task "$2" --out "$work/$1" >"$work/$1.out" 2>&1 \
    || { cat "$work/$1.out" >&2; fail "export hf $1 --task $2"; }
  for part in encoder decoder decoder-with-past; do
    "$ortkit" doctor "$work/$1/$part" --format json --runs 2 >"$work/$1-$part.json" \
      || { cat "$work/$1-$part.json" >&2; fail "doctor $1 $part"; }
  done
  "$python" - "$work/$1" "$3" "$4" "$5" "$1" <<'PY' || fail "$1: names"
import json, sys
import onnx
folder, encoder_inputs, decoder_inputs, later_inputs, name = sys.argv[1:]
layers = [(i, part, kv) for i in (0, 1) for part in ("decoder", "encoder") for kv in ("key", "value")]
past = [f"past_key_values.{i}.{part}.{kv}" for i, part, kv in layers]
present = [f"present.{i}.{part}.{kv}" for i, part, kv in layers]
for part, inputs, outputs in (("encoder", encoder_inputs.split(","), ["last_hidden_state"]),
                              ("decoder", decoder_inputs.split(","), ["logits"] + present),
                              ("decoder-with-past", later_inputs.split(",") + past,
                               ["logits"] + [p for p in present if ".decoder." in p])):
    g = onnx.load(f"{folder}/{part}/model.onnx").graph
    assert [i.name for i in g.input] == inputs, (part, [i.name for i in g.input])
    assert [o.name for o in g.output] == outputs, (part, [o.name for o in g.output])
    record = json.load(open(f"{folder}/{part}/export.json"))
    assert record["hf"]["part"] == part, record["hf"]
    report = json.load(open(f"{folder}-{part}.json"))
    assert report["verdict"] == "healthy" and not report["diagnoses"], [(d["code"], d["message"]) for d in report["diagnoses"]]
# The grown self-attention cache is named after what it is, not after an exporter's counter.
dims = [d.dim_param for d in onnx.load(f"{folder}/decoder-with-past/model.onnx").graph.output[1].type.tensor_type.shape.dim]
assert dims[2] in ("decoder_len + past_decoder_len", "past_decoder_len + decoder_len"), dims
route = json.load(open(f"{folder}/decoder/export.json"))["hf"]["route"]
assert ("TorchScript" in route) == (name == "t5"), route
print(f"ok {name}: encoder, decoder and decoder-with-past healthy; {route}")
PY
  "$python" "$src/tests/python/greedy_decode_seq2seq.py" "$work/checkpoints/$1" "$work/$1" 16 \
    2>"$work/$1-decode.err" || { cat "$work/$1-decode.err" >&2; fail "$1: greedy decoding differs"; }
done

# Today's exports converted down to opset 17 (what ONNX Runtime 1.14-1.15 load), each proved by the numbers
# before it is written, then held to Transformers' own references. Llama's RMSNorm brings ReduceMean-18 with
# noop_with_empty_axes; its decoder-with-cache needs export.json's total_len = past_len + seq_len.
for name in bert llama-past whisper/decoder; do
  converted="$work/$(echo "$name" | tr / -)-opset17.onnx"
  "$ortkit" convert "$work/$name/model.onnx" --opset 17 --out "$converted" >"$work/convert.out" 2>&1 \
    || { cat "$work/convert.out" >&2; fail "convert $name to opset 17"; }
  for set in 0 1; do
    "$ortkit" validate "$converted" --reference "$work/$name/test_data_set_$set" >"$work/validate.out" 2>&1 \
      || { cat "$work/validate.out" >&2; fail "$name at opset 17 against test_data_set_$set"; }
  done
  echo "ok $name converted to opset 17 and matches the references"
done

# A real PyTorch 2.15 export against the ONNX Runtime it will be deployed on: 1.16 refuses IR 10 / opset 20
# (check says so, with the fix), 1.29 loads it, and `convert --target-ort 1.16` writes what 1.16 loads and
# what still matches Transformers' references.
expect_rc 1 "$ortkit" check "$work/bert/model.onnx" --target-ort 1.16
expect_msg "target.ir-version"
expect_msg "ortkit convert"
expect_rc 0 "$ortkit" check "$work/bert/model.onnx" --target-ort 1.29
"$ortkit" convert "$work/bert/model.onnx" --target-ort 1.16 --out "$work/bert-1.16.onnx" >"$work/convert.out" 2>&1 \
  || { cat "$work/convert.out" >&2; fail "convert --target-ort 1.16"; }
expect_rc 0 "$ortkit" check "$work/bert-1.16.onnx" --target-ort 1.16
"$ortkit" validate "$work/bert-1.16.onnx" --reference "$work/bert/test_data_set_1" >"$work/validate.out" 2>&1 \
  || { cat "$work/validate.out" >&2; fail "bert for 1.16 against the references"; }

# GPT-2 has 128 positions: export.json says so, and the sweep stays within them.
"$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["dim_limits"] == {"seq_len": 128}, r["dim_limits"]' "$work/gpt2/export.json"
"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
axes = {a["dim"]: a["values"] for a in r["providers"][0]["sweep"]["axes"]}
assert max(axes["seq_len"]) == 128, axes
assert any("kept to 128" in n for n in r["providers"][0].get("notes", []) + r.get("notes", [])), r.get("notes")' "$work/gpt2.json" \
  || fail "gpt2 sweep limit"

# Usage errors exit 2 with the companion's codes.
expect_rc 2 "$ortkit" export hf "$work/nowhere" --task feature-extraction --out "$work/x"
expect_msg "export.bad-module"
expect_rc 2 "$ortkit" export hf "$work/checkpoints/bert" --task translation --out "$work/x"
echo "export hf passed"
