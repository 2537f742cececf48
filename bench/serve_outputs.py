"""Outputs of a bucketing server, for serve_bench.sh's "equal outputs" check.

  serve_outputs.py --http HOST:PORT --model bert.onnx --out FILE.npz
      sends 64 bert requests of lengths 4..128 from 32 threads at once (so that they share batches
      and buckets), checks each against onnxruntime on the unpadded request, saves the outputs.
  serve_outputs.py --compare A.npz B.npz
      prints "equal (max |diff| X)" or "DIFFER (...)".
"""

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def collect(args):
    import onnxruntime as ort
    import tritonclient.http as httpclient

    rng = np.random.default_rng(7)
    requests = []
    for i in range(64):
        length = int(rng.integers(4, 129))
        requests.append({"input_ids": rng.integers(0, 100, size=(1, length), dtype=np.int64),
                         "attention_mask": np.ones((1, length), dtype=np.int64),
                         "token_type_ids": np.zeros((1, length), dtype=np.int64)})

    def send(feeds):
        client = httpclient.InferenceServerClient(args.http)
        inputs = []
        for name, value in feeds.items():
            tensor = httpclient.InferInput(name, list(value.shape), "INT64")
            tensor.set_data_from_numpy(value, binary_data=True)
            inputs.append(tensor)
        out = client.infer("bert", inputs).as_numpy("last_hidden_state")
        client.close()
        return out

    with ThreadPoolExecutor(32) as pool:
        outputs = list(pool.map(send, requests))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    worst = 0.0
    for feeds, got in zip(requests, outputs):
        want = session.run(None, feeds)[0]
        if got.shape != want.shape:
            print(f"shape {got.shape} != reference {want.shape}", file=sys.stderr)
            return 1
        worst = max(worst, float(np.max(np.abs(got - want))))
    if worst > 1e-3:
        print(f"outputs differ from the unpadded reference by {worst:g}", file=sys.stderr)
        return 1
    np.savez(args.out, *outputs)
    return 0


def compare(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    worst = 0.0
    for key in a.files:
        if a[key].shape != b[key].shape:
            print(f"DIFFER (shapes {a[key].shape} vs {b[key].shape})")
            return 0
        worst = max(worst, float(np.max(np.abs(a[key] - b[key]))))
    print(f"{'equal' if worst <= 1e-3 else 'DIFFER'} (64 requests, max |diff| {worst:.2g})")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    parser.add_argument("--model")
    parser.add_argument("--out")
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args()
    return compare(*args.compare) if args.compare else collect(args)


if __name__ == "__main__":
    sys.exit(main())
