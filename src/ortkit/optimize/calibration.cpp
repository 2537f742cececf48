#include "ortkit/optimize/calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>
#include <span>

#include <fmt/format.h>

#include "ortkit/bench/runner.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/runtime/run.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

bool IsSampleFile(const fs::path& p) { return p.extension() == ".npz" || p.extension() == ".pb"; }

// A folder that is one sample: a test_data_set_N (input_K.pb) or a folder of NAME.npy files.
bool IsSampleFolder(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file(ec) && (ext == ".npy" || ext == ".pb")) return true;
  }
  return false;
}

Status AddPath(const fs::path& path, std::vector<fs::path>& samples) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    samples.push_back(path);
    return OkStatus();
  }
  if (!fs::is_directory(path, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("--calibration '{}': no such file or folder", path.string()));
  }
  if (IsSampleFolder(path)) {
    samples.push_back(path);
    return OkStatus();
  }
  std::vector<fs::path> children;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if ((entry.is_regular_file(ec) && IsSampleFile(entry.path())) ||
        (entry.is_directory(ec) && IsSampleFolder(entry.path())))
      children.push_back(entry.path());
  }
  if (children.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--calibration '{}' holds no sample: expected .npz files, test_data_set_N folders or "
                                 "folders of NAME.npy files, or one of them",
                                 path.string()));
  }
  std::sort(children.begin(), children.end());
  samples.insert(samples.end(), children.begin(), children.end());
  return OkStatus();
}

onnx::ValueInfoProto FloatOutput(const std::string& name, bool scalar) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  if (scalar) t->mutable_shape();
  return v;
}

// The model with every tensor's minimum and maximum (and with histograms, the tensor itself) as outputs,
// written to `path`; `model` is restored before returning.
Status WriteAugmented(onnx::ModelProto& model, const std::vector<std::string>& tensors, bool expose,
                      const fs::path& path) {
  onnx::GraphProto& g = *model.mutable_graph();
  const int nodes = g.node_size(), outputs = g.output_size();
  std::set<std::string> already;
  for (const auto& o : g.output()) already.insert(o.name());
  for (const auto& t : tensors) {
    for (const char* op : {"ReduceMin", "ReduceMax"}) {
      auto* n = g.add_node();
      n->set_op_type(op);
      n->set_name(fmt::format("ortkit_calibration_{}_{}", op, t));
      n->add_input(t);
      n->add_output(fmt::format("{}::{}", t, op));
      auto* keep = n->add_attribute();
      keep->set_name("keepdims");
      keep->set_type(onnx::AttributeProto::INT);
      keep->set_i(0);
      *g.add_output() = FloatOutput(n->output(0), true);
    }
    if (expose && already.count(t) == 0) *g.add_output() = FloatOutput(t, false);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const bool written = out && model.SerializeToOstream(&out);
  g.mutable_node()->DeleteSubrange(nodes, g.node_size() - nodes);
  g.mutable_output()->DeleteSubrange(outputs, g.output_size() - outputs);
  if (!written) return MakeError(ErrorKind::kIo, fmt::format("cannot write '{}'", path.string()));
  return OkStatus();
}

// A histogram of fixed bins over [low, high]: of the values (percentile) or of their magnitudes (entropy).
struct Histogram {
  float low = 0;
  float high = 0;
  std::vector<double> counts;

  void Add(std::span<const float> values, bool magnitudes) {
    const double width = (static_cast<double>(high) - low) / static_cast<double>(counts.size());
    if (!(width > 0)) return;
    for (float v : values) {
      if (!std::isfinite(v)) continue;
      const double x = magnitudes ? std::abs(v) : v;
      const auto bin = static_cast<std::int64_t>((x - low) / width);
      counts[static_cast<std::size_t>(
          std::clamp<std::int64_t>(bin, 0, static_cast<std::int64_t>(counts.size()) - 1))] += 1;
    }
  }
};

TensorRange WithZero(TensorRange r) { return {std::min(r.min, 0.0f), std::max(r.max, 0.0f)}; }

// Pass one: the extremes of every tensor over every sample, from the added ReduceMin/ReduceMax outputs.
Status CollectExtremes(Session& session, const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                       const CalibrationSamples& samples, const std::vector<TensorSpec>& specs,
                       CalibrationRanges& ranges) {
  RunRequest request;
  for (const auto& t : tensors) {
    request.output_names.push_back(t + "::ReduceMin");
    request.output_names.push_back(t + "::ReduceMax");
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ORTKIT_ASSIGN_OR_RETURN(auto inputs, samples.Read(i, specs, model));
    request.inputs = inputs;
    auto outputs = RunSession(session, request);
    if (!outputs.ok()) {
      return MakeError(ErrorKind::kRuntime,
                       fmt::format("calibration sample '{}': {}", samples.path(i).string(), outputs.error().message));
    }
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      const float lo = static_cast<float>((*outputs)[2 * k].tensor.AsDouble(0));
      const float hi = static_cast<float>((*outputs)[2 * k + 1].tensor.AsDouble(0));
      auto [it, fresh] = ranges.ranges.try_emplace(tensors[k], TensorRange{lo, hi});
      if (!fresh) it->second = {std::min(it->second.min, lo), std::max(it->second.max, hi)};
    }
    ranges.samples = static_cast<std::int64_t>(i + 1);
  }
  return OkStatus();
}

// Pass two, for the histogram methods: each tensor's values binned over the extremes pass one found.
Status CollectHistograms(Session& session, const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                         const CalibrationSamples& samples, const std::vector<TensorSpec>& specs,
                         const CalibrationOptions& options, CalibrationRanges& ranges) {
  const bool magnitudes = options.method == CalibrationMethod::kEntropy;
  std::vector<Histogram> histograms(tensors.size());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const TensorRange r = ranges.ranges[tensors[k]];
    histograms[k] = magnitudes ? Histogram{0, std::max(std::abs(r.min), std::abs(r.max))} : Histogram{r.min, r.max};
    histograms[k].counts.assign(static_cast<std::size_t>(options.bins), 0);
  }
  RunRequest request;
  request.output_names = tensors;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ORTKIT_ASSIGN_OR_RETURN(auto inputs, samples.Read(i, specs, model));
    request.inputs = inputs;
    auto outputs = RunSession(session, request);
    if (!outputs.ok()) {
      return MakeError(ErrorKind::kRuntime,
                       fmt::format("calibration sample '{}': {}", samples.path(i).string(), outputs.error().message));
    }
    for (std::size_t k = 0; k < tensors.size(); ++k)
      histograms[k].Add((*outputs)[k].tensor.values<float>(), magnitudes);
  }
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    TensorRange& r = ranges.ranges[tensors[k]];
    const TensorRange cut = RangeFromHistogram(histograms[k].counts, histograms[k].low, histograms[k].high,
                                               options.method, options.percentile);
    r = {std::max(r.min, cut.min), std::min(r.max, cut.max)};
  }
  return OkStatus();
}

// Kullback-Leibler divergence of q from p, both normalised here; bins where p is 0 add nothing, and q is
// smoothed so that a bin p holds and q lacks costs a large but finite amount.
double Divergence(const std::vector<double>& p, const std::vector<double>& q) {
  const double sp = std::accumulate(p.begin(), p.end(), 0.0), sq = std::accumulate(q.begin(), q.end(), 0.0);
  if (sp <= 0 || sq <= 0) return INFINITY;
  double kl = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    const double pi = p[i] / sp, qi = std::max(q[i] / sq, 1e-12);
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

// The magnitude threshold whose clipped histogram, quantised to 128 levels, diverges least from the
// histogram of magnitudes (the method of TensorRT's and ONNX Runtime's entropy calibration).
float EntropyThreshold(const std::vector<double>& counts, double width) {
  constexpr std::size_t kLevels = 128;
  const std::size_t bins = counts.size();
  if (bins <= kLevels) return static_cast<float>(width * static_cast<double>(bins));
  double best = INFINITY;
  std::size_t best_i = bins;
  const std::size_t stride = std::max<std::size_t>(1, bins / 256);
  for (std::size_t i = kLevels; i <= bins; i += stride) {
    std::vector<double> p(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(i));
    p.back() += std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(i), counts.end(), 0.0);
    std::vector<double> q(i, 0);
    for (std::size_t j = 0; j < kLevels; ++j) {
      const std::size_t begin = j * i / kLevels, end = (j + 1) * i / kLevels;
      double sum = 0;
      std::size_t used = 0;
      for (std::size_t k = begin; k < end; ++k) {
        sum += counts[k];
        used += counts[k] > 0;
      }
      for (std::size_t k = begin; k < end && used > 0; ++k) q[k] = counts[k] > 0 ? sum / static_cast<double>(used) : 0;
    }
    const double kl = Divergence(p, q);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
  }
  return static_cast<float>((static_cast<double>(best_i) + 0.5) * width);
}

}  // namespace

const char* ToString(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax: return "minmax";
    case CalibrationMethod::kPercentile: return "percentile";
    case CalibrationMethod::kEntropy: return "entropy";
  }
  return "minmax";
}

Result<CalibrationMethod> ParseCalibrationMethod(std::string_view text) {
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy}) {
    if (text == ToString(m)) return m;
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("--calibration-method '{}': expected minmax, percentile or entropy", text));
}

Result<CalibrationSamples> CalibrationSamples::List(const std::vector<fs::path>& paths) {
  CalibrationSamples samples;
  for (const auto& p : paths) ORTKIT_RETURN_IF_ERROR(AddPath(p, samples.samples_));
  return samples;
}

Result<std::vector<NamedTensor>> CalibrationSamples::Read(std::size_t i, const std::vector<TensorSpec>& specs,
                                                          const onnx::ModelProto& model) const {
  InputSources sources;
  sources.files = {samples_[i].string()};
  auto prepared = PrepareInputs(specs, &model, sources);
  if (!prepared.ok()) {
    // The readers name the file as the --input flag that gave it; here it is a calibration sample.
    std::string message = prepared.error().message;
    const std::string flag = fmt::format("--input {}: ", samples_[i].string());
    if (message.rfind(flag, 0) == 0) message.erase(0, flag.size());
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("calibration sample '{}': {}", samples_[i].string(), message));
  }
  for (const auto& source : prepared->sources) {
    if (source.from_file) continue;
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("calibration sample '{}' holds no tensor for input '{}': every input must come from "
                                 "the sample (name its tensors after the model's inputs)",
                                 samples_[i].string(), source.name));
  }
  return std::move(prepared->tensors);
}

TensorRange RangeFromHistogram(const std::vector<double>& counts, float low, float high, CalibrationMethod method,
                               double percentile) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const double width = (static_cast<double>(high) - low) / static_cast<double>(std::max<std::size_t>(counts.size(), 1));
  if (total <= 0 || !(width > 0)) return WithZero({low, high});
  if (method == CalibrationMethod::kPercentile) {
    const double tail = total * (100 - percentile) / 200;
    double seen = 0;
    std::size_t first = 0, last = counts.size() - 1;
    while (first < counts.size() && seen + counts[first] <= tail) seen += counts[first++];
    seen = 0;
    while (last > first && seen + counts[last] <= tail) seen += counts[last--];
    return WithZero({static_cast<float>(low + first * width), static_cast<float>(low + (last + 1) * width)});
  }
  const float threshold = EntropyThreshold(counts, width);
  return WithZero({-threshold, threshold});
}

}  // namespace ortkit

namespace ortkit {

Result<CalibrationRanges> Calibrate(Runtime& runtime, onnx::ModelProto& model, const std::vector<std::string>& tensors,
                                    const CalibrationSamples& samples, const CalibrationOptions& options,
                                    const std::filesystem::path& scratch) {
  const auto begin = std::chrono::steady_clock::now();
  CalibrationRanges ranges;
  ranges.method = options.method;
  if (samples.size() == 0) return MakeError(ErrorKind::kInvalidArgument, "calibration: no samples");
  const bool histograms = options.method != CalibrationMethod::kMinMax;
  const fs::path augmented = scratch / "calibration.onnx";
  ORTKIT_RETURN_IF_ERROR(WriteAugmented(model, tensors, histograms, augmented));
  {
    auto session = Session::Create(runtime, augmented, options.session);
    std::error_code ignored;
    fs::remove(augmented, ignored);
    if (!session.ok()) {
      return MakeError(ErrorKind::kRuntime, fmt::format("calibration: the model with its ranges exposed does not "
                                                        "load: {}",
                                                        session.error().message));
    }
    ORTKIT_ASSIGN_OR_RETURN(auto specs, DescribeInputs(**session));
    ORTKIT_RETURN_IF_ERROR(CollectExtremes(**session, model, tensors, samples, specs, ranges));
    if (histograms)
      ORTKIT_RETURN_IF_ERROR(CollectHistograms(**session, model, tensors, samples, specs, options, ranges));
  }
  for (auto& [name, r] : ranges.ranges) r = WithZero(r);
  ranges.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ranges.peak_rss_bytes = PeakResidentBytes();
  return ranges;
}

}  // namespace ortkit
