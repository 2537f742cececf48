#!/usr/bin/env bash
# ortkit serve against its limits and its peers, measured side by side in one run on bert-tiny.
#
#   bench/serve_bench.sh [BUILD_DIR=build] [DURATION_S=4]
#   bench/serve_bench.sh build-release               the serving build (scripts/build_release.sh)
#   DELAY_US=2000 POLL_US=200 bench/serve_bench.sh   the server's max_queue_delay_us and --http/grpc-busy-poll-us
#   MALLOC_CONF=thp:always bench/serve_bench.sh      jemalloc with huge pages in every ortkit process (raw loop,
#                                                   server, load); the thinnest server does not link jemalloc
#
# Fair resources: the server, the FastAPI peer and the raw ONNX Runtime loop each run pinned to
# core 0 with one intra-op thread; the load generator (ortkit perf) runs pinned to core 1.
# Prints the serving targets, each measured side by side:
#   limit      server at concurrency 64 / best raw loop throughput over batch sizes   >= 0.85
#              (at seq_len 8, where the protocol's per-request cost weighs most, 16 and 32)
#   batching   batching on / off at seq_len 8                                          >= 1.8
#   bucketing  buckets at multiples of 16 / pad to the longest, lengths 4..128 (equal)  >= 1.5
#   peer       server / FastAPI + onnxruntime at concurrency 64, at equal or better p99 >= 2
#   overhead   server p50 at concurrency 1 / (raw Run p50 at batch 1 + loopback RTT)  <= 1.1
# and, to explain them: the thinnest server there can be (bench/tools/run_echo: recv, Run on the
# rows that arrived, send; no protocol) at the same concurrency, on the same cores, which bounds
# what any server over TCP can reach here; and the protocol floor: the same server and load on a
# model whose Run costs ~2 us.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
duration="${2:-4}"
ortkit="$build/bin/ortkit"
python="${ORTKIT_PYTHON:-$src/.deps/python/bin/python}"
[ -x "$python" ] || { echo "no Python environment at $python: run scripts/setup.sh (or set ORTKIT_PYTHON)" >&2; exit 2; }
[ -x "$ortkit" ] && [ -x "$build/bench/loopback_rtt" ] && [ -x "$build/bench/run_echo" ] ||
  { echo "build ortkit_cli, ortkit_make_model, loopback_rtt and run_echo in $build first" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "needs two cores (server on 0, load generator on 1)" >&2; exit 2; }

work="$(mktemp -d)"
server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
SERVER_CORE=0 LOAD_CORE=1
delay_us="${DELAY_US:-500}" poll_us="${POLL_US:-200}"
echo "pinning: server / peer / raw loop on core $SERVER_CORE (taskset -c $SERVER_CORE, 1 intra-op thread); load generator on core $LOAD_CORE (taskset -c $LOAD_CORE)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memory: transparent huge pages $(grep -o '\[[a-z]*\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown); MALLOC_CONF=${MALLOC_CONF:-(unset)}"

"$build/bin/ortkit_make_model" bert-tiny "$work/bert.onnx"

wait_listening() {  # $1: log file; sets $http
  for _ in $(seq 1 600); do
    grep -q '^listening ' "$1" && break
    kill -0 "$server" 2>/dev/null || { cat "$1" >&2; echo "server exited" >&2; exit 1; }
    sleep 0.1
  done
  http="$(grep -o 'http=[^ ]*' "$1" | head -1 | cut -d= -f2)"
}
start_serve() {  # extra serve flags
  taskset -c "$SERVER_CORE" "$ortkit" serve --model "bert=$work/bert.onnx" --http-port 0 --grpc-port -1 \
    --instances 1 --intra-op-threads 1 "$@" >"$work/serve.log" 2>&1 &
  server=$!
  wait_listening "$work/serve.log"
}
start_peer() {
  taskset -c "$SERVER_CORE" "$python" "$src/bench/peers/fastapi_peer.py" --model "bert=$work/bert.onnx" --intra-op-threads 1 \
    >"$work/peer.log" 2>&1 &
  server=$!
  wait_listening "$work/peer.log"
}
stop_server() { kill -TERM "$server"; wait "$server" || true; server=""; }
perf() {  # $1: output json; rest: perf flags
  local out="$1"; shift
  taskset -c "$LOAD_CORE" "$ortkit" perf --url "$http" --model bert --duration "$duration" --warmup 1 --format json "$@" >"$out"
}
field() {  # $1: perf json, $2: step index, $3: python expression over `s` (the step)
  "$python" -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][int(sys.argv[2])]; print(eval(sys.argv[3]))' "$1" "$2" "$3"
}

raw_figures() {  # $1: bench json -> best rows/s, its batch, batch-1 p50 in us (0 without batch 1), the servers' batch
  "$python" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
best = max(r, key=lambda p: p["samples_per_s"])
b1 = [p["latency_ms"]["p50"] * 1000 for p in r if p["batch"] == 1] or [0]
# The servers' max_batch_size: the largest batch within 5% of the best. Where the raw curve is flat the
# best batch is noise, and a server pays per batch too (a pass of its event loop, the Run's fixed cost).
serve = max(p["batch"] for p in r if p["samples_per_s"] >= 0.95 * best["samples_per_s"])
print(f'{best["samples_per_s"]:.1f} {best["batch"]} {b1[0]:.1f} {serve}')
PY
}
rtt="$(taskset -c "$SERVER_CORE,$LOAD_CORE" "$build/bench/loopback_rtt" "$SERVER_CORE" "$LOAD_CORE" 20000 512 | "$python" -c 'import json,sys; print(json.load(sys.stdin)["rtt_us_p50"])')"
echo "== loopback round trip (512 B, TCP_NODELAY, core $SERVER_CORE <-> $LOAD_CORE): p50 $rtt us"

# Each raw loop runs right before the server's step it is compared with: the machine's speed
# drifts over minutes, not over seconds. The server and the thinnest server take as their
# max_batch_size the largest batch whose raw throughput is within 5% of the best (raw_figures).
echo "== raw ONNX Runtime loop (ortkit bench), the thinnest server, then ortkit serve, at seq_len 8, 16 and 32; batching on (max_batch_size: the largest batch within 5% of the raw loop's best, ${delay_us} us delay, I/O thread polls ${poll_us} us before sleeping)"
declare -A raw_best raw_batch thin thin_batch
thinnest() {  # $1: seq_len, $2: clients, $3: max batch -> throughput, mean batch, latency p50 and Run p50 in us
  taskset -c "$SERVER_CORE,$LOAD_CORE" "$build/bench/run_echo" "$work/bert.onnx" "$1" "$SERVER_CORE" "$LOAD_CORE" "$2" \
    "$duration" "$3" |
    "$python" -c 'import json,sys; d=json.load(sys.stdin); print(d["throughput"], d["mean_batch"], d["latency_us_p50"], d["run_us_p50"])'
}
for seq in 8 16 32; do
  batches=8,16,32,64
  [ "$seq" = 8 ] && batches=1,$batches
  taskset -c "$SERVER_CORE" "$ortkit" bench "$work/bert.onnx" --batch "$batches" --dim seq_len=$seq --intra-threads 1 \
    --duration "${duration}s" --format json >"$work/raw$seq.json"
  read -r best best_batch p50_b1 batch < <(raw_figures "$work/raw$seq.json")
  raw_best[$seq]=$best raw_batch[$seq]=$best_batch
  echo "  seq_len $seq: raw loop best $best rows/s at batch $best_batch; the servers' max_batch_size $batch (the largest within 5% of it)"
  read -r thin[$seq] thin_batch[$seq] _ _ < <(thinnest "$seq" 64 "$batch")
  echo "  seq_len $seq: thinnest server ${thin[$seq]}/s at c=64 (batches of ${thin_batch[$seq]})"
  start_serve --max-batch-size "$batch" --max-queue-delay-us "$delay_us" --max-queue-size 1024 --http-busy-poll-us "$poll_us"
  if [ "$seq" = 8 ]; then
    raw_p50_b1=$p50_b1
    echo "  seq_len 8: raw loop batch 1 p50 $p50_b1 us"
    perf "$work/on.json" --concurrency 1,64 --dim seq_len=8
    perf "$work/on_json.json" --concurrency 64 --dim seq_len=8 --json
  else
    perf "$work/on$seq.json" --concurrency 64 --dim seq_len=$seq
  fi
  stop_server
done
raw_best8=${raw_best[8]} raw_best16=${raw_best[16]} raw_best32=${raw_best[32]}
read -r _ _ thin1 thin1_run < <(thinnest 8 1 1)
echo "  seq_len 8: thinnest server at c=1 (a raw Run and a loopback round trip, measured as one): p50 $thin1 us, its Run p50 $thin1_run us"
echo "== the same server over gRPC, seq_len 8"
taskset -c "$SERVER_CORE" "$ortkit" serve --model "bert=$work/bert.onnx" --http-port 0 --grpc-port 0 --instances 1 \
  --intra-op-threads 1 --max-batch-size 64 --max-queue-delay-us "$delay_us" --max-queue-size 1024 \
  --http-busy-poll-us "$poll_us" --grpc-busy-poll-us "$poll_us" \
  >"$work/serve.log" 2>&1 &
server=$!
wait_listening "$work/serve.log"
grpc="$(grep -o 'grpc=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
taskset -c "$LOAD_CORE" "$ortkit" perf --url "$grpc" --protocol grpc --metrics-url "http://$http/metrics" --model bert \
  --duration "$duration" --warmup 1 --format json --concurrency 1,64 --dim seq_len=8 >"$work/grpc.json"
stop_server
echo "== diagnostic, not the fair split: the instance's worker alone on core $SERVER_CORE, the I/O thread on core $LOAD_CORE beside the load generator"
taskset -c "$LOAD_CORE" "$ortkit" serve --model "bert=$work/bert.onnx" --http-port 0 --grpc-port -1 --instances 1 \
  --intra-op-threads 1 --max-batch-size 64 --max-queue-delay-us "$delay_us" --max-queue-size 1024 --http-workers \
  >"$work/serve.log" 2>&1 &
server=$!
wait_listening "$work/serve.log"
for task in /proc/"$server"/task/*; do
  case "$(cat "$task/comm")" in ortkit-0-bert) taskset -pc "$SERVER_CORE" "$(basename "$task")" >/dev/null ;; esac
done
perf "$work/split.json" --concurrency 64 --dim seq_len=8
stop_server
echo "== the same at concurrency 1 without polling (the I/O thread sleeps at once)"
start_serve --max-batch-size 64 --max-queue-delay-us "$delay_us" --max-queue-size 1024
perf "$work/on_sleep.json" --concurrency 1 --dim seq_len=8
stop_server
echo "== protocol floor: the same server and load on a model whose Run costs ~2 us"
"$python" "$src/bench/trivial_model.py" "$work/trivial.onnx"
taskset -c "$SERVER_CORE" "$ortkit" serve --model "bert=$work/trivial.onnx" --http-port 0 --grpc-port -1 --instances 1 \
  --intra-op-threads 1 --max-batch-size 64 --max-queue-delay-us "$delay_us" --max-queue-size 1024 --http-busy-poll-us "$poll_us" \
  >"$work/serve.log" 2>&1 &
server=$!
wait_listening "$work/serve.log"
perf "$work/floor.json" --concurrency 1 --dim seq_len=8
grep "^cpu$SERVER_CORE " /proc/stat >"$work/floor_cpu_before"
perf "$work/floor64.json" --concurrency 64 --dim seq_len=8
grep "^cpu$SERVER_CORE " /proc/stat >"$work/floor_cpu_after"
stop_server
echo "== ortkit serve, seq_len 8: batching off"
start_serve --no-batching --max-queue-size 1024 --http-busy-poll-us "$poll_us"
perf "$work/off.json" --concurrency 64 --dim seq_len=8
stop_server
echo "== FastAPI + onnxruntime peer (one request at a time, JSON), seq_len 8"
start_peer
perf "$work/peer.json" --concurrency 1,64 --dim seq_len=8 --json
stop_server

echo "== mixed lengths uniform 4..128: buckets at multiples of 16 (and at 16/32/64/128) vs one bucket at 128 (pad to the longest)"
bucket_config() {  # $1: the bucketing's boundaries or multiple_of, as JSON members
  printf '{"batching": {"max_batch_size": 32, "max_queue_delay_us": 2000, "max_queue_size": 1024},\n'
  printf ' "bucketing": {"dim": "seq_len", %s, "mask_input": "attention_mask"}}\n' "$1"
}
bucket_config '"multiple_of": 16' >"$work/buckets.json"
bucket_config '"boundaries": [16, 32, 64, 128]' >"$work/buckets4.json"
bucket_config '"boundaries": [128]' >"$work/longest.json"
start_serve --config "$work/buckets.json"
perf "$work/buckets_perf.json" --concurrency 64 --lengths uniform:4:128
"$python" "$src/bench/serve_outputs.py" --http "$http" --model "$work/bert.onnx" --out "$work/buckets_out.npz"
stop_server
start_serve --config "$work/buckets4.json"
perf "$work/buckets4_perf.json" --concurrency 64 --lengths uniform:4:128
stop_server
start_serve --config "$work/longest.json"
perf "$work/longest_perf.json" --concurrency 64 --lengths uniform:4:128
"$python" "$src/bench/serve_outputs.py" --http "$http" --model "$work/bert.onnx" --out "$work/longest_out.npz"
stop_server
outputs="$("$python" "$src/bench/serve_outputs.py" --compare "$work/buckets_out.npz" "$work/longest_out.npz")"

echo
echo "== figures (throughput in inferences/s; latency in ms)"
row() { printf "  %-44s %10s/s  p50 %7s  p99 %7s  batch %5s\n" "$1" "$(field "$2" "$3" 'round(s["throughput"],1)')" \
  "$(field "$2" "$3" 'round(s["latency_us"]["p50"]/1000,2)')" "$(field "$2" "$3" 'round(s["latency_us"]["p99"]/1000,2)')" \
  "$(field "$2" "$3" 'round(s["server_batch_size"] or 0,2)')"; }
printf "  %-44s %10s/s\n" "raw loop, best batch (${raw_batch[8]}), seq 8" "$raw_best8"
printf "  %-44s %10s/s  batch %5s\n" "thinnest server, c=64, seq 8" "${thin[8]}" "${thin_batch[8]}"
printf "  %-44s %10s   p50 %7s\n" "thinnest server, c=1, seq 8" "" "$("$python" -c "print(round($thin1/1000,2))")"
row "serve, batching on, c=1, seq 8 (binary)" "$work/on.json" 0
row "  the same, I/O thread sleeping at once" "$work/on_sleep.json" 0
row "serve, batching on, c=64, seq 8 (binary)" "$work/on.json" 1
row "serve, batching on, c=64, seq 8 (JSON)" "$work/on_json.json" 0
row "serve, batching on, c=1, seq 8 (gRPC)" "$work/grpc.json" 0
row "serve, batching on, c=64, seq 8 (gRPC)" "$work/grpc.json" 1
printf "  %-44s %10s/s\n" "raw loop, best batch (${raw_batch[16]}), seq 16" "$raw_best16"
printf "  %-44s %10s/s  batch %5s\n" "thinnest server, c=64, seq 16" "${thin[16]}" "${thin_batch[16]}"
row "serve, batching on, c=64, seq 16 (binary)" "$work/on16.json" 0
printf "  %-44s %10s/s\n" "raw loop, best batch (${raw_batch[32]}), seq 32" "$raw_best32"
printf "  %-44s %10s/s  batch %5s\n" "thinnest server, c=64, seq 32" "${thin[32]}" "${thin_batch[32]}"
row "serve, batching on, c=64, seq 32 (binary)" "$work/on32.json" 0
row "  diagnostic: I/O thread on the load's core" "$work/split.json" 0
row "serve, batching off, c=64, seq 8 (binary)" "$work/off.json" 0
row "FastAPI peer, c=1, seq 8 (JSON)" "$work/peer.json" 0
row "FastAPI peer, c=64, seq 8 (JSON)" "$work/peer.json" 1
row "protocol floor (2 us model), c=1" "$work/floor.json" 0
row "protocol floor (2 us model), c=64" "$work/floor64.json" 0
row "serve, buckets at multiples of 16, c=64, 4..128" "$work/buckets_perf.json" 0
row "serve, buckets 16/32/64/128, c=64, 4..128" "$work/buckets4_perf.json" 0
row "serve, pad to 128, c=64, 4..128" "$work/longest_perf.json" 0

echo
echo "== ratios (target in brackets)"
"$python" - "$work" "$raw_best8" "$raw_p50_b1" "$rtt" "$outputs" "$raw_best16" "$raw_best32" "$SERVER_CORE" "$thin1" \
  "${thin[8]}" "${thin[16]}" "${thin[32]}" "$thin1_run" <<'PY'
import json, sys
work, raw_best, raw_p50, rtt, outputs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
raw16_best, raw32_best = float(sys.argv[6]), float(sys.argv[7])
thin1, thin = float(sys.argv[9]), {8: float(sys.argv[10]), 16: float(sys.argv[11]), 32: float(sys.argv[12])}
thin1_run = float(sys.argv[13])
step = lambda name, i=0: json.load(open(f"{work}/{name}.json"))["steps"][i]
on1, on64, on64j, off = step("on", 0), step("on", 1), step("on_json"), step("off")
peer64 = step("peer", 1)
buckets, longest = step("buckets_perf"), step("longest_perf")
def show(name, value, target, ok, detail):
    print(f"  {name:10s} {value:6.2f}  [{target}]  {'PASS' if ok else 'MISS'}  {detail}")
for seq, raw, on in ((8, raw_best, on64), (16, raw16_best, step("on16")), (32, raw32_best, step("on32"))):
    v = on["throughput"] / raw
    show("limit", v, ">= 0.85", v >= 0.85, f"seq {seq}: {on['throughput']:.0f}/s at c=64 vs raw {raw:.0f}/s; the thinnest "
         f"server {thin[seq]:.0f}/s = {thin[seq] / raw:.2f} of raw, serve = {on['throughput'] / thin[seq]:.2f} of it")
v = on64["throughput"] / off["throughput"]
raw8 = json.load(open(f"{work}/raw8.json"))["results"]
raw_b1 = next(p["samples_per_s"] for p in raw8 if p["batch"] == 1)
best_batch = max(raw8, key=lambda p: p["samples_per_s"])["batch"]
show("batching", v, ">= 1.8", v >= 1.8, f"{on64['throughput']:.0f}/s vs {off['throughput']:.0f}/s; the raw loop alone gains "
     f"{raw_best / raw_b1:.2f}x from batch 1 to batch {best_batch} ({raw_b1:.0f} rows/s to {raw_best:.0f}); the rest is "
     f"the front end and cache refills that batching spreads over the batch")
v = buckets["throughput"] / longest["throughput"]
show("bucketing", v, ">= 1.5", v >= 1.5 and outputs.startswith("equal"), f"{buckets['throughput']:.0f}/s vs {longest['throughput']:.0f}/s; outputs {outputs}")
v = on64j["throughput"] / peer64["throughput"]
p99_ok = on64j["latency_us"]["p99"] <= peer64["latency_us"]["p99"]
show("peer", v, ">= 2, p99 <=", v >= 2 and p99_ok,
     f"JSON both: {on64j['throughput']:.0f}/s p99 {on64j['latency_us']['p99']/1000:.1f} ms vs {peer64['throughput']:.0f}/s p99 "
     f"{peer64['latency_us']['p99']/1000:.1f} ms (binary: {on64['throughput'] / peer64['throughput']:.1f}x)")
v = on1["latency_us"]["p50"] / (raw_p50 + rtt)
show("overhead", v, "<= 1.1", v <= 1.1, f"serve p50 {on1['latency_us']['p50']:.0f} us vs raw Run {raw_p50:.0f} us + loopback "
     f"round trip {rtt:.0f} us; the thinnest server (the two measured as one) {thin1:.0f} us, serve = "
     f"{on1['latency_us']['p50'] / thin1:.2f} of it, whose own Run takes {thin1_run:.0f} us at p50 between answers "
     f"({thin1_run / raw_p50:.2f}x the tight loop's)")
floor1, floor64 = step("floor", 0), step("floor64", 0)
per_request = 1e6 / floor64["throughput"]
# /proc/stat's cpuN line: user nice system idle iowait irq softirq ...
before, after = ([int(x) for x in open(f"{work}/floor_cpu_{t}").read().split()[1:8]] for t in ("before", "after"))
d = [b - a for a, b in zip(before, after)]
busy = sum(d) - d[3] - d[4]
kernel = (d[2] + d[5] + d[6]) / busy if busy else 0
print(f"  why: with a ~2 us model the server answers {floor64['throughput']:.0f}/s at c=64, i.e. {per_request:.0f} us of "
      f"front-end work per request on its one core (raw Run costs {1e6 / raw_best:.0f} us per row at the best batch), "
      f"so the limit ratio cannot exceed {(1e6 / raw_best) / (1e6 / raw_best + per_request):.2f} on this model; "
      f"at c=1 the protocol alone takes p50 {floor1['latency_us']['p50']:.0f} us against a {rtt:.0f} us TCP round trip")
print(f"       of those {per_request:.0f} us, {kernel * per_request:.0f} us are the kernel's (system and softirq time of core "
      f"{sys.argv[8]}: loopback TCP, both ends' receive processing of what this core sends)")
PY
