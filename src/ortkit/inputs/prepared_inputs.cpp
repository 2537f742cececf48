#include "ortkit/inputs/prepared_inputs.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/inputs/shape_search.h"
#include "ortkit/tensor/test_case.h"

namespace ortkit {
namespace {

const TensorSpec* FindSpec(const std::vector<TensorSpec>& specs, const std::string& name) {
  auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

/// The inputs read from files, each with where it came from.
struct GivenInputs {
  std::vector<NamedTensor> tensors;
  std::vector<PreparedInput> sources;
};

// "NAME=FILE": one tensor, named for the input whatever the file calls it, and checked against that input.
Status ReadNamedFile(const std::string& item, const TensorSpec& spec, GivenInputs& given) {
  const std::string path = item.substr(item.find('=') + 1);
  HeaderCheck check = [&](std::string_view, DataType type, std::span<const std::int64_t> shape) {
    return CheckAgainstSpec(fmt::format("--input {}", item), type, shape, spec);
  };
  ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensors(path, check));
  if (tensors.size() != 1) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--input {}: the file holds {} tensors; NAME=FILE takes a file with one", item, tensors.size()));
  }
  tensors[0].name = spec.name;
  given.sources.push_back({spec.name, "file " + path, true});
  given.tensors.push_back(std::move(tensors[0]));
  return OkStatus();
}

// FILE or DIR: every tensor in it must be named after an input.
Status ReadTensorFile(const std::string& item, const std::vector<TensorSpec>& specs, GivenInputs& given) {
  ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensors(item, InputHeaderCheck(specs)));
  for (auto& t : tensors) {
    if (FindSpec(specs, t.name) == nullptr) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--input {}: tensor '{}' is not an input of the model (inputs: {})", item, t.name,
                                   fmt::join(names, ", ")));
    }
    given.sources.push_back({t.name, "file " + item, true});
    given.tensors.push_back(std::move(t));
  }
  return OkStatus();
}

Result<GivenInputs> ReadGivenInputs(const std::vector<TensorSpec>& specs, const std::vector<std::string>& files) {
  GivenInputs given;
  for (const auto& item : files) {
    const auto eq = item.find('=');
    const TensorSpec* named = eq != std::string::npos && eq > 0 ? FindSpec(specs, item.substr(0, eq)) : nullptr;
    std::error_code ec;
    if (named == nullptr && eq != std::string::npos && eq > 0 && !std::filesystem::exists(item, ec) &&
        std::filesystem::exists(item.substr(eq + 1), ec)) {  // NAME=FILE with a NAME the model does not have
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--input {}: the model has no input named '{}' (inputs: {})", item,
                                   item.substr(0, eq), fmt::join(names, ", ")));
    }
    ORTKIT_RETURN_IF_ERROR(named != nullptr ? ReadNamedFile(item, *named, given) : ReadTensorFile(item, specs, given));
  }
  return given;
}

// Synthesised inputs follow the given ones' sizes: a symbolic dimension takes the size the given
// tensor has, unless the plan says otherwise.
void FollowGivenSizes(const std::vector<TensorSpec>& specs, const std::vector<NamedTensor>& given, InputPlan& plan) {
  for (const auto& t : given) {
    const TensorSpec& spec = *FindSpec(specs, t.name);
    for (std::size_t d = 0; d < spec.dims.size() && d < t.tensor.shape().size(); ++d) {
      if (!spec.dims[d].fixed() && !spec.dims[d].symbol.empty())
        plan.dims.emplace(spec.dims[d].symbol, t.tensor.shape()[d]);
    }
  }
}

// Dimensions of graph input `name` that the file declares as negative numbers (axis, value).
std::vector<std::pair<std::size_t, std::int64_t>> NegativeDims(const onnx::ModelProto* model, const std::string& name) {
  std::vector<std::pair<std::size_t, std::int64_t>> out;
  if (model == nullptr) return out;
  for (const auto& input : model->graph().input()) {
    if (input.name() != name || !input.type().has_tensor_type()) continue;
    const auto& shape = input.type().tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      if (shape.dim(d).has_dim_value() && shape.dim(d).dim_value() < 0) {
        out.emplace_back(static_cast<std::size_t>(d), shape.dim(d).dim_value());
      }
    }
  }
  return out;
}

// "synthesised: ...": what the values are, and what a negative size in the file became.
std::string DescribeSynthesised(const TensorSpec& spec, const Tensor& tensor,
                                const std::map<std::string, ValueHint>& hints, const onnx::ModelProto* model) {
  std::string source = "synthesised: ";
  auto hint = hints.find(spec.name);
  if (hint != hints.end())
    source += hint->second.reason;
  else if (spec.type == DataType::kBool)
    source += "all true";
  else if (spec.type == DataType::kString)
    source += tensor.element_count() == 1 ? "a whole number in [1, 4) as text" : "whole numbers in [0, 4) as text";
  else if (FindDataType(spec.type) != nullptr && FindDataType(spec.type)->is_float)
    source += "normal(0, 1)";
  else
    source += tensor.element_count() == 1 ? "an integer in [1, 4)" : "integers in [0, 4)";
  // A negative size is no size at all (check reports graph.bad-dimension); ONNX Runtime takes
  // it as dynamic, and the user must hear what it was given.
  for (const auto& [axis, value] : NegativeDims(model, spec.name)) {
    source += fmt::format("; the model declares dimension {} as {}, which is not a size: it was given {}", axis, value,
                          tensor.shape()[axis]);
  }
  return source;
}

std::vector<NamedTensor>::iterator FindTensor(std::vector<NamedTensor>& list, const std::string& name) {
  return std::find_if(list.begin(), list.end(), [&](const NamedTensor& t) { return t.name == name; });
}

}  // namespace

Result<PreparedInputs> PrepareInputs(const std::vector<TensorSpec>& described, const onnx::ModelProto* model,
                                     const InputSources& sources) {
  // Unnamed dimensions are INPUT:AXIS, so that --dim x:2=224 can size them.
  const std::vector<TensorSpec> specs = NameUnnamedAxes(described);
  InputPlan plan = sources.plan;
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(plan, specs));
  ORTKIT_ASSIGN_OR_RETURN(GivenInputs given, ReadGivenInputs(specs, sources.files));
  FollowGivenSizes(specs, given.tensors, plan);
  std::vector<TensorSpec> missing;
  for (const auto& s : specs) {
    if (FindTensor(given.tensors, s.name) == given.tensors.end()) missing.push_back(s);
  }
  const auto hints = model != nullptr ? AnalyzeInputValues(*model) : std::map<std::string, ValueHint>{};
  ORTKIT_ASSIGN_OR_RETURN(auto synthesised, SynthesizeInputs(missing, hints, plan));

  PreparedInputs prepared;
  for (const auto& spec : specs) {
    if (auto it = FindTensor(given.tensors, spec.name); it != given.tensors.end()) {
      prepared.tensors.push_back(std::move(*it));
      prepared.sources.push_back(*std::find_if(given.sources.begin(), given.sources.end(),
                                               [&](const PreparedInput& p) { return p.name == spec.name; }));
    } else if (auto s = FindTensor(synthesised, spec.name); s != synthesised.end()) {
      prepared.sources.push_back({spec.name, DescribeSynthesised(spec, s->tensor, hints, model)});
      prepared.tensors.push_back(std::move(*s));
    }
  }
  return prepared;
}

Status CheckSizesOfFileInputs(const InputPlan& plan, const std::vector<TensorSpec>& described,
                              const PreparedInputs& prepared) {
  const std::vector<TensorSpec> specs = NameUnnamedAxes(described);
  constexpr const char* kOnlySynthesised = "--shape and --dim size synthesised inputs, not inputs read from files";
  for (std::size_t i = 0; i < prepared.tensors.size() && i < prepared.sources.size(); ++i) {
    if (!prepared.sources[i].from_file) continue;
    const NamedTensor& given = prepared.tensors[i];
    const TensorSpec* spec = FindSpec(specs, given.name);
    if (spec == nullptr) continue;
    const std::string read = fmt::format("input '{}' is read from a {} ({})", given.name, prepared.sources[i].source,
                                         given.tensor.Describe());
    if (auto shape = plan.shapes.find(given.name); shape != plan.shapes.end()) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("--shape {}={}: {}; {}", given.name,
                                                                ShapeToString(shape->second), read, kOnlySynthesised));
    }
    const auto& shape = given.tensor.shape();
    for (std::size_t d = 0; d < spec->dims.size() && d < shape.size(); ++d) {
      const DimSpec& dim = spec->dims[d];
      auto size = dim.fixed() || dim.symbol.empty() ? plan.dims.end() : plan.dims.find(dim.symbol);
      if (size == plan.dims.end() || size->second == shape[d]) continue;
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--dim {}={}: {}, where dimension {} ('{}') is {}; {}", dim.symbol, size->second,
                                   read, d, dim.symbol, shape[d], kOnlySynthesised));
    }
  }
  return OkStatus();
}

Result<SettledSizes> SettleSizes(Session& session, const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                 const InputSources& sources) {
  SettledSizes settled;
  if (!sources.files.empty()) return settled;  // the files' sizes are the sizes
  const std::vector<TensorSpec> named = NameUnnamedAxes(specs);
  const InputPlan& plan = sources.plan;
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(plan, named));
  bool open = false;
  for (const auto& spec : named) {
    if (plan.shapes.count(spec.name)) continue;
    for (const auto& d : spec.dims) open = open || (!d.fixed() && !plan.dims.count(d.symbol));
  }
  if (!open) return settled;
  const auto hints = model != nullptr ? AnalyzeInputValues(*model) : std::map<std::string, ValueHint>{};
  const ShapeSearch& search = settled.search.emplace(SearchShapes(session, specs, hints, plan, model));
  if (!search.runs) return settled;  // the run will say why
  // The search may have merged unnamed axes (renamed in search.specs): each original name gets its size.
  const InputPlan found = search.Plan();
  for (std::size_t i = 0; i < named.size() && i < search.specs.size(); ++i) {
    for (std::size_t d = 0; d < named[i].dims.size() && d < search.specs[i].dims.size(); ++d) {
      const std::string& symbol = named[i].dims[d].symbol;
      auto size = found.dims.find(search.specs[i].dims[d].symbol);
      if (!named[i].dims[d].fixed() && !plan.dims.count(symbol) && size != found.dims.end())
        settled.found.emplace(symbol, size->second);
    }
  }
  for (const auto& f : search.findings) settled.notes.push_back(f.Describe());
  settled.notes.insert(settled.notes.end(), search.notes.begin(), search.notes.end());
  return settled;
}

}  // namespace ortkit
