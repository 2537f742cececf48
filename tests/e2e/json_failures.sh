#!/usr/bin/env bash
# Every command's failures with --format json, one failure class at a time: a missing model (or what the
# command takes in its place), a bad flag value, and, where the command takes a reference, a reference that
# cannot be read (a folder without permission, a path that is a file). Each prints one JSON document with
# "error" on stdout and nothing else there, and exits 2. The commands are those the main help lists: a
# command added without its cases here fails this test.
source "$2/tests/support/e2e.sh"
"$bin/ortkit_make_model" demo-encoder "$work/model.onnx"
missing="$work/no-such-model.onnx"
mkdir "$work/locked" && chmod 000 "$work/locked"
trap 'chmod 700 "$work/locked"; rm -rf "$work"' EXIT
echo "not a reference" >"$work/reference.txt"
references=("$work/reference.txt")
# root reads a folder without permission all the same: the file stands in for it then.
[ "$(id -u)" = 0 ] || references+=("$work/locked")

# json_failure WHAT COMMAND ARGS...: exit 2, stdout exactly one JSON object with "error", its "command"
# (when it says one) the command's.
json_failure() {
  local what="$1" command="$2"; shift
  set +e
  "$ortkit" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$work/stdout" "$work/stderr" >&2; fail "$command, $what: exit $rc, expected 2: ortkit $*"; }
  python3 - "$work/stdout" "$command" <<'PY' || { cat "$work/stdout" "$work/stderr" >&2; fail "$command, $what: ortkit $*"; }
import json, sys
path, command = sys.argv[1:]
text = open(path).read()
try:
    document = json.loads(text)  # the whole of stdout: anything beside the document fails to parse
except ValueError as e:
    sys.exit(f"stdout is not one JSON document ({e}): {text!r}")
assert isinstance(document, dict) and "error" in document, document
assert document.get("command", command) in (command, ""), document
PY
  echo "  $command: $what"
}

# The cases of each command: "missing", "bad-flag" and "reference" run it with --format json added.
cases() {
  local command="$1" m="$work/model.onnx"
  case "$command" in
    export)
      missing_args=(torch --module "$work/no-such-module.py:make" --out "$work/export")
      bad_flag=(torch --module "$work/no-such-module.py:make" --out "$work/export" --seed not-a-number) ;;
    inspect) missing_args=("$missing"); bad_flag=("$m" --top 0) ;;
    check) missing_args=("$missing"); bad_flag=("$m" --provider no-such-provider) ;;
    run) missing_args=("$missing"); bad_flag=("$m" --dim batch=x) ;;
    validate) missing_args=("$missing"); bad_flag=("$m" --atol nan); reference=("$m" --reference) ;;
    convert) missing_args=("$missing" --out "$work/c.onnx" --opset 17); bad_flag=("$m" --out "$work/c.onnx" --opset 3) ;;
    fix) missing_args=("$missing" --out "$work/f.onnx"); bad_flag=("$m" --out "$work/f.onnx" --only no-such-fix)
         reference=("$m" --out "$work/f.onnx" --reference) ;;
    doctor) missing_args=("$missing"); bad_flag=("$m" --runs -1); reference=("$m" --reference) ;;
    reduce) missing_args=("$missing" --out "$work/r.onnx"); bad_flag=("$m" --out "$work/r.onnx" --fails no-such-failure) ;;
    optimize) missing_args=("$missing" --out "$work/o.onnx"); bad_flag=("$m" --out "$work/o.onnx" --rounds 0)
              reference=("$m" --dry-run --reference) ;;
    bench) missing_args=("$missing"); bad_flag=("$m" --iterations 0) ;;
    serve) missing_args=(--model "$missing" --http-port 0 --grpc-port -1)
           bad_flag=(--model "$m" --http-port 70000 --grpc-port -1) ;;
    perf) missing_args=(--url 127.0.0.1:1 --model no-such-model --duration 1); bad_flag=(--model m --concurrency 0) ;;
    env) missing_args=(); bad_flag=(--provider no-such-provider) ;;
    explain) missing_args=(no.such-code); bad_flag=(--no-such-flag 1) ;;
    *) fail "no cases for '$command': add its missing model, bad flag and reference to $0" ;;
  esac
}

expect_rc 0 "$ortkit" --help
mapfile -t commands < <(sed -n '/^Subcommands:/,$p' "$work/out" | awk 'NR > 1 && NF { print $1 }')
[ "${#commands[@]}" -ge 15 ] || fail "the main help lists ${#commands[@]} commands"
for command in "${commands[@]}"; do
  missing_args=(); bad_flag=(); reference=()
  cases "$command"
  [ "${#missing_args[@]}" = 0 ] && [ "$command" != env ] && fail "$command: no missing-model case"
  [ "$command" = env ] || json_failure "a missing model" "$command" "${missing_args[@]}" --format json
  json_failure "a bad flag value" "$command" "${bad_flag[@]}" --format json
  if [ "${#reference[@]}" -gt 0 ]; then
    for unreadable in "${references[@]}"; do
      json_failure "an unreadable reference ($(basename "$unreadable"))" "$command" "${reference[@]}" "$unreadable" \
        --format json
    done
  fi
done
echo "json_failures: OK"
