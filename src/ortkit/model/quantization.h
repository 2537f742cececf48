#pragma once
// Recognising a quantised model, and the quantisation step behind an output. ONNX Runtime runs a
// quantised graph with integer kernels when optimisations are on (QDQ groups become QLinearConv,
// MatMulInteger chains become DynamicQuantizeMatMul): they round differently from the unfused float
// reference by design, so two runs of such a model are judged by what their outputs mean
// (tensor/agreement.h), with a bound taken from the model's own scales where there is one.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

namespace ortkit {

struct QuantizationSummary {
  enum class Scheme {
    kQdq,         ///< QuantizeLinear / DequantizeLinear pairs around float operators (static QDQ)
    kQOperator,   ///< integer operators (QLinearConv, QLinearMatMul, QGemm, ...)
    kDynamic,     ///< scales computed at run time (DynamicQuantizeLinear, MatMulInteger, DynamicQuantizeLSTM)
    kWeightOnly,  ///< low-bit weights dequantised in the kernel (MatMulNBits, block-wise DequantizeLinear)
  };
  std::vector<Scheme> schemes;       ///< in the order above, each at most once; empty: a float model
  std::map<std::string, int> nodes;  ///< quantisation operators by type, over every graph of the model

  bool quantized() const { return !schemes.empty(); }
  /// "static QDQ (114 DequantizeLinear, 78 QuantizeLinear)", "dynamic int8 (22 DynamicQuantizeLinear,
  /// 21 ConvInteger, ...)"; "" for a float model.
  std::string Describe() const;
  /// {"schemes": ["qdq", ...], "nodes": {"DequantizeLinear": 114, ...}}
  nlohmann::json ToJson() const;
};

/// "qdq", "qoperator", "dynamic", "weight-only".
const char* ToString(QuantizationSummary::Scheme scheme);

/// The quantisation operators of `model` (main graph, subgraphs and functions) and the schemes they
/// amount to.
QuantizationSummary SummarizeQuantization(const onnx::ModelProto& model);

/// The quantisation step of the values `output` is computed from: the largest scale of the
/// DequantizeLinear that gives them, followed only by nodes that move values (Reshape, Transpose, ...)
/// or that never enlarge a difference (Softmax, Sigmoid, Relu, Tanh, Clip). nullopt when another node
/// is in between or the scale is not a constant of the model.
std::optional<double> OutputQuantizationStep(const onnx::ModelProto& model, const std::string& output);

}  // namespace ortkit
