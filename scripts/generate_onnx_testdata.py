"""Writes the ONNX backend test cases of the installed `onnx` package to a folder.

The `onnx` wheel ships the cases as Python (onnx/backend/test/case) but only some of their data;
its own `backend-test-tools generate-data` writes the model cases alone. This writes the node
cases too, in the same layout (KIND/CASE/model.onnx + test_data_set_N/{input,output}_K.pb), with
numpy's generator seeded first so that every machine writes the same bytes.

    python generate_onnx_testdata.py OUTPUT_FOLDER
"""

import argparse
import sys

import numpy as np


def main() -> None:
    np.random.seed(0)
    from onnx.backend.test import cmd_tools
    import onnx.backend.test.case.model as model_cases
    import onnx.backend.test.case.node as node_cases

    cases = node_cases.collect_testcases() + model_cases.collect_testcases()
    # generate_data() writes what model_cases.collect_testcases() returns: hand it every case.
    model_cases.collect_testcases = lambda: cases
    cmd_tools.generate_data(argparse.Namespace(output=sys.argv[1]))


if __name__ == "__main__":
    main()
