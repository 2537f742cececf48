#include "input_flags.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "ortkit/core/numbers.h"

namespace ortkit::cli {
namespace {

/// The sizes of a dimension: no tensor has a dimension past 2^62 elements (the synthesised inputs' memory
/// limit refuses far smaller ones, naming the input).
constexpr NumberRange<std::int64_t> kSizes{0, std::int64_t{1} << 62};

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) parts.push_back(item);
  return parts;
}

}  // namespace

void InputFlags::RegisterSizes(CLI::App* cmd, const std::string& dim_help, const std::string& shape_help,
                               const std::string& seed_help) {
  cmd->add_option("--dim", dims, dim_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--shape", shapes, shape_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", seed, seed_help)->capture_default_str()->check(SeedValidator());
}

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
  cmd->add_option("--seed", seed, "seed for synthesised inputs")->capture_default_str()->check(SeedValidator());
}

Result<std::vector<std::int64_t>> ParseShape(const std::string& text) {
  if (text.empty() || text == "scalar") return std::vector<std::int64_t>{};
  std::string normalised = text;
  std::replace(normalised.begin(), normalised.end(), 'x', ',');
  return ParseWholeNumberList(normalised, "shape '" + text + "'", kSizes);
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
      ORTKIT_ASSIGN_OR_RETURN(std::int64_t v, ParseWholeNumber(item.substr(eq + 1), "--dim " + item, kSizes));
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
  return plan;
}

Result<InputSources> ParseSources(const InputFlags& flags) {
  ORTKIT_ASSIGN_OR_RETURN(InputPlan plan, ParsePlan(flags));
  return InputSources{std::move(plan), flags.files};
}

}  // namespace ortkit::cli
