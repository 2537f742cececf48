#!/usr/bin/env python3
"""The library's layers go one way (docs/architecture.md): a module includes only modules below it.

    core < tensor < model < diagnose < runtime < {check, validate, bench} < {convert, doctor, serve, perf}

Modules on one level do not include each other. Only runtime/ includes ONNX Runtime's headers. Prints each
include that breaks a rule (file:line, from -> to) and exits 1 when there is one.
"""
import pathlib
import re
import sys

LEVELS = {
    "core": 0,
    "tensor": 1,
    "model": 2,
    "diagnose": 3,
    "runtime": 4,
    "check": 5, "validate": 5, "bench": 5,
    "convert": 6, "doctor": 6, "serve": 6, "perf": 6,
}
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
    for problem in problems:
        print(problem)
    print(f"layers: {len(problems)} include(s) against the order" if problems else "layers: every include goes down")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent))
