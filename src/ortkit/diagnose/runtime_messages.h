#pragma once
// Translation of ONNX Runtime's error messages into diagnoses: a table of known messages, each
// with the code it maps to and how to pull the node, op type and input names out of the text.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// Turns a runtime message into a diagnosis. `context` supplies what the caller knows (usually
/// the file); fields found in the message (node name, op type, input) are added to it.
/// Unknown messages become runtime.load-failed or runtime.run-failed (see `during_run`).
///
/// The message may carry the runtime adapter's prefix ("loading 'm.onnx' on cpu: ", "running
/// the model on cpu: "), which names the provider, and the Python API's "[ONNXRuntimeError] : 1 :
/// FAIL : " prefix. The diagnosis message states the finding with the values found, followed by
/// the runtime's own words without prefixes, source locations and failed-assertion text.
Diagnosis TranslateRuntimeError(std::string_view message, const Location& context = {}, bool during_run = false);

/// The diagnosis for a failed session creation: a message the table knows is translated (a missing
/// CUDA library, a provider not in the build); an unknown one about the provider's configuration
/// (kUnavailable, kInvalidArgument) is runtime.provider-unavailable with the message kept; any other
/// goes through TranslateRuntimeError.
Diagnosis TranslateSessionError(const Error& error, const Location& context = {});

/// A message TranslateRuntimeError recognises.
struct KnownRuntimeMessage {
  std::string_view code;
  /// ECMAScript regular expression, searched in the runtime's words once prefixes, source
  /// locations and the wrappers naming the failing node have been removed.
  std::string_view pattern;
};

/// Every known message, in the order they are tried.
std::span<const KnownRuntimeMessage> KnownRuntimeMessages();

/// Index into KnownRuntimeMessages() of the entry that `message` matches; nullopt for a message
/// that TranslateRuntimeError maps to a fallback code.
std::optional<std::size_t> MatchKnownRuntimeMessage(std::string_view message);

}  // namespace ortkit
