#include "ortkit/perf/request_builder.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ortkit/tensor/tensor_spec.h"
#include "ortkit/tensor/test_case.h"

namespace ortkit::perf {
namespace {

bool IsInput(const RemoteModel& model, const std::string& name) {
  return std::any_of(model.inputs.begin(), model.inputs.end(), [&](const TensorSpec& s) { return s.name == name; });
}

// The tensors of --input-data, each named after an input of the model; none for "random".
Result<std::vector<NamedTensor>> ReadGivenInputs(const RequestOptions& options, const RemoteModel& model) {
  if (options.input_data == "random") return std::vector<NamedTensor>{};
  if (!options.lengths.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--lengths varies synthesised inputs; it cannot be combined with --input-data FILE");
  }
  ORTKIT_ASSIGN_OR_RETURN(auto given, ReadTensors(options.input_data, InputHeaderCheck(model.inputs)));
  for (const auto& t : given) {
    if (!IsInput(model, t.name)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--input-data {}: tensor '{}' is not an input of model '{}'", options.input_data,
                                   t.name, options.model));
    }
  }
  return given;
}

// The sizes of --lengths, checked against the model's dynamic dimensions; {1, 1} without it.
Result<LengthDistribution> LengthsOf(const RequestOptions& options, const RemoteModel& model) {
  if (options.lengths.empty()) return LengthDistribution{1, 1};
  ORTKIT_ASSIGN_OR_RETURN(auto lengths, ParseLengths(options.lengths));
  const bool has_dim = std::any_of(model.inputs.begin(), model.inputs.end(), [&](const TensorSpec& s) {
    return std::any_of(s.dims.begin(), s.dims.end(), [&](const DimSpec& d) { return d.symbol == options.length_dim; });
  });
  if (!has_dim) {
    std::vector<std::string> described;
    for (const auto& s : model.inputs) described.push_back(s.Describe());
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--length-dim {}: no input of model '{}' has a dynamic dimension at that position ({}); "
                    "dynamic dimensions are named batch (axis 0), seq_len (axis 1), dimK (axis K)",
                    options.length_dim, options.model, fmt::join(described, ", ")));
  }
  return lengths;
}

// The inputs of the request of size `length`, in the model's order: copies of the given tensors, the rest
// synthesised (`missing`, with `hints`).
Result<std::vector<NamedTensor>> InputsAtLength(const RequestOptions& options, const RemoteModel& model,
                                                const std::vector<NamedTensor>& given,
                                                const std::vector<TensorSpec>& missing,
                                                const std::map<std::string, ValueHint>& hints, std::int64_t length) {
  InputPlan plan = options.plan;
  if (!options.lengths.empty()) plan.dims[options.length_dim] = length;
  plan.seed = options.plan.seed * 1000 + static_cast<std::uint64_t>(length);
  ORTKIT_ASSIGN_OR_RETURN(auto synthesised, SynthesizeInputs(missing, hints, plan));
  std::vector<NamedTensor> inputs;
  for (const auto& s : model.inputs) {
    auto named = [&](const NamedTensor& t) { return t.name == s.name; };
    if (auto it = std::find_if(given.begin(), given.end(), named); it != given.end())
      inputs.push_back({s.name, it->tensor.Clone()});
    else
      inputs.push_back(std::move(*std::find_if(synthesised.begin(), synthesised.end(), named)));
  }
  return inputs;
}

}  // namespace

Result<RequestSet> BuildRequests(const RequestOptions& options, const RemoteModel& model, InferClient& client) {
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(options.plan, model.inputs));
  RequestSet set;
  ORTKIT_ASSIGN_OR_RETURN(auto given, ReadGivenInputs(options, model));
  ORTKIT_ASSIGN_OR_RETURN(set.lengths, LengthsOf(options, model));
  std::vector<TensorSpec> missing;
  for (const auto& s : model.inputs) {
    if (std::none_of(given.begin(), given.end(), [&](const NamedTensor& t) { return t.name == s.name; }))
      missing.push_back(s);
  }
  std::vector<std::string> outputs;
  for (const auto& o : model.outputs) outputs.push_back(o.name);
  const auto hints = HintsFromNames(model.inputs);
  for (std::int64_t length : set.lengths.Values()) {
    ORTKIT_ASSIGN_OR_RETURN(auto inputs, InputsAtLength(options, model, given, missing, hints, length));
    ORTKIT_ASSIGN_OR_RETURN(auto encoded, client.Encode(inputs, outputs));
    set.by_length.push_back(std::move(encoded));
  }
  return set;
}

}  // namespace ortkit::perf
