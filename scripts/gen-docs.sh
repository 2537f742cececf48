#!/usr/bin/env bash
# Regenerates the generated parts of the docs from the code: the diagnosis-code list in
# docs/troubleshooting.md (between the GENERATED markers) comes from `ortkit explain`; docs/deployment.md's
# quotes of the Dockerfile and the KServe manifests (deploy/kserve/) from those files.
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

# docs/deployment.md quotes the Dockerfile and the KServe manifests as they are (tests/e2e/deployment.sh checks it).
python3 - "$root" <<'PY'
import os, sys
root = sys.argv[1]
doc = os.path.join(root, "docs/deployment.md")
text = open(doc).read()
def quote(text, marker, language, names):
    begin, end = f"<!-- GENERATED: {marker} -->", "<!-- END GENERATED -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    blocks = "\n".join(f"```{language}\n{open(os.path.join(root, n)).read()}```\n" for n in names)
    return head + begin + "\n" + blocks + end + tail
text = quote(text, "Dockerfile", "dockerfile", ["Dockerfile"])
manifests = sorted(os.path.join("deploy/kserve", n) for n in os.listdir(os.path.join(root, "deploy/kserve")) if n.endswith(".yaml"))
# The ServingRuntime first: the InferenceService points at it.
manifests.sort(key=lambda n: "servingruntime" not in n)
text = quote(text, "KServe manifests", "yaml", manifests)
open(doc, "w").write(text)
PY
echo "updated docs/deployment.md"

# docs/commands/export.md's table of the architectures `export hf` supports is the survey's
# (tests/gallery/hf_survey.py; tests/e2e/export_hf_survey.sh checks it).
python3 - "$root" <<'PY'
import os, subprocess, sys
root = sys.argv[1]
doc = os.path.join(root, "docs/commands/export.md")
table = subprocess.run([sys.executable, os.path.join(root, "tests/gallery/hf_survey.py"), "table"], check=True,
                       capture_output=True, text=True).stdout
text = open(doc).read()
begin, end = "<!-- BEGIN GENERATED: hf survey -->\n", "<!-- END GENERATED: hf survey -->"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc, "w").write(head + begin + table + end + tail)
PY
echo "updated docs/commands/export.md"
