#!/usr/bin/env python3
"""Does `ortkit bench` agree with an independent measurement?

For each model and batch size, runs `ortkit bench --format json` and a plain timing loop over
onnxruntime's Python API (InferenceSession.run, one time.perf_counter pair per run) with the same
session options (threads, optimisation level, sequential execution), the same input shapes and the
same CPU pinning, alternating the two a few rounds in one script. Prints both medians (median over
rounds) and the median of the per-round ratios; the target is agreement within 5%. Exit code 1 when a pair disagrees by more.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort


def python_loop(model, shapes, threads, iterations, warmup, vocab):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for spec in session.get_inputs():
        shape = shapes[spec.name]
        if spec.type == "tensor(int64)":
            if "mask" in spec.name:
                feeds[spec.name] = np.ones(shape, np.int64)
            elif "type" in spec.name:
                feeds[spec.name] = np.zeros(shape, np.int64)
            else:
                feeds[spec.name] = rng.integers(0, vocab, size=shape, dtype=np.int64)
        else:
            feeds[spec.name] = rng.standard_normal(shape).astype(np.float32)
    session.run(None, feeds)  # the first run, as ortkit makes one before its warm-up
    for _ in range(warmup):
        session.run(None, feeds)
    samples = []
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - start) * 1000)
    wall = time.perf_counter() - wall_start
    return statistics.median(samples), (time.process_time() - cpu_start) / wall


def ortkit_bench(ortkit, model, batch, seq_len, threads, iterations, warmup, pin):
    command = pin + [ortkit, "bench", model, "--batch", str(batch), "--dim", f"seq_len={seq_len}",
                     "--intra-threads", str(threads), "--inter-threads", "1", "--opt-level", "99",
                     "--execution-mode", "sequential", "--iterations", str(iterations), "--warmup", str(warmup),
                     "--format", "json"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)["results"][0]
    return result["latency_ms"]["p50"], result["cpu_utilisation"], json.loads(out)["peak_rss_bytes"], result["inputs"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ortkit", required=True)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--batch", default="1,16")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cpus", default="", help="pin both to these CPUs (taskset -c syntax)")
    parser.add_argument("--tolerance", type=float, default=0.05)
    args = parser.parse_args()

    pin = []
    if args.cpus:
        cpus = {int(c) for c in args.cpus.split(",")}
        os.sched_setaffinity(0, cpus)
        pin = ["taskset", "-c", args.cpus]
    print(f"onnxruntime (Python) {ort.__version__}; pinning: "
          f"{'CPUs ' + args.cpus + ' (taskset for ortkit, sched_setaffinity for Python)' if args.cpus else 'none (taskset not found)'}; "
          f"intra-op threads {args.threads}, inter-op 1, sequential, opt level 99; seq_len {args.seq_len}; "
          f"{args.iterations} runs after {args.warmup} warm-up, {args.rounds} alternating rounds")
    header = f"{'model':<14}{'batch':>6}{'ortkit p50 ms':>15}{'python p50 ms':>15}{'ratio':>8}{'ortkit CPU':>12}{'python CPU':>12}"
    print(header)
    failures = 0
    ortkit_rss = 0
    for item in args.model:
        name, path = item.split("=", 1)
        for batch in [int(b) for b in args.batch.split(",")]:
            ortkit_medians, python_medians, ortkit_cpu, python_cpu = [], [], [], []
            for _ in range(args.rounds):
                p50, cpu, rss, inputs = ortkit_bench(args.ortkit, path, batch, args.seq_len, args.threads,
                                                     args.iterations, args.warmup, pin)
                ortkit_medians.append(p50)
                ortkit_cpu.append(cpu)
                ortkit_rss = max(ortkit_rss, rss)
                shapes = {i["name"]: i["shape"] for i in inputs}
                median, cpu = python_loop(path, shapes, args.threads, args.iterations, args.warmup, vocab=100)
                python_medians.append(median)
                python_cpu.append(cpu)
            o = statistics.median(ortkit_medians)
            p = statistics.median(python_medians)
            # The median of the per-round ratios: each round's pair ran back to back, so a burst of
            # load from other processes spoils a pair, not the whole comparison.
            ratio = statistics.median(a / b for a, b in zip(ortkit_medians, python_medians))
            ok = abs(ratio - 1) <= args.tolerance
            failures += 0 if ok else 1
            print(f"{name:<14}{batch:>6}{o:>15.4f}{p:>15.4f}{ratio:>8.3f}{statistics.median(ortkit_cpu) * 100:>11.0f}%"
                  f"{statistics.median(python_cpu) * 100:>11.0f}%{'' if ok else '  outside ' + str(int(args.tolerance * 100)) + '%'}")
    python_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"peak RSS: ortkit {ortkit_rss / 2**20:.1f} MiB, Python {python_rss / 2**20:.1f} MiB; "
          f"ratio = median over rounds of (ortkit p50 / Python p50); target within {args.tolerance * 100:.0f}%: "
          f"{'met' if failures == 0 else f'NOT met for {failures} case(s)'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
