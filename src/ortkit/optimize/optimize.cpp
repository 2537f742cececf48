#include "ortkit/optimize/optimize.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/runner.h"
#include "ortkit/core/cpus.h"
#include "ortkit/core/scratch_folder.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/graph_walk.h"
#include "ortkit/model/model_file.h"
#include "ortkit/model/output_purpose.h"
#include "ortkit/model/quantization.h"
#include "ortkit/model/summary.h"
#include "ortkit/optimize/candidate_trials.h"
#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/runtime/run.h"

namespace ortkit {
namespace {

using Clock = std::chrono::steady_clock;
using State = CandidateOutcome::State;

double SecondsSince(Clock::time_point begin) { return std::chrono::duration<double>(Clock::now() - begin).count(); }

std::vector<std::string> SplitChain(const std::string& candidate) {
  std::vector<std::string> passes;
  std::size_t begin = 0;
  while (begin <= candidate.size()) {
    const std::size_t plus = std::min(candidate.find('+', begin), candidate.size());
    passes.push_back(candidate.substr(begin, plus - begin));
    begin = plus + 1;
  }
  return passes;
}

bool Quantizes(const std::string& pass) { return pass.rfind("int", 0) == 0 || pass == "float16"; }

std::int64_t FileBytes(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::int64_t>(size);
}

/// The provenance the written model carries (ortkit inspect shows it).
void AddProvenance(onnx::ModelProto& model, const CandidateOutcome& candidate, const OptimizePassContext& context) {
  nlohmann::json passes = nlohmann::json::array();
  for (std::size_t i = 0; i < candidate.passes.size(); ++i) {
    const auto& r = candidate.pass_results[i];
    passes.push_back(
        {{"pass", candidate.passes[i]}, {"rewritten", r.rewritten}, {"produced", r.produced}, {"notes", r.notes}});
  }
  const nlohmann::json provenance = {{"candidate", candidate.name},       {"passes", passes},
                                     {"onnxruntime", Runtime::Version()}, {"provider", context.provider},
                                     {"cpu", context.cpu.Describe()},     {"architecture", context.cpu.architecture}};
  auto* entry = model.add_metadata_props();
  entry->set_key(std::string(kOptimizeProvenanceKey));
  entry->set_value(provenance.dump());
}

// Applies the candidate's passes to a copy of `original` and writes the result to the scratch folder.
void RewriteCandidate(const onnx::ModelProto& original, const OptimizePassContext& context,
                      CandidateOutcome& candidate) {
  const auto begin = Clock::now();
  std::optional<onnx::ModelProto> model;
  for (const auto& name : candidate.passes) {
    const OptimizePass* pass = FindOptimizePass(name);
    if (pass == nullptr) {
      candidate.state = State::kFailed;
      candidate.reason = fmt::format("no pass '{}'", name);
      return;
    }
    OptimizePassContext pass_context = context;
    if (!model && pass->reads_file) {
      pass_context.unchanged_model = &original;
      model.emplace();
    } else if (!model) {
      model = original;
    }
    auto result = pass->apply(*model, pass_context);
    if (!result.ok()) {
      candidate.state = State::kFailed;
      candidate.reason = fmt::format("{}: {}", name, result.error().message);
      return;
    }
    candidate.pass_results.push_back(std::move(*result));
  }
  const bool changed = std::any_of(candidate.pass_results.begin(), candidate.pass_results.end(),
                                   [](const OptimizePassResult& r) { return r.changed(); });
  if (!changed) {
    candidate.state = State::kNotApplicable;
    candidate.reason = "nothing to rewrite";
    for (const auto& r : candidate.pass_results) {
      if (!r.left.empty()) candidate.reason += fmt::format(" ({})", fmt::join(r.left, "; "));
    }
    return;
  }
  AddProvenance(*model, candidate, context);
  candidate.rewrite_s = SecondsSince(begin);
  candidate.file = context.scratch / fmt::format("candidate-{}.onnx", candidate.name);
  const Status written = WriteModel(std::move(*model), candidate.file, /*external_data=*/false);
  if (!written.ok()) {
    candidate.state = State::kFailed;
    candidate.reason = written.error().message;
    return;
  }
  candidate.size_bytes = FileBytes(candidate.file);
  candidate.state = State::kPassed;  // rewritten; proven next
}

}  // namespace

namespace {

// The candidate's declared interface against the original's, and its outputs against the baseline.
void ProveOne(Runtime& runtime, const SessionConfig& config, const ProofBaseline& baseline, const AccuracyGate& gate,
              CandidateOutcome& candidate) {
  ModelLoad load = LoadModelFile(candidate.file);
  if (!load.model) {
    candidate.state = State::kFailed;
    candidate.reason = "the rewritten model cannot be read back";
    return;
  }
  std::vector<std::string> interface =
      InterfaceChanges(baseline.declared_inputs, baseline.declared_outputs, DeclaredInputs(*load.model->proto),
                       DeclaredOutputs(*load.model->proto));
  const bool dynamic = [&] {
    const QuantizationSummary q = SummarizeQuantization(*load.model->proto);
    return std::find(q.schemes.begin(), q.schemes.end(), QuantizationSummary::Scheme::kDynamic) != q.schemes.end();
  }();
  load.model.reset();
  auto session = Session::Create(runtime, candidate.file, config);
  if (!session.ok()) {
    candidate.state = State::kFailed;
    candidate.reason = fmt::format("does not load: {}", session.error().message);
    return;
  }
  CandidateProof proof = ProveCandidate(**session, baseline.trials, baseline.output_names, baseline.purposes, gate,
                                        baseline.batch_dim, dynamic);
  proof.interface = std::move(interface);
  if (!proof.Passed()) {
    candidate.state = State::kRefused;
    candidate.reason = proof.FirstFailure();
  }
  candidate.proof = std::move(proof);
}

// The original and every proven candidate, side by side on the first trial's inputs.
Status MeasureCandidates(Runtime& runtime, const SessionConfig& config, const std::filesystem::path& original,
                         const ProofBaseline& baseline, const OptimizeOptions& options, OptimizeReport& report) {
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<CandidateOutcome*> measured;
  ORTKIT_ASSIGN_OR_RETURN(auto first, Session::Create(runtime, original, config));
  sessions.push_back(std::move(first));
  for (auto& c : report.candidates) {
    if (c.state != State::kPassed) continue;
    ORTKIT_ASSIGN_OR_RETURN(auto session, Session::Create(runtime, c.file, config));
    sessions.push_back(std::move(session));
    measured.push_back(&c);
  }
  if (measured.empty()) return OkStatus();
  std::vector<Session*> pointers;
  std::vector<const std::vector<NamedTensor>*> inputs;
  for (auto& s : sessions) {
    pointers.push_back(s.get());
    inputs.push_back(&baseline.trials.front().inputs);
  }
  ORTKIT_ASSIGN_OR_RETURN(auto samples, MeasureSideBySide(pointers, inputs, options.measure));
  report.original_latency = std::move(samples.front());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    CandidateOutcome& c = *measured[i];
    c.speed_up = CompareSpeed(*report.original_latency, samples[i + 1], options.min_change);
    c.latency = std::move(samples[i + 1]);
    if (!c.speed_up.faster) {
      c.state = State::kNotFaster;
      c.reason =
          fmt::format("{:.2f}x the original's speed (95% band {:.2f}-{:.2f}x): {}", c.speed_up.ratio, c.speed_up.low,
                      c.speed_up.high, c.speed_up.slower ? "slower than the original" : "not faster beyond the noise");
    }
  }
  return OkStatus();
}

Status WriteChosen(const CandidateOutcome& chosen, const OptimizeOptions& options) {
  constexpr std::uint64_t kLargest = 1536ULL << 20;
  std::error_code ec;
  const auto parent = options.out.parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (options.external_data || static_cast<std::uint64_t>(chosen.size_bytes) > kLargest) {
    ModelLoad load = LoadModelFile(chosen.file);
    if (!load.model) return MakeError(ErrorKind::kInternal, "the chosen candidate cannot be read back");
    return WriteModel(std::move(*load.model->proto), options.out, /*external_data=*/true);
  }
  std::filesystem::copy_file(chosen.file, options.out, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("cannot write '{}': {}", options.out.string(), ec.message()));
  return OkStatus();
}

}  // namespace

namespace {

bool HasConstantWeight(const onnx::GraphProto& graph, const std::set<std::string>& ops, int min_rank) {
  std::set<std::string> weights;
  for (const auto& t : graph.initializer()) {
    if (t.data_type() == onnx::TensorProto::FLOAT && t.dims_size() >= min_rank) weights.insert(t.name());
  }
  for (const auto& n : graph.node()) {
    if (ops.count(n.op_type()) != 0 && n.input_size() > 1 && weights.count(n.input(1)) != 0) return true;
  }
  return false;
}

// The candidates that quantise, refused for a model that already is quantised.
void RefuseRequantizing(const QuantizationSummary& quantization, OptimizeReport& report) {
  for (auto& c : report.candidates) {
    if (std::none_of(c.passes.begin(), c.passes.end(), Quantizes)) continue;
    c.state = State::kNotApplicable;
    c.reason = fmt::format("the model is already quantised ({})", quantization.Describe());
  }
  report.diagnoses.push_back(
      Diagnose("optimize.already-quantized",
               fmt::format("the model is already quantised ({}): only candidates that do not quantise are tried",
                           quantization.Describe())));
}

// Why nothing was chosen, as one diagnosis.
void ExplainNoChoice(OptimizeReport& report) {
  std::vector<std::string> reasons;
  for (const auto& c : report.candidates) reasons.push_back(fmt::format("{}: {}", c.name, c.reason));
  const bool any = std::any_of(report.candidates.begin(), report.candidates.end(),
                               [](const CandidateOutcome& c) { return c.state != State::kNotApplicable; });
  report.diagnoses.push_back(Diagnose(any ? "optimize.nothing-faster" : "optimize.nothing-to-rewrite",
                                      fmt::format("no candidate was chosen; {}", fmt::join(reasons, "; "))));
}

void DiagnoseCandidates(OptimizeReport& report) {
  for (const auto& c : report.candidates) {
    if (c.state == State::kRefused)
      report.diagnoses.push_back(Diagnose("optimize.candidate-refused", fmt::format("{}: {}", c.name, c.reason)));
    if (c.state == State::kFailed)
      report.diagnoses.push_back(Diagnose("optimize.candidate-failed", fmt::format("{}: {}", c.name, c.reason)));
  }
}

// The calibration samples, the first read at once so that one that does not fit the model is a usage error
// before anything is rewritten.
Result<CalibrationSamples> ListCalibration(const OptimizeOptions& options, const ProofBaseline& baseline,
                                           const onnx::ModelProto& model) {
  if (options.calibration.empty()) return CalibrationSamples{};
  ORTKIT_ASSIGN_OR_RETURN(CalibrationSamples samples, CalibrationSamples::List(options.calibration));
  ORTKIT_RETURN_IF_ERROR(samples.Read(0, baseline.session_inputs, model));
  return samples;
}

// float16 is for a GPU provider, which this ortkit does not convert for: the refusal says why here and what to do.
Status Float16Refusal(const std::string& candidate, std::string_view provider) {
  const ProviderInfo* info = FindProvider(provider);
  const bool gpu = provider == "cuda" || provider == "tensorrt";
  const bool available = info != nullptr && [&] {
    const auto providers = Runtime::AvailableProviders();
    return std::find(providers.begin(), providers.end(), info->ort_name) != providers.end();
  }();
  if (!gpu || !available) {
    const auto providers = Runtime::AvailableProviders();
    const bool has_gpu = std::any_of(providers.begin(), providers.end(), [](const std::string& p) {
      return p == "CUDAExecutionProvider" || p == "TensorrtExecutionProvider";
    });
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--passes '{}': float16 is for a GPU provider: {}; on this machine try int8-dynamic or int4 "
                    "(--passes int8-dynamic,int4), or optimise on a machine whose ONNX Runtime has CUDA, with "
                    "--provider cuda",
                    candidate,
                    !has_gpu ? fmt::format("this ONNX Runtime build ({}) has no CUDA/TensorRT", Runtime::Version())
                             : fmt::format("--provider is {}", provider)));
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("--passes '{}': this ortkit does not convert to float16 yet; for --provider {} it "
                               "tries fuse (ONNX Runtime's fusions for the GPU)",
                               candidate, provider));
}

struct LoadedOriginal {
  ModelLoad load;
  bool external = false;
};

// Reads the model with its weights in memory; a report with the loader's diagnoses when it cannot be read.
Result<LoadedOriginal> LoadOriginal(const OptimizeOptions& options, OptimizeReport& report) {
  LoadedOriginal original{LoadModelFile(options.model)};
  if (!original.load.model) {
    if (original.load.failure && original.load.failure->kind == ErrorKind::kIo) report.failure = original.load.failure;
    report.diagnoses = original.load.diagnoses;
    return original;
  }
  report.original_bytes = static_cast<std::int64_t>(original.load.model->size_bytes);
  onnx::ModelProto& proto = *original.load.model->proto;
  original.external = !ListExternalTensors(proto).empty();
  if (original.external) {
    ORTKIT_RETURN_IF_ERROR(InlineExternalData(proto, original.load.model->BaseDirectory(), kMaxInlinedBytes,
                                              "optimize rewrites the weights in memory",
                                              "optimize the model in parts, or quantise it with a tool that "
                                              "streams its weights"));
  }
  return original;
}

}  // namespace

Status ValidateCandidates(const std::vector<std::string>& candidates, std::string_view provider) {
  std::vector<std::string_view> names;
  for (const auto& p : OptimizePasses()) names.push_back(p.name);
  for (const auto& candidate : candidates) {
    for (const auto& pass : SplitChain(candidate)) {
      if (FindOptimizePass(pass) != nullptr) continue;
      if (pass == "float16") return Float16Refusal(candidate, provider);
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--passes '{}': no pass '{}'; the passes are {} (chain them with '+', e.g. "
                                   "fuse+int8-dynamic)",
                                   candidate, pass, fmt::join(names, ", ")));
    }
  }
  return OkStatus();
}

bool LikelyInt4Decoder(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TensorProto*> weights;
  std::int64_t float_values = 0;
  for (const auto& t : graph.initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    float_values += std::max<long long>(ElementCount(t), 0);
    if (t.dims_size() == 2) weights[t.name()] = &t;
  }
  std::set<std::string> products;
  bool vocabulary = false;
  for (const auto& n : graph.node()) {
    if (n.op_type() != "MatMul" || n.input_size() != 2) continue;
    const auto it = weights.find(n.input(1));
    if (it == weights.end()) continue;
    const onnx::TensorProto& w = *it->second;
    if (ElementCount(w) < kInt4MinWeights || w.dims(0) < 16 || w.dims(1) < 1) continue;
    products.insert(w.name());
    vocabulary = vocabulary || w.dims(1) >= 8192;
  }
  std::int64_t product_values = 0;
  for (const auto& name : products) product_values += ElementCount(*weights[name]);
  const bool cache = std::any_of(graph.input().begin(), graph.input().end(), [](const onnx::ValueInfoProto& v) {
    return v.name().find("past") != std::string::npos || v.name().find("cache") != std::string::npos;
  });
  return products.size() >= 4 && 2 * product_values >= float_values && (cache || vocabulary);
}

std::vector<std::string> DefaultCandidates(const onnx::ModelProto& model, const std::string& provider,
                                           bool calibrated) {
  std::vector<std::string> candidates = {"fuse"};
  if (SummarizeQuantization(model).quantized() || provider != "cpu") return candidates;
  const bool products = HasConstantWeight(model.graph(), {"MatMul", "Gemm"}, 2);
  const bool convolutions = HasConstantWeight(model.graph(), {"Conv"}, 3);
  if (products) candidates.push_back("int8-dynamic");
  if (convolutions) candidates.push_back("int8-dynamic-conv");
  if (LikelyInt4Decoder(model.graph())) candidates.push_back("int4");
  if (calibrated && (products || convolutions)) candidates.push_back("int8-static");
  return candidates;
}

namespace {

SessionConfig ConfigFor(const OptimizeOptions& options) {
  SessionConfig config;
  config.provider = options.provider;
  config.intra_op_threads = options.threads > 0 ? options.threads : UsableCpus().cores;
  config.inter_op_threads = 1;
  return config;
}

// Phase 1: the original's outputs on the proof's inputs, then every candidate rewritten to the scratch folder.
Result<ProofBaseline> RewriteAll(Runtime& runtime, const OptimizeOptions& options, const SessionConfig& config,
                                 const std::filesystem::path& scratch, OptimizeReport& report) {
  ORTKIT_ASSIGN_OR_RETURN(LoadedOriginal original, LoadOriginal(options, report));
  if (!original.load.model) return MakeError(ErrorKind::kNotFound, "");
  const onnx::ModelProto& proto = *original.load.model->proto;
  ProofBaseline baseline;
  {
    auto session = Session::Create(runtime, options.model, config);
    if (!session.ok())
      return MakeError(ErrorKind::kRuntime,
                       fmt::format("the original model does not load: {}", session.error().message));
    ORTKIT_ASSIGN_OR_RETURN(baseline, RunOriginal(**session, proto, options.inputs, options.reference));
  }
  const std::vector<std::string> names = options.candidates.empty()
                                             ? DefaultCandidates(proto, options.provider, !options.calibration.empty())
                                             : options.candidates;
  for (const auto& name : names) {
    CandidateOutcome candidate;
    candidate.name = name;
    candidate.passes = SplitChain(name);
    report.candidates.push_back(std::move(candidate));
  }
  if (const QuantizationSummary q = SummarizeQuantization(proto); q.quantized()) RefuseRequantizing(q, report);
  ORTKIT_ASSIGN_OR_RETURN(const CalibrationSamples samples, ListCalibration(options, baseline, proto));
  OptimizePassContext context;
  context.calibration = samples.size() > 0 ? &samples : nullptr;
  context.calibration_options = options.calibration_options;
  context.calibration_options.session = config;
  context.runtime = &runtime;
  context.cpu = DetectCpuFeatures();
  context.provider = options.provider;
  context.scratch = scratch;
  context.int4_block = options.int4_block;
  context.unchanged_source = options.model;
  for (auto& candidate : report.candidates) {
    if (candidate.state == State::kNotApplicable && !candidate.reason.empty()) continue;
    RewriteCandidate(proto, context, candidate);
  }
  return baseline;
}

void Conclude(const OptimizeOptions& options, OptimizeReport& report) {
  report.chosen = ChooseFastest(report.candidates);
  DiagnoseCandidates(report);
  if (report.chosen.empty()) ExplainNoChoice(report);
}

}  // namespace

Result<OptimizeReport> OptimizeModelFile(Runtime& runtime, const OptimizeOptions& options) {
  const auto begin = Clock::now();
  ORTKIT_RETURN_IF_ERROR(ValidateCandidates(options.candidates, options.provider));
  ORTKIT_RETURN_IF_ERROR(CheckProviderAvailable(options.provider));
  if (!options.dry_run && options.out.empty())
    return MakeError(ErrorKind::kInvalidArgument, "--out FILE is required (or --dry-run)");
  OptimizeReport report;
  report.model = options.model.string();
  report.out = options.out.string();
  report.provider = options.provider;
  report.dry_run = options.dry_run;
  report.gate = options.gate.Describe();
  report.cpu = DetectCpuFeatures().Describe();
  const SessionConfig config = ConfigFor(options);
  report.threads = config.intra_op_threads;
  ORTKIT_ASSIGN_OR_RETURN(ScratchFolder scratch, ScratchFolder::Create("optimize"));
  auto baseline = RewriteAll(runtime, options, config, scratch.path(), report);
  if (!baseline.ok() && !report.diagnoses.empty()) return report;  // the model could not be read
  if (!baseline.ok()) return baseline.error();
  report.inputs = fmt::format("{}: {}", baseline->source, DescribeShapes(baseline->trials.front().inputs));
  for (const auto& t : baseline->trials) report.trials.push_back(t.label);
  for (auto& c : report.candidates) {
    if (c.state == State::kPassed) ProveOne(runtime, config, *baseline, options.gate, c);
  }
  ORTKIT_RETURN_IF_ERROR(MeasureCandidates(runtime, config, options.model, *baseline, options, report));
  Conclude(options, report);
  if (!report.chosen.empty() && !options.dry_run) {
    const auto chosen = std::find_if(report.candidates.begin(), report.candidates.end(),
                                     [](const CandidateOutcome& c) { return c.state == State::kChosen; });
    ORTKIT_RETURN_IF_ERROR(WriteChosen(*chosen, options));
    report.written = true;
  }
  report.seconds = SecondsSince(begin);
  report.peak_rss_bytes = PeakResidentBytes();
  return report;
}

std::string ChooseFastest(std::vector<CandidateOutcome>& candidates) {
  CandidateOutcome* best = nullptr;
  for (auto& c : candidates) {
    if (c.state == State::kPassed && c.speed_up.faster && (best == nullptr || c.speed_up.ratio > best->speed_up.ratio))
      best = &c;
  }
  if (best == nullptr) return "";
  best->state = State::kChosen;
  for (auto& c : candidates) {
    if (c.state == State::kPassed) c.reason = fmt::format("{:.2f}x, slower than {}", c.speed_up.ratio, best->name);
  }
  return best->name;
}

bool OptimizeReport::Failed() const {
  return WorstSeverity(diagnoses) == Severity::kError || (chosen.empty() && !candidates.empty()) || candidates.empty();
}

const char* ToString(CandidateOutcome::State state) {
  switch (state) {
    case State::kNotApplicable: return "not applicable";
    case State::kFailed: return "failed";
    case State::kRefused: return "refused";
    case State::kNotFaster: return "not faster";
    case State::kPassed: return "passed";
    case State::kChosen: return "chosen";
  }
  return "unknown";
}

nlohmann::json CandidateOutcome::ToJson() const {
  nlohmann::json pass_json = nlohmann::json::array();
  for (std::size_t i = 0; i < pass_results.size(); ++i) {
    const auto& r = pass_results[i];
    pass_json.push_back({{"pass", passes[i]},
                         {"rewritten", r.rewritten},
                         {"produced", r.produced},
                         {"notes", r.notes},
                         {"left", r.left}});
  }
  nlohmann::json json = {{"name", name},     {"passes", pass_json},      {"state", ToString(state)},
                         {"reason", reason}, {"size_bytes", size_bytes}, {"rewrite_s", rewrite_s}};
  if (proof) {
    json["proof"] = proof->ToJson();
    json["accuracy"] = proof->AccuracyText();
  }
  if (latency) {
    json["latency_ms"] = {{"p50", latency->latency.p50},        {"p90", latency->latency.p90},
                          {"mean", latency->latency.mean},      {"stddev", latency->latency.stddev},
                          {"round_p50", latency->round_p50_ms}, {"runs", latency->latency.count}};
    json["speed_up"] = {
        {"ratio", speed_up.ratio}, {"low", speed_up.low}, {"high", speed_up.high}, {"faster", speed_up.faster}};
  }
  return json;
}

void to_json(nlohmann::json& json, const OptimizeReport& report) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : report.candidates) candidates.push_back(c.ToJson());
  json = {{"model", report.model},
          {"out", report.out},
          {"provider", report.provider},
          {"threads", report.threads},
          {"cpu", report.cpu},
          {"inputs", report.inputs},
          {"trials", report.trials},
          {"gate", report.gate},
          {"original_bytes", report.original_bytes},
          {"candidates", candidates},
          {"chosen", report.chosen},
          {"dry_run", report.dry_run},
          {"written", report.written},
          {"diagnoses", report.diagnoses},
          {"seconds", report.seconds},
          {"peak_rss_bytes", report.peak_rss_bytes}};
  if (report.original_latency) {
    json["original_latency_ms"] = {{"p50", report.original_latency->latency.p50},
                                   {"p90", report.original_latency->latency.p90},
                                   {"round_p50", report.original_latency->round_p50_ms},
                                   {"runs", report.original_latency->latency.count}};
  }
}

}  // namespace ortkit
