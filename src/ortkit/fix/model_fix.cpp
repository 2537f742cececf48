#include "ortkit/fix/model_fix.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/check/onnx_checker.h"
#include "ortkit/inputs/shape_search.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/run.h"
#include "ortkit/validate/cross_check.h"
#include "ortkit/validate/reference.h"
#include "ortkit/validate/sweep.h"
#include "ortkit/validate/validate.h"

namespace ortkit {
namespace {

/// The codes of check's rules and shape-inference layer on `model`, each once, in the order found.
std::vector<std::string> RuleCodes(const onnx::ModelProto& model) {
  std::vector<Diagnosis> found = LintModel(model);
  onnx::ModelProto inferred = model;
  for (auto& d : RunShapeInference(inferred).diagnoses) found.push_back(std::move(d));
  std::vector<std::string> codes;
  for (const auto& d : found) {
    if (std::find(codes.begin(), codes.end(), d.code) == codes.end()) codes.push_back(d.code);
  }
  return codes;
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

/// The passes to run: those --only names, else those a finding calls for (and the ones that always run).
std::vector<const FixPass*> SelectPasses(const std::vector<std::string>& only, const std::vector<std::string>& found) {
  std::vector<const FixPass*> passes;
  for (const auto& pass : FixPasses()) {
    bool wanted = only.empty() ? pass.always : Contains(only, pass.name);
    for (auto code : pass.codes) wanted = wanted || Contains(only.empty() ? found : only, code);
    if (wanted) passes.push_back(&pass);
  }
  return passes;
}

struct Applied {
  onnx::ModelProto model;
  std::vector<FixChange> changes;
  std::vector<FixRefusal> refusals;
  std::vector<const FixPass*> changed;  ///< the passes that changed something
  std::map<std::string, std::int64_t> proof_sizes;
};

Applied ApplyPasses(const onnx::ModelProto& original, const std::vector<const FixPass*>& passes,
                    const FixPassOptions& options) {
  Applied applied;
  applied.model = original;
  for (const auto* pass : passes) {
    auto result = pass->apply(applied.model, options);
    if (result.changed()) applied.changed.push_back(pass);
    applied.proof_sizes.insert(result.proof_sizes.begin(), result.proof_sizes.end());
    applied.changes.insert(applied.changes.end(), result.changes.begin(), result.changes.end());
    applied.refusals.insert(applied.refusals.end(), result.refusals.begin(), result.refusals.end());
  }
  return applied;
}

Result<std::string> Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return MakeError(ErrorKind::kInternal, "the fixed model could not be serialised");
  return bytes;
}

/// What a failed proof blames: a pass to refuse (the search starts again without it), or nothing (the
/// fix fails as a whole).
struct Verdict {
  const FixPass* refuse = nullptr;
  std::string reason;
};

/// The pass to blame for outputs that differ or a model that stops running: the one whose change is
/// numeric (float64) or whose purpose is a new shape (static-batch), the last applied first.
const FixPass* Suspect(const std::vector<const FixPass*>& changed) {
  for (auto it = changed.rbegin(); it != changed.rend(); ++it) {
    if ((*it)->name == "float64" || (*it)->purpose == FixPurpose::kOtherBatches) return *it;
  }
  return nullptr;
}

/// Everything a proof needs, for one attempt.
struct ProofContext {
  Runtime& runtime;
  const ModelFixOptions& options;
  const onnx::ModelProto& original;  ///< external data inlined
  const Applied& applied;            ///< applied.model: the fixed model, shapes inferred
  const std::string& fixed_bytes;
  ModelFixReport& report;
  /// options.proof, with the sizes the original was traced at where --dim gives none.
  EquivalenceOptions proof;
};

/// Whether the fixed model loads and runs on synthesised inputs: what can still be shown when the original
/// does not run here (a fix may be what makes it load).
FixEvidence FixedModelRuns(ProofContext& c) {
  FixEvidence evidence{"the fixed model loads and runs here", false, "", false};
  auto session = Session::CreateFromBytes(c.runtime, c.fixed_bytes, c.proof.session);
  if (!session.ok()) {
    evidence.detail = session.error().message;
    return evidence;
  }
  auto specs = DescribeInputs(**session);
  auto inputs = specs.ok() ? SynthesizeInputs(*specs, AnalyzeInputValues(c.applied.model), c.proof.inputs)
                           : Result<std::vector<NamedTensor>>(specs.error());
  if (!inputs.ok()) {
    evidence.detail = inputs.error().message;
    return evidence;
  }
  auto outputs = RunSession(**session, RunRequest{*inputs, {}});
  evidence.held = outputs.ok();
  evidence.detail = outputs.ok() ? fmt::format("{} output{}", outputs->size(), outputs->size() == 1 ? "" : "s")
                                 : outputs.error().message;
  return evidence;
}

/// The fixed model against the original (or, when a fix is meant to change the outputs, against the
/// original with only those fixes applied), at the shapes where that runs.
Result<Verdict> CompareWithOriginal(ProofContext& c) {
  std::vector<const FixPass*> meant_to_change;
  for (const auto* p : c.applied.changed) {
    if (p->purpose == FixPurpose::kInferenceMode) meant_to_change.push_back(p);
  }
  std::string baseline_bytes;
  onnx::ModelProto baseline = c.original;
  ModelToLoad source{c.options.model, {}};
  c.report.baseline = "the original";
  if (!meant_to_change.empty()) {
    baseline = ApplyPasses(c.original, meant_to_change, c.options.passes).model;
    ORTKIT_ASSIGN_OR_RETURN(baseline_bytes, Serialize(baseline));
    source = ModelToLoad{{}, baseline_bytes};
    c.report.baseline =
        "the original with its training-mode nodes in inference form (those fixes change the outputs on purpose)";
  }
  auto proof = CheckEquivalence(c.runtime, source, c.fixed_bytes, baseline, c.proof);
  if (!proof.ok()) {
    if (proof.error().message.rfind("original: ", 0) == 0) {
      c.report.evidence.push_back(
          {"the original runs here, so the outputs can be compared", false, proof.error().message, false});
      c.report.evidence.push_back(FixedModelRuns(c));
      c.report.diagnoses.push_back(Diagnose("fix.not-proven", proof.error().message));
      return Verdict{};
    }
    if (const auto* suspect = Suspect(c.applied.changed)) return Verdict{suspect, proof.error().message};
    c.report.diagnoses.push_back(Diagnose("fix.breaks-model", proof.error().message));
    return Verdict{};
  }
  c.report.proof = std::move(proof).value();
  const double worst = c.report.proof->MaxAbsError();
  const bool held = c.report.proof->Passed();
  c.report.evidence.push_back({fmt::format("the outputs match {} within tolerance", c.report.baseline), held,
                               fmt::format("largest absolute error {:.3g}", worst)});
  if (held) return Verdict{};
  if (const auto* suspect = Suspect(c.applied.changed))
    return Verdict{suspect, fmt::format("the outputs then differ from the original's (largest error {:.3g})", worst)};
  c.report.diagnoses.push_back(Diagnose(
      "fix.outputs-differ",
      fmt::format("the fixed model's outputs differ from the original's (largest error {:.3g})", worst), Location{}));
  return Verdict{};
}

constexpr std::string_view kNoBatchDimension = "the fixed model's inputs share no batch dimension";

/// Runs the fixed model at several sizes of its batch dimension, row i of a batch against row i alone.
Result<FixEvidence> BatchSweep(ProofContext& c, std::vector<std::int64_t> sizes, const std::string& claim) {
  ORTKIT_ASSIGN_OR_RETURN(auto session, Session::CreateFromBytes(c.runtime, c.fixed_bytes, c.proof.session));
  ORTKIT_ASSIGN_OR_RETURN(auto specs, DescribeInputs(*session));
  const std::string batch = DetectBatchDim(NameUnnamedAxes(specs));
  if (batch.empty()) return FixEvidence{claim, false, std::string(kNoBatchDimension)};
  SweepOptions sweep;
  sweep.axes = {SweepAxis{batch, std::move(sizes)}};
  sweep.base = c.proof.inputs;
  sweep.base.dims.erase(batch);
  sweep.base.shapes.clear();  // whole shapes would pin the batch
  sweep.tolerance = c.proof.tolerance;
  sweep.batch_dim = batch;
  ORTKIT_ASSIGN_OR_RETURN(auto report, RunSweep(*session, c.applied.model, sweep));
  double worst = 0;
  for (const auto& cell : report.cells) {
    worst = std::max(worst, cell.batch_max_abs_error);
    if (cell.state != SweepCell::State::kFailed) continue;  // a cell skipped for memory proves nothing either way
    const std::string why = cell.diagnoses.empty() ? "it fails" : cell.diagnoses.front().message;
    return FixEvidence{claim, false, why};
  }
  return FixEvidence{claim, true,
                     fmt::format("{} = {}: every run passed, rows agree (largest error {:.3g})", batch,
                                 fmt::join(sweep.axes.front().values, ", "), worst)};
}

/// The same inputs twice through the fixed model: a model in inference mode gives the same outputs.
Result<FixEvidence> SameTwice(ProofContext& c) {
  const std::string claim = "the fixed model gives the same outputs twice (no training-mode randomness)";
  ORTKIT_ASSIGN_OR_RETURN(auto session, Session::CreateFromBytes(c.runtime, c.fixed_bytes, c.proof.session));
  ORTKIT_ASSIGN_OR_RETURN(auto specs, DescribeInputs(*session));
  ORTKIT_ASSIGN_OR_RETURN(auto inputs, SynthesizeInputs(specs, AnalyzeInputValues(c.applied.model), c.proof.inputs));
  ToleranceRules exact;
  exact.atol = 0;
  exact.rtol = 0;
  const SessionConfig& config = c.proof.session;
  ORTKIT_ASSIGN_OR_RETURN(auto report,
                          CrossCheck(c.runtime, ModelToLoad{{}, c.fixed_bytes}, config, config, inputs, exact));
  return FixEvidence{claim, report.Passed(),
                     report.Passed() ? "every output identical" : "the outputs differ between runs"};
}

/// Sizes to run a batch at: 1, 2, 5, the traced size (the first dimension the original's inputs fix,
/// or the size a fix says the original was traced at) and one above it.
std::vector<std::int64_t> BatchSizesAround(const onnx::ModelProto& original, const InputPlan& plan) {
  std::set<std::int64_t> sizes = {1, 2, 5};
  std::int64_t traced = 0;
  for (const auto& input : original.graph().input()) {
    const auto& type = input.type();
    if (!type.has_tensor_type() || type.tensor_type().shape().dim_size() < 2) continue;
    const auto& first = type.tensor_type().shape().dim(0);
    if (first.has_dim_value())
      traced = first.dim_value();
    else if (auto it = plan.dims.find(first.dim_param()); it != plan.dims.end())
      traced = it->second;
    break;
  }
  if (traced > 0 && traced <= 1024) sizes.insert({traced, traced + 3});
  return {sizes.begin(), sizes.end()};
}

/// Each applied fix's purpose, run once per kind of purpose: a verdict against the first pass of that
/// kind when it does not hold. A model put in inference mode must give the same outputs twice, and (with
/// a batch dimension) each row of a batch the row run alone, which training-mode normalisation does not.
Result<Verdict> ProvePurposes(ProofContext& c) {
  std::set<FixPurpose> proven;
  for (const auto* pass : c.applied.changed) {
    if (pass->purpose == FixPurpose::kSameOutputs || !proven.insert(pass->purpose).second) continue;
    std::vector<FixEvidence> evidence;
    if (pass->purpose == FixPurpose::kOtherBatches) {
      ORTKIT_ASSIGN_OR_RETURN(auto sweep, BatchSweep(c, BatchSizesAround(c.original, c.proof.inputs),
                                                     "other batch sizes run, each row equal to that row run alone"));
      evidence.push_back(std::move(sweep));
    } else {
      ORTKIT_ASSIGN_OR_RETURN(auto twice, SameTwice(c));
      evidence.push_back(std::move(twice));
      ORTKIT_ASSIGN_OR_RETURN(auto rows, BatchSweep(c, {1, 3}, "each row of a batch equal to that row run alone"));
      if (rows.held || rows.detail != kNoBatchDimension) evidence.push_back(std::move(rows));
    }
    for (auto& e : evidence) {
      const bool held = e.held;
      const std::string detail = e.detail;
      c.report.evidence.push_back(std::move(e));
      if (!held) return Verdict{pass, detail};
    }
  }
  return Verdict{};
}

/// The fixed model keeps the value_info inferred for its new shapes; its declared outputs stay as the
/// fixes left them (inference would narrow them to what constants inside the graph give). The checker's
/// errors, and the target release's, stop the fix.
void CheckFixed(onnx::ModelProto& fixed, const OrtRelease* target, ModelFixReport& report) {
  onnx::ModelProto inferred = fixed;
  RunShapeInference(inferred);
  *fixed.mutable_graph()->mutable_value_info() = inferred.graph().value_info();
  for (auto& d : RunChecker(inferred).diagnoses) report.diagnoses.push_back(std::move(d));
  if (target == nullptr) return;
  for (auto& d : CheckTargetRuntime(fixed, *target)) report.diagnoses.push_back(std::move(d));
}

/// --fold-constants: the model as ONNX Runtime's basic-level optimisations leave it (constant folding,
/// redundant Identity/Cast/Dropout removal, common subexpressions), saved by the runtime and read back.
Status FoldConstants(Runtime& runtime, const ModelFixOptions& options, Applied& applied) {
  if (!options.fold_constants) return OkStatus();
  ORTKIT_ASSIGN_OR_RETURN(auto bytes, Serialize(applied.model));
  SessionConfig config = options.proof.session;
  config.optimization_level = OptimizationLevel::kBasic;
  const auto folder = std::filesystem::temp_directory_path() / fmt::format("ortkit-fold-{}", ::getpid());
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  config.optimized_model_path = folder / "folded.onnx";
  auto session = Session::CreateFromBytes(runtime, bytes, config);
  ModelLoad load = session.ok() ? LoadModelFile(config.optimized_model_path) : ModelLoad{};
  std::filesystem::remove_all(folder, ec);
  if (!session.ok()) return MakeError(ErrorKind::kRuntime, "folding constants: " + session.error().message);
  if (load.model == nullptr)
    return MakeError(ErrorKind::kRuntime, "folding constants: the optimised model could not be read back");
  const int before = applied.model.graph().node_size();
  const int after = load.model->proto->graph().node_size();
  applied.model = std::move(*load.model->proto);
  if (after != before) {
    applied.changes.push_back({"", "the graph",
                               fmt::format("ONNX Runtime's basic optimisations saved offline: {} -> {} nodes (constant "
                                           "subgraphs folded, redundant nodes removed)",
                                           before, after)});
  }
  return OkStatus();
}

/// --opset / --target-ort: the fixed model moved to another opset with convert's converter and adapters.
void ConvertIfAsked(const ModelFixOptions& options, Applied& applied, ModelFixReport& report) {
  if (!options.conversion) return;
  auto outcome = ConvertOpset(applied.model, *options.conversion);
  report.diagnoses.insert(report.diagnoses.end(), outcome.diagnoses.begin(), outcome.diagnoses.end());
  if (!outcome.model || (outcome.from_opset == outcome.to_opset && outcome.from_ir == outcome.to_ir)) return;
  applied.model = std::move(*outcome.model);
  applied.changes.push_back({"target.opset", "the model",
                             fmt::format("opset {} -> {}, IR version {} -> {} (ortkit convert's converter)",
                                         outcome.from_opset, outcome.to_opset, outcome.from_ir, outcome.to_ir)});
  for (const auto& r : outcome.rewrites)
    applied.changes.push_back({"target.opset", fmt::format("node '{}'", r.node), r.change});
}

/// --reference: the fixed model against the framework's own outputs.
Status CompareWithReference(ProofContext& c) {
  if (c.options.reference.empty()) return OkStatus();
  ORTKIT_ASSIGN_OR_RETURN(auto session, Session::CreateFromBytes(c.runtime, c.fixed_bytes, c.proof.session));
  ORTKIT_ASSIGN_OR_RETURN(auto inputs, DescribeInputs(*session));
  ORTKIT_ASSIGN_OR_RETURN(auto outputs, DescribeOutputs(*session));
  auto cases = ReadReference(c.options.reference, inputs, outputs);
  if (!cases.ok()) {
    // The call's to fix, not the model's: the report says what was proven before, and the failure why it stopped.
    c.report.diagnoses.push_back(UnusableReference(c.options.reference, cases.error()));
    c.report.failure = MakeError(cases.error().kind == ErrorKind::kIo ? ErrorKind::kIo : ErrorKind::kInvalidArgument,
                                 "unusable reference: " + cases.error().message);
    return OkStatus();
  }
  const auto validation = ValidateAgainst(*session, *cases, c.proof.tolerance);
  double worst = 0;
  for (const auto& r : validation.cases) {
    for (const auto& o : r.comparison.outputs) worst = std::max(worst, o.max_abs_error);
  }
  const std::string detail = fmt::format("{} case{}, largest absolute error {:.3g}", validation.cases.size(),
                                         validation.cases.size() == 1 ? "" : "s", worst);
  c.report.evidence.push_back(
      {fmt::format("the outputs match the framework's references ({})", c.options.reference.string()),
       validation.Passed(), detail});
  if (!validation.Passed()) {
    c.report.diagnoses.push_back(
        Diagnose("validate.mismatch", fmt::format("the fixed model's outputs differ from the references in '{}': {}",
                                                  c.options.reference.string(), detail)));
  }
  return OkStatus();
}

/// Whether a code the fixes answered is gone from check's findings.
void EvidenceFromCheck(const std::vector<FixChange>& changes, ModelFixReport& report) {
  std::set<std::string> answered;
  for (const auto& change : changes) {
    if (!change.code.empty()) answered.insert(change.code);
  }
  for (const auto& code : answered) {
    const bool gone = !Contains(report.codes_after, code);
    report.evidence.push_back({fmt::format("check no longer reports {}", code), gone,
                               gone ? "" : "check still reports it on a dimension or node no fix changed",
                               /*required=*/false});
  }
}

/// Sizes the original runs at, for the proofs: when the plan's sizes fail (audio shorter than a reflect
/// pad, an image below a detector's stride), the size search grows them as `run` does. Named dimensions
/// join the plan's sizes; inputs with unnamed axes get their whole shape (the search names and merges
/// those axes, which the proofs' own inputs would not).
void SettleProofSizes(Runtime& runtime, const ModelFixOptions& options, const onnx::ModelProto& original,
                      InputPlan& plan) {
  auto session = OpenModel(runtime, ModelToLoad{options.model, {}}, options.proof.session);
  if (!session.ok()) return;  // the comparison says why the original does not load
  auto specs = DescribeInputs(**session);
  if (!specs.ok()) return;
  const auto hints = AnalyzeInputValues(original);
  if (!RunFailure(**session, *specs, hints, plan)) return;
  const ShapeSearch search = SearchShapes(**session, *specs, hints, plan, &original);
  if (!search.runs) return;
  const InputPlan grown = search.Plan();
  for (const auto& spec : search.specs) {
    bool unnamed = false;  // an axis the search named INPUT:AXIS: the proofs' inputs would not know the name
    for (const auto& dim : spec.dims) {
      if (dim.fixed()) continue;
      if (UnnamedAxisOf(dim.symbol) >= 0)
        unnamed = true;
      else if (search.grown.count(dim.symbol))
        plan.dims[dim.symbol] = search.grown.at(dim.symbol);
    }
    if (!unnamed) continue;
    if (auto shape = ResolveShape(spec, grown); shape.ok()) plan.shapes[spec.name] = *shape;
  }
}

/// One attempt with `passes`: apply, check, compare, prove each purpose. Returns the pass to refuse
/// when a proof blames one (the caller tries again without it); otherwise the report is final.
Result<Verdict> Attempt(Runtime& runtime, const ModelFixOptions& options, const onnx::ModelProto& original,
                        const std::vector<const FixPass*>& passes, ModelFixReport& report, Applied& applied) {
  applied = ApplyPasses(original, passes, options.passes);
  report.changes = applied.changes;
  report.refusals = applied.refusals;
  report.diagnoses.clear();
  report.passes_run.clear();
  for (const auto* p : passes) report.passes_run.emplace_back(p->name);
  report.evidence.clear();
  report.proof.reset();
  ORTKIT_RETURN_IF_ERROR(FoldConstants(runtime, options, applied));
  ConvertIfAsked(options, applied, report);
  report.changes = applied.changes;
  if (applied.changes.empty() || options.dry_run || report.Failed()) return Verdict{};
  CheckFixed(applied.model, options.target, report);
  if (report.Failed()) return Verdict{};
  ORTKIT_ASSIGN_OR_RETURN(auto bytes, Serialize(applied.model));
  ProofContext context{runtime, options, original, applied, bytes, report, options.proof};
  context.proof.inputs.dims.insert(applied.proof_sizes.begin(), applied.proof_sizes.end());
  ORTKIT_ASSIGN_OR_RETURN(auto verdict, CompareWithOriginal(context));
  if (verdict.refuse != nullptr || report.Failed()) return verdict;
  ORTKIT_ASSIGN_OR_RETURN(verdict, ProvePurposes(context));
  if (verdict.refuse != nullptr) return verdict;
  ORTKIT_RETURN_IF_ERROR(CompareWithReference(context));
  report.codes_after = RuleCodes(applied.model);
  EvidenceFromCheck(applied.changes, report);
  return Verdict{};
}

/// Findings of check that no pass handles (or that --only leaves out), for the report.
std::vector<std::string> NotHandled(const std::vector<std::string>& found, const std::vector<const FixPass*>& passes) {
  std::vector<std::string> left;
  for (const auto& code : found) {
    const bool handled = std::any_of(passes.begin(), passes.end(), [&](const FixPass* p) {
      return std::find(p->codes.begin(), p->codes.end(), code) != p->codes.end();
    });
    if (!handled) left.push_back(code);
  }
  return left;
}

Status Write(const ModelFixOptions& options, const onnx::ModelProto& fixed, ModelFixReport& report) {
  std::uint64_t weights = 0;
  for (const auto& t : fixed.graph().initializer()) weights += t.ByteSizeLong();
  report.external_data = options.external_data || weights > kMaxInlinedBytes;
  ORTKIT_RETURN_IF_ERROR(WriteModel(fixed, options.out, report.external_data));
  report.written = true;
  return OkStatus();
}

}  // namespace

bool ModelFixReport::Failed() const { return WorstSeverity(diagnoses) == Severity::kError; }

Status ValidateFixSelection(const std::vector<std::string>& only) {
  std::vector<std::string> valid;
  for (const auto& pass : FixPasses()) {
    valid.emplace_back(pass.name);
    valid.insert(valid.end(), pass.codes.begin(), pass.codes.end());
  }
  for (const auto& entry : only) {
    if (Contains(valid, entry)) continue;
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--only '{}' is neither a fix nor a code fix handles; valid: {}", entry, fmt::join(valid, ", ")));
  }
  return OkStatus();
}

Result<ModelFixReport> FixModelFile(Runtime& runtime, const ModelFixOptions& options) {
  ORTKIT_RETURN_IF_ERROR(ValidateFixSelection(options.only));
  ModelFixReport report;
  report.model = options.model.string();
  report.out = options.out.string();
  report.dry_run = options.dry_run;
  ModelLoad load = LoadModelFile(options.model);
  if (load.model == nullptr) {
    report.diagnoses = std::move(load.diagnoses);
    if (load.failure && load.failure->kind == ErrorKind::kIo) report.failure = load.failure;
    return report;
  }
  onnx::ModelProto original = *load.model->proto;
  ORTKIT_RETURN_IF_ERROR(InlineExternalData(original, load.model->BaseDirectory(), kMaxInlinedBytes,
                                            "fix holds the weights in memory to fix and prove the model",
                                            "models this large are not fixed here"));
  report.codes_found = RuleCodes(original);
  ModelFixOptions settled = options;
  if (!options.dry_run) SettleProofSizes(runtime, options, original, settled.proof.inputs);
  auto passes = SelectPasses(options.only, report.codes_found);
  report.not_handled = NotHandled(report.codes_found, passes);
  Applied applied;
  std::vector<FixRefusal> refused;  // fixes whose proof failed: the attempts after go without them
  std::vector<Diagnosis> refused_diagnoses;
  for (;;) {
    ORTKIT_ASSIGN_OR_RETURN(auto verdict, Attempt(runtime, settled, original, passes, report, applied));
    if (verdict.refuse == nullptr) break;
    // The code check reported, of those the pass answers.
    std::string code(verdict.refuse->codes.front());
    for (auto c : verdict.refuse->codes) {
      if (Contains(report.codes_found, c)) {
        code = c;
        break;
      }
    }
    refused.push_back({code, fmt::format("fix '{}'", verdict.refuse->name), "refused by its proof: " + verdict.reason});
    refused_diagnoses.push_back(
        Diagnose("fix.refused", fmt::format("fix '{}' refused: {}", verdict.refuse->name, verdict.reason)));
    std::erase(passes, verdict.refuse);
  }
  report.refusals.insert(report.refusals.end(), refused.begin(), refused.end());
  report.diagnoses.insert(report.diagnoses.end(), refused_diagnoses.begin(), refused_diagnoses.end());
  if (report.changes.empty() && refused.empty())
    report.diagnoses.push_back(Diagnose("fix.nothing-to-fix", "no fix applies to this model"));
  SortBySeverity(report.diagnoses);
  if (report.dry_run || report.Failed() || report.changes.empty()) return report;
  ORTKIT_RETURN_IF_ERROR(Write(settled, applied.model, report));
  return report;
}

void to_json(nlohmann::json& json, const ModelFixReport& report) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : report.changes)
    changes.push_back({{"code", c.code}, {"target", c.target}, {"change", c.change}});
  nlohmann::json refusals = nlohmann::json::array();
  for (const auto& r : report.refusals)
    refusals.push_back({{"code", r.code}, {"target", r.target}, {"reason", r.reason}});
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& e : report.evidence)
    evidence.push_back({{"claim", e.claim}, {"held", e.held}, {"detail", e.detail}, {"required", e.required}});
  json = {{"model", report.model},
          {"out", report.out},
          {"dry_run", report.dry_run},
          {"written", report.written},
          {"external_data", report.external_data},
          {"codes_found", report.codes_found},
          {"passes", report.passes_run},
          {"changes", changes},
          {"refusals", refusals},
          {"not_handled", report.not_handled},
          {"baseline", report.baseline},
          {"evidence", evidence},
          {"codes_after", report.codes_after},
          {"diagnoses", report.diagnoses}};
  if (report.proof) json["proof"] = report.proof->ToJson();
}

}  // namespace ortkit
