#!/usr/bin/env bash
# Regenerates the generated parts of the docs from the code: the diagnosis-code list in
# docs/troubleshooting.md (between the GENERATED markers) comes from `ortkit explain`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ortkit="${ORTKIT:-${BUILD_DIR:-$root/build}/bin/ortkit}"
doc="$root/docs/troubleshooting.md"
codes="$(mktemp)"; trap 'rm -f "$codes"' EXIT
"$ortkit" explain --format json | python3 -c '
import json, sys
codes = json.load(sys.stdin)
titles = {"file": "File layer", "external-data": "External data", "checker": "ONNX checker",
          "shape": "Shape inference", "graph": "Export rules", "runtime": "ONNX Runtime messages",
          "validate": "Validation", "sweep": "Dynamic-shape sweep", "export": "Export companion",
          "target": "Target runtime (--target-ort)", "convert": "Opset conversion (convert)",
          "env": "Environment (env)", "fix": "Repair (fix)", "optimize": "Optimisation (optimize)",
          "internal": "Internal"}
layer = None
for c in codes:
    l = c["code"].split(".")[0]
    if l != layer:
        layer = l
        print(f"\n## {titles.get(l, l)}\n")
    handled = c["ortkit_fix"] or "`ortkit fix` does not change the file for it: apply the fix above."
    print("### `%s`\n\n**%s**: %s.\n\n- **Cause:** %s\n- **Fix:** %s\n- **ortkit fix:** %s\n" % (c["code"], c["severity"], c["title"], c["cause"], c["fix"], handled))
' >"$codes"
python3 - "$doc" "$codes" <<'PY'
import sys
doc, codes = sys.argv[1], open(sys.argv[2]).read()
text = open(doc).read()
begin, end = "<!-- GENERATED: diagnosis codes -->", "<!-- END GENERATED -->"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc, "w").write(head + begin + "\n" + codes + "\n" + end + tail)
PY
echo "updated $doc"
