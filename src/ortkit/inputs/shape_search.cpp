#include "ortkit/inputs/shape_search.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/text.h"

namespace ortkit {
namespace {

// Growth stops at 4096 along an axis: attention over a sequence takes its square in memory (65,536
// positions of a small encoder took all 24 GiB of a test machine).
constexpr std::int64_t kLargestSearched = 4096;
constexpr std::uint64_t kSearchBytes = std::uint64_t{64} << 20;  // inputs of one search run
constexpr std::int64_t kTypicalTokens = 128;                     // a text's length, in tokens
constexpr std::int64_t kTypicalSampleRate = 16000;               // one second of speech-rate audio

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The dimension's first input and axis.
std::pair<std::string, int> WhereIs(const std::vector<TensorSpec>& specs, const std::string& dim) {
  for (const auto& spec : specs) {
    for (std::size_t i = 0; i < spec.dims.size(); ++i) {
      if (!spec.dims[i].fixed() && spec.dims[i].symbol == dim) return {spec.name, static_cast<int>(i)};
    }
  }
  return {"", -1};
}

std::int64_t SizeIn(const InputPlan& plan, const std::vector<TensorSpec>& specs, const std::string& dim) {
  if (auto it = plan.dims.find(dim); it != plan.dims.end()) return it->second;
  const auto [input, axis] = WhereIs(specs, dim);
  return DefaultDimSize(dim, static_cast<std::size_t>(std::max(axis, 0)));
}

// Dimensions the search may change: symbolic, not set by the user, not a sum of others, not the batch.
std::vector<std::string> FreeDims(const std::vector<TensorSpec>& specs, const InputPlan& base) {
  std::vector<std::string> out;
  for (const auto& spec : specs) {
    for (std::size_t i = 0; i < spec.dims.size(); ++i) {
      const std::string& symbol = spec.dims[i].symbol;
      if (spec.dims[i].fixed() || symbol.empty() || base.dims.count(symbol) || base.dim_sums.count(symbol)) continue;
      // A batch is never searched: the first axis, or a batch-like name.
      if (i == 0 || (UnnamedAxisOf(symbol) < 0 && DefaultDimSize(symbol, i) == 1)) continue;
      if (std::find(out.begin(), out.end(), symbol) == out.end()) out.push_back(symbol);
    }
  }
  return out;
}

// Grows `dims` together by powers of two until the model runs: true (and the sizes in `search.grown`)
// when it does.
bool Grow(Session& session, ShapeSearch& search, const std::map<std::string, ValueHint>& hints,
          const std::vector<std::string>& dims) {
  const InputPlan start = search.Plan();
  for (std::int64_t factor = 2;; factor *= 2) {
    InputPlan probe = start;
    probe.max_bytes = std::min(probe.max_bytes, kSearchBytes);
    for (const auto& d : dims) {
      const std::int64_t size = std::max<std::int64_t>(SizeIn(start, search.specs, d), 1) * factor;
      if (size > kLargestSearched) return false;
      probe.dims[d] = size;
    }
    if (!RunFailure(session, search.specs, hints, probe)) {
      for (const auto& d : dims) search.grown[d] = probe.dims[d];
      return true;
    }
  }
}

void Rename(std::vector<TensorSpec>& specs, const std::string& from, const std::string& to) {
  for (auto& spec : specs) {
    for (auto& d : spec.dims) {
      if (d.symbol == from) d.symbol = to;
    }
  }
}

// "input 'a' axis 0 ('unk__330')": where an axis is, for a note.
std::string DescribeAxis(const std::vector<TensorSpec>& specs, const std::string& dim) {
  const auto [input, axis] = WhereIs(specs, dim);
  if (input.empty()) return fmt::format("'{}'", dim);
  const bool unnamed = UnnamedAxisOf(dim) >= 0;
  return unnamed ? fmt::format("input '{}' axis {}", input, axis)
                 : fmt::format("input '{}' axis {} ('{}')", input, axis, dim);
}

// Axes with names of their own that run only at equal sizes become one axis: the batch of two inputs that
// a converter named apart (tf2onnx's unk__330 and unk__331, joined by a Concat), a state whose batch is its
// second axis. Sweeping or searching them apart would fail for a reason of ortkit's making, and a size
// limit found that way would be no limit of the model's. Tied when sizes 2s and 3s fail together while 2s
// and 3s each run on all of them (a limit between 2s and 3s would fail both).
void TieEqualAxes(Session& session, ShapeSearch& search, const std::map<std::string, ValueHint>& hints) {
  std::vector<std::string> free;
  for (const auto& spec : search.specs) {
    for (const auto& d : spec.dims) {
      if (d.fixed() || d.symbol.empty() || search.base.dims.count(d.symbol) || search.base.dim_sums.count(d.symbol) ||
          std::find(free.begin(), free.end(), d.symbol) != free.end())
        continue;
      free.push_back(d.symbol);
    }
  }
  std::set<std::string> merged;
  for (std::size_t i = 0; i < free.size(); ++i) {
    if (merged.count(free[i])) continue;
    const InputPlan plan = search.Plan();
    const std::int64_t size = std::max<std::int64_t>(SizeIn(plan, search.specs, free[i]), 1);
    std::vector<std::string> group;
    InputPlan probe = plan;
    probe.max_bytes = std::min(probe.max_bytes, kSearchBytes);
    probe.dims[free[i]] = size * 2;
    for (std::size_t j = i + 1; j < free.size(); ++j) {
      if (merged.count(free[j]) || SizeIn(plan, search.specs, free[j]) != size) continue;
      group.push_back(free[j]);
      probe.dims[free[j]] = size * 3;
    }
    if (group.empty() || !RunFailure(session, search.specs, hints, probe)) continue;  // an axis of its own
    InputPlan larger = probe;
    larger.dims[free[i]] = size * 3;
    for (const auto& other : group) probe.dims[other] = size * 2;
    if (RunFailure(session, search.specs, hints, probe) || RunFailure(session, search.specs, hints, larger))
      continue;  // not a matter of equal sizes: a limit between them
    for (auto it = group.begin(); it != group.end();) {
      InputPlan without = probe;
      without.dims[*it] = size * 3;
      if (!RunFailure(session, search.specs, hints, without)) {
        probe = without;
        it = group.erase(it);
      } else {
        ++it;
      }
    }
    if (group.empty()) continue;
    std::vector<std::string> described = {DescribeAxis(search.specs, free[i])};
    for (const auto& other : group) described.push_back(DescribeAxis(search.specs, other));
    for (const auto& other : group) {
      Rename(search.specs, other, free[i]);
      search.grown.erase(other);
      merged.insert(other);
    }
    search.tied.push_back({free[i]});
    search.tied.back().insert(search.tied.back().end(), group.begin(), group.end());
    search.notes.push_back(
        fmt::format("{} must be equal (they run only at equal sizes): sized and swept as one axis "
                    "'{}'",
                    fmt::join(described, " and "), free[i]));
  }
}

// The whole numbers in a metadata value: "[320, 320]" -> {320, 320}, "32" -> {32}.
std::vector<std::int64_t> NumbersIn(const std::string& text) {
  std::vector<std::int64_t> numbers;
  std::int64_t value = 0;
  bool digits = false;
  for (char c : text + " ") {
    if (c >= '0' && c <= '9' && value < (std::int64_t{1} << 40)) {
      value = value * 10 + (c - '0');
      digits = true;
    } else if (digits) {
      numbers.push_back(value);
      value = 0;
      digits = false;
    }
  }
  return numbers;
}

std::vector<std::int64_t> MetadataNumbers(const onnx::ModelProto* model, const std::string& key) {
  if (model == nullptr) return {};
  for (const auto& prop : model->metadata_props()) {
    if (prop.key() == key) return NumbersIn(prop.value());
  }
  return {};
}

// The symbols of image inputs' height and width (rank 4, with 1, 3 or 4 channels first or last).
std::vector<std::string> ImageAxes(const std::vector<TensorSpec>& specs) {
  auto channels = [](const DimSpec& d) { return d.fixed() && (d.value == 1 || d.value == 3 || d.value == 4); };
  std::vector<std::string> axes;
  for (const auto& spec : specs) {
    const DataTypeInfo* info = FindDataType(spec.type);
    if (spec.dims.size() != 4 || info == nullptr || !info->is_float) continue;
    const bool first = channels(spec.dims[1]);
    if (!first && !channels(spec.dims[3])) continue;
    for (std::size_t axis : {first ? 2 : 1, first ? 3 : 2}) {
      const DimSpec& d = spec.dims[axis];
      axes.push_back(!d.fixed() && !d.symbol.empty() ? d.symbol : "");
    }
  }
  return axes;
}

}  // namespace

std::string SizeFinding::Describe() const {
  const std::string where = input.empty() ? "" : fmt::format(" (input '{}' axis {})", input, axis);
  const std::string need =
      at_least > 0 ? fmt::format("needs at least {}", at_least) : fmt::format("runs up to {}", at_most);
  const std::string in_steps = step > 1 ? fmt::format(" (in multiples of {}, the model's stride)", step) : "";
  return fmt::format("'{}'{} {}{}: at {} ONNX Runtime fails: {}", dim, where, need, in_steps, failed_size, error);
}

nlohmann::json SizeFinding::ToJson() const {
  nlohmann::json j = {{"dim", dim}, {"input", input}, {"axis", axis}, {"failed_size", failed_size}, {"error", error}};
  if (at_least > 0) j["at_least"] = at_least;
  if (at_most > 0) j["at_most"] = at_most;
  if (step > 1) j["step"] = step;
  return j;
}

std::int64_t ShapeSearch::StepOf(const std::string& dim) const {
  auto it = steps.find(dim);
  return it == steps.end() ? 1 : it->second;
}

InputPlan ShapeSearch::Plan() const {
  InputPlan plan = base;
  for (const auto& [dim, size] : grown) plan.dims.emplace(dim, size);
  return plan;
}

std::optional<std::string> RunFailure(Session& session, const std::vector<TensorSpec>& specs,
                                      const std::map<std::string, ValueHint>& hints, const InputPlan& plan) {
  auto inputs = SynthesizeInputs(specs, hints, plan);
  if (!inputs.ok()) return inputs.error().message;
  auto outputs = RunSession(session, RunRequest{*inputs, {}});
  if (!outputs.ok()) return outputs.error().message;
  return std::nullopt;
}

std::optional<SizeFinding> FindSizeBoundary(Session& session, const std::vector<TensorSpec>& specs,
                                            const std::map<std::string, ValueHint>& hints, const InputPlan& plan,
                                            const std::string& dim, std::int64_t passing, std::int64_t failing,
                                            std::int64_t step) {
  InputPlan probe = plan;
  probe.max_bytes = std::min(probe.max_bytes, kSearchBytes);
  probe.dims[dim] = failing;
  auto error = RunFailure(session, specs, hints, probe);
  if (!error) return std::nullopt;
  // The search runs over multiples of `step` (k * step); the failing size stands at its own index,
  // rounded away from the passing size, so the order of sizes is kept.
  if (step < 1 || passing % step != 0) step = 1;
  const bool below = failing < passing;
  const std::int64_t failing_k = below ? failing / step : (failing + step - 1) / step;
  auto size_of = [&](std::int64_t k) { return k == failing_k ? failing : k * step; };
  auto fails = [&](std::int64_t k) {
    probe.dims[dim] = size_of(k);
    auto failed = RunFailure(session, specs, hints, probe);
    if (!failed) return false;
    error = std::move(failed);
    return true;
  };
  std::int64_t good = passing / step;
  std::int64_t bad = failing_k;
  // Halve (or double) from the passing size towards the failing one first: sizes that must fit a stride
  // run at 320 and 40 but not at 24, so the boundary is searched next to the nearest failure.
  for (std::int64_t k = below ? good / 2 : good * 2; below ? k > bad : k < bad; k = below ? k / 2 : k * 2) {
    if (fails(k)) {
      bad = k;
      break;
    }
    good = k;
  }
  while (std::llabs(bad - good) > 1) {
    const std::int64_t mid = good + (bad - good) / 2;
    (fails(mid) ? bad : good) = mid;
  }
  SizeFinding finding;
  finding.dim = dim;
  std::tie(finding.input, finding.axis) = WhereIs(specs, dim);
  (below ? finding.at_least : finding.at_most) = good * step;
  finding.failed_size = size_of(bad);
  finding.step = step;
  finding.error = FirstLine(*error);
  return finding;
}

std::map<std::string, std::int64_t> SizeSteps(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model) {
  const auto stride = MetadataNumbers(model, "stride");
  std::map<std::string, std::int64_t> steps;
  if (stride.size() != 1 || stride[0] < 2 || stride[0] > 1024) return steps;
  for (const auto& symbol : ImageAxes(specs)) {
    if (!symbol.empty()) steps.emplace(symbol, stride[0]);
  }
  return steps;
}

std::map<std::string, std::int64_t> TypicalSizes(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                                 const std::map<std::string, ValueHint>& hints) {
  std::vector<std::int64_t> image{224, 224};
  auto imgsz = MetadataNumbers(model, "imgsz");  // "[320, 320]" or "640"
  if (imgsz.size() == 1) imgsz.push_back(imgsz[0]);
  if (imgsz.size() == 2 && imgsz[0] > 0 && imgsz[0] <= 8192 && imgsz[1] > 0 && imgsz[1] <= 8192) image = imgsz;
  std::map<std::string, std::int64_t> typical;
  // A first axis whose name says nothing (paddle2onnx's p2o.DynamicDimension.0) holds rows: 1, as a batch.
  for (const auto& spec : specs) {
    if (spec.dims.empty() || spec.dims[0].fixed()) continue;
    const std::string& symbol = spec.dims[0].symbol;
    if (UnnamedAxisOf(symbol) < 0 && DefaultDimSize(symbol, 0) == 4) typical.emplace(symbol, 1);
  }
  const auto image_axes = ImageAxes(specs);
  for (std::size_t i = 0; i < image_axes.size(); ++i) {
    if (!image_axes[i].empty()) typical.emplace(image_axes[i], image[i % 2]);
  }
  // Text: token ids [batch, sequence] that index a table get 128 positions (the search halves it where a
  // position table is shorter).
  for (const auto& spec : specs) {
    auto hint = hints.find(spec.name);
    if (spec.dims.size() != 2 || spec.dims[1].fixed() || hint == hints.end() ||
        hint->second.kind != ValueHint::Kind::kIndices)
      continue;
    typical.emplace(spec.dims[1].symbol, kTypicalTokens);
  }
  // Audio: samples [batch, samples] or [batch, 1, samples], recognised by name or by a sample-rate input,
  // get one second at that rate (16 kHz unless the rate input says otherwise).
  std::int64_t rate = 0;
  for (const auto& spec : specs) {
    if (spec.name != "sr" && !NameHas(spec.name, {"sample_rate", "sampling_rate"})) continue;
    auto hint = hints.find(spec.name);
    rate = hint != hints.end() && hint->second.kind == ValueHint::Kind::kChoice && hint->second.choice >= 8000 &&
                   hint->second.choice <= 48000
               ? static_cast<std::int64_t>(hint->second.choice)
               : kTypicalSampleRate;
  }
  for (const auto& spec : specs) {
    const DataTypeInfo* info = FindDataType(spec.type);
    if (info == nullptr || !info->is_float || spec.dims.empty() || spec.dims.size() > 3) continue;
    const DimSpec& samples = spec.dims.back();
    if (samples.fixed() || samples.symbol.empty() ||
        (spec.dims.size() == 3 && !(spec.dims[1].fixed() && spec.dims[1].value == 1)))
      continue;
    const bool named = NameHas(spec.name + " " + (UnnamedAxisOf(samples.symbol) < 0 ? samples.symbol : ""),
                               {"audio", "wav", "pcm", "speech", "sample", "signal", "input_values"});
    if (named || rate > 0) typical.emplace(samples.symbol, rate > 0 ? rate : kTypicalSampleRate);
  }
  return typical;
}

namespace {

// SearchShapes up to its size limits: the sizes grown until the model runs, and the axes tied. `ran_at_once`:
// nothing had to grow.
ShapeSearch GrowAndTie(Session& session, std::vector<TensorSpec> specs, const std::map<std::string, ValueHint>& hints,
                       const InputPlan& base, const onnx::ModelProto* model, bool& ran_at_once) {
  ShapeSearch search;
  search.specs = NameUnnamedAxes(std::move(specs));
  search.base = base;
  search.steps = SizeSteps(search.specs, model);
  // The typical sizes, then smaller images (a text-line recogniser takes at most 80 rows) until one runs.
  const auto typical = TypicalSizes(search.specs, model, hints);
  for (const std::int64_t divisor : {1, 2, 4, 7}) {
    search.grown.clear();
    for (const auto& [dim, size] : typical) {
      if (!base.dims.count(dim)) search.grown[dim] = size == 1 ? 1 : std::max<std::int64_t>(size / divisor, 1);
    }
    if (search.grown.empty() || !RunFailure(session, search.specs, hints, search.Plan())) break;
  }
  if (!search.grown.empty() && RunFailure(session, search.specs, hints, search.Plan())) search.grown.clear();
  ran_at_once = !RunFailure(session, search.specs, hints, search.Plan());
  if (ran_at_once) {
    search.runs = true;
  } else {
    // Each dimension alone first (the smallest change), then all of them together (a detector that
    // needs height and width both at least its stride).
    const auto free = FreeDims(search.specs, base);
    for (const auto& d : free) {
      if ((search.runs = Grow(session, search, hints, {d}))) break;
    }
    if (!search.runs && free.size() > 1) search.runs = Grow(session, search, hints, free);
    if (!search.runs) return search;
  }
  // Ties first: a limit found by moving one of two axes that must be equal would be ortkit's, not the model's.
  TieEqualAxes(session, search, hints);
  return search;
}

}  // namespace

ShapeSearch SearchShapes(Session& session, std::vector<TensorSpec> specs, const std::map<std::string, ValueHint>& hints,
                         const InputPlan& base, const onnx::ModelProto* model) {
  bool ran_at_once = false;
  ShapeSearch search = GrowAndTie(session, std::move(specs), hints, base, model, ran_at_once);
  if (!search.runs || ran_at_once) return search;  // nothing was grown: no limit to find
  for (const auto& [dim, size] : search.grown) {
    auto finding = FindSizeBoundary(session, search.specs, hints, search.Plan(), dim, size,
                                    SizeIn(base, search.specs, dim), search.StepOf(dim));
    if (finding) search.findings.push_back(std::move(*finding));
  }
  return search;
}

std::vector<std::vector<std::string>> FindTiedAxes(Session& session, const std::vector<TensorSpec>& specs,
                                                   const std::map<std::string, ValueHint>& hints) {
  bool ran_at_once = false;
  return GrowAndTie(session, specs, hints, InputPlan{}, nullptr, ran_at_once).tied;
}

}  // namespace ortkit
