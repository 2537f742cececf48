#!/usr/bin/env bash
# --model-control poll against a real server: a new copy of a model written into the repository in slow chunks
# over several poll periods is never loaded half-written (no failed load in the log, every request answered by
# the old copy or the new one), then loads once it stops changing; a model folder renamed into place loads, a
# removed one unloads; the repository API's load is refused in this mode.
source "$2/tests/support/serve_e2e.sh"

repo="$work/repository"
"$python" "$src/tests/python/poll_test.py" --write-repository "$repo" --staged "$work/staged"
start_server --model-repository "$repo" --model-control poll --poll-seconds 1 --repository-api \
  --http-port 0 --grpc-port -1 --intra-op-threads 1
"$python" "$src/tests/python/poll_test.py" --http "$http" --repository "$repo" --staged "$work/staged" \
  --log "$work/serve.log" 2>&1 | tee "$work/py.log" | tail -8
grep -q '^PASS' "$work/py.log" || fail "polling: $(cat "$work/py.log")"
kill -TERM "$server"
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || fail "ortkit serve exited $rc after SIGTERM, expected 0"
"$ortkit" serve --model-repository "$repo" --model-control poll --poll-seconds 0 --http-port 0 >"$work/bad.log" 2>&1 &&
  fail "--poll-seconds 0 started"
grep -q -- '--poll-seconds 0: give 0.1 to 86400' "$work/bad.log" || fail "$(cat "$work/bad.log")"
echo "PASS: --model-control poll"
