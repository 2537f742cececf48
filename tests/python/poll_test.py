"""--model-control poll as a user relies on it, against `ortkit serve --model-control poll --poll-seconds 1`.

Run by tests/e2e/serve_poll.sh:
  python poll_test.py --write-repository DIR --staged FOLDER
      writes the repository (adder/1/model.onnx: y = x + 1, with 4 MB of weights so that a copy in chunks takes
      several poll periods) and, in FOLDER, the copies the test brings in later (y = x + 2, y = x + 5)
  python poll_test.py --http HOST:PORT --repository DIR --staged FOLDER --log SERVE_LOG
      the checks, in order; prints PASS at the end
"""

import argparse
import os
import shutil
import sys
import threading
import time

import numpy as np
import onnx
import tritonclient.http as httpclient
from onnx import TensorProto, helper, numpy_helper
from tritonclient.utils import InferenceServerException


def adder(addend):
    """y = x + w[0:4], FP32 x [-1, 4], w one million values of `addend`."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    weights = numpy_helper.from_array(np.full(1 << 20, addend, dtype=np.float32), "w")
    starts = numpy_helper.from_array(np.array([0], dtype=np.int64), "starts")
    ends = numpy_helper.from_array(np.array([4], dtype=np.int64), "ends")
    nodes = [helper.make_node("Slice", ["w", "starts", "ends"], ["first"]), helper.make_node("Add", ["x", "first"], ["y"])]
    graph = helper.make_graph(nodes, "adder", [x], [y], initializer=[weights, starts, ends])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def infer(client, model):
    x = httpclient.InferInput("x", [1, 4], "FP32")
    x.set_data_from_numpy(np.full((1, 4), 10, dtype=np.float32))
    return float(client.infer(model, [x]).as_numpy("y")[0, 0])


def wait_for(what, check, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    sys.exit(f"FAIL: {what} within {seconds} s")


def answer_or_none(client, model):
    try:
        return infer(client, model)
    except InferenceServerException:
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-repository")
    parser.add_argument("--staged")
    parser.add_argument("--http")
    parser.add_argument("--repository")
    parser.add_argument("--log")
    args = parser.parse_args()
    if args.write_repository:
        os.makedirs(os.path.join(args.write_repository, "adder", "1"))
        onnx.save(adder(1), os.path.join(args.write_repository, "adder", "1", "model.onnx"))
        os.makedirs(args.staged)
        onnx.save(adder(2), os.path.join(args.staged, "two.onnx"))
        onnx.save(adder(5), os.path.join(args.staged, "five.onnx"))
        return 0

    client = httpclient.InferenceServerClient(args.http)
    assert infer(client, "adder") == 11

    # Requests run all along; a copy of y = x + 2 arrives over the served file in 40 chunks, 0.15 s apart:
    # six poll periods during which the file is never the same twice.
    stop = threading.Event()
    answers, errors = [], []

    def load():
        mine = httpclient.InferenceServerClient(args.http)
        while not stop.is_set():
            try:
                answers.append(infer(mine, "adder"))
            except Exception as e:  # noqa: BLE001 - every failure is the finding
                errors.append(repr(e))
        mine.close()

    thread = threading.Thread(target=load)
    thread.start()
    with open(os.path.join(args.staged, "two.onnx"), "rb") as f:
        data = f.read()
    chunk = len(data) // 40 + 1
    started = time.monotonic()
    with open(os.path.join(args.repository, "adder", "1", "model.onnx"), "r+b") as out:
        out.truncate(0)
        for i in range(0, len(data), chunk):
            out.write(data[i:i + chunk])
            out.flush()
            time.sleep(0.15)
    copied = time.monotonic() - started
    wait_for("the completed copy serves", lambda: answer_or_none(client, "adder") == 12)
    stop.set()
    thread.join()
    with open(args.log) as f:
        log = f.read()
    assert "did not load" not in log, "a half-written copy was loaded:\n" + log
    assert "model 'adder': its files changed and stayed the same for 1 s: reloaded" in log, log
    assert errors == [], errors[:3]
    assert set(answers) <= {11.0, 12.0}, set(answers)
    print(f"a copy written in chunks over {copied:.1f} s (1 s polls) was loaded once, complete; "
          f"{len(answers)} requests meanwhile, none failed")

    # A model folder renamed into place (written beside it first, hidden, as rsync and deploy tools do) loads;
    # removed, it unloads.
    hidden = os.path.join(args.repository, ".fresh.partial")
    os.makedirs(os.path.join(hidden, "1"))
    shutil.copy(os.path.join(args.staged, "five.onnx"), os.path.join(hidden, "1", "model.onnx"))
    os.rename(hidden, os.path.join(args.repository, "fresh"))
    wait_for("a new model folder loads", lambda: answer_or_none(client, "fresh") == 15)
    shutil.rmtree(os.path.join(args.repository, "fresh"))
    wait_for("a removed model folder unloads", lambda: not client.is_model_ready("fresh"))
    print("a model folder renamed into place loaded; removed, it unloaded")

    # The repository's files decide: the API's load is refused, the index answers.
    try:
        client.load_model("adder")
        sys.exit("FAIL: load was answered in poll mode")
    except InferenceServerException as e:
        assert e.status() == "400" and "--model-control poll" in e.message(), e.message()
    index = {row["name"]: row for row in client.get_model_repository_index()}
    assert index["adder"]["state"] == "READY", index
    client.close()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
