#!/usr/bin/env bash
# A CPU limit set the way docker --cpus and Kubernetes set one (a cgroup CPU quota) sizes ortkit's
# threads: serve shares the limit's cores among its instances and says so, bench --tune sweeps
# within it, bench's report records it and notes when ONNX Runtime's default pool exceeds it. Needs
# root and a writable cgroup cpu controller (v2 or v1); skips otherwise.
source "$2/tests/support/e2e.sh"
[ "$(id -u)" = 0 ] || skip "creating a cgroup needs root"
affinity="$(nproc)"  # the affinity mask's count
[ "$affinity" -ge 2 ] || skip "needs two cores, to see a limit of half a core bind"

# new_cgroup DIR FILE VALUE: creates the cgroup DIR with VALUE in FILE (and sets cg), or leaves nothing.
cg=""
new_cgroup() {
  mkdir "$1" 2>/dev/null || return 1
  echo "$3" >"$1/$2" 2>/dev/null || { rmdir "$1"; return 1; }
  cg="$1"
}
if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then  # cgroup v2, cpu enabled below the root
  new_cgroup "/sys/fs/cgroup/ortkit-e2e-$$" cpu.max "50000 100000" || true
else
  for mount in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
    [ -d "$mount" ] && new_cgroup "$mount/ortkit-e2e-$$" cpu.cfs_quota_us 50000 && break
  done
fi
[ -n "$cg" ] || skip "cannot create a cgroup with a CPU quota here"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# limited COMMAND...: COMMAND inside the cgroup, in this process (exec).
enter='echo $$ >"$0/cgroup.procs" && exec "$@"'
limited() { bash -c "$enter" "$cg" "$@"; }
"$bin/ortkit_make_model" bert-tiny "$work/bert.onnx" >/dev/null
want="1 core (the cgroup's CPU limit of 0.5 CPUs; $affinity in the affinity mask)"

# serve: intra-op threads left at 0 are sized to the limit, with a note.
bash -c "$enter" "$cg" "$ortkit" serve --model "bert=$work/bert.onnx" --http-port 0 --grpc-port -1 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do grep -q '^listening ' "$work/serve.log" && break; sleep 0.1; done
grep -q '^listening ' "$work/serve.log" || { cat "$work/serve.log" >&2; fail "serve did not start"; }
grep -qF "note: sizing intra-op threads to $want" "$work/serve.log" || { cat "$work/serve.log" >&2; fail "no note on the limit"; }
kill -TERM "$server"; wait "$server" || fail "serve did not stop cleanly"; server=""
echo "ok    serve sizes its threads to the cgroup's limit and says so"

# bench: the report records the cores; a bad thread count's message names the limit.
expect_rc 0 limited "$ortkit" bench "$work/bert.onnx" --batch 1 --dim seq_len=8 --duration 0.2s --format json
python3 - "$work/out" <<'PY' || fail "bench's report does not record 1 core"
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["cores"] == 1, c
PY
expect_rc 0 limited "$ortkit" bench "$work/bert.onnx" --batch 1 --dim seq_len=8 --duration 0.2s
expect_msg "note: ONNX Runtime sizes its default thread pool to the machine ($affinity hardware threads), but this process may use $want: --intra-threads 1 measures what it gets"
expect_rc 0 limited "$ortkit" bench "$work/bert.onnx" --batch 1 --dim seq_len=8 --duration 0.2s --intra-threads 1
! grep -q "note: ONNX Runtime sizes" "$work/out" || fail "the note shows with --intra-threads given"
expect_rc 2 limited "$ortkit" bench "$work/bert.onnx" --intra-threads 0
expect_msg "this process may use $want"
echo "ok    bench records the limit's cores, notes when ONNX Runtime's default pool exceeds them, and names the limit in its thread-count error"

# bench --tune: the sweep stays within one core (no two-thread candidates).
expect_rc 0 limited "$ortkit" bench "$work/bert.onnx" --tune --latency-budget 50ms --time-budget 3s --dim seq_len=8 \
  --batch 1,2 --format json
python3 - "$work/out" <<'PY' || fail "bench --tune swept beyond the limit"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["config"]["tuning"]["cores"] == 1, t["config"]["tuning"]["cores"]
for m in t["measurements"]:
    assert m["intra_op_threads"] * m["inter_op_threads"] * m["instances"] == 1, m
PY
echo "ok    bench --tune sweeps within the limit"
