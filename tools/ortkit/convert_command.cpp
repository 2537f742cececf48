// ortkit convert MODEL --opset N --out FILE: another opset, proven by the numbers before it is written.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/check/structure.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/convert/conversion_proof.h"
#include "ortkit/convert/opset_conversion.h"
#include "ortkit/doctor/export_record.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/runtime.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

struct ConvertFlags {
  fs::path model;
  fs::path out;
  int opset = 0;
  int ir_version = 0;
  std::string target_ort;
  std::vector<std::string> dims;
  std::uint64_t seed = 0;
  std::optional<double> atol;
  std::optional<double> rtol;
  bool no_validate = false;
  std::string format = "text";
};

/// Everything the command found, for either format.
struct ConvertReport {
  std::string model;
  std::string out;
  ConversionOutcome conversion;
  std::optional<ConversionProof> proof;
  std::vector<Diagnosis> diagnoses;  ///< the conversion's, then the proof's and the target's
  bool written = false;
  bool external_data = false;

  bool Failed() const { return WorstSeverity(diagnoses) == Severity::kError; }
};

void PrintText(const ConvertReport& report, const Style& style) {
  const auto& c = report.conversion;
  std::string out = fmt::format("{} {} -> {}\n\n", style.Bold("ortkit convert"), report.model, report.out);
  out += fmt::format("  opset {} -> {}, IR version {} -> {}\n", c.from_opset, c.to_opset, c.from_ir, c.to_ir);
  if (!c.rewrites.empty()) {
    out += fmt::format("\n  {} node{} rewritten by ortkit's adapters:\n", c.rewrites.size(),
                       c.rewrites.size() == 1 ? "" : "s");
    Table table({"node", "op", "change"});
    for (const auto& r : c.rewrites) table.AddRow({r.node, r.op_type, r.change});
    out += table.Render(style, "    ");
  }
  if (report.proof) {
    out += "\n  original and converted on the same synthesised inputs:\n";
    Table table({"shape", "output", "max abs error", "mismatches", "result"}, {false, false, true, true, false});
    for (const auto& trial : report.proof->trials) {
      if (!trial.report) {
        table.AddRow({trial.label, "-", "-", "-", style.Dim("skipped")});
        continue;
      }
      for (const auto& o : trial.report->comparison.outputs) {
        table.AddRow({trial.label, o.name, fmt::format("{:.3g}", o.max_abs_error), std::to_string(o.mismatches),
                      o.passed ? style.Green("pass") : style.Red("DIFFERS")});
      }
    }
    out += table.Render(style, "    ");
    for (const auto& trial : report.proof->trials) {
      if (!trial.skipped.empty()) out += style.Dim(fmt::format("    {}: {}\n", trial.label, trial.skipped));
    }
  }
  out += "\n";
  for (const auto& d : report.diagnoses) out += RenderDiagnosis(d, style) + "\n";
  if (report.written) {
    out += fmt::format("{}: wrote {}{}\n", style.Green("CONVERTED"), report.out,
                       report.external_data ? fmt::format(" and {}.data", report.out) : "");
  } else {
    out += fmt::format("{}: nothing written\n", style.Red("NOT CONVERTED"));
  }
  std::fputs(out.c_str(), stdout);
}

nlohmann::json ToJson(const ConvertReport& report) {
  const auto& c = report.conversion;
  nlohmann::json rewrites = nlohmann::json::array();
  for (const auto& r : c.rewrites) rewrites.push_back({{"node", r.node}, {"op_type", r.op_type}, {"change", r.change}});
  nlohmann::json json = {{"model", report.model},      {"out", report.out},      {"written", report.written},
                         {"from_opset", c.from_opset}, {"to_opset", c.to_opset}, {"from_ir_version", c.from_ir},
                         {"to_ir_version", c.to_ir},   {"rewrites", rewrites},   {"diagnoses", report.diagnoses}};
  if (report.proof) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& t : report.proof->trials) trials.push_back(t.ToJson());
    json["proof"] = {
        {"passed", report.proof->Passed()}, {"max_abs_error", report.proof->MaxAbsError()}, {"trials", trials}};
  }
  return json;
}

/// The target opset and IR version: --opset/--ir-version, else the newest --target-ort loads.
Status ResolveTarget(const ConvertFlags& flags, ConversionOptions& options) {
  options.opset = flags.opset;
  options.ir_version = flags.ir_version;
  if (flags.target_ort.empty()) {
    if (flags.opset == 0) return MakeError(ErrorKind::kInvalidArgument, "give --opset N or --target-ort X.Y");
    return OkStatus();
  }
  const OrtRelease* release = FindOrtRelease(flags.target_ort);
  if (options.opset == 0) options.opset = release->max_opset;
  if (options.opset > release->max_opset) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--opset {} is newer than ONNX Runtime {} loads (opset {} at most)", options.opset,
                                 release->version, release->max_opset));
  }
  return OkStatus();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "ortkit convert: %s\n", message.c_str());
  return kExitUsage;
}

int Run(const ConvertFlags& flags) {
  Format format;
  ParseFormat(flags.format, &format);
  ConversionOptions options;
  if (Status target = ResolveTarget(flags, options); !target.ok()) return Fail(target.error().message);
  std::error_code ec;
  if (fs::exists(flags.out, ec) && fs::equivalent(flags.model, flags.out, ec)) {
    return Fail(fmt::format("--out '{}' is the model being converted; write the converted model elsewhere",
                            flags.out.string()));
  }
  InputFlags input_flags;
  input_flags.dims = flags.dims;
  input_flags.seed = flags.seed;
  auto plan = ParsePlan(input_flags);
  if (!plan.ok()) return Fail(plan.error().message);
  // An export folder's record says which dimensions are sums of others (a decoder's mask spans its cache).
  if (auto record = ReadExportRecord(flags.model.parent_path() / "export.json"); record.ok())
    plan->dim_sums = record->dim_sums;
  ToleranceRules tolerance;
  tolerance.atol = flags.atol;
  tolerance.rtol = flags.rtol;
  if (Status valid = tolerance.Validate(); !valid.ok()) return Fail(valid.error().message);

  ConvertReport report;
  report.model = flags.model.string();
  report.out = flags.out.string();
  ModelLoad load = LoadModelFile(flags.model);
  if (load.model == nullptr) {
    report.diagnoses = load.diagnoses;
    if (format == Format::kJson) {
      std::cout << JsonText(ToJson(report)) << "\n";
    } else {
      PrintText(report, Style::ForStream(stdout));
    }
    return load.io_error ? kExitUsage : kExitFindings;
  }
  const onnx::ModelProto& original = *load.model->proto;
  report.external_data = !ListExternalTensors(original).empty();
  onnx::ModelProto inlined = original;
  if (Status status = InlineExternalData(inlined, load.model->BaseDirectory(), kMaxInlinedBytes,
                                         "convert holds the weights in memory to convert and prove the model",
                                         "models this large are not converted here");
      !status.ok()) {
    return Fail(status.error().message);
  }

  report.conversion = ConvertOpset(inlined, options);
  report.diagnoses = report.conversion.diagnoses;
  Location file;
  file.file = report.model;
  if (report.conversion.model) {
    onnx::ModelProto& converted = *report.conversion.model;
    {
      onnx::ModelProto copy = converted;
      LayerOutcome checked = RunChecker(copy);
      report.diagnoses.insert(report.diagnoses.end(), checked.diagnoses.begin(), checked.diagnoses.end());
    }
    if (!flags.target_ort.empty()) {
      auto found = CheckTargetRuntime(converted, *FindOrtRelease(flags.target_ort));
      report.diagnoses.insert(report.diagnoses.end(), found.begin(), found.end());
    }
    if (!report.Failed() && !flags.no_validate) {
      auto runtime = Runtime::Create();
      if (!runtime.ok()) return Fail(runtime.error().message);
      std::string bytes;
      if (!converted.SerializeToString(&bytes)) return Fail("the converted model could not be serialised");
      ConversionProofOptions proof_options;
      proof_options.inputs = *plan;
      proof_options.tolerance = tolerance;
      auto proof = ProveConversion(**runtime, ModelSource{flags.model, {}}, bytes, original, proof_options);
      if (!proof.ok()) {
        report.diagnoses.push_back(Diagnose("convert.not-validated", proof.error().message, file));
      } else {
        report.proof = std::move(proof).value();
        if (report.proof->NanBoth() > 0) {
          report.diagnoses.push_back(
              Diagnose("convert.nan-both",
                       fmt::format("{} output elements are NaN in both models on the synthesised inputs: they match, "
                                   "but prove nothing about the conversion",
                                   report.proof->NanBoth()),
                       file));
        }
        if (!report.proof->Passed()) {
          report.diagnoses.push_back(Diagnose(
              "convert.outputs-differ",
              fmt::format("the converted model's outputs differ from the original's (largest absolute error {:.3g})",
                          report.proof->MaxAbsError()),
              file));
        }
      }
    }
    if (!report.Failed()) {
      if (Status written = WriteModel(converted, flags.out, report.external_data); !written.ok()) {
        return Fail(written.error().message);
      }
      report.written = true;
      report.external_data = fs::exists(flags.out.string() + ".data", ec);
    }
  }
  SortBySeverity(report.diagnoses);
  if (format == Format::kJson) {
    std::cout << JsonText(ToJson(report)) << "\n";
  } else {
    PrintText(report, Style::ForStream(stdout));
  }
  return report.written ? kExitOk : kExitFindings;
}

}  // namespace

void RegisterConvert(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ConvertFlags>();
  CLI::App* cmd =
      app.add_subcommand("convert",
                         "Convert a model to another opset with ONNX's version converter and ortkit's adapters; "
                         "written only when its outputs match the original's");
  cmd->add_option("model", flags->model, "the .onnx file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", flags->out, "where to write the converted model")->required();
  cmd->add_option("--opset", flags->opset, "target ai.onnx opset")->check(CLI::Range(7, 99));
  cmd->add_option("--ir-version", flags->ir_version,
                  "IR version to write (default: the one the first ONNX release with the opset wrote)")
      ->check(CLI::Range(3, 99));
  cmd->add_option("--target-ort", flags->target_ort,
                  "convert for ONNX Runtime X.Y: its newest opset unless --opset says otherwise, then check "
                  "that it loads the result")
      ->check(TargetOrtValidator());
  cmd->add_option("--dim", flags->dims, "size of a symbolic dimension for the first shape compared (batch=1)");
  cmd->add_option("--seed", flags->seed, "seed of the synthesised inputs")->capture_default_str();
  cmd->add_option("--atol", flags->atol, "absolute tolerance (default: per element type, as validate)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance (default: per element type, as validate)");
  cmd->add_flag("--no-validate", flags->no_validate,
                "write without comparing the two models' outputs (when the original does not run here)");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
