#pragma once
// ONNX Runtime's C++ objects behind Runtime and Session, for the files of runtime/ (and for the
// benchmarks under bench/ that time ortkit's paths against the raw API). scripts/check_layers.py
// refuses ONNX Runtime's headers and Ort:: types everywhere else in src/ and tools/.

#include <onnxruntime_cxx_api.h>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// The environment every session of `runtime` is created in; lives as long as `runtime`.
Ort::Env& OrtEnv(Runtime& runtime);
/// The session `session` wraps; lives as long as `session`.
Ort::Session& OrtSession(Session& session);

/// Builds Ort::SessionOptions from `config`; fails for an unknown or unavailable provider.
Result<Ort::SessionOptions> MakeSessionOptions(const SessionConfig& config);

/// Wraps `tensor` for the runtime: numeric tensors without a copy (the tensor must outlive the
/// Run call), strings copied through `allocator`. Throws Ort::Exception as the C++ API does.
Ort::Value ToOrtValue(const Tensor& tensor, const Ort::MemoryInfo& memory, Ort::AllocatorWithDefaultOptions& allocator);

}  // namespace ortkit
