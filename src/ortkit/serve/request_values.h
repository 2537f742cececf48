#pragma once
// What a request's values must be, shared by the HTTP and gRPC front ends so that both refuse the
// same requests with the same words: integer parameters, and tensor elements that fit their datatype.

#include <cstddef>
#include <string>
#include <string_view>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit::serve {

/// The inputs, and the outputs, one request may list: far above any model's (a decoder with a
/// cache per layer has a few hundred), far below what a body's bytes could list (a million empty
/// inputs would cost the server a few hundred bytes each).
inline constexpr std::size_t kMaxTensorsPerRequest = 65536;

/// kInvalidArgument for a request parameter that must be an integer and is not ("priority",
/// "timeout"): `malformed request: parameter "priority" must be an integer`.
Error ParameterNotAnInteger(std::string_view parameter);

/// kInvalidArgument for an output asked for with the classification extension's parameter, which
/// the server does not implement (silently answering the whole output instead would mislead):
/// names the output and says what to do instead.
Error ClassificationNotSupported(std::string_view output);

/// kInvalidArgument for an output named more than once in one request.
Error OutputNamedTwice(std::string_view output);

/// The values numeric `type` holds, for messages: "0..255" for UINT8, "-65504..65504" for FP16.
std::string DataTypeRange(DataType type);

/// kInvalidArgument for an element that does not fit its input's datatype, with the value as the
/// client wrote it: `input 'x': element 1 is 256, outside UINT8's range 0..255`.
Error ElementOutOfRange(std::string_view input, std::size_t element, std::string_view value, DataType type);

}  // namespace ortkit::serve
