#pragma once
// The body of the model-loader fuzzer, shared by the libFuzzer entry point (model_fuzzer.cpp,
// clang only) and the corpus replay test (replay_main.cpp, any compiler), so every committed
// crash reproducer is replayed by the ordinary test suite.

#include <string_view>

namespace ortkit::fuzz {

/// Runs everything ortkit does to a model file short of ONNX Runtime over `bytes`: parsing,
/// the external-data listing and checks, the ONNX checker, shape inference, the lint rules,
/// the inspect summary, and the JSON rendering of every result. Returns normally for any
/// input; a crash, sanitizer report, hang or escaping exception is the finding.
void RunModelFuzzBody(std::string_view bytes);

}  // namespace ortkit::fuzz
