#include "ortkit/optimize/candidate_proof.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/runtime/run.h"
#include "ortkit/tensor/comparison.h"

namespace ortkit {
namespace {

constexpr double kMaxDrop = 0.5;

Result<double> ParseDrop(std::string_view metric, std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--max-drop {}={}: expected a number from 0 to {}", metric, text, kMaxDrop));
  }
  if (value > kMaxDrop) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--max-drop {}={} allows {} to fall to {:.4g}: the value is the drop from perfect "
                                 "agreement, not the floor (for a floor of {} write {}={:.4g})",
                                 metric, text, metric, 1 - value, text, metric, 1 - value));
  }
  return value;
}

// NaN or Inf in the candidate's output where the original's is finite.
std::int64_t NewNonFinite(const Tensor& expected, const Tensor& actual) {
  const DataTypeInfo* info = FindDataType(actual.type());
  if (info == nullptr || !info->is_float || expected.element_count() != actual.element_count()) return 0;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < actual.element_count(); ++i) {
    count += !std::isfinite(actual.AsDouble(i)) && std::isfinite(expected.AsDouble(i));
  }
  return count;
}

// The metric a purpose is judged by, failed: a sentence; empty when the gate holds.
std::string GateFailure(const Agreement& a, const AccuracyGate& gate) {
  switch (a.purpose) {
    case OutputPurpose::kScores:
      if (a.Top1Share() < gate.top1)
        return fmt::format("top-1 agreement {:.2f}% < {:.2f}%", 100 * a.Top1Share(), 100 * gate.top1);
      if (a.min_cosine < gate.cosine) return fmt::format("per-row cosine {:.5f} < {:.5g}", a.min_cosine, gate.cosine);
      return "";
    case OutputPurpose::kEmbedding:
      if (a.min_cosine < gate.cosine) return fmt::format("per-row cosine {:.5f} < {:.5g}", a.min_cosine, gate.cosine);
      return "";
    case OutputPurpose::kLabels: {
      const double share = a.elements == 0 ? 1 : static_cast<double>(a.equal) / static_cast<double>(a.elements);
      if (share < gate.top1) return fmt::format("{:.2f}% of labels equal < {:.2f}%", 100 * share, 100 * gate.top1);
      return "";
    }
    case OutputPurpose::kValues:
      if (a.RelativeError() > gate.error)
        return fmt::format("error {:.3g}% of the range > {:.3g}%", 100 * a.RelativeError(), 100 * gate.error);
      return "";
  }
  return "";
}

const NamedTensor* FindOutput(const std::vector<NamedTensor>& outputs, const std::string& name) {
  for (const auto& o : outputs) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

OutputVerdict JudgeOutput(const ProofInputs& trial, const NamedTensor& expected, const NamedTensor* actual,
                          OutputPurpose purpose, const AccuracyGate& gate) {
  OutputVerdict v;
  v.name = expected.name;
  v.trial = trial.label;
  if (actual == nullptr) {
    v.failure = "missing from the candidate's outputs";
    return v;
  }
  if (actual->tensor.type() != expected.tensor.type() || actual->tensor.shape() != expected.tensor.shape()) {
    v.failure = fmt::format("{} where the original gives {}", actual->tensor.Describe(), expected.tensor.Describe());
    return v;
  }
  const OutputComparison c = CompareTensors(expected.name, expected.tensor, actual->tensor, Tolerance{});
  v.max_abs_error = c.max_abs_error;
  v.max_rel_error = c.max_rel_error;
  v.agreement = MeasureAgreement(expected.tensor, actual->tensor, purpose);
  v.nonfinite = NewNonFinite(expected.tensor, actual->tensor);
  v.failure = v.nonfinite > 0 ? fmt::format("{} NaN/Inf where the original is finite", v.nonfinite)
                              : GateFailure(v.agreement, gate);
  return v;
}

// Row `row` of every input whose first axis is the batch (the others unchanged).
Result<std::vector<NamedTensor>> RowAlone(const std::vector<NamedTensor>& inputs, std::int64_t batch,
                                          std::int64_t row) {
  std::vector<NamedTensor> single;
  for (const auto& input : inputs) {
    if (!input.tensor.shape().empty() && input.tensor.shape()[0] == batch) {
      ORTKIT_ASSIGN_OR_RETURN(Tensor t, input.tensor.SliceRows(row, row + 1));
      single.push_back({input.name, std::move(t)});
    } else {
      single.push_back({input.name, input.tensor.Clone()});
    }
  }
  return single;
}

std::int64_t BatchOf(const ProofInputs& trial) {
  for (const auto& input : trial.inputs) {
    if (!input.tensor.shape().empty()) return input.tensor.shape()[0];
  }
  return 0;
}

// The first and last rows of the largest batch run alone against the batched run's rows.
void CheckBatchRows(Session& candidate, std::span<const ProofInputs> trials, CandidateProof& proof) {
  const ProofInputs* widest = nullptr;
  for (const auto& t : trials) {
    if (BatchOf(t) > 1 && (widest == nullptr || BatchOf(t) > BatchOf(*widest))) widest = &t;
  }
  if (widest == nullptr) return;
  const std::int64_t batch = BatchOf(*widest);
  auto batched = RunSession(candidate, RunRequest{widest->inputs, {}});
  if (!batched.ok()) return;  // reported as a run failure already
  double worst = 0;
  for (const std::int64_t row : {std::int64_t{0}, batch - 1}) {
    auto single = RowAlone(widest->inputs, batch, row);
    if (!single.ok()) return;
    auto alone = RunSession(candidate, RunRequest{*single, {}});
    if (!alone.ok()) {
      proof.batch_rows_differ = true;
      proof.batch_rows = fmt::format("row {} of batch {} alone does not run: {}", row, batch, alone.error().message);
      return;
    }
    for (const auto& out : *alone) {
      const NamedTensor* b = FindOutput(*batched, out.name);
      if (b == nullptr || b->tensor.shape().empty() || b->tensor.shape()[0] != batch) continue;
      auto slice = b->tensor.SliceRows(row, row + 1);
      if (!slice.ok()) continue;
      const Tolerance tolerance = ToleranceRules{}.For(out.name, out.tensor.type());
      const OutputComparison c = CompareTensors(out.name, out.tensor, *slice, tolerance);
      worst = std::max(worst, c.max_abs_error);
      if (!c.passed) proof.batch_rows_differ = true;
    }
  }
  proof.batch_rows = fmt::format("rows 0 and {} of batch {} run alone: {} (max abs error {:.3g})", batch - 1, batch,
                                 proof.batch_rows_differ ? "differ from the batched rows" : "equal", worst);
  if (proof.batch_rows_differ && proof.dynamic_quantization) {
    proof.warnings.push_back(
        "rows of a batch differ from the rows run alone: dynamic quantisation computes one scale per batch, so a "
        "row's result depends on the other rows (within the quantisation step)");
  }
}

}  // namespace

Result<AccuracyGate> AccuracyGate::Parse(std::string_view text) {
  AccuracyGate gate;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, comma - begin);
    const std::size_t eq = item.find('=');
    const std::string_view metric = item.substr(0, eq);
    if (eq == std::string_view::npos || (metric != "cosine" && metric != "top1" && metric != "error")) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--max-drop '{}': expected METRIC=DROP with METRIC one of cosine, top1, error "
                                   "(e.g. --max-drop cosine=0.001,top1=0.01)",
                                   item));
    }
    ORTKIT_ASSIGN_OR_RETURN(const double drop, ParseDrop(metric, item.substr(eq + 1)));
    if (metric == "cosine") gate.cosine = 1 - drop;
    if (metric == "top1") gate.top1 = 1 - drop;
    if (metric == "error") gate.error = drop;
    begin = comma + 1;
  }
  return gate;
}

std::string AccuracyGate::Describe() const {
  return fmt::format("cosine >= {:.4g}, top-1 >= {:.4g}%, error <= {:.3g}%", cosine, 100 * top1, 100 * error);
}

bool CandidateProof::Passed() const { return FirstFailure().empty(); }

std::string CandidateProof::FirstFailure() const {
  if (!run_failures.empty()) return run_failures.front();
  if (!interface.empty()) return interface.front();
  for (const auto& o : outputs) {
    if (!o.failure.empty()) return fmt::format("{}: {}", o.name, o.failure);
  }
  if (batch_rows_differ && !dynamic_quantization) return batch_rows;
  return "";
}

std::string CandidateProof::AccuracyText() const {
  std::map<OutputPurpose, const OutputVerdict*> worst;
  const auto figure = [](const OutputVerdict& v) {
    switch (v.agreement.purpose) {
      case OutputPurpose::kScores: return v.agreement.Top1Share();
      case OutputPurpose::kEmbedding: return v.agreement.min_cosine;
      case OutputPurpose::kLabels:
        return v.agreement.elements == 0 ? 1.0 : static_cast<double>(v.agreement.equal) / v.agreement.elements;
      case OutputPurpose::kValues: return 1 - v.agreement.RelativeError();
    }
    return 1.0;
  };
  for (const auto& o : outputs) {
    auto& slot = worst[o.agreement.purpose];
    if (slot == nullptr || figure(o) < figure(*slot)) slot = &o;
  }
  std::vector<std::string> parts;
  for (const auto& [purpose, v] : worst) {
    const Agreement& a = v->agreement;
    switch (purpose) {
      case OutputPurpose::kScores:
        parts.push_back(fmt::format("top-1 {:.2f}%, cos {:.4f}", 100 * a.Top1Share(), a.min_cosine));
        break;
      case OutputPurpose::kEmbedding: parts.push_back(fmt::format("cos {:.5f}", a.min_cosine)); break;
      case OutputPurpose::kLabels: parts.push_back(fmt::format("labels {:.2f}%", 100 * figure(*v))); break;
      case OutputPurpose::kValues: parts.push_back(fmt::format("err {:.2g}%", 100 * a.RelativeError())); break;
    }
  }
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text.empty() ? "-" : text;
}

nlohmann::json OutputVerdict::ToJson() const {
  nlohmann::json json = {{"name", name},
                         {"trial", trial},
                         {"agreement", agreement.ToJson()},
                         {"max_abs_error", max_abs_error},
                         {"max_rel_error", max_rel_error},
                         {"nonfinite", nonfinite},
                         {"passed", failure.empty()}};
  if (!failure.empty()) json["failure"] = failure;
  return json;
}

nlohmann::json CandidateProof::ToJson() const {
  nlohmann::json json_outputs = nlohmann::json::array();
  for (const auto& o : outputs) json_outputs.push_back(o.ToJson());
  nlohmann::json json = {{"passed", Passed()},
                         {"outputs", json_outputs},
                         {"interface_changes", interface},
                         {"run_failures", run_failures},
                         {"batch_rows", batch_rows},
                         {"batch_rows_differ", batch_rows_differ},
                         {"dynamic_quantization", dynamic_quantization},
                         {"warnings", warnings}};
  if (!Passed()) json["failure"] = FirstFailure();
  return json;
}

CandidateProof ProveCandidate(Session& candidate, std::span<const ProofInputs> trials,
                              const std::vector<std::string>& output_names, const std::vector<OutputPurpose>& purposes,
                              const AccuracyGate& gate, const std::string& batch_dim, bool dynamic_quantization) {
  CandidateProof proof;
  proof.dynamic_quantization = dynamic_quantization;
  for (const auto& trial : trials) {
    auto outputs = RunSession(candidate, RunRequest{trial.inputs, {}});
    if (!outputs.ok()) {
      proof.run_failures.push_back(fmt::format("at {}: {}", trial.label, outputs.error().message));
      continue;
    }
    for (std::size_t i = 0; i < output_names.size(); ++i) {
      const NamedTensor* expected = FindOutput(trial.expected, output_names[i]);
      if (expected == nullptr) continue;
      const OutputPurpose purpose = i < purposes.size() ? purposes[i] : OutputPurpose::kEmbedding;
      proof.outputs.push_back(JudgeOutput(trial, *expected, FindOutput(*outputs, output_names[i]), purpose, gate));
    }
  }
  if (!batch_dim.empty() && proof.run_failures.empty()) CheckBatchRows(candidate, trials, proof);
  return proof;
}

std::vector<std::string> InterfaceChanges(const std::vector<TensorSpec>& original_inputs,
                                          const std::vector<TensorSpec>& original_outputs,
                                          const std::vector<TensorSpec>& candidate_inputs,
                                          const std::vector<TensorSpec>& candidate_outputs) {
  std::vector<std::string> changes;
  const auto compare = [&](const std::vector<TensorSpec>& before, const std::vector<TensorSpec>& after,
                           std::string_view kind) {
    for (const auto& b : before) {
      auto it = std::find_if(after.begin(), after.end(), [&](const TensorSpec& a) { return a.name == b.name; });
      if (it == after.end()) {
        changes.push_back(fmt::format("{} '{}' is gone", kind, b.name));
        continue;
      }
      if (it->type != b.type || it->dims.size() != b.dims.size()) {
        changes.push_back(fmt::format("{} '{}' was {}, now {}", kind, b.name, b.Describe(), it->Describe()));
        continue;
      }
      for (std::size_t axis = 0; axis < b.dims.size(); ++axis) {
        if (!b.dims[axis].fixed() && it->dims[axis].fixed()) {
          changes.push_back(fmt::format("{} '{}' axis {} was dynamic ('{}'), now fixed to {}", kind, b.name, axis,
                                        b.dims[axis].ToString(), it->dims[axis].value));
        }
      }
    }
  };
  compare(original_inputs, candidate_inputs, "input");
  compare(original_outputs, candidate_outputs, "output");
  return changes;
}

}  // namespace ortkit
