#pragma once
// Translation of ONNX Runtime's error messages into diagnoses: a table of known messages, each
// with the code it maps to and how to pull the node, op type and input names out of the text.

#include <string_view>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// Turns a runtime message into a diagnosis. `context` supplies what the caller knows (file,
/// provider); fields found in the message (node name, op type, input) are added to it.
/// Unknown messages become runtime.load-failed or runtime.run-failed (see `during_run`).
Diagnosis TranslateRuntimeError(std::string_view message, const Location& context = {}, bool during_run = false);

}  // namespace ortkit
