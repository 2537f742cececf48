#!/usr/bin/env bash
# ortkit bench end to end: the report in every format, a batch × seq_len sweep in one session,
# concurrency and sessions, IO binding, the profile and the next step it suggests, --compare's verdict and exit code, --tune
# writing a serving configuration, the SVG plot, and exit 2 with a specific message for bad input.
source "$2/tests/support/e2e.sh"

"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"
"$bin/ortkit_make_model" demo-encoder "$work/static.onnx" --static-batch 2
enc="$work/encoder.onnx"
fast=(--iterations 20 --warmup 1 --intra-threads 1)

# The text report: every figure, one row per shape, throughput relative to batch 1. Not a terminal: no progress bar.
"$ortkit" bench "$enc" --batch 1,4 --dim seq_len=8,16 "${fast[@]}" >"$work/text" 2>"$work/err"
for word in "session creation" "peak RSS" "first run" p50 p90 p95 p99 p99.9 max std runs/s samples/s "vs batch 1" CPU; do
  grep -q -- "$word" "$work/text" || fail "text report lacks '$word': $(cat "$work/text")"
done
[ "$(grep -c 'batch=[14] seq_len=' "$work/text")" = 4 ] || fail "expected 4 shape rows: $(cat "$work/text")"
[ ! -s "$work/err" ] || fail "stderr not empty when not a terminal: $(cat "$work/err")"

# JSON: the raw samples are kept, percentiles are ordered, samples/s = runs/s × batch.
"$ortkit" bench "$enc" --batch 1,4 --dim seq_len=8 "${fast[@]}" --format json >"$work/a.json"
python3 - "$work/a.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["session_create_ms"] > 0 and r["peak_rss_bytes"] > 1 << 20, r
assert r["config"]["intra_op_threads"] == 1 and r["config"]["iterations"] == 20
pts = r["results"]
assert [p["label"] for p in pts] == ["batch=1 seq_len=8", "batch=4 seq_len=8"], [p["label"] for p in pts]
for p in pts:
    l = p["latency_ms"]
    assert 0 < l["min"] <= l["p50"] <= l["p90"] <= l["p95"] <= l["p99"] <= l["p99_9"] <= l["max"], l
    assert p["runs"] == 20 and len(p["samples_ms"]) == 20 and p["samples_kept"] == 20
    assert abs(p["samples_per_s"] - p["runs_per_s"] * p["batch"]) < 1e-6 * p["samples_per_s"]
    assert p["first_run_ms"] > 0 and p["cpu_utilisation"] >= 0
    assert p["inputs"][0]["shape"] == [p["batch"], 8, 64]
assert pts[0]["throughput_vs_batch1"] == 1.0 and pts[1]["throughput_vs_batch1"] > 0
PY

# csv and markdown.
"$ortkit" bench "$enc" --batch 1,2 "${fast[@]}" --format csv >"$work/csv"
head -1 "$work/csv" | grep -q '^shape,batch,first_run_ms,min_ms,mean_ms,p50_ms' || fail "csv header: $(head -1 "$work/csv")"
[ "$(wc -l <"$work/csv")" = 3 ] || fail "csv rows: $(cat "$work/csv")"
"$ortkit" bench "$enc" "${fast[@]}" --format markdown >"$work/md"
grep -q '^| shape | first run |' "$work/md" && grep -q '^|---|---:|' "$work/md" || fail "markdown: $(cat "$work/md")"

# Duration mode, concurrency over two sessions, IO binding.
"$ortkit" bench "$enc" --duration 300ms --warmup 1 --concurrency 2 --sessions 2 --intra-threads 1 --format json >"$work/c.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["config"]; p=r["results"][0]; assert c["concurrency"]==2 and c["sessions"]==2 and c["duration"]=="300ms", c; assert 0.3 <= p["wall_s"] < 3 and p["runs"] > 4, p' "$work/c.json"
"$ortkit" bench "$enc" --io-binding --no-mem-pattern --no-arena --execution-mode parallel --inter-threads 2 "${fast[@]}" >/dev/null || fail "io binding"

# The plot: one SVG with latency and throughput lines.
"$ortkit" bench "$enc" --batch 1,2,4 "${fast[@]}" --plot "$work/plot.svg" >/dev/null
python3 -c 'import sys, xml.dom.minidom as m; d=m.parse(sys.argv[1]); assert len(d.getElementsByTagName("polyline")) == 3' "$work/plot.svg"

# The profile: top nodes, op types, providers; the trace is kept where --profile-prefix says.
"$ortkit" bench "$enc" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 5 --format json >"$work/p.json"
python3 - "$work/p.json" <<'PY'
import json, os, sys
p = json.load(open(sys.argv[1]))["profile"]
assert os.path.exists(p["trace"]) and os.path.basename(p["trace"]).startswith("prof"), p["trace"]
assert p["runs"] == 6, p["runs"]
assert p["top_nodes"] and p["top_nodes"][0]["share"] >= p["top_nodes"][-1]["share"]
assert any(t["name"] == "MatMul" for t in p["op_types"]), p["op_types"]
assert [g["name"] for g in p["providers"]] == ["CPUExecutionProvider"]
assert p["memory_copies"] == [] and p["cpu_fallbacks"] == []
PY
"$ortkit" bench "$enc" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 2 >"$work/out"
expect_msg "time per op type"; expect_msg "nodes per execution provider"; expect_msg "trace kept at $work/prof"

# The chain: a profile where float matrix products take most of the time ends with the optimize command (one
# line; JSON next_step); a model of one Relu, and one quantised already, do not.
need_python
"$python" "$src/tests/python/optimize_models.py" "$work/models" || fail "writing the models"
"$ortkit" bench "$work/models/perceptron.onnx" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 5 >"$work/out"
grep -q "next: .* of the time: \`ortkit optimize $work/models/perceptron.onnx --out fast.onnx\`" "$work/out" ||
  fail "no next step after a MatMul-heavy profile: $(cat "$work/out")"
[ "$(grep -c 'next: ' "$work/out")" = 1 ] || fail "the next step is one line: $(cat "$work/out")"
"$ortkit" bench "$work/models/perceptron.onnx" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 5 --format json >"$work/p.json"
python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["next_step"]; assert n and "ortkit optimize" in n, n' "$work/p.json" ||
  fail "JSON next_step"
printf '<ir_version: 8, opset_import: ["" : 17]>\nrelu (float[1, 64] x) => (float[1, 64] y) { y = Relu(x) }\n' |
  "$bin/ortkit_make_model" from-text "$work/relu.onnx"
"$ortkit" bench "$work/relu.onnx" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 2 --format json >"$work/r.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["next_step"] is None, r["next_step"]' "$work/r.json" ||
  fail "a next step for a Relu"
"$python" -c 'import sys; from onnxruntime.quantization import quantize_dynamic as q; q(sys.argv[1], sys.argv[2])' \
  "$work/models/perceptron.onnx" "$work/quantised.onnx" || fail "quantising with onnxruntime"
"$ortkit" bench "$work/quantised.onnx" "${fast[@]}" --profile --profile-prefix "$work/prof" --profile-runs 2 >"$work/out"
if grep -q "next: " "$work/out"; then fail "a next step for a quantised model: $(cat "$work/out")"; fi

# --compare: a run against itself is within noise (exit 0); a doctored 30% slower run fails (exit 1).
expect_rc 0 "$ortkit" bench --compare "$work/a.json" "$work/a.json"
expect_msg "verdict: within noise"
# The verdict's noise band comes from the samples, and a short run on a busy machine can be noisy
# enough to hide 30%: the base keeps the real report's structure with 200 steady samples (1% spread).
python3 - "$work/a.json" "$work/base.json" "$work/slow.json" <<'PY'
import json, math, statistics, sys
r = json.load(open(sys.argv[1]))
for p in r["results"]:
    median = statistics.median(p["samples_ms"])
    p["samples_ms"] = [median * (1 + 0.01 * math.sin(i)) for i in range(200)]
    p["runs_per_s"] = 1000 / median
json.dump(r, open(sys.argv[2], "w"))
for p in r["results"]:
    p["samples_ms"] = [s * 1.3 for s in p["samples_ms"]]
    p["runs_per_s"] /= 1.3
json.dump(r, open(sys.argv[3], "w"))
PY
expect_rc 1 "$ortkit" bench --compare "$work/base.json" "$work/slow.json" --format json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["verdict"]=="slower"; f=r["points"][0]["figures"][0]; assert f["figure"]=="p50 latency" and abs(f["ratio"]-1.3)<1e-6 and f["noise_low"]>1, f' "$work/out"
expect_rc 0 "$ortkit" bench --compare "$work/slow.json" "$work/base.json"
expect_msg "verdict: faster"

# --tune: a short sweep that writes the serving configuration with its explanation.
"$ortkit" bench "$enc" --tune --latency-budget 1s --time-budget 3s --batch 1,4 --dim seq_len=8 --max-instances 2 \
  --write-config "$work/serving.json" >"$work/out"
expect_msg "recommended:"; expect_msg "serving configuration written to"
python3 - "$work/serving.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert set(c) == {"name", "version_policy", "instances", "session", "batching", "warmup", "tuning"}, set(c)
assert c["version_policy"] == {"latest": {"num_versions": 1}}, c["version_policy"]
assert c["name"] == "encoder" and c["instances"] >= 1
assert set(c["session"]) == {"provider", "intra_op_threads", "inter_op_threads", "execution_mode", "optimization_level"}
assert set(c["batching"]) == {"enabled", "max_batch_size", "max_queue_delay_us", "preferred_batch_sizes", "max_queue_size", "timeout_us", "priority_levels"}
assert c["warmup"]["dims"]["seq_len"] == [8]
assert c["tuning"]["p99_ms"] <= 1000 and any(x.get("chosen") for x in c["tuning"]["candidates"])
PY

# ... and `ortkit serve` accepts the tuned file.
if command -v curl >/dev/null; then
  : >"$work/serve.out"  # exists before the loop reads it
  "$ortkit" serve --model "encoder=$enc" --config "$work/serving.json" --http-port 0 --grpc-port -1 >"$work/serve.out" 2>&1 &
  serve_pid=$!
  port=""
  for _ in $(seq 100); do
    port="$(grep -o 'http=127.0.0.1:[0-9]*' "$work/serve.out" | head -1 | cut -d: -f2 || true)"
    [ -n "$port" ] && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.2
  done
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port:-1}/v2/models/encoder/ready" || true)"
  kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true
  [ "$code" = 200 ] || fail "serve with the tuned config: HTTP $code: $(cat "$work/serve.out")"
fi

# A sweep that fails midway reports what it measured and why it stopped (a Reshape baked batch 2).
"$bin/ortkit_make_model" demo-encoder "$work/baked.onnx" --baked-batch 2
expect_rc 1 "$ortkit" bench "$work/baked.onnx" --batch 2,3 --dim seq_len=4 "${fast[@]}" --format json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [p["label"] for p in r["results"]]==["batch=2 seq_len=4"], r["results"]; assert r["stopped"].startswith("batch=3 seq_len=4:"), r["stopped"]' "$work/out"
expect_rc 1 "$ortkit" bench "$work/baked.onnx" --batch 2,3 --dim seq_len=4 "${fast[@]}"
expect_msg "stopped early: batch=3"; expect_msg "batch=2 seq_len=4 "

# Bad input: a specific message and exit 2.
expect_rc 2 "$ortkit" bench "$enc" --dim sequence=4;           expect_msg "no input has a dimension named 'sequence'"
expect_rc 2 "$ortkit" bench "$work/static.onnx" --batch 8;     expect_msg "impossible shape"
expect_rc 2 "$ortkit" bench "$enc" --batch 0;                  expect_msg "size 0 is impossible"
expect_rc 2 "$ortkit" bench "$enc" --dim seq_len=16,0;         expect_msg "size 0 is impossible"
expect_rc 2 "$ortkit" bench "$enc" --intra-threads 0;          expect_msg "--intra-threads 0: a thread count must be between 1 and 1024"
expect_rc 2 "$ortkit" bench "$enc" --inter-threads 100000;     expect_msg "--inter-threads 100000"
expect_rc 2 "$ortkit" bench "$enc" --concurrency 0;            expect_msg "--concurrency 0"
expect_rc 2 "$ortkit" bench "$enc" --duration 0;               expect_msg "--duration '0': expected a duration from 0.001 s"
expect_rc 2 "$ortkit" bench "$enc" --duration soon;            expect_msg "expected a duration"
expect_rc 2 "$ortkit" bench "$enc" --iterations 0;             expect_msg "--iterations 0"
expect_rc 2 "$ortkit" bench "$enc" --plot /nonexistent/dir/p.svg; expect_msg "--plot /nonexistent/dir/p.svg: cannot write there (no such directory)"
expect_rc 2 "$ortkit" bench "$enc" --tune --latency-budget 50ms --write-config /nonexistent/c.json; expect_msg "--write-config"
expect_rc 2 "$ortkit" bench "$enc" --profile --profile-prefix /nonexistent/dir/p; expect_msg "the profiler cannot write its trace there"
# A short measurement: the CPU figure stays within what the machine's cores can give.
"$ortkit" bench "$enc" --iterations 3 --format json >"$work/short.json"
python3 -c 'import json,os,sys; u=json.load(open(sys.argv[1]))["results"][0]["cpu_utilisation"]; assert 0 < u <= os.cpu_count() + 0.5, u' "$work/short.json" \
  || fail "cpu_utilisation beyond the cores on a 3-run measurement"
expect_rc 2 "$ortkit" bench "$enc" --provider cuda;            expect_msg "not available"
expect_rc 2 "$ortkit" bench "$enc" --provider tpu;             expect_msg "unknown execution provider 'tpu'; known: cpu, cuda"
expect_rc 2 "$ortkit" bench "$enc" --opt-level 3;              expect_msg "--opt-level 3"
expect_rc 2 "$ortkit" bench "$enc" --tune;                     expect_msg "--tune needs --latency-budget"
expect_rc 2 "$ortkit" bench "$enc" --write-config "$work/x.json"; expect_msg "add --tune"
expect_rc 2 "$ortkit" bench "$work/missing.onnx";              expect_msg "no such file"
expect_rc 2 "$ortkit" bench --compare "$work/a.json" "$work/missing.json"; expect_msg "cannot read"
echo '{"x": 1}' >"$work/not-a-report.json"
expect_rc 2 "$ortkit" bench --compare "$work/a.json" "$work/not-a-report.json"; expect_msg "no \"results\" array"
expect_rc 2 "$ortkit" bench "$enc" --shape x=1x2;              expect_msg "rank"
echo "e2e bench: ok"
