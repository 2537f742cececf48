"""Load with faults against a running `ortkit serve`, on loopback, bounded in time: CONCURRENCY
clients for DURATION seconds, each sending a mix of valid infer requests, malformed ones, oversized
ones, requests it abandons half-way, and answers it reads slowly. Run by
tests/e2e/serve_load_fault.sh.

  python serve_load_fault.py --http HOST:PORT --pid PID --limit-mb N [--concurrency 64] [--duration 30]
      [--rss-bound-mb 400]

Asserts: the server never dies; its resident memory stays under the bound; every valid request
gets a 200 whose outputs equal the answer the same request got alone before the load; every bad
request gets its 4xx. Prints the counts and the peak memory; exit 1 on any failure.
"""

import argparse
import collections
import json
import random
import socket
import sys
import threading
import time

MODEL = "bert"
INFER = f"/v2/models/{MODEL}/infer"
VOCAB = 2000  # ortkit_make_model bert-tiny
TOLERANCE = 1e-4  # a batched run may round differently from a single one
SEEDS = 16


def infer_body(seed, length):
    ids = [(seed * 131 + i * 17) % VOCAB for i in range(length)]
    inputs = [{"name": "input_ids", "datatype": "INT64", "shape": [1, length], "data": ids},
              {"name": "attention_mask", "datatype": "INT64", "shape": [1, length], "data": [1] * length},
              {"name": "token_type_ids", "datatype": "INT64", "shape": [1, length], "data": [seed % 2] * length}]
    return json.dumps({"id": f"seed-{seed}", "inputs": inputs}).encode()


def request(body, path=INFER):
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def read_answer(s, slow=False):
    """Reads one HTTP answer from `s`; returns (status, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = s.recv(1 if slow else 65536)
        if not part:
            raise ConnectionError(f"closed after {len(data)} bytes")
        data += part
        if slow:
            time.sleep(0.002)
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        part = s.recv(min(512, length - len(body)) if slow else 65536)
        if not part:
            raise ConnectionError("closed inside the body")
        body += part
        if slow:
            time.sleep(0.001)
    return int(head.split(b" ")[1]), body


def outputs_of(body):
    return {o["name"]: o["data"] for o in json.loads(body)["outputs"]}


def same(a, b):
    return a.keys() == b.keys() and all(
        len(a[k]) == len(b[k]) and all(abs(x - y) <= TOLERANCE * (1 + abs(y)) for x, y in zip(a[k], b[k])) for k in a)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.failures = []

    def add(self, kind):
        with self.lock:
            self.counts[kind] += 1

    def fail(self, what):
        with self.lock:
            self.counts["failed"] += 1
            if len(self.failures) < 20:
                self.failures.append(what)


def connect(address):
    host, port = address.split(":")
    s = socket.create_connection((host, int(port)), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def client(index, address, deadline, reference, limit_bytes, stats):
    rng = random.Random(index)
    oversized = b"{" + b" " * (limit_bytes + 1024) + b"}"
    while time.monotonic() < deadline:
        kind = rng.choices(["valid", "malformed", "oversized", "abandoned", "slow"], [70, 10, 3, 10, 7])[0]
        try:
            s = connect(address)
        except OSError as e:
            stats.fail(f"connect: {e}")
            continue
        try:
            if kind in ("valid", "slow"):
                seed = rng.randrange(SEEDS)
                length = 4 + seed % 3 * 4
                s.sendall(request(infer_body(seed, length)))
                status, body = read_answer(s, slow=kind == "slow")
                if status != 200 or not same(outputs_of(body), reference[seed]):
                    stats.fail(f"{kind} seed {seed}: HTTP {status} {body[:120]!r}")
                else:
                    stats.add(kind)
            elif kind == "malformed":
                garbage = rng.choice([b"{not json", b'{"inputs": 3}', b'{"inputs": [{"name": "input_ids"}]}',
                                      json.dumps({"inputs": [{"name": "input_ids", "datatype": "FP32",
                                                              "shape": [1, 2], "data": [1]}]}).encode()])
                s.sendall(request(garbage))
                status, body = read_answer(s)
                (stats.add if status == 400 else stats.fail)(kind if status == 400 else f"malformed: HTTP {status}")
            elif kind == "oversized":
                s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(oversized)}\r\n\r\n".encode())
                try:
                    s.sendall(oversized)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server may answer 413 and close before the body ends
                status, _ = read_answer(s)
                (stats.add if status == 413 else stats.fail)(kind if status == 413 else f"oversized: HTTP {status}")
            else:  # abandoned half-way through the body
                whole = request(infer_body(rng.randrange(SEEDS), 8))
                s.sendall(whole[: rng.randrange(10, len(whole) - 1)])
                stats.add(kind)
        except (OSError, ConnectionError, ValueError) as e:
            stats.fail(f"{kind}: {type(e).__name__}: {e}")
        finally:
            s.close()


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--limit-mb", type=int, required=True, help="the server's --max-body-mb")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--rss-bound-mb", type=float, default=400)
    args = parser.parse_args()

    reference = {}
    for seed in range(SEEDS):
        s = connect(args.http)
        s.sendall(request(infer_body(seed, 4 + seed % 3 * 4)))
        status, body = read_answer(s)
        s.close()
        if status != 200:
            print(f"FAIL reference seed {seed}: HTTP {status} {body[:200]!r}")
            sys.exit(1)
        reference[seed] = outputs_of(body)
    start_rss = rss_mb(args.pid)

    stats = Stats()
    deadline = time.monotonic() + args.duration
    threads = [threading.Thread(target=client, args=(i, args.http, deadline, reference, args.limit_mb << 20, stats),
                                daemon=True) for i in range(args.concurrency)]
    for t in threads:
        t.start()
    peak = start_rss
    while any(t.is_alive() for t in threads):
        try:
            peak = max(peak, rss_mb(args.pid))
        except (OSError, RuntimeError):
            stats.fail("the server process is gone")
            break
        time.sleep(0.25)
    for t in threads:
        t.join(timeout=60)

    counts = dict(stats.counts)
    print(f"requests by kind: {json.dumps(counts, sort_keys=True)}")
    print(f"server RSS: {start_rss:.0f} MB before the load, peak {peak:.0f} MB (bound {args.rss_bound_mb:.0f} MB)")
    ok = True
    for failure in stats.failures:
        print(f"FAIL {failure}")
        ok = False
    if peak > args.rss_bound_mb:
        print(f"FAIL peak RSS {peak:.0f} MB over the bound of {args.rss_bound_mb:.0f} MB")
        ok = False
    if counts.get("valid", 0) < 100:
        print(f"FAIL only {counts.get('valid', 0)} valid requests answered")
        ok = False
    print("PASS" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
