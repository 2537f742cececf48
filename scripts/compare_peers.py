"""The Python half of scripts/compare_peers.sh (a manual measurement, not part of the test suite): judges
every tool's result the same way, whichever tool wrote it (the models come from tests/gallery and
tests/python).

usage: compare_peers.py judge-fix WORK      judges WORK/fix/CASE/TOOL.onnx, prints the tables
       compare_peers.py judge-reduce WORK   judges WORK/reduce/{ortkit,polygraphy}-KIND/min.onnx

Runs in the peers' virtual environment (onnx, numpy, onnxruntime); `ortkit check` is WORK/ortkit."""

import json
import os
import re
import subprocess
import sys

import numpy as np


# ------------------------------------------------------------------------------------------------
def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def seconds(path):
    text = read(path)
    try:
        return float(text.splitlines()[-1]) if text else None
    except ValueError:
        return None


def session(path, level="all"):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = {"off": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def short_error(error):
    """The runtime's message in a few words: the node it names and the gist."""
    text = str(error).replace("\n", " ")
    node = re.search(r"running (\w+) node\. Name:'([^']+)'", text) or re.search(r"Node \(([^)]+)\) Op \((\w+)\)", text)
    where = ""
    if node:
        op, name = (node.group(1), node.group(2)) if "running" in node.group(0) else (node.group(2), node.group(1))
        where = f"{op} '{name}': "
    for gist in ("cannot be reshaped to the requested shape", "Attempting to broadcast an axis",
                 "Invalid rank", "Got invalid dimensions", "Target shape may not have multiple -1",
                 "Type Error", "Unexpected input data type", "doesn't match", "Invalid input shape",
                 "Input shape", "Mismatch"):
        if gist in text:
            return where + gist
    return where + text[text.find("]") + 1:][:120].strip(" :")


def data_inputs(model_path):
    import onnx
    m = onnx.load(model_path)
    initializers = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in initializers]


def describe(model_path):
    """What is in a model, for the before/after line: I/O shapes, nodes, float64, weights as inputs, Dropouts in training."""
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(model_path)
    g = m.graph
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    initializers = {t.name: t for t in g.initializer}
    doubles = sum(t.data_type == TensorProto.DOUBLE for t in g.initializer)
    doubles += sum(1 for n in g.node for a in n.attribute
                   if (n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.DOUBLE)
                   or (a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.DOUBLE))
    doubles += sum(v.type.tensor_type.elem_type == TensorProto.DOUBLE for v in g.value_info)
    training = 0
    constants = {n.output[0]: n.attribute[0].t for n in g.node if n.op_type == "Constant"}
    for n in g.node:
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            t = initializers.get(n.input[2]) or constants.get(n.input[2])
            training += 1 if t is None or bool(numpy_helper.to_array(t)) else 0
    return {"inputs": {i.name: dims(i) for i in g.input if i.name not in initializers},
            "outputs": {o.name: dims(o) for o in g.output},
            "nodes": len(g.node),
            "weights_as_inputs": sum(i.name in initializers for i in g.input),
            "float64": doubles,
            "training_dropouts": training}


# ------------------------------------------------------------------------------------------------
# fix: every result judged the same way.

CASES = {
    # case: (codes the defect shows as, the original's input shape, what the defect is)
    "04-static-batch": (["graph.static-batch", "graph.baked-batch-reshape"], [2, 16, 64],
                        "static batch 2, Reshape constants bake it (PyTorch dynamo export)"),
    "05-training-mode": (["graph.training-dropout", "graph.training-batchnorm"], [2, 3, 16, 16],
                         "Dropout in training mode (PyTorch dynamo export)"),
    "06-baked-batch": (["graph.baked-batch-reshape"], [2, 16, 64],
                       "dynamic input, batch 2 baked beyond its Reshapes (TorchScript trace)"),
    "07-float64-leak": (["graph.float64-mixed"], [2, 16], "float64 initializer and Casts (PyTorch dynamo export)"),
    "weights-as-inputs": (["graph.initializer-as-input"], [2, 16, 64],
                          "12 initializers listed as graph inputs (TorchScript, keep_initializers_as_inputs)"),
    "oww-alexa": (["graph.static-batch"], [1, 16, 96], "static batch 1 (openWakeWord alexa, third party)"),
}
TOOLS = ["original", "api", "api-reshape", "polygraphy", "polygraphy-onnx-si", "onnxsim", "onnxsim-batch5", "ortkit", "ortkit-fold"]
TOOL_NAMES = {"original": "(original)", "api": "ONNX API script", "api-reshape": "ONNX API + Reshape patch",
              "polygraphy": "polygraphy surgeon", "polygraphy-onnx-si": "polygraphy, ONNX shape inf.",
              "onnxsim": "onnxsim", "onnxsim-batch5": "onnxsim --overwrite 5", "ortkit": "ortkit fix",
              "ortkit-fold": "ortkit fix --fold-constants"}
BATCH = 5


def check_codes(ortkit, path):
    p = subprocess.run([ortkit, "check", path, "--format", "json"], capture_output=True, text=True)
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return None, p.returncode
    return [(d["code"], d["severity"]) for layer in r["layers"] for d in layer["diagnoses"]], p.returncode


def references(case_dir):
    """The framework's own inputs and outputs the gallery wrote beside the model (test_data_set_N)."""
    import glob
    import onnx
    from onnx import numpy_helper
    sets = []
    for d in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        load = lambda f: numpy_helper.to_array(onnx.load_tensor(f))
        sets.append((os.path.basename(d), load(os.path.join(d, "input_0.pb")), load(os.path.join(d, "output_0.pb"))))
    return sets


def judge_model(path, original, shape, codes, ortkit, use_references):
    out = {}
    found, rc = check_codes(ortkit, path)
    out["check_rc"] = rc
    out["codes"] = sorted({c for c, s in found or [] if s in ("error", "warning")})
    out["finding_left"] = [c for c in codes if c in out["codes"]]
    out["check_errors"] = sorted({c for c, s in found or [] if s == "error"})
    out["describe"] = describe(path)
    name = data_inputs(original)[0]
    x0 = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x5 = np.random.default_rng(1).standard_normal([BATCH] + shape[1:]).astype(np.float32)
    reference = session(original, "all")
    try:
        s = session(path, "all")
    except Exception as e:  # noqa: BLE001 - a result that does not load is a finding
        out["load_error"] = short_error(e)
        return out
    try:
        y = s.run(None, {name: x0})
        out["error_at_shape"] = max(float(np.abs(a - b).max()) for a, b in zip(y, reference.run(None, {name: x0})))
    except Exception as e:  # noqa: BLE001
        out["error_at_shape"] = None
        out["run_error_at_shape"] = short_error(e)
    try:
        y5 = s.run(None, {name: x5})
        b0 = shape[0]
        rows = reference.run(None, {name: x5[:b0]})
        out["batch5"] = "runs"
        out["batch5_rows_error"] = max(float(np.abs(a[:b0] - b).max()) for a, b in zip(y5, rows))
        out["batch5_shape"] = list(y5[0].shape)
    except Exception as e:  # noqa: BLE001
        out["batch5"] = short_error(e)
    if out["batch5"] == "runs":
        # Row i of the batch against row i run alone (a model that runs at batch 1 as well).
        try:
            alone = [s.run(None, {name: x5[i:i + 1]}) for i in range(BATCH)]
            out["batch5_alone_error"] = max(float(np.abs(a[i:i + 1] - b).max())
                                            for i in range(BATCH) for a, b in zip(y5, alone[i]))
        except Exception as e:  # noqa: BLE001
            out["batch5_alone_error"] = "a row alone fails: " + short_error(e)
    if use_references:
        # PyTorch's own outputs, written by the gallery at export (set 1 of 06 and 07 at batch 3).
        errors, failed = [], []
        for folder, x, expected in references(os.path.dirname(original)):
            try:
                errors.append(float(np.abs(s.run(None, {name: x})[0] - expected).max()))
            except Exception:  # noqa: BLE001
                failed.append(f"{folder} {list(x.shape)}")
        out["reference_error"] = max(errors) if errors else None
        out["reference_failed"] = failed
    # The same outputs twice, optimisations off (ONNX Runtime's default level removes a Dropout even in
    # training mode, which would hide the defect).
    try:
        off = session(path, "off")
        x = x0 if out.get("error_at_shape") is not None else x5
        a, b = off.run(None, {name: x}), off.run(None, {name: x})
        out["deterministic"] = all(np.array_equal(p, q) for p, q in zip(a, b))
    except Exception as e:  # noqa: BLE001
        out["deterministic"] = None
    return out


def fix_cell(r):
    """One table cell's measured part."""
    if r is None:
        return ""
    if not r.get("written"):
        return f"nothing written (exit {r['rc']})"
    parts = []
    parts.append("finding gone" if not r["finding_left"] else "still: " + ", ".join(c.split(".")[1] for c in r["finding_left"]))
    if r.get("load_error"):
        parts.append("does not load: " + r["load_error"])
        return "; ".join(parts)
    if r.get("error_at_shape") is None:
        parts.append("fails at the original's shape: " + r.get("run_error_at_shape", "?"))
    else:
        parts.append(f"err {r['error_at_shape']:.2g} at the original's shape")
    if r["batch5"] == "runs":
        alone = r.get("batch5_alone_error")
        alone = f"{alone:.2g}" if isinstance(alone, float) else alone
        parts.append(f"batch 5 runs (rows vs original err {r['batch5_rows_error']:.2g}, vs alone {alone})")
    else:
        parts.append("batch 5 fails: " + r["batch5"])
    if r.get("reference_error") is not None or r.get("reference_failed"):
        ref = "PyTorch's outputs"
        if r.get("reference_error") is not None:
            ref += f" err {r['reference_error']:.2g}"
        if r.get("reference_failed"):
            ref += ", fails on " + ", ".join(r["reference_failed"])
        parts.append(ref)
    if r.get("deterministic") is not None:
        parts.append("same outputs twice" if r["deterministic"] else "outputs change run to run")
    return "; ".join(parts)


def judge_fix(work):
    import onnxruntime as ort
    ortkit = os.path.join(work, "ortkit")
    results = {}
    for case, (codes, shape, what) in CASES.items():
        original = os.path.join(work, "models", case, "model.onnx")
        rows = {}
        for tool in TOOLS:
            path = original if tool == "original" else os.path.join(work, "fix", case, f"{tool}.onnx")
            stem = os.path.join(work, "fix", case, tool)
            if tool != "original" and read(stem + ".rc") is None:
                continue
            r = {"rc": 0 if tool == "original" else int(read(stem + ".rc", "-1")),
                 "seconds": None if tool == "original" else seconds(stem + ".time")}
            if tool == "api-reshape":  # the helper, then the Reshape patch on its result
                r["seconds"] = round((seconds(stem[:-len("-reshape")] + ".time") or 0) + (r["seconds"] or 0), 2)
            r["written"] = os.path.isfile(path) and (tool == "original" or r["rc"] == 0)
            if tool.startswith("ortkit"):
                try:
                    report = json.loads(read(stem + ".log"))
                    r["ortkit_refusals"] = [f"{x['code']}: {x['reason']}" for x in report.get("refusals", [])]
                    r["ortkit_evidence"] = [f"{'held' if e['held'] else 'FAILED'} {e['claim']}" for e in report.get("evidence", [])]
                except (TypeError, json.JSONDecodeError):
                    pass
            if r["written"]:
                r.update(judge_model(path, original, shape, codes, ortkit, case != "05-training-mode"))
            elif not tool.startswith("ortkit"):
                log = read(stem + ".log", "")
                r["log_tail"] = log.splitlines()[-1][:200] if log else ""
            rows[tool] = r
        results[case] = {"defect": what, "codes": codes, "shape": shape, "tools": rows}

    # The baseline for training mode: ONNX Runtime with optimisations off runs the Dropout, the default
    # level removes it; say what this runtime does.
    original = os.path.join(work, "models", "05-training-mode", "model.onnx")
    x = np.random.default_rng(0).standard_normal(CASES["05-training-mode"][1]).astype(np.float32)
    same = {}
    for level in ("off", "all"):
        s = session(original, level)
        same[level] = bool(np.array_equal(s.run(None, {"x": x})[0], s.run(None, {"x": x})[0]))
    # And why: the Dropouts left in the graph ONNX Runtime's basic level writes out.
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = os.path.join(work, "fix", "05-training-mode", "original.basic.onnx")
    ort.InferenceSession(original, options, providers=["CPUExecutionProvider"])
    import onnx
    dropouts = sum(n.op_type == "Dropout" for n in onnx.load(options.optimized_model_filepath).graph.node)
    results["_notes"] = {"onnxruntime": ort.__version__,
                         "05_original_same_twice": same,
                         "05_dropouts_after_basic_level": dropouts,
                         "python_import_onnx_seconds": seconds(os.path.join(work, "fix", "_baseline", "python-import-onnx.time"))}

    with open(os.path.join(work, "results-fix.json"), "w") as f:
        json.dump(results, f, indent=1)

    print()
    print("== fix: each result judged the same way (ortkit check; onnxruntime at the original's shape and at batch 5;")
    print("   batch 5: its first rows against the original on those rows, and each row against that row run alone;")
    print("   PyTorch's outputs: the gallery's test_data_set_N (05's are from training mode: not used);")
    print("   twice: optimisations off. Times: the whole process, interpreter start-up included) ==")
    for case, c in results.items():
        if case.startswith("_"):
            continue
        print(f"\n{case}: {c['defect']}")
        print(f"  {'tool':28} {'exit':>4} {'time s':>7}  {'nodes':>5}  inputs -> outputs")
        for tool, r in c["tools"].items():
            t = "" if r["seconds"] is None else f"{r['seconds']:.2f}"
            d = r.get("describe")
            io = ""
            if d:
                io = f"{d['nodes']:>5}  {list(d['inputs'].values())} -> {list(d['outputs'].values())}"
                extras = []
                if d["weights_as_inputs"]:
                    extras.append(f"{d['weights_as_inputs']} weights as inputs")
                if d["float64"]:
                    extras.append(f"{d['float64']} float64")
                if d["training_dropouts"]:
                    extras.append(f"{d['training_dropouts']} Dropout in training")
                io += ("  [" + ", ".join(extras) + "]") if extras else ""
            print(f"  {TOOL_NAMES[tool]:28} {r['rc']:>4} {t:>7}  {io}")
            print(f"  {'':28}   -> {fix_cell(r)}" + (f"  ({r['log_tail']})" if r.get("log_tail") else ""))
            for line in r.get("ortkit_refusals", []):
                print(f"  {'':28}      refused {line[:160]}")
            plan = read(os.path.join(work, "fix", case, "ortkit-dry-run.txt"))
            if tool == "ortkit" and plan:
                lines = [line.strip() for line in plan.splitlines() if "node '" in line]
                print(f"  {'':28}      its --dry-run plan:")
                for line in lines:
                    print(f"  {'':28}        {' '.join(line.split())[:170]}")
    print(f"\nonnxruntime {ort.__version__}: the original 05-training-mode gives the same outputs twice with "
          f"optimisations off: {same['off']}, at the default level: {same['all']}; Dropouts left by the basic "
          f"level: {dropouts} of 1")
    print(f"python start-up with `import onnx, numpy` alone: {results['_notes']['python_import_onnx_seconds']} s")


# ------------------------------------------------------------------------------------------------
# reduce: node counts, and does the reduced model fail the same way, fed what the original computes.

KINDS = {
    # kind: (what must hold of the reduced model, ortkit's --fails)
    "load": "ONNX Runtime refuses it: 'Target shape may not have multiple -1 dimensions' at Reshape 'bad_reshape'",
    "run": "it loads, its run fails: 'cannot be reshaped to the requested shape' at Reshape 'bad_reshape'",
    "nan": "an output holds NaN/Inf while no value fed does",
    "diverge": "an output differs between optimisations off and all beyond atol 1e-5 + rtol 1e-4",
}


def original_values(original, names, x):
    """The values the original computes for `names`: a model of their ancestors alone, optimisations off."""
    import onnx
    from onnx import helper, TensorProto
    m = onnx.load(original)
    producers = {o: n for n in m.graph.node for o in n.output}
    keep, stack = set(), list(names)
    while stack:
        node = producers.get(stack.pop())
        if node is not None and node.name not in keep:
            keep.add(node.name)
            stack.extend(node.input)
    nodes = [n for n in m.graph.node if n.name in keep]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.output[:]
    m.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names)
    path = original + ".values.onnx"
    onnx.save(m, path)
    s = session(path, "off")
    return dict(zip(names, s.run(None, {"x": x})))


def judge_reduced(kind, original, path):
    import onnx
    m = onnx.load(path)
    initializers = {t.name for t in m.graph.initializer}
    fed = [i.name for i in m.graph.input if i.name not in initializers]
    width = 64 if kind == "diverge" else 8
    x = np.random.default_rng(0).standard_normal((2, width)).astype(np.float32)
    out = {"nodes": len(m.graph.node), "ops": [n.op_type for n in m.graph.node] if len(m.graph.node) <= 12 else None}
    if kind == "load":
        try:
            session(path, "all")
            out["reproduces"], out["detail"] = False, "loads"
        except Exception as e:  # noqa: BLE001
            text = str(e)
            out["reproduces"] = "Target shape may not have multiple -1" in text and "bad_reshape" in text
            out["detail"] = short_error(e)
        return out
    need = [n for n in fed if n != "x"]
    values = original_values(original, need, x) if need else {}
    values["x"] = x
    feed = {n: values[n] for n in fed}
    if kind == "run":
        try:
            s = session(path, "all")
        except Exception as e:  # noqa: BLE001
            out["reproduces"], out["detail"] = False, "does not load: " + short_error(e)
            return out
        try:
            s.run(None, feed)
            out["reproduces"], out["detail"] = False, "runs"
        except Exception as e:  # noqa: BLE001
            text = str(e)
            out["reproduces"] = "cannot be reshaped to the requested shape" in text and "bad_reshape" in text
            out["detail"] = short_error(e)
        return out
    if kind == "nan":
        fed_finite = all(np.isfinite(v).all() for v in feed.values())
        y = session(path, "all").run(None, feed)
        bad = sum(int((~np.isfinite(v)).sum()) for v in y)
        out["reproduces"] = fed_finite and bad > 0
        out["detail"] = f"{bad} NaN/Inf out, fed values finite: {fed_finite}"
        return out
    a = session(path, "off").run(None, feed)
    b = session(path, "all").run(None, feed)
    worst = max(float(np.abs(p - q).max()) for p, q in zip(a, b))
    out["reproduces"] = any(bool((np.abs(p - q) > 1e-5 + 1e-4 * np.abs(p)).any()) for p, q in zip(a, b))
    out["detail"] = f"max abs difference {worst:.2g}"
    return out


def judge_reduce(work):
    R = os.path.join(work, "reduce")
    results = {}
    for kind, condition in KINDS.items():
        original = os.path.join(R, f"{kind}.onnx")
        rows = {}
        # ortkit reduce
        report = {}
        try:
            report = json.loads(read(os.path.join(R, f"ortkit-{kind}.log")))
        except (TypeError, json.JSONDecodeError):
            pass
        r = {"rc": int(read(os.path.join(R, f"ortkit-{kind}.rc"), "-1")),
             "seconds": seconds(os.path.join(R, f"ortkit-{kind}.time")),
             "candidates": report.get("candidates"), "budget_ran_out": report.get("budget_ran_out")}
        path = os.path.join(R, f"ortkit-{kind}", "min.onnx")
        if os.path.isfile(path):
            r.update(judge_reduced(kind, original, path))
            script = os.path.join(R, f"ortkit-{kind}", "min_repro.py")
            p = subprocess.run([sys.executable, script], capture_output=True, text=True)
            r["own_repro"] = (p.stdout.strip().splitlines() or ["?"])[0][:60]
        rows["ortkit reduce"] = r
        # polygraphy debug reduce
        d = os.path.join(R, f"polygraphy-{kind}")
        log = read(os.path.join(d, "reduce.log"), "")
        r = {"rc": int(read(os.path.join(d, "reduce.rc"), "-1")),
             "seconds": seconds(os.path.join(d, "reduce.time")),
             "prepare_seconds": seconds(os.path.join(d, "prepare.time")),
             "iterations": len(re.findall(r"RUNNING \| Iteration \d+", log))}
        r["hit_cap"] = r["rc"] in (124, 137)
        path = os.path.join(d, "min.onnx")
        if os.path.isfile(path):
            r.update(judge_reduced(kind, original, path))
        else:
            last = [line for line in log.splitlines() if line.strip()]
            r["log_tail"] = last[-1][:220] if last else ""
            r["crashed_in"] = "fallback shape inference" if "fallback_inference" in log else None
        rows["polygraphy debug reduce"] = r
        results[kind] = {"condition": condition, "tools": rows}
    with open(os.path.join(work, "results-reduce.json"), "w") as f:
        json.dump(results, f, indent=1)

    print("\n== reduce: 1,000-node models; a reduced model counts when it fails the same way fed what the original computes ==")
    for kind, c in results.items():
        print(f"\n{kind}: {c['condition']}")
        for tool, r in c["tools"].items():
            t = r["seconds"]
            total = "" if t is None else f"{t + (r.get('prepare_seconds') or 0):.2f} s"
            if "nodes" in r:
                what = (f"1000 -> {r['nodes']} nodes, reproduces: {'yes' if r['reproduces'] else 'NO'} ({r['detail']})"
                        + (f" {r['ops']}" if r.get("ops") else ""))
            else:
                what = (f"no model written (exit {r['rc']}{', hit the 600 s cap' if r.get('hit_cap') else ''}"
                        + (f", crashed in its {r['crashed_in']}" if r.get("crashed_in") else "") + ")")
            extra = []
            if r.get("prepare_seconds"):
                extra.append(f"incl. {r['prepare_seconds']:.2f} s saving the layerwise values")
            if r.get("candidates") is not None:
                extra.append(f"{r['candidates']} candidates")
            if r.get("iterations"):
                extra.append(f"{r['iterations']} iterations")
            if r.get("own_repro"):
                extra.append(f"its repro script: {r['own_repro']}")
            if r.get("log_tail"):
                extra.append(f"last line: {r['log_tail'][:150]}")
            print(f"  {tool:24} {total:>8}  {what}")
            for line in extra:
                print(f"  {'':24} {'':>8}    {line}")


if __name__ == "__main__":
    command, target = sys.argv[1], sys.argv[2]
    {"judge-fix": judge_fix, "judge-reduce": judge_reduce}[command](target)
