#!/usr/bin/env bash
# ortkit serve against what once crashed it or was let through (~20 s): trailers Beast cannot
# store or that grow without bound, duplicated or contradictory request fields, out-of-range
# priority and timeout over HTTP and gRPC (tests/python/serve_hardening.py); flags out of range,
# which go through the same validation as a configuration file; a model repository holding a
# hidden folder, a misnamed folder and a model reached through a symbolic link.
source "$2/tests/support/serve_e2e.sh"
"$bin/ortkit_make_model" bert-tiny "$work/bert.onnx"

echo "== flags out of range: exit 2 naming the flag, the key and the range"
model=(--model "bert=$work/bert.onnx" --http-port 0 --grpc-port -1)
expect_rc 2 "$ortkit" serve "${model[@]}" --instances 0
expect_msg "model 'bert': instances (--instances): expected an integer from 1 to 256, got 0"
expect_rc 2 "$ortkit" serve "${model[@]}" --instances 100000
expect_msg "got 100000"
for value in 0 -1; do
  expect_rc 2 "$ortkit" serve "${model[@]}" --max-queue-size "$value"
  expect_msg "batching.max_queue_size (--max-queue-size): expected an integer from 1 to 1000000, got $value"
done
expect_rc 2 "$ortkit" serve "${model[@]}" --max-batch-size -3
expect_msg "batching.max_batch_size (--max-batch-size)"
expect_rc 2 "$ortkit" serve "${model[@]}" --timeout-us -1
expect_msg "batching.timeout_us (--timeout-us)"
for value in -1 0 99999999999999; do
  expect_rc 2 "$ortkit" serve "${model[@]}" --max-body-mb "$value"
  expect_msg "max-body-mb"
done
# 10^16 us was taken, and every request then got 503 "waited 5 us ... past its timeout".
for value in 10000000000000000 9223372036854775807; do
  expect_rc 2 "$ortkit" serve "${model[@]}" --timeout-us "$value"
  expect_msg "batching.timeout_us (--timeout-us): expected an integer from 0 to 3600000000"
done
expect_rc 2 "$ortkit" serve "${model[@]}" --max-inflight-bytes 1000
expect_msg "max_inflight_bytes (--max-inflight-bytes): expected 1048576 to"
for flag in --max-answer-mb --drain-timeout-s; do
  expect_rc 2 "$ortkit" serve "${model[@]}" "$flag" 0
  expect_msg "${flag#--}"
done

echo "== hostile requests over HTTP and gRPC"
# The script ends with SIGTERM during hostile requests: the server must be gone within its drain deadline.
start_server --model "bert=$work/bert.onnx" --http-port 0 --grpc-port 0 --intra-op-threads 1 --drain-timeout-s 3
"$python" "$src/tests/python/serve_hardening.py" --http "$http" --grpc "$grpc" --pid "$server" --drain-s 3 \
  || fail "hostile requests (see FAIL lines above)"
set +e; wait "$server"; rc=$?; set -e; server=""
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "the server ended with $rc after SIGTERM (0: drained, 1: the deadline passed)"

echo "== a repository with a hidden folder, a misnamed folder and a model linked from outside"
repo="$work/repo"
mkdir -p "$repo/bert" "$repo/.ipynb_checkpoints" "$repo/my model" "$repo/linked" "$work/outside"
cp "$work/bert.onnx" "$repo/bert/model.onnx"
cp "$work/bert.onnx" "$repo/.ipynb_checkpoints/model.onnx"
cp "$work/bert.onnx" "$repo/my model/model.onnx"
cp "$work/bert.onnx" "$work/outside/model.onnx"
ln -s "$work/outside/model.onnx" "$repo/linked/model.onnx"
start_server --model-repository "$repo" --http-port 0 --grpc-port -1 --intra-op-threads 1
grep -q "models=bert,linked$" "$work/serve.log" || fail "expected models bert and linked"
[ "$(grep -c "skipped folder 'my model'" "$work/serve.log")" = 1 ] || fail "the misnamed folder is not named once"
grep -q "model 'linked' is served from .*outside/model.onnx, outside the repository" "$work/serve.log" \
  || fail "no note on the model outside the repository"
grep -q "ipynb" "$work/serve.log" && fail "the hidden folder was mentioned"
echo "PASS: serve hardening"
