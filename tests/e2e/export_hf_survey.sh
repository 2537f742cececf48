#!/usr/bin/env bash
# The survey of `ortkit export hf` (tests/gallery/hf_survey.py lists it): every architecture exported for its
# task from a tiny checkpoint (random weights, save_pretrained), every part HEALTHY under `ortkit doctor` against
# Transformers' own outputs, and every generative one decoded greedily through ONNX Runtime, 32 tokens, far past
# any attention window, equal to Transformers token for token, the logits within 1e-4 at every step (decoders with
# their cache: absolute; encoder-decoders: relative to the step's largest logit). Then the facts each architecture
# records, and the table in docs/commands/export.md, which must be the one hf_survey.py generates.
source "$2/tests/support/e2e.sh"
need_python
export PYTHONPATH="$src/python"
survey="$src/tests/gallery/hf_survey.py"
"$python" "$src/tests/gallery/hf_checkpoints.py" "$work/checkpoints" $("$python" "$survey" cases | cut -d' ' -f1) \
  >/dev/null 2>"$work/checkpoints.log" || { cat "$work/checkpoints.log" >&2; fail "writing the checkpoints"; }

healthy() {  # healthy FOLDER: doctor's verdict is HEALTHY with no diagnosis, both references passed; a CTC model's
            # only diagnosis is the fewest samples it takes, the min_samples its export.json records; a baked-batch
            # heuristic the sweep's runs settle is a note
  "$ortkit" doctor "$1" --format json --runs 2 >"$1.doctor.json" || true
  "$python" - "$1.doctor.json" "$1/export.json" <<'PY' || fail "doctor $1"
import json, sys
r, hf = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["hf"]
# A Reshape whose literal first size the sweep's runs show is no batch (SigLIP's patch count) is a note.
settled = lambda d: d["code"] == "graph.baked-batch-reshape" and d["severity"] == "info" and \
    "so the batch does not stop there" in d["message"]
found = [(d["code"], d["message"][:300]) for d in r["diagnoses"] if not settled(d)]
if "min_samples" in hf:
    minimum = f"'samples' (input 'input_values' axis 1) needs at least {hf['min_samples']}:"
    assert [code for code, _ in found] == ["sweep.size-limit"] and minimum in found[0][1], found
    found = []
assert r["verdict"] == "healthy" and not found, (r["verdict"], found)
cpu = r["providers"][0]
assert cpu["validation"]["passed"] and len(cpu["validation"]["cases"]) == 2, cpu["validation"]
PY
}

while read -r name task decode; do
  start=$SECONDS
  "$ortkit" export hf "$work/checkpoints/$name" --task "$task" --out "$work/$name" >"$work/$name.out" 2>"$work/$name.err" \
    || { cat "$work/$name.out" "$work/$name.err" >&2; fail "export hf $name --task $task"; }
  case "$decode" in
    seq2seq)
      for part in encoder decoder decoder-with-past; do healthy "$work/$name/$part"; done
      "$python" "$src/tests/python/greedy_decode_seq2seq.py" "$work/checkpoints/$name" "$work/$name" 32 1e-4 \
        >"$work/$name.decode" 2>&1 || { cat "$work/$name.decode" >&2; fail "$name: greedy decoding differs"; } ;;
    past)
      healthy "$work/$name"
      "$python" "$src/tests/python/greedy_decode.py" "$work/checkpoints/$name" "$work/$name/model.onnx" 32 1e-4 \
        >"$work/$name.decode" 2>&1 || { cat "$work/$name.decode" >&2; fail "$name: greedy decoding differs"; } ;;
    *) healthy "$work/$name" ;;
  esac
  echo "ok $name ($task) in $((SECONDS - start)) s$( [ -f "$work/$name.decode" ] && echo ": $(tail -1 "$work/$name.decode")")"
done < <("$python" "$survey" cases)

# What each architecture records: the windows of a sliding-window decoder (its present is past_len + seq_len
# long for every layer, and test_data_set_1 is a step past the window), the position limits of every part, the
# audio facts of CTC, the fallback from torch.export that Swin needs, said on the console.
"$python" - "$work" <<'PY' || fail "the records"
import json, os, sys
import onnx
work = sys.argv[1]
record = lambda folder: json.load(open(os.path.join(work, folder, "export.json")))
for name, windows in (("mistral-window", [8, 8]), ("gemma2-window", [8, None]), ("gemma3-window", [8, 8, None]),
                      ("qwen2-window", [None, 8, 8])):
    hf = record(name)["hf"]
    assert hf["attention_windows"] == windows and hf["references_past_window"], (name, hf)
    outputs = onnx.load(os.path.join(work, name, "model.onnx"), load_external_data=False).graph.output
    for o in outputs[1:]:
        dims = [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim]
        assert dims[2] in ("past_len + seq_len", "seq_len + past_len"), (name, o.name, dims)
    lengths = {a["shape"][2] for k, a in record(name)["data_sets"][1]["inputs"].items() if k.startswith("past_")}
    assert lengths == {8}, (name, lengths)
for folder, limits in (("roberta", {"seq_len": 64}), ("bart/encoder", {"seq_len": 64}),
                       ("bart/decoder", {"decoder_len": 64}),
                       ("bart/decoder-with-past", {"decoder_len": 32, "past_decoder_len": 32}),
                       ("marian/decoder-with-past", {"decoder_len": 32, "past_decoder_len": 32}),
                       ("t5/encoder", {}), ("t5/decoder-with-past", {}), ("whisper/decoder", {"decoder_len": 64}),
                       ("whisper/decoder-with-past", {"decoder_len": 32, "past_decoder_len": 32}),
                       ("clip", {"seq_len": 16})):
    assert record(folder)["dim_limits"] == limits, (folder, record(folder)["dim_limits"])
for name in ("wav2vec2-ctc", "hubert-ctc", "wavlm-ctc"):
    r = record(name)
    assert (r["hf"]["sampling_rate"], r["hf"]["min_samples"]) == (16000, 400), r["hf"]
    assert [i["name"] for i in r["inputs"]] == ["input_values"] and [o["name"] for o in r["outputs"]] == ["logits"]
clip = record("clip")
assert [i["name"] for i in clip["inputs"]] == ["input_ids", "attention_mask", "pixel_values"], clip["inputs"]
assert clip["dynamic_axes"]["pixel_values"] == {"0": "image_batch"}, clip["dynamic_axes"]
# T5 goes to the TorchScript exporter at once, and every part's route says why; Whisper's encoder takes log-mel
# features of the one length it was made for (two frames per position), its batch alone dynamic.
for part in ("encoder", "decoder", "decoder-with-past"):
    t5 = record(f"t5/{part}")
    assert t5["exporter_kind"] == "torchscript" and "torch.export fails to decompose t5" in t5["hf"]["route"], t5["hf"]
whisper = record("whisper/encoder")
assert [(i["name"], i["shape"][1:]) for i in whisper["inputs"]] == [("input_features", [80, 64])], whisper["inputs"]
assert whisper["dynamic_axes"] == {"input_features": {"0": "batch"}}, whisper["dynamic_axes"]
swin = record("swin")
assert swin["exporter_kind"] == "torchscript" and swin["hf"]["fallback"]["failed"] == "dynamo", swin["hf"]
console = open(os.path.join(work, "swin.out")).read()
assert "the dynamo exporter failed while decomposing the captured graph (step 2/3)" in console, console
assert "dynamic shapes:" in console, console
print("ok records: windows, position limits, audio facts, the exporters T5 and Swin take")
PY

# The table of supported architectures in docs/commands/export.md is this survey's.
"$python" "$survey" table >"$work/table.md"
"$python" - "$src/docs/commands/export.md" "$work/table.md" <<'PY' || fail "docs/commands/export.md's architectures table is not the survey's: run scripts/gen-docs.sh"
import sys
doc, table = open(sys.argv[1]).read(), open(sys.argv[2]).read()
begin, end = "<!-- BEGIN GENERATED: hf survey -->\n", "<!-- END GENERATED: hf survey -->"
assert doc[doc.index(begin) + len(begin):doc.index(end)] == table
PY
echo "export hf survey passed in $SECONDS s"
