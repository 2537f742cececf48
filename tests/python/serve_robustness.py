"""Bad requests, disconnects, and SIGTERM under load against a running `ortkit serve` (raw sockets,
so that malformed requests reach the server exactly as written). Run by tests/e2e/serve_robustness.sh.

  python serve_robustness.py bad-requests --http HOST:PORT --pid PID --model bert [--count 10000]
  python serve_robustness.py sigterm --http HOST:PORT --pid PID --model bert [--threads 16]
  python serve_robustness.py sigterm-grpc --grpc HOST:PORT --pid PID --model bert [--threads 16]
Exit 0 when every check holds; prints the figures it checked.
"""

import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closes it."""

    def __init__(self, address):
        self.address = address
        self.sock = None

    def _connect(self):
        host, port = self.address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def _read_response(self):
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before a response")
            self.buffer += chunk
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed inside a response")
            rest += chunk
        self.buffer = rest[length:]
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, rest[:length]

    def request(self, method, path, body=b"", headers=None):
        for attempt in (0, 1):
            if self.sock is None:
                self._connect()
            head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
            for key, value in (headers or {}).items():
                head += f"{key}: {value}\r\n"
            try:
                self.sock.sendall(head.encode() + b"\r\n" + body)
                return self._read_response()
            except (ConnectionError, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 1:
                    raise


def infer_json(rows=1, length=8, datatype="INT64", drop=None, shape=None):
    inputs = []
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        if name == drop:
            continue
        data = [1] * (rows * length)
        dt = datatype if name == "input_ids" else "INT64"
        if dt == "FP32":
            data = [1.0] * len(data)
        inputs.append({"name": name, "shape": shape if (shape and name == "input_ids") else [rows, length],
                       "datatype": dt, "data": data})
    return json.dumps({"inputs": inputs}).encode()


def binary_request(length=8, claim_extra=0):
    header = {"inputs": [{"name": n, "shape": [1, length], "datatype": "INT64",
                          "parameters": {"binary_data_size": 8 * length}}
                         for n in ("input_ids", "attention_mask", "token_type_ids")]}
    header_bytes = json.dumps(header).encode()
    data = struct.pack(f"<{length}q", *([1] * length)) * 3
    return header_bytes + data[: len(data) - claim_extra], {"Inference-Header-Content-Length": str(len(header_bytes)),
                                                             "Content-Type": "application/octet-stream"}


def bad_cases(model):
    """(name, method, path, body, headers, allowed statuses, word the error must contain)."""
    path = f"/v2/models/{model}/infer"
    truncated, truncated_headers = binary_request(claim_extra=5)
    lying_header = dict(truncated_headers)
    lying_header["Inference-Header-Content-Length"] = "100000"
    return [
        ("malformed JSON", "POST", path, b'{"inputs": [', {}, {400}, ""),
        ("not an object", "POST", path, b"[1, 2, 3]", {}, {400}, ""),
        ("wrong datatype", "POST", path, infer_json(datatype="FP32"), {}, {400}, "input_ids"),
        ("wrong shape", "POST", path, infer_json(shape=[1, 2, 4]), {}, {400}, "input_ids"),
        ("data count does not match shape", "POST", path, infer_json(shape=[1, 9]), {}, {400}, "input_ids"),
        ("missing input", "POST", path, infer_json(drop="attention_mask"), {}, {400}, "attention_mask"),
        ("unknown model", "POST", "/v2/models/no_such_model/infer", infer_json(), {}, {400, 404}, "no_such_model"),
        ("binary data shorter than declared", "POST", path, truncated, truncated_headers, {400}, ""),
        ("header length past the body", "POST", path, truncated, lying_header, {400}, ""),
    ]


def check_error(name, status, body, allowed, word):
    if status not in allowed:
        raise AssertionError(f"{name}: HTTP {status}, expected one of {sorted(allowed)}: {body[:200]!r}")
    try:
        message = json.loads(body)["error"]
    except Exception:
        raise AssertionError(f"{name}: the body is not {{\"error\": ...}}: {body[:200]!r}")
    if word and word not in message:
        raise AssertionError(f"{name}: the error does not name '{word}': {message}")
    return message


def disconnect_mid_request(address, model):
    """Headers promising 10,000 bytes, 100 sent, then the socket closes."""
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n".encode() + b"{" * 100)
    sock.close()


def oversized(address, model, limit_bytes):
    """A body one MiB over the limit: 413 (or the connection closed after the headers, never a hang)."""
    conn = Connection(address)
    body = b"[" + b" " * (limit_bytes + (1 << 20)) + b"]"
    try:
        status, _, response = conn.request("POST", f"/v2/models/{model}/infer", body)
    except (ConnectionError, OSError):
        return "closed"
    finally:
        conn.close()
    check_error("body over the limit", status, response, {413}, "")
    return status


def good(conn, model):
    status, _, body = conn.request("POST", f"/v2/models/{model}/infer", infer_json())
    if status != 200:
        raise AssertionError(f"a good request after bad ones got HTTP {status}: {body[:200]!r}")


def run_bad_requests(args):
    conn = Connection(args.http)
    cases = bad_cases(args.model)
    for name, method, path, body, headers, allowed, word in cases:
        status, _, response = conn.request(method, path, body, headers)
        message = check_error(name, status, response, allowed, word)
        print(f"  {name:36s} HTTP {status}  {message[:90]}")
        good(conn, args.model)
    print(f"  {'body over the limit':36s} {oversized(args.http, args.model, args.limit_mb << 20)}")
    disconnect_mid_request(args.http, args.model)
    good(conn, args.model)
    print(f"  {'client disconnects mid-request':36s} server still answers")

    # Warm the allocator first, so that "before" is the steady state, not the empty process.
    for i in range(500):
        name, method, path, body, headers, allowed, word = cases[i % len(cases)]
        conn.request(method, path, body, headers)
    before = rss_kib(args.pid)
    start = time.time()
    disconnects = oversize = 0
    for i in range(args.count):
        name, method, path, body, headers, allowed, word = cases[i % len(cases)]
        status, _, response = conn.request(method, path, body, headers)
        if status not in allowed:
            raise AssertionError(f"request {i} ({name}): HTTP {status}")
        if i % 500 == 0:
            disconnect_mid_request(args.http, args.model)
            disconnects += 1
        if i % 2500 == 0:
            oversized(args.http, args.model, args.limit_mb << 20)
            oversize += 1
    good(conn, args.model)
    after = rss_kib(args.pid)
    elapsed = time.time() - start
    print(f"  {args.count} bad requests (+{disconnects} disconnects, {oversize} oversized) in {elapsed:.1f} s; "
          f"server RSS before {before / 1024:.1f} MiB, after {after / 1024:.1f} MiB (+{(after - before) / 1024:.1f} MiB)")
    if after - before > args.max_growth_mb * 1024:
        raise AssertionError(f"RSS grew by {(after - before) / 1024:.1f} MiB over {args.count} bad requests "
                             f"(limit {args.max_growth_mb} MiB)")
    return 0


def sigterm_under_load(args, connect, give_up):
    """Runs args.threads closed loops, each `send, close = connect()` then `outcome = send()` over
    and over, for args.load_s; SIGTERMs the server; goes on for a second, then stops them. A loop
    ends early once give_up(outcome, signalled). Returns the (sent, answered, outcome) records of
    requests sent before the signal (less args.margin_s) and of those sent around or after it."""
    records = []
    lock = threading.Lock()
    stop = threading.Event()
    signalled = threading.Event()

    def loop():
        send, close = connect()
        while not stop.is_set():
            sent = time.time()
            outcome = send()
            with lock:
                records.append((sent, time.time(), outcome))
            if give_up(outcome, signalled.is_set()):
                break
        close()

    threads = [threading.Thread(target=loop) for _ in range(args.threads)]
    for t in threads:
        t.start()
    time.sleep(args.load_s)
    signal_time = time.time()
    os.kill(args.pid, signal.SIGTERM)
    signalled.set()
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(timeout=40)
        if t.is_alive():
            raise AssertionError("a client thread hangs: a request was never answered")
    cut = signal_time - args.margin_s
    return [r for r in records if r[0] < cut], [r for r in records if r[0] >= cut]


def count(records):
    kinds = {}
    for r in records:
        kinds[str(r[2])] = kinds.get(str(r[2]), 0) + 1
    return kinds


def run_sigterm(args):
    """Closed-loop load on keep-alive connections; SIGTERM the server mid-way. Every request sent
    before the signal must be answered (and nearly all with 200); later ones may be refused."""
    def connect():
        conn = Connection(args.http)
        body = infer_json(length=32)

        def send():
            try:
                status, _, _ = conn.request("POST", f"/v2/models/{args.model}/infer", body)
                return status
            except ConnectionRefusedError:
                return "refused"
            except (OSError, ConnectionError) as error:
                return f"no answer: {type(error).__name__}"
        return send, conn.close

    before, after = sigterm_under_load(args, connect, lambda outcome, signalled: outcome == "refused")
    lost = [r for r in before if not isinstance(r[2], int)]
    ok = sum(1 for r in before if r[2] == 200)
    print(f"  {len(before)} requests sent before SIGTERM: {ok} answered 200, {len(before) - ok - len(lost)} another status, "
          f"{len(lost)} unanswered; {len(after)} around/after it: {count(after)}")
    if lost:
        raise AssertionError(f"{len(lost)} requests sent before SIGTERM were never answered: {lost[:5]}")
    if ok < 0.99 * len(before):
        raise AssertionError(f"only {ok} of {len(before)} requests before SIGTERM succeeded (queue too small for the test?)")
    return 0


def run_sigterm_grpc(args):
    """The same over gRPC (tritonclient): every call sent before the signal is answered OK while
    the server drains, and no client hangs."""
    import numpy as np
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    def connect():
        client = grpcclient.InferenceServerClient(args.grpc)
        inputs = []
        for name in ("input_ids", "attention_mask", "token_type_ids"):
            tensor = grpcclient.InferInput(name, [1, 32], "INT64")
            tensor.set_data_from_numpy(np.ones((1, 32), dtype=np.int64))
            inputs.append(tensor)

        def send():
            try:
                client.infer(args.model, inputs, client_timeout=30)
                return "OK"
            except InferenceServerException as error:
                return str(error.status())
        return send, client.close

    before, after = sigterm_under_load(args, connect, lambda outcome, signalled: outcome != "OK" and signalled)
    failed = [r for r in before if r[2] != "OK"]
    print(f"  gRPC: {len(before)} calls sent before SIGTERM, {len(before) - len(failed)} answered OK; "
          f"{len(after)} around/after it: {count(after)}")
    if not before:
        raise AssertionError("no gRPC call completed before SIGTERM")
    if failed:
        raise AssertionError(f"{len(failed)} gRPC calls sent before SIGTERM did not succeed: {failed[:5]}")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bad-requests", "sigterm", "sigterm-grpc"])
    parser.add_argument("--http")
    parser.add_argument("--grpc")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--model", default="bert")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--limit-mb", type=int, default=1, help="the server's --max-body-mb")
    parser.add_argument("--max-growth-mb", type=float, default=32)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--load-s", type=float, default=2.0)
    parser.add_argument("--margin-s", type=float, default=0.005)
    args = parser.parse_args()
    try:
        modes = {"bad-requests": run_bad_requests, "sigterm": run_sigterm, "sigterm-grpc": run_sigterm_grpc}
        return modes[args.mode](args)
    except AssertionError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
