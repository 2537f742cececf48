// The inputs of `ortkit bench` at each shape point: the input flags with the point's sizes, files or
// synthesised values (PrepareInputs), and the sizes no flag sets, found once by running the model.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench_command.h"

namespace ortkit::cli {

InputFlags InputFlagsAt(const BenchFlags& flags, const ShapePoint& point) {
  InputFlags inputs = flags.inputs;
  inputs.dims.clear();
  for (const auto& [name, value] : point.dims) inputs.dims.push_back(fmt::format("{}={}", name, value));
  return inputs;
}

Result<std::vector<std::string>> SettleBenchSizes(OpenedModel& opened, const ShapePoint& first, BenchFlags& flags) {
  InputFlags inputs = InputFlagsAt(flags, first);
  ORTKIT_ASSIGN_OR_RETURN(auto notes, SettleSizes(*opened.session, opened.inputs, opened.model->proto.get(), inputs));
  flags.inputs.found_sizes = inputs.found_sizes;
  std::vector<std::string> sizes;
  for (const auto& [dim, size] : inputs.found_sizes) sizes.push_back(fmt::format("{}={}", dim, size));
  if (!sizes.empty())
    notes.insert(notes.begin(), fmt::format("dimensions no flag sets are at {} (typical of the inputs, or the smallest "
                                            "that run; --dim sets them)",
                                            fmt::join(sizes, " ")));
  return notes;
}

InputsForPoint PointInputMaker(const OpenedModel& opened, const BenchFlags& flags) {
  return [&opened, &flags](const ShapePoint& point) -> Result<PointInputs> {
    ORTKIT_ASSIGN_OR_RETURN(auto prepared,
                            PrepareInputs(opened.inputs, opened.model->proto.get(), InputFlagsAt(flags, point)));
    PointInputs made;
    for (std::size_t i = 0; i < prepared.sources.size(); ++i) {
      made.inputs.push_back({prepared.sources[i].name, prepared.tensors[i].tensor.shape(), prepared.sources[i].source});
    }
    made.tensors = std::move(prepared.tensors);
    return made;
  };
}

}  // namespace ortkit::cli
