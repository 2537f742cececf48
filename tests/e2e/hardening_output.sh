#!/usr/bin/env bash
# What the commands write, against hostile names and flags (~40 s): outputs whose names make one
# file name never overwrite each other; names holding terminal escapes are shown escaped by every
# command (JSON stays exact); numbers out of range or NaN are refused, never saturated or run; an
# output path that is a device is refused, and nothing is written beside it; the reproducer script
# keeps the user's text as data.
source "$2/tests/support/e2e.sh"
need_python
"$python" "$src/tests/python/hostile_files.py" "$work/f"
f="$work/f"

# raw_escapes FILE: how many bytes a terminal would act on FILE holds (ESC, BEL, CR, a C1 CSI, U+202E).
raw_escapes() {
  "$python" -c 'import sys; b = open(sys.argv[1], "rb").read(); print(sum(b.count(x) for x in (b"\x1b", b"\x07", b"\r", b"\xc2\x9b", b"\xe2\x80\xae")))' "$1"
}

echo "== outputs named a/b, a_b, a:b, .. and 300 characters: a file each, and outputs.json says which"
expect_rc 0 "$ortkit" run "$f/twin_outputs.onnx" --output-dir "$work/saved"
"$python" - "$work/saved" <<'PY'
import json, os, sys
import numpy as np
folder = sys.argv[1]
index = json.load(open(os.path.join(folder, "outputs.json")))["files"]
names = ["a/b", "a_b", "a:b", "..", "n" * 300]
assert sorted(index) == sorted(names), index
assert len(set(index.values())) == len(names), index
for name, file in index.items():
    assert "/" not in file and not file.startswith(".") and len(file) < 200, file
    assert np.load(os.path.join(folder, file)).shape == (2,), file
npy = [f for f in os.listdir(folder) if f.endswith(".npy")]
assert len(npy) == len(names), npy
PY
echo "== --output-dir that is a file or a device is refused"
: >"$work/a-file"
expect_rc 2 "$ortkit" run "$f/twin_outputs.onnx" --output-dir "$work/a-file"
expect_msg "is a regular file, not a folder"
expect_rc 2 "$ortkit" run "$f/twin_outputs.onnx" --output-dir /dev/null
expect_msg "is a character device, not a folder"

echo "== terminal escapes in names are shown escaped by every command; JSON keeps the names exact"
"$ortkit" inspect "$f/escapes.onnx" >"$work/inspect.txt" 2>&1 || true
"$ortkit" check "$f/escapes.onnx" >"$work/check.txt" 2>&1 || true
"$ortkit" doctor "$f/escapes.onnx" --no-sweep --runs 0 >"$work/doctor.txt" 2>&1 || true
"$ortkit" run "$f/escapes.onnx" >"$work/run.txt" 2>&1 || true
"$ortkit" validate "$f/escapes.onnx" >"$work/validate.txt" 2>&1 || true
"$ortkit" fix "$f/escapes.onnx" --out "$work/fixed.onnx" >"$work/fix.txt" 2>&1 || true
"$ortkit" inspect "$f/escapes_dir"*/model.onnx >"$work/folder.txt" 2>&1 || true
"$ortkit" run "$f/escapes.onnx" --dim "$(printf 'nope\033[2J')=2" >"$work/flag.txt" 2>&1 || true
for name in inspect check doctor run validate fix folder flag; do
  count="$(raw_escapes "$work/$name.txt")"
  [ "$count" = 0 ] || { cat -v "$work/$name.txt" >&2; fail "$name printed $count raw terminal escapes"; }
done
grep -q 'dropout\\x1b\[2J' "$work/check.txt" || { cat "$work/check.txt" >&2; fail "check does not name the node, escaped"; }
grep -q 'graph.training-dropout' "$work/check.txt" || fail "check lost its finding"
grep -q '\\u202e' "$work/inspect.txt" || fail "inspect does not show U+202E as an escape"
"$ortkit" inspect "$f/escapes.onnx" --format json >"$work/inspect.json"
"$ortkit" check "$f/escapes.onnx" --format json >"$work/check.json" || true
"$python" - "$work/inspect.json" "$work/check.json" <<'PY'
import json, sys
escapes = "\x1b[2J\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07\rHEALTHY\x07\u009b31m\u202e"


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


inspect = set(strings(json.load(open(sys.argv[1]))))
assert "out" + escapes in inspect and "producer" + escapes in inspect, "inspect's JSON does not hold the exact names"
check = list(strings(json.load(open(sys.argv[2]))))
assert any("dropout" + escapes in text for text in check), "check's JSON does not hold the exact node name"
PY
for file in inspect check; do
  count="$(raw_escapes "$work/$file.json")"
  [ "$count" = 0 ] || fail "$file --format json wrote $count raw terminal escapes"
done

echo "== numbers out of range, NaN or infinite are refused, naming the flag and the range"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --profile --profile-runs 99999999999999999999
expect_msg "profile-runs"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --profile --profile-runs 100000000
expect_msg "--profile-runs: expected 1 to 10000"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --iterations 100000000000
expect_msg "--iterations 100000000000: expected 1 to 10000000"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --duration 1e308
expect_msg "expected a duration from 0.001 s to 86400 s"
expect_rc 2 "$ortkit" bench --compare "$work/a.json" "$work/b.json" --min-change nan
expect_msg "min-change"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --opt-level ''
expect_msg "opt-level"
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --iterations 010x
expect_msg "iterations"
expect_rc 2 "$ortkit" doctor "$f/relu_rows.onnx" --dim rows=2147483648
expect_msg "the synthesised inputs would take"
for flags in "--concurrency 2147483647" "--concurrency 100000" "--concurrency 4294967297" "--request-rate inf" \
             "--request-rate nan" "--request-rate 1e9" "--request-rate 1e308" "--duration 1e308" "--duration nan" \
             "--timeout-ms 0" "--max-outstanding 1000000"; do
  # shellcheck disable=SC2086
  expect_rc 2 timeout 20 "$ortkit" perf --url http://127.0.0.1:9 --model m $flags
  expect_msg "${flags%% *}"
done
expect_msg "expected"

echo "== an output path that is a device is refused, and nothing is written beside it"
rm -f /dev/null_inputs /dev/null_repro.py /dev/null.data 2>/dev/null || true
expect_rc 2 "$ortkit" fix "$f/escapes.onnx" --out /dev/null
expect_msg "is a character device, not a file ortkit can write"
expect_rc 2 "$ortkit" reduce "$f/relu16.onnx" --fails nan --out /dev/null
expect_msg "is a character device"
expect_rc 2 "$ortkit" convert "$f/relu16.onnx" --opset 18 --out /dev/null
expect_rc 2 "$ortkit" bench "$f/relu16.onnx" --plot /dev/null --iterations 3
expect_msg "is a character device"
mkfifo "$work/fifo.svg"
expect_rc 2 timeout 20 "$ortkit" bench "$f/relu16.onnx" --plot "$work/fifo.svg" --iterations 3
expect_msg "is a named pipe (FIFO), not a file ortkit can write"
for written in /dev/null_inputs /dev/null_repro.py /dev/null.data; do
  [ ! -e "$written" ] || fail "$written was written"
done

echo "== the reproducer script holds the user's text as data, never as code or docstring"
marker='"""; import os; os.system("touch PWNED"); """'
cat >"$work/fails.sh" <<'SH'
#!/bin/sh
exit 1
SH
chmod +x "$work/fails.sh"
expect_rc 0 "$ortkit" reduce "$f/relu16.onnx" --fails "cmd:$work/fails.sh {model} # $marker" --out "$work/min.onnx"
"$python" - "$work/min_repro.py" "$marker" <<'PY'
import ast, sys
source = open(sys.argv[1]).read()
tree = ast.parse(source)
docstring = ast.get_docstring(tree)
assert sys.argv[2] not in docstring and "touch" not in docstring, docstring
# The marker is inside string constants only (the command's words, as the reduction split them).
holders = [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
           and "os.system(touch" in node.value]
assert holders, "the command is not in the script as a string"
calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "system"]
assert not calls, "the user's text became code"
PY
(cd "$work" && "$python" -c 'import ast,sys; compile(open("min_repro.py").read(), "min_repro.py", "exec")')
[ ! -e "$work/PWNED" ] || fail "the script ran the user's text"

echo "== a config.json that is not a file is refused, naming it"
mkdir -p "$work/repo/m"
cp "$f/relu_rows.onnx" "$work/repo/m/model.onnx"
mkfifo "$work/repo/m/config.json"
expect_rc 2 timeout 20 "$ortkit" serve --model-repository "$work/repo" --http-port 0 --grpc-port -1
expect_msg "config.json"
expect_msg "named pipe"
rm "$work/repo/m/config.json"
ln -s /dev/zero "$work/repo/m/config.json"
expect_rc 2 timeout 20 "$ortkit" serve --model-repository "$work/repo" --http-port 0 --grpc-port -1
expect_msg "character device"

echo "== an external-data range past 2^63 is said with its true end"
"$python" - "$work/offset" <<'PY'
import os, sys
import onnx
from onnx import TensorProto, helper
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
w.ClearField("float_data")
w.data_location = TensorProto.EXTERNAL
for key, value in (("location", "w.bin"), ("offset", str(2**63 - 8)), ("length", "16")):
    entry = w.external_data.add()
    entry.key, entry.value = key, value
open(os.path.join(folder, "w.bin"), "wb").write(bytes(16))
graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
          os.path.join(folder, "model.onnx"))
PY
expect_rc 1 "$ortkit" check "$work/offset/model.onnx" --no-runtime
expect_msg "reads bytes 9223372036854775800..9223372036854775816"
for command in convert fix; do
  expect_rc 1 "$ortkit" "$command" "$work/offset/model.onnx" --opset 18 --out "$work/offset/out.onnx"
  grep -q -- ", -" "$work/out" && { cat "$work/out" >&2; fail "$command: a negative range end"; }
  expect_msg "external data range \[9223372036854775800, 9223372036854775816) lies outside"
done
echo "== memory follows what ONNX Runtime itself holds: a graph of 100,000 nodes, a tensor of 10^6 strings"
# The runtime alone holds about 80 times such a file (3.1 GB for a million-node chain of 38 MB, 2.3 GB for
# 10^7 empty strings in 20 MB): the bound is `run`'s peak, the model loaded once and run, measured here.
# doctor held 2.6 times it on the chain (the profiler's events of every node for the cross-check).
"$python" - "$work/big" <<'PY'
import os, sys
import onnx
from onnx import TensorProto, helper
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
n = 100_000
g = onnx.GraphProto(name="chain")
g.input.append(helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["batch", 4]))
for i in range(n):
    node = g.node.add(op_type="Identity", name=f"n{i}")
    node.input.append(f"v{i}")
    node.output.append(f"v{i + 1}")
g.output.append(helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, ["batch", 4]))
open(os.path.join(folder, "chain.onnx"), "wb").write(
    helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString())
t = onnx.TensorProto(name="s", data_type=TensorProto.STRING, dims=[1_000_000])
t.string_data.extend([b""] * 1_000_000)
g = helper.make_graph([helper.make_node("Identity", ["s"], ["y"])], "strings", [],
                      [helper.make_tensor_value_info("y", TensorProto.STRING, [1_000_000])], [t])
open(os.path.join(folder, "strings.onnx"), "wb").write(
    helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString())
PY
# peak_kb COMMAND...: the command's peak resident memory in KB (its output discarded).
peak_kb() {
  "$python" -c 'import resource, subprocess, sys
subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
for model in chain strings; do
  m="$work/big/$model.onnx"
  floor="$(peak_kb "$ortkit" run "$m")"
  for command in check doctor fix convert; do
    case "$command" in
      check) peak="$(peak_kb "$ortkit" check "$m")" ;;
      doctor) peak="$(peak_kb "$ortkit" doctor "$m" --runs 0)" ;;
      fix) peak="$(peak_kb "$ortkit" fix "$m" --out "$work/big/fixed.onnx")" ;;
      convert) peak="$(peak_kb "$ortkit" convert "$m" --opset 18 --out "$work/big/converted.onnx")" ;;
    esac
    echo "$model: $command peak $((peak / 1024)) MB, run $((floor / 1024)) MB"
    [ "$peak" -lt $((floor * 2)) ] || fail "$model: $command held $((peak / 1024)) MB, over twice run's $((floor / 1024)) MB"
  done
done
echo "== a sweep whose memory grows with the square of a sequence stays within its limit"
# Attention over seq: at 65,536 positions its scores alone take 16 GiB, more than this machine holds.
"$python" - "$work/attention.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]), helper.make_node("MatMul", ["x", "t"], ["s"]),
         helper.make_node("Softmax", ["s"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "x"], ["y"])]
graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", 64])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), sys.argv[1])
PY
read -r peak rc < <("$python" -c 'import resource, subprocess, sys
out = open(sys.argv[1], "w")
rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, rc)' "$work/out" \
  "$ortkit" validate "$work/attention.onnx" --sweep seq=16,256,65536 --sweep-memory 2GiB)
[ "$rc" = 0 ] || { cat "$work/out"; fail "the sweep within memory: exit $rc"; }
expect_msg "at seq=65536: not run: it would take about"
expect_msg "over the sweep's limit of 2.0 GiB (--sweep-memory)"
[ "$peak" -lt 2048 ] || fail "the sweep peaked at $peak MB, over its 2 GiB limit"
echo "ok: the largest cell was predicted, not run (peak $peak MB)"
expect_rc 2 "$ortkit" validate "$work/attention.onnx" --sweep-memory lots
expect_msg "expected a size"
echo "PASS: what the commands write, against hostile names and flags"
