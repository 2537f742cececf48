#include "ortkit/doctor/doctor.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/runner.h"
#include "ortkit/core/cpu_features.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/env/environment.h"
#include "ortkit/model/model_file.h"
#include "ortkit/model/speed_opportunity.h"
#include "ortkit/runtime/run.h"
#include "ortkit/validate/validate.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

bool Exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool IsDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

/// Where the model, its export record and its references are, for a path that may be an export folder.
struct Layout {
  fs::path model;        ///< empty when the folder holds no model.onnx
  fs::path export_json;  ///< empty when there is none
  fs::path reference;
  bool reference_from_export = false;
};

Layout Resolve(const DoctorOptions& options) {
  Layout layout;
  const fs::path& given = options.model;
  fs::path folder;
  if (IsDirectory(given) && (Exists(given / "model.onnx") || Exists(given / "export.json"))) {
    folder = given;
    if (Exists(given / "model.onnx")) layout.model = given / "model.onnx";
  } else {
    layout.model = given;  // a file, or a path the file layer explains (missing, a directory, ...)
    folder = given.parent_path().empty() ? fs::path(".") : given.parent_path();
  }
  if (Exists(folder / "export.json")) layout.export_json = folder / "export.json";
  if (!options.reference.empty()) {
    layout.reference = options.reference;
    if (layout.export_json.empty() && IsDirectory(options.reference) && Exists(options.reference / "export.json")) {
      layout.export_json = options.reference / "export.json";
    }
  } else if (!layout.export_json.empty() && Exists(folder / "test_data_set_0")) {
    layout.reference = folder;
    layout.reference_from_export = true;
  }
  return layout;
}

/// The baseline latency, measured by the benchmark runner (`ortkit bench`'s): a first run, two
/// untimed warm-up runs, then `runs` timed runs on one thread.
Result<LatencySummary> MeasureLatency(Session& session, const std::vector<NamedTensor>& inputs,
                                      const DoctorOptions& options) {
  LatencySummary summary;
  summary.measured_by = "RunBenchmark (bench/runner.h), 1 thread, 2 warm-up runs";
  std::vector<std::string> shapes;
  for (const auto& input : inputs) {
    const std::string described = input.tensor.Describe();
    shapes.push_back(input.name + described.substr(std::min(described.find('['), described.size())));
  }
  summary.shape = fmt::format("{}", fmt::join(shapes, ", "));
  BenchOptions bench;
  bench.iterations = options.benchmark_runs;
  bench.warmup = 2;
  ORTKIT_ASSIGN_OR_RETURN(const BenchResult result, RunBenchmark(session, inputs, bench));
  if (result.failure) return *result.failure;
  summary.runs = static_cast<int>(result.runs);
  summary.first_ms = result.first_run_ms;
  summary.mean_ms = result.latency.mean;
  summary.p50_ms = result.latency.p50;
  summary.p90_ms = result.latency.p90;
  summary.min_ms = result.latency.min;
  summary.max_ms = result.latency.max;
  return summary;
}

std::vector<Diagnosis> ComparisonDiagnoses(const std::string& label, const ComparisonReport& comparison,
                                           const std::string& file) {
  std::vector<Diagnosis> diagnoses;
  for (const auto& o : comparison.outputs) {
    if (o.passed) continue;
    Location where;
    where.file = file;
    where.output = o.name;
    using Judged = OutputComparison::Judged;
    if (o.judged == Judged::kBeyondRounding || o.judged == Judged::kPurposeLost) {
      Diagnosis d = Diagnose("validate.quantized-divergence",
                             fmt::format("{}: output '{}': {}", label, o.name, o.judgement), where);
      if (o.judged == Judged::kPurposeLost) d.severity = Severity::kError;
      diagnoses.push_back(std::move(d));
      continue;
    }
    std::string message = fmt::format("{}: output '{}' {}", label, o.name, o.problem);
    if (o.shape_match && o.type_match && !o.strings) {
      message += fmt::format(" (max abs error {:.3g}, max rel error {:.3g}; tolerance atol {:.3g}, rtol {:.3g})",
                             o.max_abs_error, o.max_rel_error, o.EffectiveAtol(), o.tolerance.rtol);
    }
    const bool only_nan = o.nan_both > 0 && o.mismatches == 0;
    diagnoses.push_back(Diagnose(only_nan ? "sweep.nan-inf" : "validate.mismatch", std::move(message), where));
  }
  for (const auto& name : comparison.missing_in_run) {
    Location where;
    where.file = file;
    where.output = name;
    diagnoses.push_back(
        Diagnose("validate.missing-output", fmt::format("{}: the model did not produce '{}'", label, name), where));
  }
  return diagnoses;
}

/// A quantised model's divergence beyond rounding names where the runs part: the localisation's first value
/// beyond the bound, its node and the fused kernel computing it.
void ConnectQuantizedLocalization(const ValidateReport& validated, std::vector<Diagnosis>& diagnoses) {
  for (const auto& localization : validated.localizations) {
    if (!localization.report.ok()) continue;
    const QuantizedDivergence where = DescribeQuantizedDivergence(*localization.report);
    if (where.text.empty()) continue;
    for (auto& d : diagnoses) {
      if (d.code != "validate.quantized-divergence") continue;
      d.message += "; " + where.text;
      d.location.node = where.node;
      d.location.op_type = where.op_type;
    }
    return;
  }
}

std::vector<Diagnosis> ValidationDiagnoses(const ReferenceReport& report, const std::string& reference) {
  std::vector<Diagnosis> diagnoses;
  for (const auto& c : report.cases) {
    if (!c.ran) {
      Location where;
      where.file = reference;
      Diagnosis d = TranslateRuntimeError(c.run_error, where, /*during_run=*/true);
      d.message = fmt::format("{}: {}", c.label, d.message);
      diagnoses.push_back(std::move(d));
      continue;
    }
    auto found = ComparisonDiagnoses(c.label, c.comparison, reference);
    diagnoses.insert(diagnoses.end(), found.begin(), found.end());
  }
  return diagnoses;
}

/// One diagnosis per cause across the sweep's cells, saying in how many cells it appeared.
std::vector<Diagnosis> SweepDiagnoses(const SweepReport& report) {
  std::vector<Diagnosis> diagnoses;
  for (const auto& f : report.size_findings) {
    Location where;
    where.input = f.input;
    if (f.axis >= 0) where.dimension = std::to_string(f.axis);
    diagnoses.push_back(Diagnose("sweep.size-limit", f.Describe(), where));
  }
  std::map<std::tuple<std::string, std::string>, std::pair<std::size_t, int>> seen;  // -> index, count
  for (const auto& cell : report.cells) {
    for (const auto& d : cell.diagnoses) {
      const auto key = std::make_tuple(d.code, d.location.Describe());
      if (auto it = seen.find(key); it != seen.end()) {
        ++it->second.second;
        continue;
      }
      seen[key] = {diagnoses.size(), 1};
      diagnoses.push_back(d);
    }
  }
  for (const auto& [key, where] : seen) {
    if (where.second > 1) diagnoses[where.first].message += fmt::format(" (and in {} more cells)", where.second - 1);
  }
  return diagnoses;
}

// Output dimensions shape inference could not size or relate to the inputs (an ML operator's batch, a
// converter's unk__332) are judged by the sweep's runs: one the runs explain (one size in every run, or it
// follows or grows with an input dimension) is a note that says how; one the runs show inconsistent stays
// a warning, with what they showed.
void SettleOutputDims(const SweepReport& sweep, std::vector<Diagnosis>& diagnoses) {
  for (auto& d : diagnoses) {
    const bool judged = d.code == "shape.output-dim-unknown" || d.code == "shape.output-dim-unrelated";
    if (!judged || d.severity != Severity::kWarning || d.location.output.empty() || d.location.dimension.empty())
      continue;
    std::vector<std::string> said;
    bool explained = true;
    for (std::string_view rest = d.location.dimension; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      std::size_t dimension = 0;
      const std::string_view item = rest.substr(0, comma);
      std::from_chars(item.data(), item.data() + item.size(), dimension);
      const OutputDimBehaviour behaviour = ExplainOutputDim(sweep, d.location.output, dimension);
      explained = explained && behaviour.Explained();
      if (behaviour.kind != OutputDimBehaviour::Kind::kUnjudged)
        said.push_back(fmt::format("dimension {} {}", dimension, behaviour.Describe()));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (said.empty()) continue;  // the sweep ran too little to tell
    d.message += fmt::format("; the sweep's runs show: {}", fmt::join(said, "; "));
    if (explained) d.severity = Severity::kInfo;
  }
}

// A Reshape constant that looked like a traced batch (check's graph.baked-batch-reshape, a heuristic) is
// contradicted by a sweep that ran the batch of the input the Reshape reads at two or more sizes with every
// cell passing: the constant is something else (ICLabel's 100 frequency bins in a Fortran-order reshape, the
// patch count of SigLIP's pooling head, whose image batch is not the text batch), and the finding becomes a
// note that says what the runs showed.
void SettleBakedBatch(const SweepReport& sweep, const onnx::ModelProto& model, std::vector<Diagnosis>& diagnoses) {
  if (!sweep.Passed()) return;
  // The batch of the input the Reshape's data comes from (a two-tower model has one per tower), else the sweep's.
  auto batch_of = [&](const std::string& input) {
    for (const auto& in : model.graph().input()) {
      if (in.name() != input || !in.type().has_tensor_type() || !in.type().tensor_type().has_shape() ||
          in.type().tensor_type().shape().dim_size() == 0)
        continue;
      const auto& dim = in.type().tensor_type().shape().dim(0);
      if (dim.has_dim_param() && !dim.dim_param().empty()) return dim.dim_param();
      if (!dim.has_dim_value()) return fmt::format("{}:0", input);  // as NameUnnamedAxes names it
    }
    return sweep.batch_dim;
  };
  for (auto& d : diagnoses) {
    if (d.code != "graph.baked-batch-reshape" || d.severity != Severity::kWarning) continue;
    auto sizes_run = [&](const std::string& dim) {
      std::set<std::int64_t> sizes;
      for (const auto& cell : sweep.cells) {
        auto size = cell.sizes.find(dim);
        if (cell.state == SweepCell::State::kPassed && size != cell.sizes.end()) sizes.insert(size->second);
      }
      return sizes;
    };
    std::string batch = batch_of(d.location.input);
    std::set<std::int64_t> batches = sizes_run(batch);
    // An input batch tied to another input's (ICLabel's three) is swept under that one's name: the sweep's.
    if (batches.empty() && !sweep.batch_dim.empty()) batches = sizes_run(batch = sweep.batch_dim);
    if (batches.size() < 2) continue;
    d.severity = Severity::kInfo;
    d.message += fmt::format("; but the sweep ran '{}' at {} and every run passed, so the batch does not stop there",
                             batch, fmt::join(batches, ", "));
  }
}

/// A failed validation next to a TracerWarning about a traced `if` is the classic lost branch.
std::vector<Diagnosis> ConnectBranchWarnings(const ExportRecord& record, const ReferenceReport& validation) {
  std::vector<std::string> failed, passed;
  for (const auto& c : validation.cases) (c.ran && c.comparison.Passed() ? passed : failed).push_back(c.label);
  std::vector<Diagnosis> diagnoses;
  if (failed.empty()) return diagnoses;
  for (const auto& w : record.warnings) {
    if (w.code != "export.traced-branch") continue;
    Location where;
    where.file = w.Where();
    std::string message = fmt::format("validation fails on {}", fmt::join(failed, ", "));
    if (!passed.empty()) message += fmt::format(" but passes on {}", fmt::join(passed, ", "));
    message += fmt::format("; at export the tracer warned at {}", w.Where());
    if (!w.source.empty()) message += fmt::format(" (`{}`)", w.source);
    message += " that a tensor became a Python boolean: the graph keeps only the branch the example input took";
    diagnoses.push_back(Diagnose("validate.branch-not-taken", std::move(message), where));
  }
  return diagnoses;
}

/// A sweep that fails next to a TracerWarning about a value frozen at export (int(x.size(0)), float(scale)):
/// the frozen value is the likely cause, so that warning is raised to an error and says so.
void ConnectFrozenValues(const SweepReport& sweep, std::vector<Diagnosis>& diagnoses) {
  std::size_t failed = 0;
  for (const auto& cell : sweep.cells) failed += cell.state == SweepCell::State::kFailed;
  if (failed == 0) return;
  for (auto& d : diagnoses) {
    if (d.code != "export.traced-constant" || d.severity == Severity::kError) continue;
    d.severity = Severity::kError;
    d.message += fmt::format("; the shape sweep fails in {} of {} cells, as a size or scale frozen at export makes it",
                             failed, sweep.cells.size());
  }
}

// One finding per code and message: a run that fails at the file's own sizes fails in the cross-check and in
// the sweep's only cell alike, and is said once (where it was first found).
void Deduplicate(std::vector<Diagnosis>& diagnoses) {
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<Diagnosis> unique;
  for (auto& d : diagnoses) {
    if (seen.insert({d.code, d.message}).second) unique.push_back(std::move(d));
  }
  diagnoses = std::move(unique);
}

bool LayerFailed(const CheckReport& check, const std::string& name) {
  for (const auto& layer : check.layers) {
    if (layer.name == name) return layer.state != LayerReport::State::kPassed;
  }
  return true;
}

// What the input step found, in the order doctor lists it: the size search's notes, its size requirements
// (findings when no sweep will report them), and how the inputs were made.
void NoteInputs(const ValidationInputs& inputs, const DoctorOptions& options, const Location& file,
                ProviderReport& report, std::vector<Diagnosis>& findings) {
  if (const auto& search = inputs.settled.search) {
    report.notes.insert(report.notes.end(), search->notes.begin(), search->notes.end());
    if (!options.sweep) {
      for (const auto& f : search->findings) findings.push_back(Diagnose("sweep.size-limit", f.Describe(), file));
    }
  }
  if (!inputs.prepared.ok()) {
    report.notes.push_back("no inputs for the cross-check and benchmark: " + inputs.prepared.error().message);
  }
  if (inputs.positive_floats) {
    report.notes.push_back(
        "float inputs drawn from [0.1, 1): with normal(0, 1) values the outputs held NaN or Inf, which a log "
        "or a square root of a negative input gives; with positive ones they do not");
  }
}

// One plain run: every output's shape against the model's declaration.
void CheckOutputShapes(Session& session, const onnx::ModelProto& proto, const std::vector<NamedTensor>& inputs,
                       const Location& file, std::vector<Diagnosis>& findings) {
  auto plain = RunSession(session, RunRequest{inputs, {}});
  if (!plain.ok()) return;
  for (auto& mismatch : OutputShapeMismatches(DeclaredOutputs(proto), *plain)) {
    findings.push_back(Diagnose("runtime.output-shape-differs", std::move(mismatch), file));
  }
}

// The findings of the reference or the cross-check, in the order doctor lists them: the reference's,
// what the export record connects to them, those about the inputs, then the cross-check's.
void AddValidation(ValidateReport& validated, const Layout& layout, const std::optional<ExportRecord>& record,
                   const Location& file, const std::vector<Diagnosis>& input_findings, ProviderReport& report,
                   std::vector<Diagnosis>& diagnoses) {
  auto append = [&](const std::vector<Diagnosis>& found) {
    diagnoses.insert(diagnoses.end(), found.begin(), found.end());
  };
  const bool unusable_reference = validated.failure && validated.failure->step == ValidateFailure::Step::kReference;
  if (unusable_reference) diagnoses.push_back(UnusableReference(layout.reference, validated.failure->error));
  if (validated.reference) {
    report.validation = std::move(*validated.reference);
    append(ValidationDiagnoses(*report.validation, layout.reference.string()));
    if (record) append(ConnectBranchWarnings(*record, *report.validation));
  }
  append(input_findings);
  if (validated.cross_check) {
    const CrossCheckReport& cross = *validated.cross_check;
    auto found = ComparisonDiagnoses(fmt::format("{} vs {}", cross.label_a, cross.label_b), cross.comparison,
                                     layout.model.string());
    ConnectQuantizedLocalization(validated, found);
    append(found);
    report.cross_check = std::move(validated.cross_check);
  } else if (validated.cross_check_error) {
    diagnoses.push_back(validated.CrossCheckRunDiagnosis(file));
  } else if (validated.failure && !unusable_reference) {
    diagnoses.push_back(TranslateRuntimeError(validated.failure->error.message, file, /*during_run=*/true));
  }
}

// Validate's sweep step on the inputs Validate's input step made.
void SweepProvider(Session& session, const onnx::ModelProto& proto, const std::vector<TensorSpec>& specs,
                   const ValidateOptions& validate, const ValidationInputs& inputs, ProviderReport& report,
                   std::vector<Diagnosis>& diagnoses) {
  for (const auto& [dim, most] : validate.sweep_max_sizes)
    report.notes.push_back(
        fmt::format("sweep of '{}' kept to {} and below: export.json says the model is made "
                    "for no more (dim_limits)",
                    dim, most));
  auto swept = SweepForValidation(session, proto, specs, validate, &inputs);
  if (!swept.ok()) {
    report.notes.push_back("sweep not run: " + swept.error().message);
    return;
  }
  auto found = SweepDiagnoses(*swept);
  diagnoses.insert(diagnoses.end(), found.begin(), found.end());
  // The sweep's own notes (sizes in multiples of a stride), less those its size findings already say.
  for (const auto& note : swept->notes) {
    const bool said = std::find(report.notes.begin(), report.notes.end(), note) != report.notes.end() ||
                      std::any_of(swept->size_findings.begin(), swept->size_findings.end(),
                                  [&](const auto& f) { return note.find(f.Describe()) != std::string::npos; });
    if (!said) report.notes.push_back(note);
  }
  report.sweep = std::move(swept).value();
}

// What doctor asks of Validate for one provider: the references if any, the options' sizes (with the
// export record's dimension sums), the sweep within the record's largest sizes, inputs without NaN.
ValidateOptions ValidateOptionsFor(const DoctorOptions& options, const Layout& layout, const SessionConfig& config,
                                   const std::optional<ExportRecord>& record) {
  ValidateOptions validate;
  validate.model = layout.model;
  validate.session = config;
  validate.reference = layout.reference;
  validate.tolerance = options.tolerance;
  validate.inputs.plan = options.inputs;
  if (record && validate.inputs.plan.dim_sums.empty()) validate.inputs.plan.dim_sums = record->dim_sums;
  if (record) validate.sweep_max_sizes = record->dim_limits;
  validate.avoid_nan_inputs = true;
  validate.sweep_memory_bytes = options.sweep_memory_bytes;
  return validate;
}

void RunProvider(Runtime& runtime, const DoctorOptions& options, const Layout& layout, const onnx::ModelProto& proto,
                 const std::optional<ExportRecord>& record, ProviderReport& report, std::vector<Diagnosis>& diagnoses) {
  SessionConfig config;
  config.provider = report.provider;
  Location file;
  file.file = layout.model.string();
  auto session = Session::Create(runtime, layout.model, config);
  if (!session.ok()) {
    report.unavailable = session.error().kind == ErrorKind::kUnavailable;
    diagnoses.push_back(TranslateSessionError(session.error(), file));
    report.notes.push_back("not loaded: " + session.error().message);
    return;
  }
  report.loaded = true;
  auto inputs = DescribeInputs(**session);
  auto outputs = DescribeOutputs(**session);
  if (!inputs.ok() || !outputs.ok()) {
    report.notes.push_back("cannot describe the session's inputs and outputs");
    return;
  }
  ValidateOptions validate = ValidateOptionsFor(options, layout, config, record);
  if (auto plan = ValidatePlan(validate.inputs.plan, NameUnnamedAxes(*inputs)); !plan.ok()) {
    report.notes.push_back("inputs: " + plan.error().message);
  }
  // Validate's input step: sizes found by running, inputs the model does not answer with NaN.
  const ValidationInputs made = PrepareValidationInputs(**session, *inputs, proto, validate);
  std::vector<Diagnosis> input_findings;
  NoteInputs(made, options, file, report, input_findings);
  if (made.prepared.ok()) CheckOutputShapes(**session, proto, made.prepared->tensors, file, input_findings);
  // Against the framework's references; without them the runtime checks itself: optimisations off against all.
  if (layout.reference.empty() && made.prepared.ok()) {
    validate.compare = "opt-levels";
    validate.given_inputs = &made.prepared->tensors;
  }
  ValidateReport validated = Validate(runtime, **session, proto, validate);
  AddValidation(validated, layout, record, file, input_findings, report, diagnoses);
  // The sweep runs whatever the validation found (Validate stops at a step it cannot carry out).
  if (options.sweep) SweepProvider(**session, proto, *inputs, validate, made, report, diagnoses);
  if (options.benchmark_runs > 0 && made.prepared.ok()) {
    auto latency = MeasureLatency(**session, made.prepared->tensors, options);
    if (latency.ok()) {
      report.latency = std::move(latency).value();
    } else {
      diagnoses.push_back(TranslateRuntimeError(latency.error().message, file, /*during_run=*/true));
    }
  }
}

}  // namespace

const char* ToString(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::kHealthy: return "healthy";
    case DoctorVerdict::kWarnings: return "warnings";
    case DoctorVerdict::kBroken: return "broken";
  }
  return "broken";
}

DoctorVerdict VerdictOf(const std::vector<Diagnosis>& diagnoses) {
  if (diagnoses.empty()) return DoctorVerdict::kHealthy;
  switch (WorstSeverity(diagnoses)) {
    case Severity::kError: return DoctorVerdict::kBroken;
    case Severity::kWarning: return DoctorVerdict::kWarnings;
    case Severity::kInfo: return DoctorVerdict::kHealthy;
  }
  return DoctorVerdict::kBroken;
}

namespace {

// What the environment says about `provider` (not compiled in, a missing CUDA library, no GPU), as `ortkit env
// --provider NAME` does, less the codes already said.
void AddEnvironmentFindings(Runtime& runtime, const std::string& provider, std::vector<Diagnosis>& diagnoses) {
  EnvironmentOptions env;
  env.skip_python = true;
  env.provider = provider;
  for (auto& d : InspectEnvironment(runtime, env).diagnoses) {
    const bool said =
        std::any_of(diagnoses.begin(), diagnoses.end(), [&](const Diagnosis& o) { return o.code == d.code; });
    if (!said) diagnoses.push_back(std::move(d));
  }
}

// A provider other than the CPU that did not load: the environment says why.
void AddEnvironmentFindings(Runtime& runtime, const DoctorReport& report, std::vector<Diagnosis>& diagnoses) {
  for (const auto& provider : report.providers) {
    if (provider.provider != "cpu" && !provider.loaded) AddEnvironmentFindings(runtime, provider.provider, diagnoses);
  }
}

// A provider this machine cannot run: the environment's fault, so the model is not judged; the report holds
// why the provider failed and what the environment says about it.
DoctorReport UnavailableProvider(Runtime& runtime, const std::string& provider, std::vector<Diagnosis> why,
                                 DoctorReport report) {
  report.unavailable_provider = provider;
  report.failure = MakeError(
      ErrorKind::kUnavailable,
      fmt::format("the {} execution provider cannot run on this machine, so the model was not examined", provider));
  AddEnvironmentFindings(runtime, provider, why);
  SortBySeverity(why);
  report.verdict = VerdictOf(why);
  report.diagnoses = std::move(why);
  return report;
}

// The --dim and --shape flags against the inputs the file declares, before anything runs: a flag the model
// cannot take is the user's mistake, said as `run` says it, not a finding about the model. A file that does
// not parse is left to the check, which says why.
Status CheckPlanAgainstFile(const fs::path& model, const InputPlan& plan) {
  if (model.empty() || (plan.dims.empty() && plan.shapes.empty())) return OkStatus();
  const ModelLoad load = LoadModelFile(model);
  if (load.model == nullptr) return OkStatus();
  return ValidatePlan(plan, NameUnnamedAxes(DeclaredInputs(*load.model->proto)));
}

const char* KindOfValue(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    default: return nullptr;
  }
}

// Outputs ortkit does not fetch (sequences, maps, optionals) are computed in every run, but nothing checks their
// values: said as a note, so that a model that loads and runs is neither called broken for ortkit's limit nor
// healthy without saying what was not looked at.
void AddNonTensorOutputs(const onnx::ModelProto& proto, const std::string& file, std::vector<Diagnosis>& diagnoses) {
  std::vector<std::string> described;
  std::string first;
  for (const auto& out : proto.graph().output()) {
    if (const char* kind = KindOfValue(out.type())) {
      described.push_back(fmt::format("'{}' is {}", out.name(), kind));
      if (first.empty()) first = out.name();
    }
  }
  if (described.empty()) return;
  Location where;
  where.file = file;
  where.output = first;
  const bool all = static_cast<int>(described.size()) == proto.graph().output_size();
  diagnoses.push_back(Diagnose(
      "runtime.non-tensor-output",
      fmt::format("{}{}: ortkit fetches tensor outputs only, so {} computed in every run but not compared or swept; "
                  "the runs show that the model loads and runs, not that {} right",
                  all ? "no output of the model is a tensor: " : "", fmt::join(described, ", "),
                  described.size() == 1 ? "it was" : "they were",
                  described.size() == 1 ? "its values are" : "their values are"),
      where));
}

// A reference the caller named that cannot be used is theirs to fix, as validate says it (exit 2); the report
// keeps what was found. One found beside the model is the export's, and a finding like any other.
void SetUnusableReference(const DoctorOptions& options, DoctorReport& report) {
  if (options.reference.empty() || report.failure) return;
  for (const auto& d : report.diagnoses) {
    if (d.code != "validate.reference-input") continue;
    report.failure = MakeError(ErrorKind::kInvalidArgument, "unusable reference: " + d.message);
    return;
  }
}

}  // namespace

Result<DoctorReport> RunDoctor(Runtime& runtime, const DoctorOptions& options) {
  if (options.providers.empty()) return MakeError(ErrorKind::kInvalidArgument, "no provider given");
  ORTKIT_RETURN_IF_ERROR(options.tolerance.Validate());
  for (const auto& name : options.providers) ORTKIT_RETURN_IF_ERROR(CheckProviderName(name));
  if (!options.reference.empty() && !Exists(options.reference)) {
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("the reference '{}' does not exist", options.reference.string()));
  }
  const Layout layout = Resolve(options);
  ORTKIT_RETURN_IF_ERROR(CheckPlanAgainstFile(layout.model, options.inputs));
  DoctorReport report;
  report.model_path = layout.model.string();
  report.reference_path = layout.reference.string();
  std::optional<WeightShare> weights;  // where the float weights are: the next step's fact
  report.reference_from_export = layout.reference_from_export;
  // A provider missing from this ONNX Runtime build is known before anything runs.
  for (const auto& name : options.providers) {
    if (auto available = CheckProviderAvailable(name); !available.ok()) {
      Location where;
      where.file = layout.model.string();
      return UnavailableProvider(runtime, name, {TranslateSessionError(available.error(), where)}, std::move(report));
    }
  }
  std::vector<Diagnosis> diagnoses;

  if (!layout.export_json.empty()) {
    auto record = ReadExportRecord(layout.export_json);
    if (record.ok()) {
      report.export_record = std::move(record).value();
      auto found = ExportDiagnoses(*report.export_record);
      diagnoses.insert(diagnoses.end(), found.begin(), found.end());
    }
  }
  if (layout.model.empty()) {
    // An export folder whose export failed: the export error is the finding.
    if (diagnoses.empty()) {
      Location where;
      where.file = options.model.string();
      diagnoses.push_back(Diagnose("file.not-found", "the export folder holds no model.onnx", where));
    }
  } else {
    CheckOptions check_options;
    check_options.model_path = layout.model;
    check_options.provider = options.providers.front();
    check_options.target_ort = options.target_ort;
    report.check = RunCheck(&runtime, check_options);
    if (report.check->failure && report.check->failure->kind == ErrorKind::kIo) report.failure = report.check->failure;
    if (report.check->failure && report.check->failure->kind == ErrorKind::kUnavailable) {
      // Its libraries did not load: the runtime layer says why.
      std::vector<Diagnosis> why;
      for (const auto& layer : report.check->layers) {
        if (layer.name == "runtime") why = layer.diagnoses;
      }
      return UnavailableProvider(runtime, options.providers.front(), std::move(why), std::move(report));
    }
    auto found = report.check->AllDiagnoses();
    diagnoses.insert(diagnoses.end(), found.begin(), found.end());
    // Running needs a model the runtime loads; the check's layers already say why not otherwise.
    ModelLoad load;
    if (!LayerFailed(*report.check, "file")) load = LoadModelFile(layout.model);
    if (load.model != nullptr) {
      weights = ShareWeights(*load.model->proto);
      for (const auto& name : options.providers) {
        ProviderReport provider;
        provider.provider = name;
        const bool refused_in_check = name == options.providers.front() && LayerFailed(*report.check, "runtime");
        if (refused_in_check) {
          provider.notes.push_back("not loaded: ONNX Runtime refuses the model (see the check's findings)");
        } else {
          std::vector<Diagnosis> found_here;
          RunProvider(runtime, options, layout, *load.model->proto, report.export_record, provider, found_here);
          if (provider.unavailable) return UnavailableProvider(runtime, name, std::move(found_here), std::move(report));
          if (options.providers.size() > 1) {
            for (auto& d : found_here) d.message = fmt::format("[{}] {}", name, d.message);
          }
          diagnoses.insert(diagnoses.end(), found_here.begin(), found_here.end());
        }
        if (provider.sweep) ConnectFrozenValues(*provider.sweep, diagnoses);
        if (provider.sweep) SettleOutputDims(*provider.sweep, diagnoses);
        if (provider.sweep) SettleBakedBatch(*provider.sweep, *load.model->proto, diagnoses);
        report.providers.push_back(std::move(provider));
      }
      if (std::any_of(report.providers.begin(), report.providers.end(), [](const auto& p) { return p.loaded; }))
        AddNonTensorOutputs(*load.model->proto, layout.model.string(), diagnoses);
    }
    AddEnvironmentFindings(runtime, report, diagnoses);
  }
  Deduplicate(diagnoses);
  SortBySeverity(diagnoses);
  report.verdict = VerdictOf(diagnoses);
  report.diagnoses = std::move(diagnoses);
  const bool measured =
      std::any_of(report.providers.begin(), report.providers.end(), [](const auto& p) { return p.latency; });
  if (weights && measured && report.verdict == DoctorVerdict::kHealthy)
    report.next_step = NextStepFromWeights(*weights, report.model_path, DetectCpuFeatures());
  SetUnusableReference(options, report);
  return report;
}

nlohmann::json DoctorReport::ToJson() const {
  nlohmann::json json = {{"model", model_path},
                         {"reference", reference_path.empty() ? nlohmann::json() : nlohmann::json(reference_path)},
                         {"reference_from_export", reference_from_export},
                         {"verdict", ToString(verdict)},
                         {"diagnoses", diagnoses},
                         {"next_step", next_step.empty() ? nlohmann::json() : nlohmann::json(next_step)}};
  if (export_record) json["export"] = *export_record;
  if (check) json["check"] = *check;
  nlohmann::json providers_json = nlohmann::json::array();
  for (const auto& p : providers) {
    nlohmann::json entry = {{"provider", p.provider}, {"loaded", p.loaded}, {"notes", p.notes}};
    if (p.validation) entry["validation"] = p.validation->ToJson();
    if (p.cross_check) entry["cross_check"] = p.cross_check->ToJson();
    if (p.sweep) entry["sweep"] = p.sweep->ToJson();
    if (p.latency) {
      const auto& l = *p.latency;
      entry["latency"] = {{"shape", l.shape},     {"runs", l.runs},     {"first_ms", l.first_ms},
                          {"mean_ms", l.mean_ms}, {"p50_ms", l.p50_ms}, {"p90_ms", l.p90_ms},
                          {"min_ms", l.min_ms},   {"max_ms", l.max_ms}, {"measured_by", l.measured_by}};
    }
    providers_json.push_back(std::move(entry));
  }
  json["providers"] = std::move(providers_json);
  return json;
}

}  // namespace ortkit
