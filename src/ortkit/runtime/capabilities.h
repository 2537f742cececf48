#pragma once
// What the installed ONNX Runtime can do, found by asking it rather than by version tables.

#include "ortkit/runtime/runtime.h"

namespace ortkit {

/// The highest ai.onnx opset the installed ONNX Runtime accepts: creates CPU sessions for a
/// one-node Identity model stamped with opsets 30, 29, ... and returns the first that loads; 0
/// when none from 30 down to 1 does. Costs a few milliseconds (one refused session per opset
/// above the answer, then one that loads); nothing is cached, so callers keep the number.
/// Thread-safe as Session::Create is.
int ProbeMaxSupportedOpset(Runtime& runtime);

}  // namespace ortkit
