#pragma once
// The body of the tensor-reader fuzzer (tensor_fuzzer.cpp), kept apart from the libFuzzer entry
// point so that ordinary builds can replay the seed corpus through it
// (TensorReaders.ReplayFuzzCorpus in tests/unit/tensor_io_test.cpp).

#include <string_view>

namespace ortkit::fuzz {

/// Reads `bytes` as an .npy, an .npz and a serialized TensorProto. Whatever parses is written
/// back and read again, and must come back identical. Returns normally for any input; a crash,
/// sanitizer report, hang, escaping exception or failed round trip (abort) is the finding.
void RunTensorFuzzBody(std::string_view bytes);

}  // namespace ortkit::fuzz
