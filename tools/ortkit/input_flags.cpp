#include "input_flags.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/tensor/test_case.h"
#include "ortkit/validate/shape_search.h"

namespace ortkit::cli {
namespace {

Result<std::int64_t> ParseSize(const std::string& text, const std::string& flag) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return static_cast<std::int64_t>(v);
  } catch (const std::exception&) {
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("{}: '{}' is not a size (a whole number >= 0)", flag, text));
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) parts.push_back(item);
  return parts;
}

}  // namespace

void InputFlags::Register(CLI::App* cmd) {
  cmd->add_option("--dim", dims, "size of a symbolic dimension, e.g. --dim batch=4,seq_len=128 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--shape", shapes, "full shape of one input, e.g. --shape pixel_values=1x3x224x224 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--input", files,
                  "input values: NAME=FILE (.npy, .pb), or FILE/DIR (.npz, folder of NAME.npy, test_data_set_N) "
                  "holding tensors named after inputs; the rest are synthesised (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", seed, "seed for synthesised inputs")->capture_default_str();
}

Result<std::vector<std::int64_t>> ParseShape(const std::string& text) {
  std::vector<std::int64_t> shape;
  if (text.empty() || text == "scalar") return shape;
  std::string normalised = text;
  std::replace(normalised.begin(), normalised.end(), ',', 'x');
  for (const auto& part : Split(normalised, 'x')) {
    ORTKIT_ASSIGN_OR_RETURN(std::int64_t v, ParseSize(part, "shape '" + text + "'"));
    shape.push_back(v);
  }
  return shape;
}

Result<InputPlan> ParsePlan(const InputFlags& flags) {
  InputPlan plan;
  plan.seed = flags.seed;
  for (const auto& group : flags.dims) {
    for (const auto& item : Split(group, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--dim '{}': expected NAME=SIZE, e.g. --dim batch=4", item));
      }
      ORTKIT_ASSIGN_OR_RETURN(std::int64_t v, ParseSize(item.substr(eq + 1), "--dim " + item));
      plan.dims[item.substr(0, eq)] = v;
    }
  }
  for (const auto& item : flags.shapes) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--shape '{}': expected NAME=D1xD2x..., e.g. --shape x=1x3x224x224", item));
    }
    ORTKIT_ASSIGN_OR_RETURN(auto shape, ParseShape(item.substr(eq + 1)));
    plan.shapes[item.substr(0, eq)] = std::move(shape);
  }
  for (const auto& [dim, size] : flags.found_sizes) plan.dims.emplace(dim, size);
  return plan;
}

Result<std::vector<std::string>> SettleSizes(Session& session, const std::vector<TensorSpec>& specs,
                                             const onnx::ModelProto* model, InputFlags& flags) {
  flags.found_sizes.clear();
  if (!flags.files.empty()) return std::vector<std::string>{};  // the files' sizes are the sizes
  const std::vector<TensorSpec> named = NameUnnamedAxes(specs);
  ORTKIT_ASSIGN_OR_RETURN(InputPlan plan, ParsePlan(flags));
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(plan, named));
  bool open = false;
  for (const auto& spec : named) {
    if (plan.shapes.count(spec.name)) continue;
    for (const auto& d : spec.dims) open = open || (!d.fixed() && !plan.dims.count(d.symbol));
  }
  if (!open) return std::vector<std::string>{};
  const auto hints = model != nullptr ? AnalyzeInputValues(*model) : std::map<std::string, ValueHint>{};
  const ShapeSearch search = SearchShapes(session, specs, hints, plan, model);
  if (!search.runs) return std::vector<std::string>{};  // the run will say why
  // The search may have merged unnamed axes (renamed in search.specs): each original name gets its size.
  const InputPlan found = search.Plan();
  for (std::size_t i = 0; i < named.size() && i < search.specs.size(); ++i) {
    for (std::size_t d = 0; d < named[i].dims.size() && d < search.specs[i].dims.size(); ++d) {
      const std::string& symbol = named[i].dims[d].symbol;
      auto size = found.dims.find(search.specs[i].dims[d].symbol);
      if (!named[i].dims[d].fixed() && !plan.dims.count(symbol) && size != found.dims.end())
        flags.found_sizes.emplace(symbol, size->second);
    }
  }
  std::vector<std::string> notes;
  for (const auto& f : search.findings) notes.push_back(f.Describe());
  notes.insert(notes.end(), search.notes.begin(), search.notes.end());
  return notes;
}

namespace {

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

}  // namespace

Result<PreparedInputs> PrepareInputs(const std::vector<TensorSpec>& described, const onnx::ModelProto* model,
                                     const InputFlags& flags) {
  // Unnamed dimensions are INPUT:AXIS, so that --dim x:2=224 can size them.
  const std::vector<TensorSpec> specs = NameUnnamedAxes(described);
  ORTKIT_ASSIGN_OR_RETURN(InputPlan plan, ParsePlan(flags));
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(plan, specs));
  std::vector<NamedTensor> given;
  std::vector<PreparedInput> given_sources;
  auto is_input = [&](const std::string& name) {
    return std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
  };
  for (const auto& item : flags.files) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && eq > 0 && is_input(item.substr(0, eq))) {
      const std::string name = item.substr(0, eq);
      // Named for the input whatever the file calls it: checked against that input.
      const TensorSpec& spec =
          *std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
      HeaderCheck check = [&](std::string_view, DataType type, std::span<const std::int64_t> shape) {
        return CheckAgainstSpec(fmt::format("--input {}", item), type, shape, spec);
      };
      ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensors(item.substr(eq + 1), check));
      if (tensors.size() != 1) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--input {}: the file holds {} tensors; NAME=FILE takes a file with one", item,
                                     tensors.size()));
      }
      tensors[0].name = name;
      given_sources.push_back({name, "file " + item.substr(eq + 1)});
      given.push_back(std::move(tensors[0]));
      continue;
    }
    ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensors(item, InputHeaderCheck(specs)));
    for (auto& t : tensors) {
      if (!is_input(t.name)) {
        std::vector<std::string> names;
        for (const auto& s : specs) names.push_back(s.name);
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--input {}: tensor '{}' is not an input of the model (inputs: {})", item, t.name,
                                     fmt::join(names, ", ")));
      }
      given_sources.push_back({t.name, "file " + item});
      given.push_back(std::move(t));
    }
  }
  // Synthesised inputs follow the given ones' sizes: a symbolic dimension takes the size the
  // given tensor has, unless --dim says otherwise.
  for (const auto& t : given) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == t.name; });
    for (std::size_t d = 0; d < spec->dims.size() && d < t.tensor.shape().size(); ++d) {
      if (!spec->dims[d].fixed() && !spec->dims[d].symbol.empty())
        plan.dims.emplace(spec->dims[d].symbol, t.tensor.shape()[d]);
    }
  }
  std::vector<TensorSpec> missing;
  for (const auto& s : specs) {
    if (std::none_of(given.begin(), given.end(), [&](const NamedTensor& t) { return t.name == s.name; }))
      missing.push_back(s);
  }
  const auto hints = model != nullptr ? AnalyzeInputValues(*model) : std::map<std::string, ValueHint>{};
  ORTKIT_ASSIGN_OR_RETURN(auto synthesised, SynthesizeInputs(missing, hints, plan));

  PreparedInputs prepared;
  for (const auto& spec : specs) {
    auto from = [&](std::vector<NamedTensor>& list) {
      return std::find_if(list.begin(), list.end(), [&](const NamedTensor& t) { return t.name == spec.name; });
    };
    if (auto it = from(given); it != given.end()) {
      prepared.tensors.push_back(std::move(*it));
      prepared.sources.push_back(*std::find_if(given_sources.begin(), given_sources.end(),
                                               [&](const PreparedInput& p) { return p.name == spec.name; }));
    } else if (auto s = from(synthesised); s != synthesised.end()) {
      std::string source = "synthesised: ";
      auto hint = hints.find(spec.name);
      if (hint != hints.end())
        source += hint->second.reason;
      else if (spec.type == DataType::kBool)
        source += "random true/false";
      else if (FindDataType(spec.type) != nullptr && FindDataType(spec.type)->is_float)
        source += "normal(0, 1)";
      else
        source += s->tensor.element_count() == 1 ? "an integer in [1, 4)" : "integers in [0, 4)";
      // A negative size is no size at all (check reports graph.bad-dimension); ONNX Runtime takes
      // it as dynamic, and the user must hear what it was given.
      for (const auto& [axis, value] : NegativeDims(model, spec.name)) {
        source += fmt::format("; the model declares dimension {} as {}, which is not a size: it was given {}", axis,
                              value, s->tensor.shape()[axis]);
      }
      prepared.tensors.push_back(std::move(*s));
      prepared.sources.push_back({spec.name, source});
    }
  }
  return prepared;
}

}  // namespace ortkit::cli
