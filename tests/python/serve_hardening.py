"""Hostile requests against a running `ortkit serve` that once crashed it, grew its memory without
bound, or were let through. Run by tests/e2e/serve_hardening.sh.

  python serve_hardening.py --http HOST:PORT --grpc HOST:PORT --pid PID

Each check prints one line with what it observed; after each, the server must still answer
/v2/health/live. Exit 1 when any check fails.
"""

import argparse
import json
import select
import socket
import sys
import threading
import time

import numpy as np

MODEL = "bert"
INFER = f"/v2/models/{MODEL}/infer"
failures = []


def check(what, ok, observed):
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {observed}")
    if not ok:
        failures.append(what)


def rss_mb(pid, field="VmRSS"):
    """The process's resident memory (VmRSS), or its peak (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def exchange(address, data, timeout=10.0):
    """Sends `data` (bytes, or an iterable of chunks) and reads until the server closes or stops
    sending. Returns (status, body) of the first answer, status 0 when none came."""
    host, port = address.split(":")
    s = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        for chunk in [data] if isinstance(data, bytes) else data:
            # The server may answer before the request ends (a 431): stop sending and read it.
            if select.select([s], [], [], 0)[0]:
                break
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
        received = b""
        while True:
            try:
                part = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not part:
                break
            received += part
            if b"\r\n\r\n" in received:
                head, _, rest = received.partition(b"\r\n\r\n")
                length = [int(v) for k, v in (l.split(b":", 1) for l in head.split(b"\r\n")[1:] if b":" in l)
                          if k.strip().lower() == b"content-length"]
                if length and len(rest) >= length[0]:
                    break
    finally:
        s.close()
    if not received.startswith(b"HTTP/1.1 "):
        return 0, received[:200]
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def alive(address):
    status, _ = exchange(address, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
    return status == 200


def chunked_with_trailer(name, value):
    return (b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + name + b": " +
            value + b"\r\n\r\n")


class Probing:
    """While a hostile request runs: GET /v2/health/live every 50 ms on a connection of its own,
    timing each answer. `worst` is the slowest answer in seconds (None when one never came)."""

    def __init__(self, address):
        self.address, self.times, self.stop = address, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            start = time.monotonic()
            status, _ = exchange(self.address, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
            self.times.append(time.monotonic() - start if status == 200 else None)
            self.stop.wait(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    @property
    def worst(self):
        return None if not self.times or None in self.times else max(self.times)

    def describe(self):
        worst = self.worst
        return (f"health answered {len(self.times)} times, slowest {worst * 1000:.0f} ms" if worst is not None
                else f"health unanswered ({len(self.times)} probes)")


def live_within_a_second(probe):
    """Every probe answered. Each answer's time is printed (under 1 s on an idle machine), but a test that
    shares two cores with the rest of the suite (and this client's own encoding, which holds the GIL) cannot
    hold a latency bound: a hang or an unanswered probe fails, within the probe's 5 s timeout."""
    return probe.worst is not None


def infer_request(body, extra_headers=b""):
    return (b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body)).encode() +
            b"\r\n" + extra_headers + b"\r\n" + body)


def bert_inputs(binary=False):
    ids = {"name": "input_ids", "datatype": "INT64", "shape": [1, 4]}
    if not binary:
        ids["data"] = [1, 2, 3, 4]
    rest = [{"name": n, "datatype": "INT64", "shape": [1, 4], "data": [1, 1, 1, 1]}
            for n in ("attention_mask", "token_type_ids")]
    return [ids] + rest


def run_http(address, pid):
    # 1. A trailer field Beast cannot store once killed the server (std::length_error, exit 134).
    for size in (65533, 65534, 70000, 300000):
        status, body = exchange(address, chunked_with_trailer(b"X", b"a" * size))
        check(f"trailer field value of {size} bytes", status in (200, 400, 431) and alive(address),
              f"HTTP {status} {body[:120]!r}, server alive")
    status, body = exchange(address, chunked_with_trailer(b"Y" * 65534, b"v"))
    check("trailer field name of 65534 bytes", status in (200, 400, 431) and alive(address), f"HTTP {status}")

    # 2. Many small trailer fields used to count against no limit: 200 MB grew the server by 380 MB.
    before = rss_mb(pid)

    def big_trailer(total):
        yield b"POST /v2/health/live HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        line = b"X-Pad: " + b"b" * 60000 + b"\r\n"
        for _ in range(total // len(line)):
            yield line
        yield b"\r\n"

    status, body = exchange(address, big_trailer(64 << 20), timeout=30)
    grown = rss_mb(pid) - before
    check("a 64 MB trailer is refused before it is buffered", status == 431 and grown < 32 and alive(address),
          f"HTTP {status} {body[:100]!r}; RSS grew {grown:.1f} MB")

    # 9. Duplicate Inference-Header-Content-Length; data together with binary_data_size.
    header = json.dumps({"inputs": bert_inputs()}).encode()
    status, body = exchange(address, infer_request(
        header, b"Inference-Header-Content-Length: %d\r\nInference-Header-Content-Length: 3\r\n" % len(header)))
    check("Inference-Header-Content-Length given twice", status == 400 and b"given 2 times" in body, body[:160])
    inputs = bert_inputs()
    inputs[0]["parameters"] = {"binary_data_size": 32}
    json_part = json.dumps({"inputs": inputs}).encode()
    body_bytes = json_part + np.arange(4, dtype=np.int64).tobytes()
    status, body = exchange(address, infer_request(
        body_bytes, b"Inference-Header-Content-Length: %d\r\n" % len(json_part)))
    check("an input with both data and binary_data_size", status == 400 and b"both" in body, body[:160])
    for name, value, words in (("priority", 2**62, b"priority 4611686018427387904 is out of range"),
                               ("timeout", -5, b"timeout -5 is negative"),
                               ("timeout", 9_223_372_036_854_775, b"timeout 9223372036854775 is out of range"),
                               ("timeout", 2**63 - 1, b"timeout 9223372036854775807 is out of range")):
        request = json.dumps({"parameters": {name: value}, "inputs": bert_inputs()}).encode()
        status, body = exchange(address, infer_request(request))
        check(f"HTTP parameter {name}={value}", status == 400 and words in body, body[:160])


def bert_rows(rows, length, **extra):
    """A request of `rows` x `length` tokens to bert (every value 1)."""
    inputs = [{"name": n, "datatype": "INT64", "shape": [rows, length], "data": [1] * (rows * length)}
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    return json.dumps({"inputs": inputs, **extra}).encode()


def run_bounded_work(address):
    # 3. A 3 MB request naming its 1 MiB output 200,000 times grew the server by 40 MB/s until it stopped
    # answering anything, SIGTERM included; an answer too large to write is refused before it runs.
    cases = [
        ("an output named 200,000 times",
         bert_rows(4, 512, outputs=[{"name": "last_hidden_state"}] * 200000),
         b"output 'last_hidden_state' is asked for twice"),
        ("an answer of 4M values as JSON", bert_rows(64, 512), b"the answer would take"),
        ("16,385 rows (1,025 runs of 16)", bert_rows(16385, 1), b"send at most 16384 rows per request"),
        ("[2^40, 0]: no values, 2^36 runs", bert_rows(2**40, 0), b"it holds no values"),
        ("the classification extension",
         bert_rows(1, 4, outputs=[{"name": "last_hidden_state", "parameters": {"classification": 10**9}}]),
         b"classification extension"),
    ]
    for what, body, words in cases:
        with Probing(address) as probe:
            start = time.monotonic()
            status, reply = exchange(address, infer_request(body), timeout=30)
            took = time.monotonic() - start
        check(what, status == 400 and words in reply and took < 5 and live_within_a_second(probe),
              f"HTTP {status} in {took:.2f} s, {probe.describe()}: {reply[:150]!r}")


def run_json_memory(address, pid):
    # 4. 50 MB of "data": [0, 0, ...] against a shape of [1] was refused correctly at 2.0-4.6 GB of peak
    # memory (a tree node and a pointer per value); now the body is all it holds.
    def single(data):
        return (b'{"inputs": [{"name": "input_ids", "datatype": "INT64", "shape": [1, 1], "data": [' + data +
                b']}, {"name": "attention_mask", "datatype": "INT64", "shape": [1, 1], "data": [1]}, '
                b'{"name": "token_type_ids", "datatype": "INT64", "shape": [1, 1], "data": [0]}]}')
    # 20 MB each: a tree would take 40 times that, the body is all it may take now.
    cases = [("20 MB of 0s against [1, 1]", single(b",".join([b"0"] * 10_000_000)), b"holds 10000000"),
             ("20 MB of [0]s against [1, 1]", single(b",".join([b"[0]"] * 5_000_000)), b"holds 5000000"),
             ("20 MB of {}s", single(b",".join([b"{}"] * 7_000_000)), b"element 0 is an object")]
    for what, body, words in cases:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")  # resets the peak (VmHWM) to what is resident now
        before = rss_mb(pid, "VmHWM")
        with Probing(address) as probe:
            status, reply = exchange(address, infer_request(body), timeout=60)
        grown = rss_mb(pid, "VmHWM") - before
        check(what, status == 400 and words in reply and grown < len(body) / 2**20 + 32 and live_within_a_second(probe),
              f"HTTP {status}, peak memory grew {grown:.0f} MB for a {len(body) / 2**20:.0f} MB body, "
              f"{probe.describe()}: {reply[:100]!r}")


def run_inflight(address, pid, grpc_address):
    # 5. Ten connections each holding a 60 MB body minus one byte held 613 MB and growing; now bodies
    # count against --max-inflight-bytes (by default room for four of the largest) from their header.
    host, port = address.split(":")
    body = b"{" + b" " * (60 << 20)
    head = (b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body) + 1).encode() +
            b"\r\n\r\n")
    open_connections, refused, peak = [], 0, 0.0
    for _ in range(10):
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(head)
        if select.select([s], [], [], 0.5)[0]:  # answered before its body: refused
            reply = s.recv(4096)
            refused += reply.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in reply
            s.close()
            continue
        s.sendall(body)  # all but the last byte
        open_connections.append(s)
        peak = max(peak, rss_mb(pid))
    with Probing(address) as probe:
        time.sleep(0.5)
    peak = max(peak, rss_mb(pid), rss_mb(pid, "VmHWM"))
    live = live_within_a_second(probe)
    for s in open_connections:
        s.close()
    check("ten 60 MB bodies held open at once", refused >= 5 and peak < 500 and live,
          f"{len(open_connections)} held, {refused} refused with 503 and Retry-After, server peak {peak:.0f} MB, "
          f"{probe.describe()}")

    # And eight 40 MB gRPC messages at once: gRPC's own buffers are held to a quota of the same size.
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc
    request = service_pb2.ModelInferRequest(model_name=MODEL)
    length = (40 << 20) // 24
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        tensor = request.inputs.add(name=name, datatype="INT64", shape=[1, length])
        request.raw_input_contents.append(np.ones(length, dtype=np.int64).tobytes())
    codes = []

    def call():
        channel = grpc.insecure_channel(grpc_address, options=[("grpc.max_send_message_length", -1)])
        try:
            service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=60)
            codes.append("OK")
        except grpc.RpcError as e:
            codes.append(e.code().name)

    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    threads = [threading.Thread(target=call) for _ in range(8)]
    with Probing(address) as probe:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    peak = rss_mb(pid, "VmHWM")
    check("eight 40 MB gRPC messages at once", peak < 500 and "OK" not in codes and live_within_a_second(probe),
          f"server peak {peak:.0f} MB, {probe.describe()}; {', '.join(sorted(set(codes)))}")


def run_grpc(address):
    import grpc
    import tritonclient.grpc as tc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    client = tc.InferenceServerClient(address)
    inputs = []
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        i = tc.InferInput(name, [1, 4], "INT64")
        i.set_data_from_numpy(np.ones((1, 4), dtype=np.int64))
        inputs.append(i)
    for what, kwargs, words in (("priority=2**62", {"priority": 2**62}, "priority 4611686018427387904 is out of range"),
                                ("timeout=-5", {"timeout": -5}, "timeout -5 is negative")):
        try:
            if "timeout" in kwargs:
                # tritonclient's own timeout argument is unsigned: the parameter goes in by hand.
                request = service_pb2.ModelInferRequest(model_name=MODEL)
                request.parameters["timeout"].int64_param = -5
                for i in inputs:
                    request.inputs.extend([i._get_tensor()])
                    request.raw_input_contents.extend([i._get_content()])
                service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address)).ModelInfer(request)
            else:
                client.infer(MODEL, inputs, **kwargs)
            check(f"gRPC {what}", False, "accepted")
        except (tc.InferenceServerException, grpc.RpcError) as e:
            text = e.message() if hasattr(e, "message") and callable(e.message) else e.details()
            check(f"gRPC {what}", words in text, text[:160])
    request = service_pb2.ModelInferRequest(model_name=MODEL)
    for i in inputs:
        request.inputs.extend([i._get_tensor()])
        request.raw_input_contents.extend([i._get_content()])
    for _ in range(1000):
        request.outputs.add().name = "last_hidden_state"
    try:
        service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address)).ModelInfer(request)
        check("gRPC output named 1,000 times", False, "accepted")
    except grpc.RpcError as e:
        check("gRPC output named 1,000 times",
              e.code() == grpc.StatusCode.INVALID_ARGUMENT and "asked for twice" in e.details(), e.details()[:160])
    request = service_pb2.ModelInferRequest(model_name=MODEL)
    for i in inputs:
        tensor = i._get_tensor()
        tensor.contents.int64_contents.extend([1, 1, 1, 1])
        request.inputs.extend([tensor])
        request.raw_input_contents.extend([i._get_content()])
    try:
        service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address)).ModelInfer(request)
        check("gRPC contents and raw_input_contents together", False, "accepted")
    except grpc.RpcError as e:
        check("gRPC contents and raw_input_contents together",
              e.code() == grpc.StatusCode.INVALID_ARGUMENT and "both contents and raw_input_contents" in e.details(),
              e.details()[:160])


def process_ended(pid):
    """Whether `pid` has exited (gone, or a zombie its parent has not yet waited for)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):  # gone between the open and the read
        return True


def run_sigterm_during_hostile(address, pid, drain_s):
    """SIGTERM while hostile requests are in flight: ten bodies held one byte short, an answer that
    takes long to write to a client that never reads it, and an ordinary batch. The server must have
    exited within its drain deadline (plus a second for the exit itself)."""
    import os
    import signal
    host, port = address.split(":")
    held = []
    for _ in range(10):
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{")
        held.append(s)
    reader = socket.create_connection((host, int(port)), timeout=10)  # asks, never reads its answer
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.sendall(infer_request(bert_rows(512, 32)) * 20)
    busy = threading.Thread(target=lambda: exchange(address, infer_request(bert_rows(256, 64)), timeout=30),
                            daemon=True)
    busy.start()
    time.sleep(0.3)
    os.kill(pid, signal.SIGTERM)
    start = time.monotonic()
    while not process_ended(pid) and time.monotonic() - start < drain_s + 10:
        time.sleep(0.05)
    took = time.monotonic() - start
    for s in held + [reader]:
        s.close()
    check("SIGTERM during hostile requests", process_ended(pid) and took < drain_s + 1.0,
          f"exited {took:.2f} s after SIGTERM (drain deadline {drain_s} s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--drain-s", type=float, required=True, help="the server's --drain-timeout-s")
    args = parser.parse_args()
    run_http(args.http, args.pid)
    run_bounded_work(args.http)
    run_json_memory(args.http, args.pid)
    run_inflight(args.http, args.pid, args.grpc)
    run_grpc(args.grpc)
    check("the server is still alive", alive(args.http), "GET /v2/health/live")
    peak = rss_mb(args.pid, "VmHWM")
    check("peak memory over every hostile request", peak < 500, f"{peak:.0f} MB")
    run_sigterm_during_hostile(args.http, args.pid, args.drain_s)
    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
