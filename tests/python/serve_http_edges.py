"""HTTP/1.1 protocol edges of a running `ortkit serve` (Boost.Beast front end), over raw sockets so
that every byte reaches the server exactly as written. Run by tests/e2e/serve_http_edges.sh.

  python serve_http_edges.py protocol --http HOST:PORT --reference FILE [--limit-mb 2] [--idle-timeout-s 2]
      pipelining, HTTP/1.0, Connection: close, chunked bodies, Expect: 100-continue (raw and curl),
      405/404/431/400/413, an idle client stalled mid-header; writes the reference answers to FILE
  python serve_http_edges.py limits --http HOST:PORT --reference FILE --max-connections 4
      the connection limit (extra clients wait in the backlog) and a slow reader
  python serve_http_edges.py smoke --http HOST:PORT --reference FILE --label MODE
      a few infers, single and pipelined, equal to the reference answers
Prints one line per check with what it observed; exit 1 when any check fails.
"""

import argparse
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

MODEL = "bert"
INFER_PATH = f"/v2/models/{MODEL}/infer"
VOCAB = 2000  # ortkit_make_model bert-tiny
TOLERANCE = 1e-4  # batched and single runs may round differently


def infer_body(seed, length=8):
    """A bert-tiny infer request whose answer depends on `seed`."""
    ids = [(seed * 131 + i * 17) % VOCAB for i in range(length)]
    types = [(seed + i) % 2 for i in range(length)]
    inputs = [
        {"name": "input_ids", "datatype": "INT64", "shape": [1, length], "data": ids},
        {"name": "attention_mask", "datatype": "INT64", "shape": [1, length], "data": [1] * length},
        {"name": "token_type_ids", "datatype": "INT64", "shape": [1, length], "data": types},
    ]
    return json.dumps({"id": f"seed-{seed}", "inputs": inputs}).encode()


def request_bytes(method, path, body=b"", headers=None, version="HTTP/1.1"):
    head = f"{method} {path} {version}\r\nHost: ortkit\r\n"
    if body or method == "POST":
        head += f"Content-Length: {len(body)}\r\n"
    for key, value in (headers or {}).items():
        head += f"{key}: {value}\r\n"
    return head.encode() + b"\r\n" + body


class Response:
    def __init__(self, version, status, headers, body):
        self.version, self.status, self.headers, self.body = version, status, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"{self.version} {self.status} {self.body[:160]!r}"


class Raw:
    """One client socket with a read buffer; reads responses in order."""

    def __init__(self, address, timeout=10.0, rcvbuf=None):
        host, port = address.rsplit(":", 1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connect, so that the window is small from the start
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        self.sock.close()

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the server closed the connection")
        self.buffer += chunk

    def _take(self, n):
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._fill()
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def read_response(self):
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, status = lines[0].split(" ", 2)[:2]
        headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        status = int(status)
        if 100 <= status < 200 or status in (204, 304):
            return Response(version, status, headers, b"")
        if "content-length" in headers:
            return Response(version, status, headers, self._take(int(headers["content-length"])))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():  # trailers
                        pass
                    return Response(version, status, headers, body)
                body += self._take(size)
                self._take(2)
        body = self.buffer
        try:
            while True:
                self._fill()
        except EOFError:
            body, self.buffer = self.buffer, b""
        return Response(version, status, headers, body)

    def end(self, timeout=3.0):
        """How the connection ends after the answers: 'closed' (FIN), 'reset', 'open' (still open
        after `timeout`), or 'extra bytes'."""
        if self.buffer:
            return "extra bytes"
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            return "open"
        except ConnectionResetError:
            return "reset"
        return "extra bytes" if chunk else "closed"


def single(address, body, path=INFER_PATH):
    """One request on a fresh http.client connection (the library's own framing)."""
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return Response(f"HTTP/{response.version / 10:.1f}", response.status, dict(response.getheaders()),
                        response.read())
    finally:
        conn.close()


def outputs_of(response):
    if response.status != 200:
        raise AssertionError(f"expected 200, got {response!r}")
    return {o["name"]: (o["shape"], o["data"]) for o in response.json()["outputs"]}


def difference(a, b):
    """The largest absolute difference between two answers' outputs (inf when shapes differ)."""
    if a.keys() != b.keys():
        return float("inf")
    worst = 0.0
    for name in a:
        if a[name][0] != b[name][0] or len(a[name][1]) != len(b[name][1]):
            return float("inf")
        worst = max([worst] + [abs(x - y) for x, y in zip(a[name][1], b[name][1])])
    return worst


def same_answer(what, response, reference):
    got = outputs_of(response)
    diff = difference(got, reference)
    if diff > TOLERANCE:
        raise AssertionError(f"{what}: the answer differs from the single request's by {diff}")
    return diff


def error_message(what, response, status, words=()):
    if response.status != status:
        raise AssertionError(f"{what}: expected HTTP {status}, got {response!r}")
    try:
        message = response.json()["error"]
    except Exception:
        raise AssertionError(f"{what}: the body is not {{\"error\": ...}}: {response.body[:200]!r}")
    for word in words:
        if word not in message:
            raise AssertionError(f"{what}: the error does not name '{word}': {message}")
    return message


def refused(address, what, data, status):
    """Sends `data` on a new connection: the answer must be `status` with {"error": ...}, then the
    server closes. Returns the message and how the connection ended."""
    raw = Raw(address)
    raw.send(data)
    response = raw.read_response()
    message = error_message(what, response, status)
    end = expect_end(str(status), raw)
    raw.close()
    return message, end


def expect_end(what, raw, wanted="closed", timeout=3.0):
    end = raw.end(timeout)
    if end != wanted:
        raise AssertionError(f"{what}: after the answer the connection is '{end}', expected '{wanted}'")
    return end


class Checks:
    def __init__(self):
        self.failures = 0

    def run(self, name, check):
        start = time.monotonic()
        try:
            observed = check()
            print(f"  ok   {name:32s} {observed}  [{time.monotonic() - start:.2f} s]", flush=True)
        except Exception as error:  # every kind of failure is reported the same way
            self.failures += 1
            print(f"  FAIL {name:32s} {type(error).__name__}: {error}", flush=True)


class Background:
    """Another client doing infers one after another on its own keep-alive connection, timing each."""

    def __init__(self, address, reference_body, reference):
        self.address, self.body, self.reference = address, reference_body, reference
        self.latencies, self.errors = [], []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop)

    def _loop(self):
        try:
            raw = Raw(self.address, timeout=10)
            while not self.stop.is_set():
                sent = time.monotonic()
                raw.send(request_bytes("POST", INFER_PATH, self.body))
                response = raw.read_response()
                self.latencies.append(time.monotonic() - sent)
                same_answer("background client", response, self.reference)
                time.sleep(0.02)
            raw.close()
        except Exception as error:
            self.errors.append(f"{type(error).__name__}: {error}")

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=30)

    def verdict(self, max_latency_s=1.0, min_answers=5):
        if self.thread.is_alive():
            raise AssertionError("the other client hangs")
        if self.errors:
            raise AssertionError(f"the other client failed: {self.errors[0]}")
        if len(self.latencies) < min_answers:
            raise AssertionError(f"the other client got only {len(self.latencies)} answers")
        worst = max(self.latencies)
        if worst >= max_latency_s:
            raise AssertionError(f"the other client waited {worst:.3f} s for an answer (limit {max_latency_s} s)")
        return f"other client: {len(self.latencies)} answers, max latency {worst * 1000:.0f} ms"


def queues(local_port, remote_port):
    """The kernel's (send, receive) queue bytes of the IPv4 socket local_port -> remote_port on this
    machine (/proc/net/tcp), or None when there is no such socket."""
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
            if (local, remote) == (local_port, remote_port):
                tx, rx = fields[4].split(":")
                return int(tx, 16), int(rx, 16)
    return None


def load_reference(path):
    with open(path) as f:
        return {int(seed): {name: tuple(v) for name, v in outputs.items()} for seed, outputs in json.load(f).items()}


# --- protocol -------------------------------------------------------------------------------------


def run_protocol(args):
    checks = Checks()
    address = args.http
    seeds = (1, 2, 3)
    bodies = {s: infer_body(s) for s in seeds}
    reference = {s: outputs_of(single(address, bodies[s])) for s in seeds}
    with open(args.reference, "w") as f:
        json.dump({str(s): {n: list(v) for n, v in reference[s].items()} for s in seeds}, f)
    spread = min(difference(reference[a], reference[b]) for a in seeds for b in seeds if a < b)
    if spread <= 10 * TOLERANCE:
        print(f"FAIL: the three reference requests have near-identical answers ({spread}): ordering is untestable")
        return 1

    def pipelining():
        raw = Raw(address)
        raw.send(b"".join(request_bytes("POST", INFER_PATH, bodies[s]) for s in seeds))
        responses = [raw.read_response() for _ in seeds]
        diffs = [same_answer(f"pipelined answer {i + 1} (seed {s})", r, reference[s])
                 for i, (s, r) in enumerate(zip(seeds, responses))]
        ids = [r.json().get("id") for r in responses]
        if any(i is not None for i in ids) and ids != [f"seed-{s}" for s in seeds]:
            raise AssertionError(f"answers out of order: ids {ids}")
        expect_end("pipelining", raw, "open", timeout=0.3)
        raw.close()
        return (f"3 requests in one write -> {' '.join(str(r.status) for r in responses)}, ids {ids}, "
                f"max |diff| vs single {max(diffs):.1e} (answers differ pairwise by >= {spread:.2e}); connection kept")

    def http10():
        raw = Raw(address)
        raw.send(request_bytes("POST", INFER_PATH, bodies[1], {"Content-Type": "application/json"}, "HTTP/1.0"))
        response = raw.read_response()
        same_answer("HTTP/1.0 infer", response, reference[1])
        end = expect_end("HTTP/1.0 without keep-alive", raw)
        raw.close()
        return f"{response.version} {response.status} (Connection: {response.headers.get('connection')}), then {end}"

    def connection_close():
        raw = Raw(address)
        raw.send(request_bytes("POST", INFER_PATH, bodies[2], {"Connection": "close"}))
        response = raw.read_response()
        same_answer("Connection: close infer", response, reference[2])
        if response.headers.get("connection", "").lower() != "close":
            raise AssertionError(f"the answer lacks Connection: close: {response.headers}")
        end = expect_end("Connection: close", raw)
        raw.close()
        return f"{response.status} with Connection: close, then {end}"

    def chunked():
        raw = Raw(address)
        body = bodies[3]
        raw.send(f"POST {INFER_PATH} HTTP/1.1\r\nHost: ortkit\r\nTransfer-Encoding: chunked\r\n"
                 f"Content-Type: application/json\r\n\r\n".encode())
        cuts = [0, 1, 100, 101, len(body) // 2, len(body)]
        pieces = [body[a:b] for a, b in zip(cuts, cuts[1:])]
        for i, piece in enumerate(pieces):
            extension = ";note=x" if i == 2 else ""  # chunk extensions are legal and ignored
            raw.send(f"{len(piece):x}{extension}\r\n".encode() + piece + b"\r\n")
            time.sleep(0.01)
        raw.send(b"0\r\n\r\n")
        response = raw.read_response()
        diff = same_answer("chunked infer", response, reference[3])
        # The stream must still be in step: a plain request on the same connection.
        raw.send(request_bytes("POST", INFER_PATH, bodies[1]))
        same_answer("request after the chunked one", raw.read_response(), reference[1])
        raw.close()
        return (f"{len(pieces)} chunks (one with an extension), {len(body)} bytes -> {response.status}, "
                f"|diff| {diff:.1e}; next request on the connection answered")

    def expect_continue():
        raw = Raw(address)
        body = bodies[2]
        raw.send(f"POST {INFER_PATH} HTTP/1.1\r\nHost: ortkit\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n".encode())
        start = time.monotonic()
        interim = raw.read_response()
        waited = time.monotonic() - start
        if interim.status != 100:
            raise AssertionError(f"expected 100 Continue before the body, got {interim!r}")
        raw.send(body)
        response = raw.read_response()
        same_answer("infer after 100 Continue", response, reference[2])
        raw.close()
        return f"headers -> {interim.version} 100 after {waited * 1000:.1f} ms; body -> {response.status}"

    def expect_over_limit():
        # The declared length is over the limit: the answer is 413 at once, without 100 Continue,
        # so that the client need not send the body at all.
        length = (args.limit_mb << 20) + 1
        message, end = refused(address, "Expect with a body over the limit",
                               f"POST {INFER_PATH} HTTP/1.1\r\nHost: ortkit\r\nContent-Length: {length}\r\n"
                               f"Expect: 100-continue\r\n\r\n".encode(), 413)
        return f"Content-Length {length} + Expect -> 413 (no 100), then {end}: {message[:60]}"

    def curl_expect():
        # curl 7.88 sends Expect: 100-continue on its own only for bodies over 1 MiB (older curls:
        # over 1 KiB), and waits a second for the 100 before sending the body anyway.
        observed = []
        for pad_to in (0, (1 << 20) + (64 << 10)):
            body = infer_body(2, length=128)
            if pad_to:  # JSON whitespace: the same request, only larger
                body = body[:-1] + b" " * (pad_to - len(body)) + b"}"
            ref = outputs_of(single(address, body))
            start = time.monotonic()
            result = subprocess.run(
                ["curl", "-sS", "-v", "--max-time", "10", "-X", "POST", "-H", "Content-Type: application/json",
                 "--data-binary", "@-", f"http://{address}{INFER_PATH}"],
                input=body, capture_output=True, timeout=20)
            elapsed = time.monotonic() - start
            trace = result.stderr.decode(errors="replace")
            if result.returncode != 0:
                raise AssertionError(f"curl ({len(body)} bytes) exited {result.returncode}: {trace[-400:]}")
            same_answer(f"curl infer ({len(body)} bytes)", Response("HTTP/1.1", 200, {}, result.stdout), ref)
            sent_expect = "> Expect: 100-continue" in trace
            got_continue = "< HTTP/1.1 100 Continue" in trace
            if sent_expect and not got_continue:
                raise AssertionError(f"curl sent Expect with {len(body)} bytes but got no 100 Continue: {trace[-400:]}")
            if sent_expect and elapsed >= 0.9:
                raise AssertionError(f"curl took {elapsed:.2f} s (it waits 1 s when no 100 Continue comes)")
            if pad_to and not sent_expect:
                raise AssertionError(f"curl did not send Expect: 100-continue with a {len(body)}-byte body")
            observed.append(f"{len(body)} bytes: {'Expect -> 100 Continue -> ' if sent_expect else 'no Expect, '}"
                            f"200 in {elapsed * 1000:.0f} ms")
        return "; ".join(observed)

    def wrong_method():
        raw = Raw(address)
        raw.send(request_bytes("GET", INFER_PATH))
        get_infer = raw.read_response()
        m1 = error_message("GET on infer", get_infer, 405, ["POST", "GET"])
        raw.send(request_bytes("POST", "/v2/health/live"))
        post_live = raw.read_response()
        m2 = error_message("POST on live", post_live, 405, ["GET", "POST"])
        raw.send(request_bytes("POST", INFER_PATH, bodies[1]))
        same_answer("infer after two 405s", raw.read_response(), reference[1])
        raw.close()
        return f"405 '{m1}'; 405 '{m2}'; connection still serves"

    def unknown_path():
        raw = Raw(address)
        raw.send(request_bytes("GET", "/v2/no/such/thing"))
        response = raw.read_response()
        message = error_message("unknown path", response, 404, ["/v2/no/such/thing"])
        raw.close()
        return f"404 '{message}'"

    def big_header():
        filler = "a" * (70 << 10)
        message, end = refused(address, "70 KiB header",
                               f"GET /v2/health/live HTTP/1.1\r\nHost: ortkit\r\nX-Filler: {filler}\r\n\r\n".encode(),
                               431)
        return f"70 KiB header -> 431 '{message}', then {end}"

    def garbage():
        message, end = refused(address, "malformed request line", b"GARBAGE\r\n\r\n", 400)
        return f"'GARBAGE' -> 400 '{message}', then {end}"

    def oversized(chunked_body):
        def check():
            size = (args.limit_mb << 20) * 4
            raw = Raw(address, timeout=20)
            if chunked_body:
                piece = b" " * (1 << 20)
                raw.send(f"POST {INFER_PATH} HTTP/1.1\r\nHost: ortkit\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
                for _ in range(size >> 20):
                    raw.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                raw.send(b"0\r\n\r\n")
            else:
                raw.send(request_bytes("POST", INFER_PATH, b"[" + b" " * (size - 2) + b"]"))
            # The whole body is sent before reading: the server must drain it, not reset.
            response = raw.read_response()
            message = error_message("body over the limit", response, 413)
            end = expect_end("413", raw)
            raw.close()
            kind = "chunked" if chunked_body else "Content-Length"
            return (f"{size >> 20} MiB {kind} body (limit {args.limit_mb} MiB), all sent -> 413 read, "
                    f"then {end}: {message[:50]}")
        return check

    def idle_stall():
        with Background(address, bodies[1], reference[1]) as other:
            time.sleep(0.2)
            raw = Raw(address, timeout=10)
            raw.send(f"POST {INFER_PATH} HTTP/1.1\r\nHost: ortkit\r\nContent-".encode())
            stalled = time.monotonic()
            end = raw.end(timeout=8)
            closed_after = time.monotonic() - stalled
            raw.close()
            time.sleep(0.2)
        if end not in ("closed", "reset"):
            raise AssertionError(f"a client stalled mid-header is still '{end}' after {closed_after:.1f} s")
        low, high = args.idle_timeout_s * 0.95, args.idle_timeout_s + 2.0
        if not low <= closed_after <= high:
            raise AssertionError(f"the stalled client was {end} after {closed_after:.2f} s, "
                                 f"expected {low:.1f}-{high:.1f} s")
        return f"half a header, then nothing: {end} after {closed_after:.2f} s; {other.verdict()}"

    checks.run("pipelining", pipelining)
    checks.run("HTTP/1.0 without keep-alive", http10)
    checks.run("Connection: close", connection_close)
    checks.run("chunked request body", chunked)
    checks.run("Expect: 100-continue", expect_continue)
    checks.run("Expect, body over the limit", expect_over_limit)
    checks.run("curl, 1.7 KiB and 1.1 MiB bodies", curl_expect)
    checks.run("wrong method -> 405", wrong_method)
    checks.run("unknown path -> 404", unknown_path)
    checks.run("header > 64 KiB -> 431", big_header)
    checks.run("malformed request line -> 400", garbage)
    checks.run("body over the limit -> 413", oversized(False))
    checks.run("chunked body over limit -> 413", oversized(True))
    checks.run("idle timeout mid-header", idle_stall)
    return 1 if checks.failures else 0


# --- limits ---------------------------------------------------------------------------------------


def with_reference(args):
    """A mode's starting point: its checks, the server, and the reference answers the protocol mode wrote."""
    reference = load_reference(args.reference)
    seeds = sorted(reference)
    return Checks(), args.http, reference, seeds, {s: infer_body(s) for s in seeds}


def run_limits(args):
    checks, address, reference, seeds, bodies = with_reference(args)

    def connection_limit():
        clients = 2 * args.max_connections
        raws = [Raw(address, timeout=15) for _ in range(clients)]  # the kernel completes every handshake
        for i, raw in enumerate(raws):
            raw.send(request_bytes("POST", INFER_PATH, bodies[seeds[i % len(seeds)]]))
        answered = {}

        def collect(wait_s):
            deadline = time.monotonic() + wait_s
            while len(answered) < clients and time.monotonic() < deadline:
                pending = [r for r in raws if r not in answered]
                readable, _, _ = select.select([r.sock for r in pending], [], [], 0.1)
                for raw in pending:
                    if raw.sock in readable:
                        answered[raw] = raw.read_response()

        collect(1.5)
        first = len(answered)
        for raw in list(answered):
            raw.close()  # frees the server's slots: the waiting clients are accepted
        collect(10)
        if len(answered) != clients:
            raise AssertionError(f"{len(answered)} of {clients} clients got answers ({first} before the first closed)")
        for i, raw in enumerate(raws):
            same_answer(f"client {i}", answered[raw], reference[seeds[i % len(seeds)]])
            raw.close()
        if first != args.max_connections:
            raise AssertionError(f"{first} clients were answered while all {clients} held their connections open, "
                                 f"expected exactly the limit of {args.max_connections}")
        return (f"{clients} clients, limit {args.max_connections}: {first} answered while all held on, "
                f"the other {clients - first} once those closed; all correct")

    def slow_reader():
        count = 200
        slow = Raw(address, timeout=30, rcvbuf=4096)
        order = [seeds[i % len(seeds)] for i in range(count)]
        long_bodies = {s: infer_body(s, length=16) for s in seeds}
        long_reference = {s: outputs_of(single(address, long_bodies[s])) for s in seeds}
        payload = b"".join(request_bytes("POST", INFER_PATH, long_bodies[s]) for s in order)
        sender = threading.Thread(target=slow.send, args=(payload,))
        with Background(address, bodies[seeds[0]], reference[seeds[0]]) as other:
            sender.start()
            time.sleep(2.0)  # the slow client reads nothing meanwhile
            server_queues = queues(int(address.rsplit(":", 1)[1]), slow.sock.getsockname()[1])
        sender.join(timeout=30)
        if sender.is_alive():
            raise AssertionError("the slow client could not even send its requests")
        verdict = other.verdict()
        # The server's answers must really have been stuck behind the slow reader.
        if server_queues is None or server_queues[0] < (64 << 10):
            raise AssertionError(f"the server's socket to the slow client has send/receive queues of {server_queues}: "
                                 "its writes never stalled, so the check proves nothing")
        start = time.monotonic()
        responses = [slow.read_response() for _ in order]
        for i, (s, r) in enumerate(zip(order, responses)):
            same_answer(f"slow reader's answer {i}", r, long_reference[s])
        slow.close()
        total = sum(len(r.body) for r in responses)
        return (f"{count} pipelined requests ({len(payload) >> 10} KiB), {total >> 20} MiB of answers unread for 2 s: "
                f"the server's send queue to it held {server_queues[0] >> 10} KiB; "
                f"{verdict}; then all {count} read in order in {time.monotonic() - start:.2f} s")

    checks.run("connection limit", connection_limit)
    checks.run("slow reader", slow_reader)
    return 1 if checks.failures else 0


# --- smoke ----------------------------------------------------------------------------------------


def run_smoke(args):
    checks, address, reference, seeds, bodies = with_reference(args)

    def infers():
        raw = Raw(address)
        diffs = []
        for s in seeds + seeds:
            raw.send(request_bytes("POST", INFER_PATH, bodies[s]))
            diffs.append(same_answer(f"infer (seed {s})", raw.read_response(), reference[s]))
        raw.send(b"".join(request_bytes("POST", INFER_PATH, bodies[s]) for s in seeds))
        for s in seeds:
            diffs.append(same_answer(f"pipelined infer (seed {s})", raw.read_response(), reference[s]))
        raw.close()
        return f"{len(diffs)} infers (6 one by one, 3 pipelined) equal the reference (max |diff| {max(diffs):.1e})"

    checks.run(f"{args.label}", infers)
    return 1 if checks.failures else 0


# --- drain ----------------------------------------------------------------------------------------


def exited(pid):
    """Whether `pid` has ended (a zombie waiting for its parent counts)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def run_drain(args):
    checks, address, reference, seeds, bodies = with_reference(args)

    def half_request_then_sigterm():
        raw = Raw(address)
        request = request_bytes("POST", INFER_PATH, bodies[seeds[0]])
        raw.send(request[: len(request) // 2])
        time.sleep(0.2)
        start = time.monotonic()
        os.kill(args.server_pid, signal.SIGTERM)
        time.sleep(0.2)
        raw.send(request[len(request) // 2 :])
        answer = raw.read_response()
        diff = same_answer("the request half sent before SIGTERM", answer, reference[seeds[0]])
        if answer.headers.get("connection", "").lower() != "close":
            raise AssertionError(f"the answer during the drain says Connection: {answer.headers.get('connection')}")
        # The client keeps its socket open and never reads again: the server must still exit.
        while not exited(args.server_pid):
            if time.monotonic() - start > 10:
                raise AssertionError("the server is still running 10 s after SIGTERM, held by an open client")
            time.sleep(0.05)
        waited = time.monotonic() - start
        raw.close()
        return (f"answered (max |diff| {diff:.1e}, Connection: close); the server exited {waited:.1f} s after "
                f"SIGTERM although the client never closed")

    checks.run("SIGTERM mid-request, client never closes", half_request_then_sigterm)
    return 1 if checks.failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["protocol", "limits", "smoke", "drain"])
    parser.add_argument("--http", required=True, help="HOST:PORT of the server")
    parser.add_argument("--reference", required=True, help="the reference answers (protocol writes them)")
    parser.add_argument("--limit-mb", type=int, default=2, help="the server's --max-body-mb")
    parser.add_argument("--idle-timeout-s", type=float, default=2, help="the server's --http-idle-timeout-s")
    parser.add_argument("--max-connections", type=int, default=4, help="the server's --http-max-connections")
    parser.add_argument("--label", default="smoke")
    parser.add_argument("--server-pid", type=int, help="drain: the server to send SIGTERM")
    args = parser.parse_args()
    modes = {"protocol": run_protocol, "limits": run_limits, "smoke": run_smoke, "drain": run_drain}
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
