#!/usr/bin/env bash
# `ortkit export` delegating to the export companion: the package found next to the source tree, exit codes
# passed through, a missing package or interpreter reported as export.python-missing, and doctor on what the
# export wrote. The companion's own unit tests (tests/python/test_export.py) are CTest's python.export.
source "$2/tests/support/e2e.sh"
need_python

cat >"$work/net.py" <<'PY'
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    def forward(self, x):
        return self.conv(x).relu().mean(dim=(2, 3))
def build():
    return Net()
PY
# No PYTHONPATH given: ortkit finds python/ortkit_export itself.
unset PYTHONPATH
"$ortkit" export torch --module "$work/net.py:build" --inputs "x:float32[2,3,16,16]" --dynamic auto --out "$work/net" >"$work/out" 2>&1 \
  || { cat "$work/out" >&2; fail "ortkit export torch"; }
grep -q "input  x: float32\[batch, 3, 16, 16\]" "$work/out" || { cat "$work/out" >&2; fail "summary"; }
"$ortkit" doctor "$work/net" --runs 2 >"$work/doctor.txt" || { cat "$work/doctor.txt" >&2; fail "doctor on a fresh export"; }
grep -q "verdict: HEALTHY" "$work/doctor.txt" && grep -q "test_data_set_0 pass, test_data_set_1 pass" "$work/doctor.txt" \
  || { cat "$work/doctor.txt" >&2; fail "doctor text"; }
# The model path alone finds the export's folder, references and record too.
"$ortkit" doctor "$work/net/model.onnx" --runs 2 --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["verdict"] == "healthy" and r["reference_from_export"] and r["export"]["framework"] == "torch", r' || fail "doctor MODEL"

# Help and usage errors come from the companion; exit 2.
"$ortkit" export torch --help >"$work/out" 2>&1 || fail "export --help"
grep -q -- "--module FILE.py:FACTORY" "$work/out" || fail "help text"
expect_rc 2 "$ortkit" export torch --module "$work/net.py:nope" --inputs "x:float32[1,3,8,8]" --out "$work/x"
grep -q "export.bad-module" "$work/out" && grep -q "build" "$work/out" || fail "bad factory: $(cat "$work/out")"
expect_rc 2 "$ortkit" export onnx --out "$work/x"
# A package or interpreter that cannot be found.
ORTKIT_PYTHONPATH="$work/none" expect_rc 2 "$ortkit" export torch --help
grep -q "export.python-missing" "$work/out" && grep -q "$work/none/ortkit_export" "$work/out" || fail "missing package: $(cat "$work/out")"
ORTKIT_PYTHON="$work/no-python" expect_rc 2 "$ortkit" export torch --help
grep -q "export.python-missing" "$work/out" || fail "missing interpreter: $(cat "$work/out")"

# doctor: usage errors exit 2.
expect_rc 2 "$ortkit" doctor "$work/net" --provider nope
expect_rc 2 "$ortkit" doctor "$work/missing.onnx"
echo "export e2e passed"
