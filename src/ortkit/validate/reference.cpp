#include "ortkit/validate/reference.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/tensor/test_case.h"
#include "ortkit/validate/purpose_judgement.h"

namespace ortkit {
namespace {

std::vector<std::string> Names(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  return names;
}

bool Has(const std::vector<TensorSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
}

// Positional test-case tensors ("input_K" without a stored name) take the K-th model name.
void NamePositional(std::vector<NamedTensor>& tensors, const std::vector<bool>& name_given,
                    const std::vector<TensorSpec>& specs) {
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (k < name_given.size() && !name_given[k] && k < specs.size()) tensors[k].name = specs[k].name;
  }
}

// numpy has no bfloat16, so frameworks record bfloat16 tensors as their uint16 bit patterns (ONNX's
// own test data before 1.14 does). A uint16 tensor for a bfloat16 model value is taken as those bits.
Status TakeUint16AsBFloat16(std::vector<NamedTensor>& tensors, const std::vector<TensorSpec>& specs) {
  for (auto& t : tensors) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == t.name; });
    if (spec == specs.end() || spec->type != DataType::kBFloat16 || t.tensor.type() != DataType::kUInt16) continue;
    ORTKIT_ASSIGN_OR_RETURN(Tensor bits, Tensor::Allocate(DataType::kBFloat16, t.tensor.shape()));
    std::memcpy(bits.data(), t.tensor.data(), t.tensor.byte_size());
    t.tensor = std::move(bits);
  }
  return OkStatus();
}

Status CheckCase(const ReferenceCase& c, const std::vector<TensorSpec>& inputs,
                 const std::vector<TensorSpec>& outputs) {
  for (const auto& t : c.inputs) {
    if (!Has(inputs, t.name)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("reference {}: input '{}' is not an input of the model (inputs: {})", c.label,
                                   t.name, fmt::join(Names(inputs), ", ")));
    }
  }
  for (const auto& t : c.expected) {
    if (!Has(outputs, t.name)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("reference {}: output '{}' is not an output of the model (outputs: {})", c.label,
                                   t.name, fmt::join(Names(outputs), ", ")));
    }
  }
  for (const auto& spec : inputs) {
    if (std::none_of(c.inputs.begin(), c.inputs.end(), [&](const NamedTensor& t) { return t.name == spec.name; })) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("reference {}: it holds no value for the model's input '{}' ({})", c.label,
                                   spec.name, spec.Describe()));
    }
  }
  if (c.expected.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("reference {}: it holds no expected outputs (model outputs: {})", c.label,
                                 fmt::join(Names(outputs), ", ")));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<ReferenceCase>> ReadReference(const std::filesystem::path& path,
                                                 const std::vector<TensorSpec>& inputs,
                                                 const std::vector<TensorSpec>& outputs) {
  std::vector<ReferenceCase> cases;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("reference '{}' does not exist", path.string()));
  }
  // The label is taken before the data set is moved from: argument evaluation order is unspecified,
  // so a call like add_data_set(std::move(set), set.folder...) could read a moved-from path.
  auto add_data_set = [&](TestDataSet& set) {
    std::string label = set.folder.filename().string();
    NamePositional(set.inputs, set.input_name_given, inputs);
    NamePositional(set.outputs, set.output_name_given, outputs);
    cases.push_back({std::move(label), std::move(set.inputs), std::move(set.outputs)});
  };
  if (std::filesystem::is_directory(path) && std::filesystem::exists(path / "model.onnx")) {
    ORTKIT_ASSIGN_OR_RETURN(TestCase test_case, ReadTestCase(path));
    for (auto& set : test_case.data_sets) add_data_set(set);
  } else if (std::filesystem::is_directory(path) && std::filesystem::exists(path / "input_0.pb")) {
    ORTKIT_ASSIGN_OR_RETURN(TestDataSet set, ReadTestDataSet(path));
    add_data_set(set);
  } else if (std::filesystem::is_directory(path) && std::filesystem::exists(path / "test_data_set_0")) {
    // A test case without its model.onnx: the data sets alone.
    for (int n = 0; std::filesystem::exists(path / ("test_data_set_" + std::to_string(n))); ++n) {
      const auto folder = path / ("test_data_set_" + std::to_string(n));
      ORTKIT_ASSIGN_OR_RETURN(TestDataSet set, ReadTestDataSet(folder));
      add_data_set(set);
    }
  } else {
    ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensors(path, InputHeaderCheck(inputs)));
    ReferenceCase c;
    c.label = path.filename().string();
    for (auto& t : tensors) {
      if (Has(inputs, t.name))
        c.inputs.push_back(std::move(t));
      else if (Has(outputs, t.name))
        c.expected.push_back(std::move(t));
      else {
        return MakeError(
            ErrorKind::kInvalidArgument,
            fmt::format("reference '{}': tensor '{}' is neither an input ({}) nor an output ({}) of the model",
                        path.string(), t.name, fmt::join(Names(inputs), ", "), fmt::join(Names(outputs), ", ")));
      }
    }
    cases.push_back(std::move(c));
  }
  for (auto& c : cases) {
    ORTKIT_RETURN_IF_ERROR(TakeUint16AsBFloat16(c.inputs, inputs));
    ORTKIT_RETURN_IF_ERROR(TakeUint16AsBFloat16(c.expected, outputs));
    ORTKIT_RETURN_IF_ERROR(CheckCase(c, inputs, outputs));
  }
  return cases;
}

bool ReferenceReport::Passed() const {
  return !cases.empty() &&
         std::all_of(cases.begin(), cases.end(), [](const CaseResult& c) { return c.ran && c.comparison.Passed(); });
}

nlohmann::json ReferenceReport::ToJson() const {
  nlohmann::json j = {{"passed", Passed()}, {"cases", nlohmann::json::array()}};
  for (const auto& c : cases) {
    nlohmann::json cj = {{"label", c.label}, {"ran", c.ran}};
    if (!c.ran) {
      cj["run_error"] = c.run_error;
      cj["diagnosis"] = TranslateRuntimeError(c.run_error, {}, true);
    } else
      cj["comparison"] = c.comparison.ToJson();
    j["cases"].push_back(cj);
  }
  return j;
}

ReferenceReport ValidateAgainst(Session& session, const std::vector<ReferenceCase>& cases,
                                const ToleranceRules& tolerance, const onnx::ModelProto* purpose_model) {
  ReferenceReport report;
  const QuantizationSummary quantization =
      purpose_model != nullptr ? SummarizeQuantization(*purpose_model) : QuantizationSummary{};
  for (const auto& c : cases) {
    CaseResult result;
    result.label = c.label;
    std::vector<std::string> wanted;
    for (const auto& e : c.expected) wanted.push_back(e.name);
    auto outputs = RunSession(session, RunRequest{c.inputs, wanted});
    if (!outputs.ok()) {
      result.run_error = outputs.error().message;
    } else {
      result.ran = true;
      result.comparison = CompareOutputs(c.expected, *outputs, tolerance);
      if (purpose_model != nullptr)
        JudgeByPurpose(result.comparison, c.expected, *outputs, *purpose_model, quantization);
    }
    report.cases.push_back(std::move(result));
  }
  return report;
}

}  // namespace ortkit
