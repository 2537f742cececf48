#!/usr/bin/env bash
# Reloads under load: `ortkit perf` at concurrency 32 against a repository model while it is reloaded
# 20 times through the repository API, alternating two versions (a version folder 2 that comes and
# goes), one reload of them a broken version 2 that must fail and leave the served one serving.
#
#   bench/serve_reload.sh [BUILD_DIR=build] [DURATION_S=60]
#
# Prints perf's step (requests, errors by kind), the reloads (HTTP code, seconds each), the index row of
# the model after the broken load, and the server's resident memory after the first and the last reload.
# Exits 1 when a request failed, a good reload failed, the broken one did not, or the memory after
# the last reload is more than 10% above that after the first.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
duration="${2:-60}"
ortkit="$build/bin/ortkit"
[ -x "$ortkit" ] && [ -x "$build/bin/ortkit_make_model" ] || { echo "build ortkit_cli and ortkit_make_model in $build first" >&2; exit 2; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }

work="$(mktemp -d)"
server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

repo="$work/repository"
mkdir -p "$repo/bert/1"
"$build/bin/ortkit_make_model" bert-tiny "$repo/bert/1/model.onnx"
cp "$repo/bert/1/model.onnx" "$work/good.onnx"

: >"$work/serve.log"  # before the background shell opens it
"$ortkit" serve --model-repository "$repo" --repository-api --http-port 0 --grpc-port -1 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do grep -q '^listening ' "$work/serve.log" && break; sleep 0.1; done
http="$(grep -o 'http=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
[ -n "$http" ] || { cat "$work/serve.log" >&2; exit 1; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }

"$ortkit" perf --url "$http" --model bert --concurrency 32 --duration "$duration" --warmup 1 --dim batch=1 \
  --dim seq_len=16 --format json >"$work/perf.json" 2>"$work/perf.err" &
perf=$!
sleep 1  # perf's warm-up
failed_reloads=0
gap="$(awk -v d="$duration" 'BEGIN { printf "%.2f", d / 21 }')"
for i in $(seq 1 20); do
  sleep "$gap"
  if [ "$i" = 10 ]; then  # a broken version 2: the load fails, version 1 (or 2) serves on
    mkdir -p "$repo/bert/2" && printf 'broken' >"$repo/bert/2/model.onnx"
    code="$(curl -s -o "$work/load.json" -w '%{http_code}' -X POST "http://$http/v2/repository/models/bert/load")"
    echo "reload $i (broken version 2): HTTP $code"
    [ "$code" != 200 ] || failed_reloads=$((failed_reloads + 1))
    curl -s -X POST "http://$http/v2/repository/index" >"$work/index.json"
    echo "index: $(cat "$work/index.json")"
    rm -rf "$repo/bert/2"
    continue
  fi
  if [ $((i % 2)) = 1 ]; then mkdir -p "$repo/bert/2" && cp "$work/good.onnx" "$repo/bert/2/model.onnx"; else rm -rf "$repo/bert/2"; fi
  start="$(date +%s.%N)"
  code="$(curl -s -o "$work/load.json" -w '%{http_code}' -X POST "http://$http/v2/repository/models/bert/load")"
  took="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')"
  echo "reload $i ($( [ -d "$repo/bert/2" ] && echo "to version 2" || echo "to version 1")): HTTP $code in $took s"
  [ "$code" = 200 ] || { failed_reloads=$((failed_reloads + 1)); cat "$work/load.json"; }
  [ "$i" = 1 ] && rss_first="$(rss_kb)"
done
rss_last="$(rss_kb)"
wait "$perf"
echo "perf: $(cat "$work/perf.json")"
errors="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]; print(sum(s.get("errors", {}).values()), s["completed"])' "$work/perf.json")"
echo "requests failed, completed: $errors"
echo "resident memory: ${rss_first} kB after the first reload, ${rss_last} kB after the last"
status=0
[ "${errors%% *}" = 0 ] || { echo "FAIL: requests failed"; status=1; }
[ "$failed_reloads" = 0 ] || { echo "FAIL: $failed_reloads reload(s) did not do what they should"; status=1; }
awk -v a="$rss_first" -v b="$rss_last" 'BEGIN { exit !(b <= a * 1.10) }' || { echo "FAIL: memory grew by more than 10%"; status=1; }
exit $status
