#include "ortkit/check/structure.h"

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

namespace ortkit {
namespace {

int ModelOpset(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& op : model.opset_import()) {
    const std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    if (d == domain) return static_cast<int>(op.version());
  }
  return -1;
}

// Pulls "node X (OpType)" style context out of an ONNX library message.
Location LocationFromOnnxMessage(const std::string& message) {
  Location where;
  static const std::regex node_re(R"((?:node|Node) \(([^)]*)\)(?: with op_type \(?(\w+)\)?)?)");
  static const std::regex op_re(R"(\(op_type:(\w+), node name: ([^)]*)\))");
  std::smatch m;
  if (std::regex_search(message, m, op_re)) {
    where.op_type = m[1];
    where.node = m[2];
  } else if (std::regex_search(message, m, node_re)) {
    where.node = m[1];
    if (m[2].matched) where.op_type = m[2];
  }
  return where;
}

std::string FirstLine(const std::string& s) {
  auto pos = s.find("\n\n==>");
  return pos == std::string::npos ? s : s.substr(0, pos);
}

struct Dim {
  bool has_value = false;
  long long value = 0;
  std::string param;
};

std::vector<Dim> DimsOf(const onnx::TypeProto& type) {
  std::vector<Dim> dims;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      dim.has_value = true;
      dim.value = d.dim_value();
    } else if (d.has_dim_param()) {
      dim.param = d.dim_param();
    }
    dims.push_back(dim);
  }
  return dims;
}

std::string DimText(const Dim& d) {
  if (d.has_value) return std::to_string(d.value);
  return d.param.empty() ? "?" : d.param;
}

}  // namespace

int KnownIrVersion() { return onnx::Version::IR_VERSION; }

int KnownOnnxOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find("");
  return it == map.end() ? 0 : it->second.second;
}

std::vector<Diagnosis> OnnxLibraryLimits(const onnx::ModelProto& model) {
  std::vector<Diagnosis> out;
  if (model.ir_version() > KnownIrVersion()) {
    out.push_back(Diagnose("checker.ir-version-too-new",
                           fmt::format("the model's IR version is {}; the ONNX library in ortkit knows up to {}",
                                       model.ir_version(), KnownIrVersion())));
  }
  const int opset = ModelOpset(model, "");
  if (opset > KnownOnnxOpset()) {
    out.push_back(Diagnose("checker.opset-too-new",
                           fmt::format("the model imports ai.onnx opset {}; the ONNX library in ortkit knows up to {}", opset,
                                       KnownOnnxOpset())));
  }
  return out;
}

LayerOutcome RunChecker(const onnx::ModelProto& model) {
  LayerOutcome outcome;
  auto limits = OnnxLibraryLimits(model);
  if (!limits.empty()) {
    outcome.ran = false;
    outcome.skipped_reason = limits.front().message;
    outcome.diagnoses = std::move(limits);
    return outcome;
  }
  try {
    onnx::checker::check_model(model);
  } catch (const onnx::checker::ValidationError& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("checker.failed", message, LocationFromOnnxMessage(message)));
  } catch (const std::exception& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("checker.failed", message, LocationFromOnnxMessage(message)));
  }
  return outcome;
}

LayerOutcome RunShapeInference(onnx::ModelProto& model) {
  LayerOutcome outcome;
  auto limits = OnnxLibraryLimits(model);
  if (!limits.empty()) {
    outcome.ran = false;
    outcome.skipped_reason = limits.front().message;
    return outcome;
  }
  std::map<std::string, std::vector<Dim>> declared;
  for (const auto& out : model.graph().output()) declared[out.name()] = DimsOf(out.type());
  std::set<std::string> input_params;
  std::map<std::string, std::pair<std::string, long long>> fixed_params;  // name -> (where, value) for inconsistency
  for (const auto& in : model.graph().input()) {
    for (const auto& d : DimsOf(in.type())) {
      if (!d.param.empty()) input_params.insert(d.param);
    }
  }

  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("shape.inference-failed", message, LocationFromOnnxMessage(message)));
    return outcome;
  }

  // Inferred value_info may say more about outputs than the declared outputs do.
  std::map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& vi : model.graph().value_info()) inferred[vi.name()] = &vi.type();
  for (const auto& out : model.graph().output()) inferred[out.name()] = &out.type();

  for (const auto& out : model.graph().output()) {
    const auto& before = declared[out.name()];
    const auto after = DimsOf(*inferred[out.name()]);
    for (std::size_t i = 0; i < after.size(); ++i) {
      Location where;
      where.output = out.name();
      where.dimension = std::to_string(i);
      const Dim& d = after[i];
      const bool was_dynamic = i < before.size() && !before[i].has_value;
      if (d.has_value) {
        if (was_dynamic && !input_params.empty()) {
          outcome.diagnoses.push_back(Diagnose(
              "shape.output-dim-fixed",
              fmt::format("output '{}' dimension {} is declared '{}' but shape inference fixes it to {}", out.name(), i,
                          DimText(before[i]), d.value),
              where));
        }
      } else if (d.param.empty()) {
        outcome.diagnoses.push_back(Diagnose(
            "shape.output-dim-unknown",
            fmt::format("output '{}' dimension {} has neither a size nor a name after shape inference", out.name(), i), where));
      } else if (!input_params.empty() && !input_params.count(d.param)) {
        auto diag = Diagnose("shape.output-dim-unrelated",
                             fmt::format("output '{}' dimension {} is '{}', a name that no input dimension has (inputs use: {})",
                                         out.name(), i, d.param, fmt::format("{}", fmt::join(input_params, ", "))),
                             where);
        diag.severity = Severity::kInfo;
        // Exporter-generated names lose the link to the inputs: worth a warning.
        static const std::regex generated(R"(^(unk__\d+|.*_dim_\d+|[A-Za-z]+\d*_output_\d+.*)$)");
        if (std::regex_match(d.param, generated)) diag.severity = Severity::kWarning;
        outcome.diagnoses.push_back(std::move(diag));
      }
    }
  }
  return outcome;
}

}  // namespace ortkit
