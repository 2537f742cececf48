"""tritonclient (HTTP and gRPC) against a running `ortkit serve`: the real clients of the ecosystem.

Run by tests/e2e/serve_tritonclient.sh, which starts the server on free ports with two models:
  bert     ortkit_make_model bert-tiny: INT64 input_ids/attention_mask/token_type_ids [-1, -1] -> FP32 [-1, -1, H]
  encoder  ortkit_make_model demo-encoder: FP32 x [-1, -1, 64] -> FP32 y
Every answer is checked against onnxruntime run in this process on the same model file.

  python tritonclient_test.py --http HOST:PORT --grpc HOST:PORT --bert FILE --encoder FILE [-v]
"""

import argparse
import sys
import threading
import unittest

import numpy as np
import onnxruntime as ort
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

ARGS = None
TOLERANCE = dict(rtol=1e-4, atol=1e-4)


def bert_inputs(rows, length, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 100, size=(rows, length), dtype=np.int64)
    mask = np.ones((rows, length), dtype=np.int64)
    types = np.zeros((rows, length), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


class Reference:
    """onnxruntime on the same files: the oracle for every response."""

    sessions = {}

    @classmethod
    def run(cls, path, feeds):
        if path not in cls.sessions:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            cls.sessions[path] = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        return cls.sessions[path].run(None, feeds)[0]


class HttpTest(unittest.TestCase):
    def setUp(self):
        self.client = httpclient.InferenceServerClient(ARGS.http)

    def tearDown(self):
        self.client.close()

    def test_server_health_and_metadata(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        metadata = self.client.get_server_metadata()
        self.assertIn("name", metadata)
        self.assertIn("version", metadata)
        self.assertTrue(self.client.is_model_ready("bert"))
        self.assertTrue(self.client.is_model_ready("encoder"))
        self.assertFalse(self.client.is_model_ready("no_such_model"))

    def test_model_metadata_datatypes_and_dynamic_dims(self):
        bert = self.client.get_model_metadata("bert")
        self.assertEqual(bert["name"], "bert")
        inputs = {t["name"]: t for t in bert["inputs"]}
        self.assertEqual(set(inputs), {"input_ids", "attention_mask", "token_type_ids"})
        for tensor in inputs.values():
            self.assertEqual(tensor["datatype"], "INT64")
            self.assertEqual(tensor["shape"], [-1, -1])
        (output,) = bert["outputs"]
        self.assertEqual(output["datatype"], "FP32")
        self.assertEqual(output["shape"][:2], [-1, -1])
        self.assertGreater(output["shape"][2], 0)
        encoder = self.client.get_model_metadata("encoder")
        self.assertEqual(encoder["inputs"][0]["datatype"], "FP32")
        self.assertEqual(encoder["inputs"][0]["shape"], [-1, -1, 64])

    def _infer_bert(self, feeds, binary_in, binary_out):
        inputs = []
        for name, value in feeds.items():
            tensor = httpclient.InferInput(name, list(value.shape), "INT64")
            tensor.set_data_from_numpy(value, binary_data=binary_in)
            inputs.append(tensor)
        outputs = [httpclient.InferRequestedOutput("last_hidden_state", binary_data=binary_out)]
        return self.client.infer("bert", inputs, outputs=outputs).as_numpy("last_hidden_state")

    def test_infer_json_binary_and_mixed(self):
        for binary_in, binary_out, seed in [(False, False, 1), (True, True, 2), (True, False, 3), (False, True, 4)]:
            with self.subTest(binary_in=binary_in, binary_out=binary_out):
                feeds = bert_inputs(1, 8, seed)
                got = self._infer_bert(feeds, binary_in, binary_out)
                np.testing.assert_allclose(got, Reference.run(ARGS.bert, feeds), **TOLERANCE)

    def test_infer_several_rows_and_lengths(self):
        for rows, length in [(3, 5), (2, 17), (1, 1)]:
            with self.subTest(rows=rows, length=length):
                feeds = bert_inputs(rows, length, rows * 100 + length)
                got = self._infer_bert(feeds, True, True)
                self.assertEqual(got.shape[:2], (rows, length))
                np.testing.assert_allclose(got, Reference.run(ARGS.bert, feeds), **TOLERANCE)

    def test_infer_fp32_model(self):
        x = np.random.default_rng(5).standard_normal((2, 6, 64)).astype(np.float32)
        tensor = httpclient.InferInput("x", list(x.shape), "FP32")
        tensor.set_data_from_numpy(x, binary_data=True)
        got = self.client.infer("encoder", [tensor]).as_numpy("y")
        np.testing.assert_allclose(got, Reference.run(ARGS.encoder, {"x": x}), **TOLERANCE)

    def _expect_error(self, model, inputs, statuses, words):
        with self.assertRaises(InferenceServerException) as caught:
            self.client.infer(model, inputs)
        error = caught.exception
        self.assertIn(str(error.status()), statuses, error.message())
        for word in words:
            self.assertIn(word, error.message())

    def test_errors(self):
        feeds = bert_inputs(1, 4, 9)

        def tensors(overrides=None, drop=None, datatype=None):
            out = []
            for name, value in feeds.items():
                if name == drop:
                    continue
                value = (overrides or {}).get(name, value)
                dt = datatype if (datatype and name == "input_ids") else "INT64"
                tensor = httpclient.InferInput(name, list(value.shape), dt)
                tensor.set_data_from_numpy(value, binary_data=True)
                out.append(tensor)
            return out

        self._expect_error("no_such_model", tensors(), {"400", "404"}, ["no_such_model"])
        self._expect_error("bert", tensors(drop="attention_mask"), {"400"}, ["attention_mask"])
        self._expect_error("bert", tensors(overrides={"input_ids": feeds["input_ids"].astype(np.float32)}, datatype="FP32"),
                           {"400"}, ["input_ids"])
        self._expect_error("bert", tensors(overrides={"input_ids": feeds["input_ids"].reshape(1, 2, 2)}), {"400"},
                           ["input_ids"])
        # Still serving after the errors.
        np.testing.assert_allclose(self._infer_bert(feeds, True, True), Reference.run(ARGS.bert, feeds), **TOLERANCE)


class GrpcTest(unittest.TestCase):
    def setUp(self):
        self.client = grpcclient.InferenceServerClient(ARGS.grpc)

    def tearDown(self):
        self.client.close()

    def test_server_health_and_metadata(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        self.assertTrue(self.client.get_server_metadata().name)
        self.assertTrue(self.client.is_model_ready("bert"))
        # An unknown model is not ready: ready=false with an OK status, as Triton answers.
        self.assertFalse(self.client.is_model_ready("no_such_model"))
        self.assertFalse(self.client.is_model_ready("bert", model_version="7"))

    def test_model_metadata_datatypes_and_dynamic_dims(self):
        bert = self.client.get_model_metadata("bert")
        self.assertEqual(bert.name, "bert")
        for tensor in bert.inputs:
            self.assertEqual(tensor.datatype, "INT64")
            self.assertEqual(list(tensor.shape), [-1, -1])
        self.assertEqual(bert.outputs[0].datatype, "FP32")
        encoder = self.client.get_model_metadata("encoder")
        self.assertEqual(list(encoder.inputs[0].shape), [-1, -1, 64])
        self.assertEqual(encoder.inputs[0].datatype, "FP32")

    def _infer_bert(self, feeds, model="bert"):
        inputs = []
        for name, value in feeds.items():
            tensor = grpcclient.InferInput(name, list(value.shape), "INT64")
            tensor.set_data_from_numpy(value)
            inputs.append(tensor)
        result = self.client.infer(model, inputs, outputs=[grpcclient.InferRequestedOutput("last_hidden_state")])
        return result.as_numpy("last_hidden_state")

    def test_infer(self):
        for rows, length in [(1, 8), (3, 13)]:
            with self.subTest(rows=rows, length=length):
                feeds = bert_inputs(rows, length, 40 + length)
                np.testing.assert_allclose(self._infer_bert(feeds), Reference.run(ARGS.bert, feeds), **TOLERANCE)
        x = np.random.default_rng(6).standard_normal((1, 3, 64)).astype(np.float32)
        tensor = grpcclient.InferInput("x", list(x.shape), "FP32")
        tensor.set_data_from_numpy(x)
        np.testing.assert_allclose(self.client.infer("encoder", [tensor]).as_numpy("y"),
                                   Reference.run(ARGS.encoder, {"x": x}), **TOLERANCE)

    def test_concurrent_calls_each_get_their_own_answer(self):
        # 200 calls in flight from one client (async_infer): batched together, each answered by a
        # worker thread; every answer must be its own request's.
        cases = [bert_inputs(1 + i % 3, 4 + i % 9, 1000 + i) for i in range(200)]
        answers = [None] * len(cases)
        done = threading.Semaphore(0)

        def keep(index):
            def callback(result, error):
                answers[index] = error if error else result.as_numpy("last_hidden_state")
                done.release()
            return callback

        for i, feeds in enumerate(cases):
            inputs = []
            for name, value in feeds.items():
                tensor = grpcclient.InferInput(name, list(value.shape), "INT64")
                tensor.set_data_from_numpy(value)
                inputs.append(tensor)
            self.client.async_infer("bert", inputs, keep(i),
                                    outputs=[grpcclient.InferRequestedOutput("last_hidden_state")])
        for _ in cases:
            self.assertTrue(done.acquire(timeout=60), "a call was never answered")
        for feeds, answer in zip(cases, answers):
            self.assertNotIsInstance(answer, InferenceServerException, str(answer))
            np.testing.assert_allclose(answer, Reference.run(ARGS.bert, feeds), **TOLERANCE)

    def test_errors(self):
        feeds = bert_inputs(1, 4, 10)
        with self.assertRaises(InferenceServerException) as caught:
            self._infer_bert(feeds, model="no_such_model")
        self.assertIn(caught.exception.status(), {"StatusCode.NOT_FOUND", "StatusCode.INVALID_ARGUMENT"})
        self.assertIn("no_such_model", caught.exception.message())

        partial = {k: v for k, v in feeds.items() if k != "token_type_ids"}
        with self.assertRaises(InferenceServerException) as caught:
            self._infer_bert(partial)
        self.assertEqual(caught.exception.status(), "StatusCode.INVALID_ARGUMENT")
        self.assertIn("token_type_ids", caught.exception.message())

        wrong = grpcclient.InferInput("input_ids", [1, 4], "FP32")
        wrong.set_data_from_numpy(feeds["input_ids"].astype(np.float32))
        others = []
        for name in ("attention_mask", "token_type_ids"):
            tensor = grpcclient.InferInput(name, [1, 4], "INT64")
            tensor.set_data_from_numpy(feeds[name])
            others.append(tensor)
        with self.assertRaises(InferenceServerException) as caught:
            self.client.infer("bert", [wrong] + others)
        self.assertEqual(caught.exception.status(), "StatusCode.INVALID_ARGUMENT")
        self.assertIn("input_ids", caught.exception.message())
        np.testing.assert_allclose(self._infer_bert(feeds), Reference.run(ARGS.bert, feeds), **TOLERANCE)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--bert", required=True)
    parser.add_argument("--encoder", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
