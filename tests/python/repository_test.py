"""tritonclient's repository calls (HTTP and gRPC) against `ortkit serve --model-control explicit --repository-api`.

Run by tests/e2e/serve_repository.sh:
  python repository_test.py --write-repository DIR
      writes the repository the server is started on:
        adder/1/model.onnx   y = x + 1, FP32 x [-1, 4] (loaded through the API)
        other/model.onnx     y = x + 1 (loaded at start with --load-model other)
        broken/1/model.onnx  not a model: its load fails with a reason in the index
        slow/model.onnx      y = x @ x^T, FP32 x [-1, 1024]: a load that warms up on a large batch takes a while
  python repository_test.py --http HOST:PORT --grpc HOST:PORT --repository DIR [-v]
      the tests, in order (they change what the server serves): index, load, load with a config
      override, load of a new version, a failed load that leaves the old copy serving, reloads while
      requests run (none may fail), unload, and the protocol's errors.
"""

import argparse
import json
import os
import shutil
import sys
import threading
import unittest

import numpy as np
import onnx
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from onnx import TensorProto, helper
from tritonclient.utils import InferenceServerException

ARGS = None


def adder_model(addend):
    """y = x + addend over FP32 x [-1, 4]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    constant = helper.make_tensor("addend", TensorProto.FLOAT, [1], [float(addend)])
    node = helper.make_node("Add", ["x", "addend"], ["y"])
    graph = helper.make_graph([node], "adder", [x], [y], initializer=[constant])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def write_model(path, addend):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(adder_model(addend), path)


def slow_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "batch"])
    nodes = [helper.make_node("Transpose", ["x"], ["xt"]), helper.make_node("MatMul", ["x", "xt"], ["y"])]
    graph = helper.make_graph(nodes, "slow", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def write_repository(root):
    os.makedirs(os.path.join(root, "slow"), exist_ok=True)
    onnx.save(slow_model(), os.path.join(root, "slow", "model.onnx"))
    write_model(os.path.join(root, "adder", "1", "model.onnx"), 1)
    write_model(os.path.join(root, "other", "model.onnx"), 1)
    os.makedirs(os.path.join(root, "broken", "1"), exist_ok=True)
    with open(os.path.join(root, "broken", "1", "model.onnx"), "wb") as f:
        f.write(b"not an onnx model")


def http_infer(client, model, value, version=""):
    x = httpclient.InferInput("x", [1, 4], "FP32")
    x.set_data_from_numpy(np.full((1, 4), value, dtype=np.float32))
    return client.infer(model, [x], model_version=version).as_numpy("y")[0, 0]


def grpc_infer(client, model, value, version=""):
    x = grpcclient.InferInput("x", [1, 4], "FP32")
    x.set_data_from_numpy(np.full((1, 4), value, dtype=np.float32))
    return client.infer(model, [x], model_version=version).as_numpy("y")[0, 0]


def rows(index):
    """The index by name (one row per name; the highest version's when several)."""
    return {row["name"]: row for row in index}


class RepositoryTest(unittest.TestCase):
    """Numbered: each test starts from what the one before left served."""

    def setUp(self):
        self.http = httpclient.InferenceServerClient(ARGS.http)
        self.grpc = grpcclient.InferenceServerClient(ARGS.grpc)
        self.adder = os.path.join(ARGS.repository, "adder")

    def tearDown(self):
        self.http.close()
        self.grpc.close()

    def grpc_index(self):
        return self.grpc.get_model_repository_index(as_json=True).get("models", [])

    def test_1_index_lists_every_model_with_the_loaded_one_ready(self):
        index = rows(self.http.get_model_repository_index())
        self.assertEqual(set(index), {"adder", "broken", "other", "slow"})
        self.assertEqual(index["other"]["state"], "READY")
        self.assertEqual(index["other"]["version"], "1")
        self.assertNotIn("state", index["adder"])  # never loaded: its name only, as Triton's
        grpc_index = rows(self.grpc_index())
        self.assertEqual(set(grpc_index), {"adder", "broken", "other", "slow"})
        self.assertEqual(grpc_index["other"]["state"], "READY")
        self.assertFalse(self.http.is_model_ready("adder"))

    def test_2_load_then_infer(self):
        self.http.load_model("adder")
        self.assertTrue(self.http.is_model_ready("adder"))
        self.assertEqual(http_infer(self.http, "adder", 10), 11)
        self.assertEqual(rows(self.http.get_model_repository_index())["adder"]["state"], "READY")

    def test_3_load_with_a_config_override(self):
        config = json.dumps({"instances": 2, "batching": {"max_batch_size": 4}})
        self.http.load_model("adder", config=config)
        served = self.http.get_model_config("adder")
        self.assertEqual(served["instances"], 2)
        self.assertEqual(served["max_batch_size"], 4)
        self.grpc.load_model("adder", config=json.dumps({"instances": 1}))
        self.assertEqual(self.http.get_model_config("adder")["instances"], 1)
        self.assertEqual(grpc_infer(self.grpc, "adder", 10), 11)

    def test_4_load_of_a_new_version(self):
        write_model(os.path.join(self.adder, "2", "model.onnx"), 2)
        self.grpc.load_model("adder")
        self.assertTrue(self.grpc.is_model_ready("adder", "2"))
        self.assertFalse(self.grpc.is_model_ready("adder", "1"))  # version_policy latest 1
        self.assertEqual(self.http.get_model_metadata("adder")["versions"], ["2"])
        self.assertEqual(http_infer(self.http, "adder", 10, version="2"), 12)
        self.assertEqual(grpc_infer(self.grpc, "adder", 10), 12)
        self.assertEqual(rows(self.http.get_model_repository_index())["adder"]["version"], "2")

    def test_5_a_failed_load_leaves_the_old_copy_serving_with_the_reason(self):
        with self.assertRaises(InferenceServerException) as failed:
            self.http.load_model("broken")
        self.assertIn("broken", failed.exception.message())
        broken = rows(self.http.get_model_repository_index())["broken"]
        self.assertEqual(broken["state"], "UNAVAILABLE")
        self.assertIn("version 1", broken["reason"])
        # ortkit check's file layer reads new files before a session is made: its diagnosis, code, cause and fix.
        self.assertIn("ortkit check's file layer", broken["reason"])
        self.assertIn("[file.text-file]", broken["reason"])
        self.assertIn("fix: ", broken["reason"])
        # A broken new version of a served model: the served one answers on.
        os.makedirs(os.path.join(self.adder, "3"))
        with open(os.path.join(self.adder, "3", "model.onnx"), "wb") as f:
            f.write(b"broken")
        with self.assertRaises(InferenceServerException):
            self.grpc.load_model("adder")
        self.assertEqual(http_infer(self.http, "adder", 10), 12)
        adder = rows(self.grpc_index())["adder"]
        self.assertEqual(adder["state"], "READY")
        self.assertIn("the last load failed", adder["reason"])
        shutil.rmtree(os.path.join(self.adder, "3"))

    def test_6_reloads_while_requests_run_lose_none(self):
        stop = threading.Event()
        answers, errors = [], []

        def client_loop(use_grpc):
            client = grpcclient.InferenceServerClient(ARGS.grpc) if use_grpc else httpclient.InferenceServerClient(ARGS.http)
            infer = grpc_infer if use_grpc else http_infer
            while not stop.is_set():
                try:
                    answers.append(float(infer(client, "adder", 10)))
                except Exception as e:  # noqa: BLE001 - every failure is the finding
                    errors.append(repr(e))
            client.close()

        threads = [threading.Thread(target=client_loop, args=(i % 2 == 0,)) for i in range(4)]
        for t in threads:
            t.start()
        try:
            for reload in range(20):
                version_2 = os.path.join(self.adder, "2")
                if reload % 2 == 0:
                    shutil.rmtree(version_2, ignore_errors=True)
                else:
                    write_model(os.path.join(version_2, "model.onnx"), 2)
                (self.grpc if reload % 2 else self.http).load_model("adder")
                stop.wait(0.02)  # requests queue and run on the copy just swapped in
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])
        self.assertGreater(len(answers), 40)
        self.assertTrue(set(answers) <= {11.0, 12.0}, set(answers))

    def test_7_unload(self):
        self.http.unload_model("other")
        self.assertFalse(self.http.is_model_ready("other"))
        other = rows(self.http.get_model_repository_index())["other"]
        self.assertEqual(other["state"], "UNAVAILABLE")
        self.assertEqual(other["reason"], "unloaded")
        with self.assertRaises(InferenceServerException):
            http_infer(self.http, "other", 1)
        self.grpc.unload_model("adder")
        self.assertFalse(self.grpc.is_model_ready("adder"))
        self.assertEqual([r["name"] for r in self.http.get_model_repository_index() if r.get("state") == "READY"], [])
        self.http.load_model("other")
        self.assertEqual(http_infer(self.http, "other", 1), 2)

    def test_8_protocol_errors(self):
        with self.assertRaises(InferenceServerException) as e:
            self.http.load_model("nowhere")
        self.assertEqual(e.exception.status(), "404")
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.load_model("nowhere")
        self.assertEqual(e.exception.status(), "StatusCode.NOT_FOUND")
        with self.assertRaises(InferenceServerException) as e:
            self.http.load_model("other", config="{not json")
        self.assertEqual(e.exception.status(), "400")
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.load_model("other", config=json.dumps({"instances": -1}))
        self.assertEqual(e.exception.status(), "StatusCode.INVALID_ARGUMENT")
        with self.assertRaises(InferenceServerException) as e:
            self.http.unload_model("nowhere")
        self.assertEqual(e.exception.status(), "404")
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.unload_model("nowhere")
        self.assertEqual(e.exception.status(), "StatusCode.NOT_FOUND")
        self.assertEqual(http_infer(self.http, "other", 1), 2)  # still serving

    def test_9_file_overrides_load_from_the_given_files_alone(self):
        """Triton's load with files: the model is read from those files only, the repository's left alone."""
        self.http.load_model("adder", config="{}", files={"file:4/model.onnx": adder_model(5).SerializeToString()})
        self.assertEqual(self.http.get_model_metadata("adder")["versions"], ["4"])
        self.assertEqual(http_infer(self.http, "adder", 10), 15)
        self.grpc.load_model("adder", config="{}", files={"file:1/model.onnx": adder_model(6).SerializeToString()})
        self.assertEqual(grpc_infer(self.grpc, "adder", 10), 16)
        self.assertFalse(os.path.exists(os.path.join(self.adder, "4")))  # nothing written into the repository
        for client, refused in ((self.http, "400"), (self.grpc, "StatusCode.INVALID_ARGUMENT")):
            for path in ("../other/model.onnx", "/tmp/model.onnx", "1/.hidden"):
                with self.assertRaises(InferenceServerException) as e:
                    client.load_model("adder", config="{}", files={"file:" + path: b"x"})
                self.assertEqual(e.exception.status(), refused)
                self.assertIn("file:", e.exception.message())
            with self.assertRaises(InferenceServerException) as e:  # files without a config, as Triton refuses
                client.load_model("adder", files={"file:1/model.onnx": adder_model(7).SerializeToString()})
            self.assertEqual(e.exception.status(), refused)
            self.assertIn('"config"', e.exception.message())
            with self.assertRaises(InferenceServerException) as e:  # a file without its prefix is no parameter of a load
                client.load_model("adder", config="{}", files={"1/model.onnx": b"x"})
            self.assertEqual(e.exception.status(), refused)
            self.assertIn("file:PATH", e.exception.message())
        self.assertEqual(http_infer(self.http, "adder", 10), 16)  # every refusal left the served copy alone
        self.http.load_model("adder")  # without files: the repository's own copy again
        self.assertNotEqual(http_infer(self.http, "adder", 10), 16)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-repository")
    parser.add_argument("--http")
    parser.add_argument("--grpc")
    parser.add_argument("--repository")
    ARGS, rest = parser.parse_known_args()
    if ARGS.write_repository:
        write_repository(ARGS.write_repository)
        return 0
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    sys.exit(main())
