#!/usr/bin/env python3
"""The library's layers go one way (docs/architecture.md): a module includes only modules below it.

    core < diagnose < tensor < model < runtime < {check, env, inputs} < {validate, bench, report} < {convert, doctor,
    serve, perf, reduce, optimize} < fix

Modules on one level do not include each other, and no type name is defined twice anywhere in src/
and tools/ (whatever the namespace or file), nor two source files given one name. Only runtime/
includes ONNX Runtime's headers or uses its C++ types (`Ort::`), in the library and in the
commands. Prints each line that breaks a rule (file:line, what) and exits 1 when there is one.
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
    "report": 6,  # the HTML report page: graphs around findings, the model outline (shape inference from check)
    "convert": 7, "doctor": 7, "serve": 7, "perf": 7, "reduce": 7,
    "optimize": 7,  # rewrites for speed, proven by validate's runs and measured by bench's
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


TYPE = re.compile(r"^(?:struct|class|enum class|enum) (\w+)(?: final)?\s*(?::(?!:)|\{|$)")


def twin_types(root):
    """One name, one type, anywhere in src/ and tools/: two headers defining one type name in one
    namespace let the linker keep one of the inline members (the other header's users run the wrong
    layout, a crash far from the cause), and one name for two types in two namespaces or two files
    (perf's and serve's Endpoint) sends a reader to the wrong one. A type's name is taken where it is
    defined at the top of a file (`struct Name {`, `class Name : Base`); a member defined out of line
    (`struct Outer::Impl {`) and types nested in a class are the enclosing type's. Two source files
    of one name in different folders are refused for the same reason."""
    defined = {}
    files = {}
    problems = []
    sources = [path for top in ("src", "tools") for path in sorted((pathlib.Path(root) / top).rglob("*"))
               if path.suffix in (".h", ".cpp")]
    for path in sources:
        where_file = str(path.relative_to(root))
        if path.name in files:
            problems.append(f"{where_file}: a file of this name is also at {files[path.name]}: one name per concept")
        else:
            files[path.name] = where_file
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = TYPE.match(line)
            if not match or ("{" not in line and line.rstrip().endswith(";")):  # a declaration only
                continue
            name = match.group(1)
            where = f"{where_file}:{number}"
            if name in defined:
                problems.append(f"{where}: type {name} is also defined at {defined[name]}: one name per type, "
                                "anywhere in src/ and tools/")
            else:
                defined[name] = where
    return problems


def self_test():
    """The rules on small trees written here: each must refuse what it is for and pass the rest."""
    import contextlib
    import io
    import tempfile

    def problems(files):
        with tempfile.TemporaryDirectory() as root:
            for name, text in files.items():
                path = pathlib.Path(root) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(root)
            return code, out.getvalue()

    clean = {"src/ortkit/core/a.h": "namespace ortkit {\nstruct Address {\n};\nstruct Later;\n}\n",
             "src/ortkit/model/b.cpp": '#include "ortkit/core/a.h"\nstruct Address::Impl {\n};\n'
                                       "class Holder {\n  struct Address {};\n};\n"}
    cases = [
        ("a clean tree", clean, 0, "every include goes down"),
        ("one name in two namespaces", {**clean, "tools/ortkit/c.h": "namespace ortkit::cli {\nstruct Address {};\n}\n"},
         1, "type Address is also defined at src/ortkit/core/a.h:2"),
        ("one name in a .cpp", {**clean, "src/ortkit/model/d.cpp": "namespace {\nenum class Address { kA };\n}\n"},
         1, "type Address is also defined"),
        ("one file name twice", {**clean, "src/ortkit/tensor/a.h": "namespace ortkit {}\n"},
         1, "a file of this name is also at src/ortkit/core/a.h"),
        ("an include upwards", {**clean, "src/ortkit/core/e.cpp": '#include "ortkit/model/x.h"\n'},
         1, "core includes model, a layer above it"),
    ]
    failed = 0
    for what, files, want_code, want_text in cases:
        code, out = problems(files)
        if code != want_code or want_text not in out:
            failed += 1
            print(f"self-test '{what}': exit {code}, wanted {want_code} with '{want_text}':\n{out}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent))
