#!/usr/bin/env python3
"""`ortkit optimize` with its defaults against ONNX Runtime's own Python tools, on the same models, inputs
and CPU, in one run (bench/optimize_peers.sh sets it up and says how to run it).

Stages, each a subcommand:
  checkpoints OUT      (the project's .deps/python: torch, transformers) save_pretrained() checkpoints with
                       random weights from configs: a BERT encoder, a GPT-2 decoder, a ResNet image classifier
  peer NAME IN OUT     (the peers' environment) one peer's optimisation of one model; run as a child process
                       of `run`, which reads its wall time and peak resident memory from wait4()
  run WORK             (the peers' environment) exports the checkpoints with `ortkit export hf`, writes the
                       calibration and evaluation inputs, runs every peer and `ortkit optimize`, then proves
                       and times every written file the same way, and prints the table and the targets

Every file is measured by one onnxruntime loop in this process (the same onnxruntime 1.29.0 ortkit links):
every session with the same options (THREADS intra-op threads, one inter-op thread, sequential, ONNX Runtime's
default optimisation level), the same inputs, in ROUNDS interleaved rounds whose order rotates; each round runs
every file 2 times untimed and then the same number of timed runs, and keeps their median; a file's latency is
the median of its rounds' medians.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def env_int(name, default):
    return int(os.environ.get(name, default))


def env_ints(name, default):
    return [int(v) for v in os.environ.get(name, default).split(",") if v]


# Sizes: the real ones by default; smaller through the environment for a quick run.
SIZES = {
    "bert": dict(layers=env_int("BERT_LAYERS", 12), hidden=env_int("BERT_HIDDEN", 768), heads=env_int("BERT_HEADS", 12),
                 seq=env_int("BERT_SEQ", 128), batches=env_ints("BERT_BATCHES", "1,8"), vocab=30522),
    "gpt2": dict(layers=env_int("GPT2_LAYERS", 12), hidden=env_int("GPT2_HIDDEN", 768), heads=env_int("GPT2_HEADS", 12),
                 vocab=env_int("GPT2_VOCAB", 50257), past=env_int("GPT2_PAST", 128), batch=1),
    "resnet": dict(depths=env_ints("RESNET_DEPTHS", "3,4,6,3"), widths=env_ints("RESNET_WIDTHS", "256,512,1024,2048"),
                   image=env_int("RESNET_IMAGE", 224), classes=1000, batch=1,
                   calibration=env_int("CALIBRATION_SAMPLES", 32), evaluation=env_int("EVALUATION_IMAGES", 32)),
}
MODELS = [m for m in os.environ.get("MODELS", "bert,gpt2,resnet").split(",") if m]
THREADS = env_int("THREADS", 2)
ROUNDS = env_int("ROUNDS", 5)
BLOCK_S = float(os.environ.get("BLOCK_S", "1.0"))  # timed runs per round: about this many seconds of the slowest file
INT4_BLOCK = env_int("INT4_BLOCK", 32)


# ---------------------------------------------------------------------------------------------------------------
# checkpoints (the project's environment)

def write_checkpoints(out):
    import torch
    import transformers as t

    b, g, r = SIZES["bert"], SIZES["gpt2"], SIZES["resnet"]
    builders = {
        "bert": lambda: t.BertModel(t.BertConfig(
            vocab_size=b["vocab"], hidden_size=b["hidden"], num_hidden_layers=b["layers"],
            num_attention_heads=b["heads"], intermediate_size=4 * b["hidden"], max_position_embeddings=512)),
        "gpt2": lambda: t.GPT2LMHeadModel(t.GPT2Config(
            vocab_size=g["vocab"], n_embd=g["hidden"], n_layer=g["layers"], n_head=g["heads"], n_positions=1024,
            bos_token_id=0, eos_token_id=0)),
        # ResNetConfig has no image size of its own; `export hf` reads image_size from the config (224 without it).
        "resnet": lambda: t.ResNetForImageClassification(t.ResNetConfig(
            embedding_size=64, hidden_sizes=r["widths"], depths=r["depths"], layer_type="bottleneck",
            num_labels=r["classes"], image_size=r["image"])),
    }
    for name in MODELS:
        torch.manual_seed(sum(map(ord, name)))
        builders[name]().eval().save_pretrained(os.path.join(out, name))
        print(f"wrote checkpoint {os.path.join(out, name)}")


# ---------------------------------------------------------------------------------------------------------------
# peers (each in a child process of its own)

def quantize_dynamic_per_channel(model_in, model_out):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(model_in, model_out, per_channel=True, weight_type=QuantType.QInt8)


def pre_process(model_in, model_out):
    """quant_pre_process as its documentation asks; with skip_symbolic_shape=True when the default fails
    (it does on PyTorch's torch.export-based exports). Returns what it needed."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    try:
        quant_pre_process(model_in, model_out)
        return "pre-process: default"
    except Exception as error:  # noqa: BLE001 - whatever it raises, the documented fallback is the same
        quant_pre_process(model_in, model_out, skip_symbolic_shape=True)
        return f"pre-process: default failed ({type(error).__name__}: {str(error)[:80]}), so skip_symbolic_shape=True"


def transformers_optimizer(model_in, model_out, model_type, heads, hidden):
    from onnxruntime.transformers import optimizer
    optimized = optimizer.optimize_model(model_in, model_type=model_type, num_heads=heads, hidden_size=hidden)
    optimized.save_model_to_file(model_out)
    fused = {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}
    return "fused: " + (", ".join(f"{k} {v}" for k, v in sorted(fused.items())) or "nothing")


class NpzReader:
    """onnxruntime's CalibrationDataReader over the calibration .npz files ortkit reads too."""

    def __init__(self, folder):
        import numpy as np
        self.files = sorted(Path(folder).glob("*.npz"))
        self.np = np

    def get_next(self):
        if not self.files:
            return None
        with self.np.load(self.files.pop(0)) as sample:
            return {k: sample[k] for k in sample.files}


def run_peer(name, model_in, model_out, options):
    scratch = Path(model_out).with_suffix(".pre.onnx")
    notes = []
    if name == "ort-int8":
        notes.append(pre_process(model_in, str(scratch)))
        quantize_dynamic_per_channel(str(scratch), model_out)
        notes.append("quantize_dynamic(per_channel=True, weight_type=QInt8)")
    elif name == "ort-fuse":
        notes.append(transformers_optimizer(model_in, model_out, options["model_type"], options["heads"],
                                            options["hidden"]))
    elif name == "ort-fuse+int8":
        notes.append(transformers_optimizer(model_in, str(scratch), options["model_type"], options["heads"],
                                            options["hidden"]))
        quantize_dynamic_per_channel(str(scratch), model_out)
        notes.append("then quantize_dynamic(per_channel=True, weight_type=QInt8)")
    elif name in ("ort-int4", "ort-int4-acc4"):
        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        level = 4 if name == "ort-int4-acc4" else None
        quantizer = MatMulNBitsQuantizer(onnx.load(model_in), block_size=options["block"], is_symmetric=False,
                                         accuracy_level=level)
        quantizer.process()
        quantizer.model.save_model_to_file(model_out, use_external_data_format=False)
        notes.append(f"MatMulNBitsQuantizer(block_size={options['block']}, is_symmetric=False, accuracy_level={level})")
    elif name == "ort-static":
        from onnxruntime.quantization import QuantFormat, quantize_static
        notes.append(pre_process(model_in, str(scratch)))
        quantize_static(str(scratch), model_out, NpzReader(options["calibration"]), quant_format=QuantFormat.QDQ,
                        per_channel=True)
        notes.append("quantize_static(QDQ, per_channel=True, MinMax, QInt8 activations and weights: its defaults)")
    else:
        raise SystemExit(f"unknown peer {name}")
    scratch.unlink(missing_ok=True)
    print(json.dumps({"notes": notes}))


# ---------------------------------------------------------------------------------------------------------------
# inputs

def inputs_for(kind, sizes, seed, batch, float_session=None, past=None):
    """The feeds of one run. GPT-2: a prompt (past 0) when past is None, else one decoding step after a prompt of
    `past` tokens, whose cache is the float original's own (so every file decodes from the same history)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if kind == "bert":
        shape = (batch, sizes["seq"])
        return {"input_ids": rng.integers(0, sizes["vocab"], shape, dtype=np.int64),
                "attention_mask": np.ones(shape, np.int64), "token_type_ids": np.zeros(shape, np.int64)}
    if kind == "resnet":
        return {"pixel_values": rng.standard_normal((batch, 3, sizes["image"], sizes["image"])).astype(np.float32)}
    head_dim = sizes["hidden"] // sizes["heads"]
    length = sizes["past"] if past is not None else 128
    empty = np.zeros((batch, sizes["heads"], 0, head_dim), np.float32)
    prompt = {"input_ids": rng.integers(0, sizes["vocab"], (batch, length), dtype=np.int64),
              "attention_mask": np.ones((batch, length), np.int64)}
    for layer in range(sizes["layers"]):
        prompt[f"past_key_values.{layer}.key"] = empty
        prompt[f"past_key_values.{layer}.value"] = empty
    if past is None:
        return prompt
    outputs = float_session.run(None, prompt)
    names = [o.name for o in float_session.get_outputs()]
    step = {"input_ids": rng.integers(0, sizes["vocab"], (batch, 1), dtype=np.int64),
            "attention_mask": np.ones((batch, length + 1), np.int64)}
    for name, value in zip(names, outputs):
        if name.startswith("present."):
            step["past_key_values." + name[len("present."):]] = value
    return step


def write_calibration(folder, sizes):
    import numpy as np
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sizes["calibration"]):
        np.savez(folder / f"sample_{i:04d}.npz", **inputs_for("resnet", sizes, 1000 + i, 1))


# ---------------------------------------------------------------------------------------------------------------
# measuring

def run_measured(command, log):
    """Runs a command in the folder of its log (quant_pre_process leaves scratch files in its working folder);
    returns (exit code, wall seconds, peak resident bytes of that process). The peak comes from /usr/bin/time,
    a small process of its own: the maximum RSS that wait4() reports for a child of this one would start from this
    process's own size at the fork (Linux carries it over through exec), and this one holds the sessions timed so
    far."""
    peak_file = Path(log).with_suffix(".peak")
    start = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(peak_file), *command], stdout=out,
                            stderr=subprocess.STDOUT, cwd=Path(log).parent).returncode
    wall = time.perf_counter() - start
    lines = peak_file.read_text().split()
    return rc, wall, int(lines[-1]) * 1024 if lines else 0


def session(path):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def agreement(reference, candidate, scores):
    """Lowest cosine similarity of a row (the last axis) and, for scores over classes or tokens, top-1 agreement."""
    import numpy as np
    a = reference.reshape(-1, reference.shape[-1]).astype(np.float64)
    b = candidate.reshape(-1, candidate.shape[-1]).astype(np.float64)
    if not np.isfinite(b).all():
        return {"cosine": float("nan"), "top1": 0.0 if scores else None, "rows": len(a)}
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)
    top1 = float((a.argmax(1) == b.argmax(1)).mean()) if scores else None
    return {"cosine": float(cos.min()), "top1": top1, "rows": len(a)}


def time_files(sessions, feeds):
    """Interleaved rounds: {name: [median ms of each round]}."""
    names = list(sessions)
    start = time.perf_counter()
    for s in sessions.values():
        s.run(None, feeds)
    slowest = max(time.perf_counter() - start, 1e-4)
    per_file = slowest / len(names)
    runs = max(3, min(50, round(BLOCK_S / max(per_file, 1e-6))))
    rounds = {name: [] for name in names}
    for r in range(ROUNDS):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            s = sessions[name]
            for _ in range(2):
                s.run(None, feeds)
            samples = []
            for _ in range(runs):
                t0 = time.perf_counter()
                s.run(None, feeds)
                samples.append((time.perf_counter() - t0) * 1e3)
            rounds[name].append(statistics.median(samples))
    return rounds, runs


# ---------------------------------------------------------------------------------------------------------------
# the run

PEERS = {
    "bert": ["ort-int8", "ort-fuse", "ort-fuse+int8"],
    "gpt2": ["ort-int8", "ort-fuse", "ort-fuse+int8", "ort-int4", "ort-int4-acc4"],
    "resnet": ["ort-static", "ort-int8"],
}
# ortkit's runs: its defaults first (the one the targets are about), then single passes to set beside the peer
# that makes the same kind of file.
ORTKIT_RUNS = {
    "bert": [("ortkit", [])],
    "gpt2": [("ortkit", []), ("ortkit int8-dynamic", ["--passes", "int8-dynamic"]),
             ("ortkit int4", ["--passes", "int4"])],
    "resnet": [("ortkit", [])],
}
# Which of ortkit's passes does the same job as a peer (for "the rewriting takes no longer than the peer's").
SAME_PASS = {"ort-int8": "int8-dynamic", "ort-fuse": "fuse", "ort-int4": "int4", "ort-int4-acc4": "int4",
             "ort-static": "int8-static"}
TASKS = {"bert": "feature-extraction", "gpt2": "text-generation-with-past", "resnet": "image-classification"}
MAIN_OUTPUT = {"bert": ("last_hidden_state", False), "gpt2": ("logits", True), "resnet": ("logits", True)}
DESCRIPTION = {
    "bert": lambda s: f"BERT encoder, {s['layers']} layers, hidden {s['hidden']}, sequence {s['seq']}",
    "gpt2": lambda s: f"GPT-2 decoder, {s['layers']} layers, hidden {s['hidden']}, vocabulary {s['vocab']}, "
                      f"one step after {s['past']} cached tokens",
    "resnet": lambda s: f"ResNet, depths {'/'.join(map(str, s['depths']))}, widths up to {s['widths'][-1]}, "
                        f"{s['image']}x{s['image']} images, {s['calibration']} calibration samples",
}


def ortkit_dims(kind, sizes):
    if kind == "bert":
        return ["--dim", "batch=1", "--dim", f"seq_len={sizes['seq']}"]
    if kind == "gpt2":
        p = sizes["past"]
        return ["--dim", "batch=1", "--dim", "seq_len=1", "--dim", f"past_len={p}", "--dim", f"total_len={p + 1}"]
    return ["--dim", "batch=1"]


def optimise_all(kind, sizes, model, work, ortkit, log):
    """Runs every peer and ortkit's runs on `model`; returns {name: record}."""
    records = {}
    options = {"model_type": {"bert": "bert", "gpt2": "gpt2"}.get(kind), "heads": sizes.get("heads"),
               "hidden": sizes.get("hidden"), "block": INT4_BLOCK, "calibration": str(work / "calibration")}
    for name in PEERS[kind]:
        out = work / f"{name}.onnx"
        command = [sys.executable, __file__, "peer", name, str(model), str(out), json.dumps(options)]
        rc, wall, peak = run_measured(command, work / f"{name}.log")
        text = (work / f"{name}.log").read_text()
        record = {"kind": "peer", "seconds": wall, "peak_bytes": peak, "file": str(out) if rc == 0 else None}
        if rc == 0:
            record["notes"] = json.loads(text.strip().splitlines()[-1])["notes"]
        else:
            record["failure"] = (text.strip().splitlines() or ["(no output)"])[-1][:200]
        records[name] = record
        log(f"  {name}: {'ok' if rc == 0 else 'FAILED: ' + record['failure']} ({wall:.1f} s, {peak / 2**20:.0f} MiB)")
    for name, extra in ORTKIT_RUNS[kind]:
        out = work / f"{name.replace(' ', '-')}.onnx"
        command = [ortkit, "optimize", str(model), "--out", str(out), "--format", "json", *ortkit_dims(kind, sizes),
                   *extra]
        if kind == "resnet":
            command += ["--calibration", str(work / "calibration")]
        report_path = work / f"{name.replace(' ', '-')}.json"
        rc, wall, peak = run_measured(command, report_path)
        record = {"kind": "ortkit", "seconds": wall, "peak_bytes": peak, "command": " ".join(command[1:]),
                  "file": str(out) if rc == 0 and out.exists() else None}
        try:
            report = json.loads(report_path.read_text())
        except ValueError:
            report = None
        if report:
            chosen = report.get("chosen")
            record["chosen"] = chosen
            record["candidates"] = {c["name"]: {"state": c.get("state"), "reason": c.get("reason"),
                                                "rewrite_s": c.get("rewrite_s")} for c in report.get("candidates", [])}
            record["rewrite_s"] = record["candidates"].get(chosen, {}).get("rewrite_s") if chosen else None
            record["notes"] = [f"chosen: {chosen or 'nothing'}" + (
                f", rewritten in {record['rewrite_s']:.2f} s (the rest of the run: proofs and measurements)"
                if record.get("rewrite_s") is not None else "")] + [
                f"{n}: {c['state']}" + (f" ({c['reason']})" if c.get("reason") and n != chosen else "")
                for n, c in record["candidates"].items()]
        if rc not in (0, 1) or report is None:
            record["failure"] = f"exit {rc}: " + report_path.read_text()[-300:].strip().replace("\n", " ")
        records[name] = record
        log(f"  {name}: exit {rc}, chose {record.get('chosen') or 'nothing'} ({wall:.1f} s, {peak / 2**20:.0f} MiB)")
    return records


# Operators that show what a file was rewritten into.
TELLING_OPS = ("MatMulNBits", "MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "QuantizeLinear",
               "DequantizeLinear", "QLinearConv", "QLinearMatMul", "Attention", "MultiHeadAttention",
               "SkipLayerNormalization", "EmbedLayerNormalization", "BiasGelu", "FastGelu", "Gelu", "FusedConv",
               "FusedMatMul")


def telling_ops(path):
    import collections
    import onnx
    model = onnx.load(path, load_external_data=False)
    counts = collections.Counter(n.op_type for n in model.graph.node if n.op_type in TELLING_OPS)
    return ", ".join(f"{op} {n}" for op, n in sorted(counts.items())) or "no quantised or fused operator"


def evaluate(kind, sizes, model, records, log):
    """Accuracy of every written file against the float original, then the interleaved timing."""
    output, scores = MAIN_OUTPUT[kind]
    files = {"float original": str(model)}
    files.update({name: r["file"] for name, r in records.items() if r.get("file")})
    for name, record in records.items():
        if record.get("file"):
            record.setdefault("notes", []).append("holds: " + telling_ops(record["file"]))
    sessions = {name: session(path) for name, path in files.items()}
    original = sessions["float original"]

    # Accuracy: inputs of their own (not the calibration samples, not the timed ones).
    if kind == "bert":
        evaluation = [inputs_for(kind, sizes, 11, 8)]
    elif kind == "gpt2":
        evaluation = [inputs_for(kind, sizes, 11, 4), inputs_for(kind, sizes, 12, 4, original, past=True)]
    else:
        evaluation = [inputs_for(kind, sizes, 11 + i, 8) for i in range(max(1, sizes["evaluation"] // 8))]
    accuracy = {}
    import numpy as np
    references = [original.run([output], feeds)[0] for feeds in evaluation]
    for name, s in sessions.items():
        got = [s.run([output], feeds)[0] for feeds in evaluation]
        accuracy[name] = agreement(np.concatenate([r.reshape(-1, r.shape[-1]) for r in references]),
                                   np.concatenate([g.reshape(-1, g.shape[-1]) for g in got]), scores)

    shapes = sizes["batches"] if kind == "bert" else [sizes["batch"]]
    timings = {}
    for batch in shapes:
        feeds = inputs_for(kind, sizes, 5, batch, original, past=True) if kind == "gpt2" else inputs_for(
            kind, sizes, 5, batch)
        rounds, runs = time_files(sessions, feeds)
        timings[batch] = (rounds, runs)
        log(f"  timed batch {batch}: {ROUNDS} rounds of {runs} runs per file")
    return files, accuracy, timings


def main_run(args):
    import onnxruntime as ort
    work = Path(args.work).resolve()
    args.ortkit = os.path.abspath(args.ortkit)
    log_lines = []

    def log(text):
        print(text, flush=True)
        log_lines.append(text)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
    log(f"machine: {os.cpu_count()} cores, {cpu}, avx512_vnni {'yes' if 'avx512_vnni' in flags else 'no'}; "
        f"load average {open('/proc/loadavg').read().split()[0]}")
    version = subprocess.run([args.ortkit, "--version"], capture_output=True, text=True).stdout.strip()
    log(f"onnxruntime {ort.__version__} (peers and the timing loop); {version}")
    log(f"timing: {THREADS} intra-op threads, {ROUNDS} interleaved rounds, median of round medians")

    if not (work / "checkpoints").exists():
        subprocess.run([args.project_python, __file__, "checkpoints", str(work / "checkpoints")], check=True)
    results = {"models": {}, "threads": THREADS, "rounds": ROUNDS, "cpu": cpu, "onnxruntime": ort.__version__}
    for kind in MODELS:
        sizes = SIZES[kind]
        folder = work / kind
        model = folder / "export" / "model.onnx"
        log(f"\n{kind}: {DESCRIPTION[kind](sizes)}")
        if not model.exists():
            command = [args.ortkit, "export", "hf", str(work / "checkpoints" / kind), "--task", TASKS[kind],
                       "--out", str(folder / "export")]
            rc, wall, _ = run_measured(command, work / f"{kind}-export.log")
            if rc != 0:
                raise SystemExit(f"ortkit export hf failed for {kind}: see {work / f'{kind}-export.log'}")
            log(f"  exported with `ortkit export hf --task {TASKS[kind]}` in {wall:.0f} s "
                f"({model.stat().st_size / 1e6:.1f} MB)")
        if kind == "resnet":
            write_calibration(folder / "calibration", sizes)
        records = optimise_all(kind, sizes, model, folder, args.ortkit, log)
        files, accuracy, timings = evaluate(kind, sizes, model, records, log)
        results["models"][kind] = {"description": DESCRIPTION[kind](sizes), "records": records, "files": files,
                                   "accuracy": accuracy,
                                   "size_bytes": {n: os.path.getsize(p) for n, p in files.items()},
                                   "timings": {str(b): {"rounds": r, "runs": n} for b, (r, n) in timings.items()}}
    (work / "results.json").write_text(json.dumps(results, indent=1))
    report(results, log)
    (work / "report.txt").write_text("\n".join(log_lines) + "\n")
    return 0


def fmt_accuracy(a):
    if a is None:
        return "-"
    text = f"cos {a['cosine']:.5f}"
    if a["top1"] is not None:
        text += f" top1 {a['top1'] * 100:.1f}%"
    return text


def report(results, log):
    log("")
    header = (f"{'model':<7} {'batch':>5}  {'candidate':<19} {'p50 ms':>9} {'rounds (min-max)':>17} {'speed-up':>8}  "
              f"{'accuracy':<25} {'optimise s':>10} {'peak MiB':>8} {'size MB':>8}")
    log(header)
    log("-" * len(header))
    verdicts = []
    for kind, m in results["models"].items():
        for batch, timing in m["timings"].items():
            p50 = {n: statistics.median(r) for n, r in timing["rounds"].items()}
            base = p50["float original"]
            for name in ["float original"] + [n for n in m["records"]]:
                record = m["records"].get(name, {})
                if name not in p50:
                    log(f"{kind:<7} {batch:>5}  {name:<19} {'-':>9} {'':>17} {'':>8}  "
                        f"{('not written: ' + (record.get('failure') or 'nothing chosen'))[:60]}")
                    continue
                r = timing["rounds"][name]
                seconds = f"{record['seconds']:.1f}" if record else "-"
                peak = f"{record['peak_bytes'] / 2**20:.0f}" if record else "-"
                accuracy = fmt_accuracy(m["accuracy"][name] if name != "float original" else None)
                log(f"{kind:<7} {batch:>5}  {name:<19} {p50[name]:>9.2f} {min(r):>8.2f}-{max(r):<8.2f} "
                    f"{base / p50[name]:>7.2f}x  {accuracy:<25} "
                    f"{seconds:>10} {peak:>8} {m['size_bytes'][name] / 1e6:>8.1f}")
            verdicts.append(verdict(kind, batch, m, p50))
    log("")
    for line in verdicts:
        log(line)
    log("")
    for kind, m in results["models"].items():
        for name, record in m["records"].items():
            for note in record.get("notes", []):
                log(f"  {kind} {name}: {note}")


def verdict(kind, batch, m, p50):
    """The issue's targets on one model and batch."""
    peers = [n for n, r in m["records"].items() if r["kind"] == "peer" and n in p50]
    ortkit = m["records"].get("ortkit", {})
    mine = "ortkit" if "ortkit" in p50 else "float original"  # nothing written: the user keeps the original
    lines = [f"{kind} batch {batch}: " + m["description"]]
    if not peers:
        return lines[0] + ": no peer wrote a file"
    best = min(peers, key=lambda n: p50[n])
    ratio = p50[best] / p50[mine]
    a, b = m["accuracy"][mine], m["accuracy"][best]
    accurate = a["cosine"] >= b["cosine"] - 1e-4 and (a["top1"] is None or a["top1"] >= b["top1"])
    lines.append(f"  speed: best peer {best} {p50[best]:.2f} ms, ortkit ({ortkit.get('chosen') or 'nothing written'}) "
                 f"{p50[mine]:.2f} ms: ratio peer/ortkit {ratio:.2f} -> "
                 f"{'met' if ratio >= 1.0 else 'NOT met'} (>= 1.0)")
    lines.append(f"  accuracy: ortkit {fmt_accuracy(a)}, {best} {fmt_accuracy(b)} -> "
                 f"{'met' if accurate else 'NOT met'} (no worse: cosine within 1e-4, top-1 not lower)")
    chosen = ortkit.get("chosen")
    same = [n for n in m["records"] if SAME_PASS.get(n) and chosen and SAME_PASS[n] == chosen.split("+")[-1]]
    for peer in same:
        r = m["records"][peer]
        if ortkit.get("rewrite_s") is not None and r.get("file"):
            lines.append(f"  rewrite time: ortkit's {chosen} {ortkit['rewrite_s']:.2f} s, {peer} {r['seconds']:.1f} s "
                         f"-> {'met' if ortkit['rewrite_s'] <= r['seconds'] else 'NOT met'}")
            lines.append(f"  peak memory: ortkit's whole run {ortkit['peak_bytes'] / 2**20:.0f} MiB, {peer} "
                         f"{r['peak_bytes'] / 2**20:.0f} MiB -> "
                         f"{'met' if ortkit['peak_bytes'] < r['peak_bytes'] else 'NOT met'}")
    # Pass by pass: each of ortkit's files beside the peers' files of the same kind (int8 dynamic, int4, ...).
    for name, record in m["records"].items():
        if record["kind"] != "ortkit" or name not in p50 or not record.get("chosen"):
            continue
        for peer in peers:
            if SAME_PASS.get(peer) == record["chosen"].split("+")[-1]:
                lines.append(f"  same pass: {name} ({record['chosen']}) {p50[name]:.2f} ms "
                             f"{fmt_accuracy(m['accuracy'][name])}, {peer} {p50[peer]:.2f} ms "
                             f"{fmt_accuracy(m['accuracy'][peer])}: ratio {p50[peer] / p50[name]:.2f}")
    if kind == "bert":
        lines.append(f"  whole default run (proofs and measurements): {ortkit.get('seconds', 0):.0f} s -> "
                     f"{'met' if ortkit.get('seconds', 1e9) <= 300 else 'NOT met'} (<= 300 s)")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("checkpoints")
    p.add_argument("out")
    p = sub.add_parser("peer")
    p.add_argument("name")
    p.add_argument("model_in")
    p.add_argument("model_out")
    p.add_argument("options")
    p = sub.add_parser("run")
    p.add_argument("work")
    p.add_argument("--ortkit", required=True)
    p.add_argument("--project-python", required=True, help="the interpreter with torch and transformers")
    args = parser.parse_args()
    if args.stage == "checkpoints":
        write_checkpoints(args.out)
        return 0
    if args.stage == "peer":
        run_peer(args.name, args.model_in, args.model_out, json.loads(args.options))
        return 0
    return main_run(args)


if __name__ == "__main__":
    sys.exit(main())
