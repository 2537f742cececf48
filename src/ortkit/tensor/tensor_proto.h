#pragma once
// ONNX TensorProto: the .pb files of ONNX test cases (test_data_set_N/input_K.pb) and the tensors
// inside models. Reading accepts raw_data and every typed field the way ONNX stores each element
// type (int8/int16/uint8/uint16/bool and the bit patterns of float16/bfloat16 in int32_data,
// uint32 in uint64_data, ...). Writing always uses raw_data (string_data for strings).
// Tensors whose data lives in an external file, segments, and element types ortkit does not
// handle (complex, float8, 4-bit) are refused with a message that says what the proto holds.

#include <filesystem>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Copies `proto`'s data into a new Tensor. `where` starts every message ("input_0.pb",
/// "initializer 'w'"); a dims/data length mismatch names the field and both counts.
Result<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view where);

/// A TensorProto named `name` holding a copy of `tensor`'s data in raw_data (little-endian),
/// or in string_data for string tensors. Fails only for a tensor with no element type.
Result<onnx::TensorProto> TensorToProto(const Tensor& tensor, const std::string& name);

/// Reads a serialized TensorProto file. The result's name is the proto's name, which may be
/// empty. Bytes that are an ONNX SequenceProto, OptionalProto or MapProto instead (as ONNX test
/// cases store non-tensor inputs) are refused with a message saying so.
Result<NamedTensor> ReadTensorProto(const std::filesystem::path& path);

/// Parses a serialized TensorProto held in memory. `name` labels every message.
Result<NamedTensor> ParseTensorProto(std::string_view bytes, std::string_view name);

/// Writes `tensor` as a serialized TensorProto named `name`.
Status WriteTensorProto(const std::filesystem::path& path, const Tensor& tensor, const std::string& name);

}  // namespace ortkit
