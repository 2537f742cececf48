"""tritonclient (HTTP and gRPC) against `ortkit serve` running in the container image.

Run by tests/e2e/container.sh with the published host ports of the container:
  python container_client.py --http HOST:PORT --grpc HOST:PORT --metrics HOST:PORT --model FILE [--reload FILE]

--model is the file the container serves as model "encoder" version 1 (demo-encoder: FP32 x [-1, -1, 64] -> y);
the answers are checked against onnxruntime on it. --reload: a second model of the same inputs, which the
test loads through the repository API as version 2 (a `file:` override), then infers on it. Prints one line per
check and exits 1 on the first failure.
"""

import argparse
import sys
import urllib.request

import numpy as np
import onnxruntime as ort
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

TOLERANCE = dict(rtol=1e-4, atol=1e-4)


def reference(path, x):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def infer_http(client, x, version=""):
    tensor = httpclient.InferInput("x", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x, binary_data=True)
    result = client.infer("encoder", [tensor], model_version=version)
    return result.as_numpy("y"), result.get_response()["model_version"]


def infer_grpc(client, x, version=""):
    tensor = grpcclient.InferInput("x", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    result = client.infer("encoder", [tensor], model_version=version)
    return result.as_numpy("y"), result.get_response().model_version


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok    {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--reload")
    args = parser.parse_args()

    x = np.random.default_rng(7).standard_normal((2, 5, 64)).astype(np.float32)
    want = reference(args.model, x)
    http = httpclient.InferenceServerClient(args.http)
    grpc = grpcclient.InferenceServerClient(args.grpc)
    check(http.is_server_ready() and grpc.is_server_ready(), "server ready over HTTP and gRPC")
    y, version = infer_http(http, x)
    check(np.allclose(y, want, **TOLERANCE) and version == "1", "HTTP infer (binary tensors) matches onnxruntime")
    y, version = infer_grpc(grpc, x)
    check(np.allclose(y, want, **TOLERANCE) and version == "1", "gRPC infer matches onnxruntime")

    metrics = urllib.request.urlopen(f"http://{args.metrics}/metrics", timeout=10).read().decode()
    success = [line for line in metrics.splitlines() if line.startswith('ortkit_request_success_total{model="encoder"')]
    check(success and float(success[0].split()[-1]) >= 2, f"/metrics counts the requests: {success}")

    if args.reload:
        with open(args.reload, "rb") as f:
            files = {"file:2/model.onnx": f.read()}
        grpc.load_model("encoder", config='{"version_policy": {"latest": {"num_versions": 2}}}', files=files)
        index = {(m.name, m.version): m.state for m in grpc.get_model_repository_index().models}
        check(index.get(("encoder", "2")) == "READY", f"version 2 loaded through the repository API: {index}")
        y, version = infer_http(http, x)
        check(version == "2" and np.allclose(y, reference(args.reload, x), **TOLERANCE),
              "a request without a version goes to version 2, the highest ready")
        y, version = infer_grpc(grpc, x, "1")
        check(version == "1" and np.allclose(y, want, **TOLERANCE), "version 1 still answers when asked for")
    http.close()
    grpc.close()
    print("container client: ok")


if __name__ == "__main__":
    main()
