#!/usr/bin/env python3
"""The library's layers go one way (docs/architecture.md): a module includes only modules below it.

    core < diagnose < tensor < model < runtime < {check, env, inputs} < {validate, bench} < {convert, doctor, serve,
    perf, reduce} < fix

Modules on one level do not include each other, and no two headers define one type name in one
namespace. Only runtime/ includes ONNX Runtime's headers or uses its C++ types (`Ort::`), in the
library and in the commands. Prints each line that breaks a rule (file:line,
what) and exits 1 when there is one.
"""
import pathlib
import re
import sys

LEVELS = {
    "core": 0,
    "diagnose": 1,  # the Diagnosis type and its catalogue: model/ and everything above report findings
    "tensor": 2,
    "model": 3,
    "runtime": 4,
    "check": 5, "env": 5,
    "inputs": 5,  # a run's inputs (files, synthesised, sizes found by running): validate, bench, reduce and fix own them
    "validate": 6, "bench": 6,
    "convert": 7, "doctor": 7, "serve": 7, "perf": 7, "reduce": 7,
    "fix": 8,
}
ORT_TYPE = re.compile(r"\bOrt::\w")
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](ortkit/(\w+)/[^>"]+|onnxruntime[^>"]*)[>"]')


def main(root):
    library = pathlib.Path(root) / "src" / "ortkit"
    problems = []
    for path in sorted(library.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        module = path.relative_to(library).parts[0]
        if module not in LEVELS:
            problems.append(f"{path}: module '{module}' has no level in scripts/check_layers.py")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if (module != "runtime" and ORT_TYPE.search(code)):
                problems.append(f"{path.relative_to(root)}:{number}: {module} uses ONNX Runtime's C++ types: only "
                                "runtime/ may (add what is needed to runtime/'s API)")
            match = INCLUDE.match(line)
            if not match:
                continue
            where = f"{path.relative_to(root)}:{number}"
            target = match.group(2)
            if target is None:  # an ONNX Runtime header
                if module != "runtime":
                    problems.append(f"{where}: {module} includes ONNX Runtime's {match.group(1)}: only runtime/ may")
                continue
            if target == module:
                continue
            if target not in LEVELS:
                problems.append(f"{where}: includes module '{target}', which has no level")
            elif LEVELS[target] > LEVELS[module]:
                problems.append(f"{where}: {module} includes {target}, a layer above it")
            elif LEVELS[target] == LEVELS[module]:
                problems.append(f"{where}: {module} includes {target}, a module beside it")
    # The commands are above every layer; they too reach ONNX Runtime only through runtime/.
    for path in sorted((pathlib.Path(root) / "tools").rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if ORT_TYPE.search(line.split("//", 1)[0]) or (match and match.group(2) is None):
                problems.append(f"{path.relative_to(root)}:{number}: a command uses ONNX Runtime directly: only "
                                "runtime/ may")
    problems += twin_types(root)
    for problem in problems:
        print(problem)
    print(f"layers: {len(problems)} line(s) against the layers" if problems else "layers: every include goes down")
    return 1 if problems else 0


NAMESPACE = re.compile(r"^namespace ([\w:]+) \{")
TYPE = re.compile(r"^(?:struct|class|enum class|enum) (\w+)(?: final)?\s*(?:[:{]|$)")


def twin_types(root):
    """Two headers defining one type name in one namespace: the linker keeps one of the inline
    members, and the other header's users run the wrong layout (a crash far from the cause)."""
    defined = {}
    problems = []
    for path in sorted((pathlib.Path(root) / "src").rglob("*.h")) + sorted((pathlib.Path(root) / "tools").rglob("*.h")):
        namespace = ""
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if match := NAMESPACE.match(line):
                namespace = match.group(1)
            elif (match := TYPE.match(line)) and not line.rstrip().endswith(";"):
                key = f"{namespace}::{match.group(1)}"
                where = f"{path.relative_to(root)}:{number}"
                if key in defined:
                    problems.append(f"{where}: {key} is also defined at {defined[key]}: one name per type in a namespace")
                else:
                    defined[key] = where
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent))
