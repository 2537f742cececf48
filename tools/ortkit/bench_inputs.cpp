// The inputs of `ortkit bench` at each shape point: the flags' sources with the point's sizes set as
// values, files or synthesised values (PrepareInputs), and the sizes no flag sets, found once by running.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench_command.h"

namespace ortkit::cli {
namespace {

/// The sources at `point`: its sizes, then those found by running for the dimensions it leaves open.
InputSources SourcesAt(const BenchInputSources& inputs, const ShapePoint& point) {
  InputSources at = inputs.sources;
  at.plan.dims = point.dims;
  for (const auto& [dim, size] : inputs.found_sizes) at.plan.dims.emplace(dim, size);
  return at;
}

}  // namespace

Result<BenchInputSources> ParseBenchInputs(const BenchFlags& flags) {
  BenchInputSources inputs;
  ORTKIT_ASSIGN_OR_RETURN(inputs.sources, ParseSources(flags.inputs));
  return inputs;
}

Result<std::vector<std::string>> SettleBenchSizes(OpenedModel& opened, const ShapePoint& first,
                                                  BenchInputSources& inputs) {
  inputs.found_sizes.clear();
  if (!inputs.sources.files.empty()) return std::vector<std::string>{};  // the files' sizes are the sizes
  ORTKIT_ASSIGN_OR_RETURN(SettledSizes settled, SettleSizes(*opened.session, opened.inputs, opened.model->proto.get(),
                                                            SourcesAt(inputs, first)));
  inputs.found_sizes = std::move(settled.found);
  std::vector<std::string> sizes;
  for (const auto& [dim, size] : inputs.found_sizes) sizes.push_back(fmt::format("{}={}", dim, size));
  if (!sizes.empty())
    settled.notes.insert(settled.notes.begin(),
                         fmt::format("dimensions no flag sets are at {} (typical of the inputs, or the smallest "
                                     "that run; --dim sets them)",
                                     fmt::join(sizes, " ")));
  return std::move(settled.notes);
}

InputsForPoint PointInputMaker(const OpenedModel& opened, const BenchInputSources& inputs) {
  return [&opened, &inputs](const ShapePoint& point) -> Result<PointInputs> {
    ORTKIT_ASSIGN_OR_RETURN(auto prepared,
                            PrepareInputs(opened.inputs, opened.model->proto.get(), SourcesAt(inputs, point)));
    PointInputs made;
    for (std::size_t i = 0; i < prepared.sources.size(); ++i) {
      made.inputs.push_back({prepared.sources[i].name, prepared.tensors[i].tensor.shape(), prepared.sources[i].source});
    }
    made.tensors = std::move(prepared.tensors);
    return made;
  };
}

}  // namespace ortkit::cli
