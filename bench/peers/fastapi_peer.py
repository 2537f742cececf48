"""The common hand-written service: FastAPI + onnxruntime, one request at a time.

Speaks the parts of the Open Inference Protocol (KServe v2) that `ortkit perf --json` uses:
  GET  /v2/health/live, /v2/health/ready, /v2/models/NAME   (metadata: FP32/INT64, -1 for dynamic dims)
  POST /v2/models/NAME/infer                                  (JSON tensors)
  GET  /metrics                                               (ortkit_inference_count_total, ortkit_execution_count_total)

The endpoint is `async def` and calls session.run directly, so the event loop runs one inference at
a time: the usual shape of such a service. Usage:
  python fastapi_peer.py --model NAME=PATH [--host 127.0.0.1] [--port 0] [--intra-op-threads 1]
Prints "listening http=HOST:PORT" once the socket is bound.
"""

import argparse
import socket
import sys

import numpy as np
import onnxruntime as ort
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

# onnxruntime type strings -> (protocol datatype, numpy dtype)
TYPES = {
    "tensor(float)": ("FP32", np.float32),
    "tensor(double)": ("FP64", np.float64),
    "tensor(int64)": ("INT64", np.int64),
    "tensor(int32)": ("INT32", np.int32),
    "tensor(int8)": ("INT8", np.int8),
    "tensor(uint8)": ("UINT8", np.uint8),
    "tensor(bool)": ("BOOL", np.bool_),
    "tensor(float16)": ("FP16", np.float16),
}
DTYPES = {proto: dtype for proto, dtype in TYPES.values()}
PROTOCOL_OF = {np.dtype(dtype): proto for proto, dtype in TYPES.values()}


def tensor_metadata(arg):
    shape = [d if isinstance(d, int) and d >= 0 else -1 for d in arg.shape]
    return {"name": arg.name, "datatype": TYPES[arg.type][0], "shape": shape}


def build_app(name, path, intra_op_threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    metadata = {
        "name": name,
        "versions": ["1"],
        "platform": "onnxruntime_onnx",
        "inputs": [tensor_metadata(i) for i in session.get_inputs()],
        "outputs": [tensor_metadata(o) for o in session.get_outputs()],
    }
    counters = {"inferences": 0, "executions": 0, "failures": 0}
    app = FastAPI()

    @app.get("/v2/health/live")
    async def live():
        return {"live": True}

    @app.get("/v2/health/ready")
    async def ready():
        return {"ready": True}

    @app.get("/v2/models/{model}")
    async def model_metadata(model: str):
        if model != name:
            return JSONResponse({"error": f"unknown model '{model}'"}, status_code=404)
        return metadata

    @app.post("/v2/models/{model}/infer")
    async def infer(model: str, request: Request):
        if model != name:
            return JSONResponse({"error": f"unknown model '{model}'"}, status_code=404)
        try:
            body = await request.json()
            feeds = {}
            for item in body["inputs"]:
                array = np.asarray(item["data"], dtype=DTYPES[item["datatype"]])
                feeds[item["name"]] = array.reshape(item["shape"])
            wanted = [o["name"] for o in body.get("outputs", [])] or None
            results = session.run(wanted, feeds)
        except Exception as error:  # the protocol's error body, as hand-written services do it
            counters["failures"] += 1
            return JSONResponse({"error": str(error)}, status_code=400)
        counters["inferences"] += next(iter(feeds.values())).shape[0] if feeds else 1
        counters["executions"] += 1
        names = wanted or [o.name for o in session.get_outputs()]
        outputs = []
        for out_name, value in zip(names, results):
            outputs.append({
                "name": out_name,
                "datatype": PROTOCOL_OF[value.dtype],
                "shape": list(value.shape),
                "data": value.ravel().tolist(),
            })
        return {"model_name": name, "outputs": outputs}

    @app.get("/metrics")
    async def metrics():
        labels = f'model="{name}",version="1"'
        text = (
            f"ortkit_inference_count_total{{{labels}}} {counters['inferences']}\n"
            f"ortkit_execution_count_total{{{labels}}} {counters['executions']}\n"
            f"ortkit_request_failure_total{{{labels}}} {counters['failures']}\n"
        )
        return PlainTextResponse(text)

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="NAME=PATH")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--intra-op-threads", type=int, default=1)
    args = parser.parse_args()
    name, _, path = args.model.partition("=")
    if not name or not path:
        parser.error("--model takes NAME=PATH")
    app = build_app(name, path, args.intra_op_threads)
    # Bind first so that port 0 works and the port can be announced before serving.
    # IPPROTO_TCP explicitly: asyncio turns Nagle off only for sockets whose proto says TCP (as
    # `uvicorn --port` binds them); with proto 0 every keep-alive response waited ~40 ms for an ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    host, port = sock.getsockname()
    print(f"listening http={host}:{port}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
