#!/usr/bin/env bash
# ortkit serve end to end: the real executable on a free port, driven with curl. Every curl
# example in docs/commands/serve.md is one of these.
source "$2/tests/support/e2e.sh"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/err.txt" ] && tail -20 "$work/err.txt" >&2; exit 1; }
command -v curl >/dev/null || skip "curl not installed"

"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"
cat >"$work/encoder.json" <<'JSON'
{"instances": 2, "batching": {"max_batch_size": 8, "max_queue_delay_us": 1000, "max_queue_size": 64},
 "warmup": {"dims": {"batch": [1, 4], "seq_len": [8]}}}
JSON

# Port 0: the server picks free ports and prints them once the models are warm.
"$ortkit" serve --model encoder="$work/encoder.onnx" --config "$work/encoder.json" \
  --http-port 0 --grpc-port 0 --access-log "$work/access.log" >"$work/out.txt" 2>"$work/err.txt" &
server_pid=$!
for _ in $(seq 1 200); do grep -q "^listening" "$work/out.txt" 2>/dev/null && break; sleep 0.1; done
grep -q "^listening http=127.0.0.1:[0-9]* grpc=127.0.0.1:[0-9]* models=encoder" "$work/out.txt" || fail "no listening line: $(cat "$work/out.txt")"
port="$(sed -n 's/.*http=127.0.0.1:\([0-9]*\).*/\1/p' "$work/out.txt")"
url="http://127.0.0.1:$port"

status() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }

# Health and metadata.
[ "$(status "$url/v2/health/live")" = 200 ] || fail "live"
[ "$(status "$url/v2/health/ready")" = 200 ] || fail "ready"
[ "$(status "$url/v2/models/encoder/ready")" = 200 ] || fail "model ready"
[ "$(status "$url/v2")" = 200 ] || fail "server metadata"
grep -q '"binary_tensor_data"' "$work/body" || fail "server metadata lacks the binary extension: $(cat "$work/body")"
[ "$(status "$url/v2/models/encoder")" = 200 ] || fail "model metadata"
python3 - "$work/body" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["name"] == "encoder" and m["versions"] == ["1"], m
assert m["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, -1, 64]}], m
assert m["outputs"][0]["datatype"] == "FP32" and m["outputs"][0]["shape"] == [-1, -1, 64], m
PY
[ "$(status "$url/v2/models/encoder/versions/1")" = 200 ] || fail "versioned metadata"

# JSON inference: 2 rows of 3 x 64.
python3 - "$work" <<'PY'
import json, struct, sys
work = sys.argv[1]
values = [((i * 7) % 13) / 13.0 for i in range(2 * 3 * 64)]
json.dump({"id": "r1", "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3, 64], "data": values}]},
          open(work + "/request.json", "w"))
header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3, 64],
                                 "parameters": {"binary_data_size": len(values) * 4}}],
                     "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
open(work + "/request.bin", "wb").write(header + struct.pack("<%df" % len(values), *values))
open(work + "/header_length", "w").write(str(len(header)))
PY
[ "$(status -X POST -H 'Content-Type: application/json' -d @"$work/request.json" "$url/v2/models/encoder/infer")" = 200 ] \
  || fail "JSON infer: $(cat "$work/body")"
cp "$work/body" "$work/json_response"

# Binary tensor data extension, in and out.
curl -s -D "$work/headers" -o "$work/binary_response" -X POST -H 'Content-Type: application/octet-stream' \
  -H "Inference-Header-Content-Length: $(cat "$work/header_length")" --data-binary @"$work/request.bin" \
  "$url/v2/models/encoder/infer"
grep -qi '^Inference-Header-Content-Length: [0-9]' "$work/headers" || fail "binary response lacks the header: $(cat "$work/headers")"
python3 - "$work" <<'PY'
import json, re, struct, sys
work = sys.argv[1]
j = json.load(open(work + "/json_response"))
assert j["id"] == "r1" and j["model_name"] == "encoder", j
out = j["outputs"][0]
assert out["name"] == "y" and out["datatype"] == "FP32" and out["shape"] == [2, 3, 64], out
headers = open(work + "/headers").read()
n = int(re.search(r"(?i)inference-header-content-length: (\d+)", headers).group(1))
body = open(work + "/binary_response", "rb").read()
header = json.loads(body[:n])
size = header["outputs"][0]["parameters"]["binary_data_size"]
assert size == 2 * 3 * 64 * 4 and len(body) == n + size, (size, len(body), n)
binary = struct.unpack("<%df" % (size // 4), body[n:])
assert max(abs(a - b) for a, b in zip(binary, out["data"])) < 1e-5, "JSON and binary answers differ"
PY

# Errors: the protocol's {"error": ...} with the right status.
expect_error() {  # expected-status description curl-args...
  local want="$1" what="$2"; shift 2
  local got; got="$(status "$@")"
  [ "$got" = "$want" ] || fail "$what: status $got, expected $want: $(cat "$work/body")"
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e, e' "$work/body" || fail "$what: no error field"
}
expect_error 400 "malformed JSON" -X POST -d '{"inputs": [' "$url/v2/models/encoder/infer"
expect_error 400 "wrong datatype" -X POST -d '{"inputs": [{"name": "x", "datatype": "INT64", "shape": [1, 1, 64], "data": [0]}]}' "$url/v2/models/encoder/infer"
expect_error 400 "wrong shape" -X POST -d '{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2, 3], "data": [1, 2, 3, 4, 5, 6]}]}' "$url/v2/models/encoder/infer"
grep -q "dimension 2 must be 64" "$work/body" || fail "wrong shape message: $(cat "$work/body")"
expect_error 400 "missing input" -X POST -d '{"inputs": []}' "$url/v2/models/encoder/infer"
expect_error 404 "unknown model" -X POST -d @"$work/request.json" "$url/v2/models/nosuch/infer"
expect_error 404 "unknown version" "$url/v2/models/encoder/versions/7"
expect_error 404 "unknown endpoint" "$url/v2/nothing"
head -c 70000000 /dev/zero >"$work/big"
expect_error 413 "body over the limit" -X POST --data-binary @"$work/big" "$url/v2/models/encoder/infer"

# Metrics: counters in Prometheus text, the average batch size visible.
[ "$(status "$url/metrics")" = 200 ] || fail "metrics"
grep -q '^ortkit_request_success_total{model="encoder",version="1"} 2$' "$work/body" || fail "success counter: $(grep success "$work/body")"
grep -q '^ortkit_execution_count_total{model="encoder",version="1"} [0-9]' "$work/body" || fail "execution counter"
grep -q '^# TYPE ortkit_request_duration_us histogram' "$work/body" || fail "latency histogram"

# Concurrent requests while SIGTERM arrives: every accepted request is answered, exit 0.
for i in $(seq 1 20); do
  curl -s -o "$work/c$i" -w '%{http_code}\n' -X POST -d @"$work/request.json" "$url/v2/models/encoder/infer" >"$work/code$i" &
done
sleep 0.2
kill -TERM "$server_pid"
set +e
wait "$server_pid"; rc=$?
set -e
server_pid=""
wait
[ "$rc" = 0 ] || fail "SIGTERM: exit $rc, expected 0"
grep -q "draining" "$work/err.txt" || fail "no draining message"
for i in $(seq 1 20); do
  code="$(cat "$work/code$i")"
  # Answered (200), or refused before being accepted (connection refused: 000).
  [ "$code" = 200 ] || [ "$code" = 000 ] || fail "request $i during shutdown: status $code"
done

# The access log holds one JSON line per request.
python3 - "$work/access.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 15, len(lines)
infer = [l for l in lines if l["path"].endswith("/infer") and l["status"] == 200]
assert infer and infer[0]["model"] == "encoder" and infer[0]["duration_us"] > 0, infer[:1]
PY
echo "serve_http: ok"
