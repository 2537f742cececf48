// ortkit run MODEL: one run, with statistics of every output, optionally saved.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "input_flags.h"
#include "model_session.h"
#include "ortkit/core/files.h"
#include "ortkit/inputs/single_run.h"
#include "ortkit/tensor/file_names.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/npz.h"
#include "ortkit/tensor/tensor_stats.h"
#include "ortkit/tensor/test_case.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct RunFlags {
  std::filesystem::path model;
  InputFlags inputs;
  std::string provider = "cpu";
  std::filesystem::path output_dir;
  std::string save_format = "npy";
  Format format = Format::kText;
};

std::string Number(double v) { return fmt::format("{:.6g}", v); }

/// Beside the .npy files: which file holds which output ({"files": {"a/b": "a_b.npy", "a_b": "a_b_2.npy"}}).
constexpr const char* kOutputIndexFile = "outputs.json";

Status SaveOutputs(const RunFlags& flags, const std::vector<NamedTensor>& inputs,
                   const std::vector<NamedTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(flags.output_dir, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("--output-dir {}: {}", flags.output_dir.string(), ec.message()));
  if (flags.save_format == "npz") return WriteNpz(flags.output_dir / "outputs.npz", outputs);
  if (flags.save_format == "pb") return WriteTestDataSet(flags.output_dir / "test_data_set_0", inputs, outputs);
  // Names are arbitrary bytes: "a/b" and "a_b" get files of their own, and outputs.json says which is which.
  std::vector<std::string> names;
  for (const auto& out : outputs) names.push_back(out.name);
  const std::vector<std::string> files = TensorFileNames(names, ".npy");
  nlohmann::json index = nlohmann::json::object();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    ORTKIT_RETURN_IF_ERROR(WriteNpy(flags.output_dir / files[i], outputs[i].tensor));
    index[outputs[i].name] = files[i];
  }
  std::ofstream file(flags.output_dir / kOutputIndexFile, std::ios::binary | std::ios::trunc);
  file << JsonText(nlohmann::json{{"files", index}}) << "\n";
  file.close();
  if (!file)
    return MakeError(ErrorKind::kIo, fmt::format("writing {} failed", (flags.output_dir / kOutputIndexFile).string()));
  return OkStatus();
}

void PrintRunJson(const RunFlags& flags, const SingleRun& result) {
  nlohmann::json json = {{"model", flags.model.string()}, {"provider", flags.provider}, {"run_ms", result.run_ms}};
  const PreparedInputs& prepared = result.inputs;
  for (std::size_t i = 0; i < prepared.tensors.size(); ++i) {
    json["inputs"].push_back({{"name", prepared.tensors[i].name},
                              {"type", DataTypeName(prepared.tensors[i].tensor.type())},
                              {"shape", prepared.tensors[i].tensor.shape()},
                              {"source", prepared.sources[i].source}});
  }
  json["outputs"] = nlohmann::json::array();
  for (const auto& out : result.outputs) {
    const TensorStats s = ComputeStats(out.tensor);
    json["outputs"].push_back({{"name", out.name},
                               {"type", DataTypeName(out.tensor.type())},
                               {"shape", out.tensor.shape()},
                               {"min", s.min},
                               {"max", s.max},
                               {"mean", s.mean},
                               {"nan", s.nan},
                               {"inf", s.inf}});
  }
  json["not_fetched"] = result.not_fetched;
  json["size_notes"] = result.size_notes;
  json["diagnoses"] = result.diagnoses;
  if (!flags.output_dir.empty()) json["saved_to"] = flags.output_dir.string();
  PrintJson(json);
}

void PrintRunText(const RunFlags& flags, const SingleRun& result) {
  const Style style = Style::ForStream(stdout);
  std::string out = fmt::format("{} {} (provider {}): {:.2f} ms\n\n", style.Bold("ortkit run"), flags.model.string(),
                                flags.provider, result.run_ms);
  Table in_table({"input", "type", "shape", "values"});
  for (std::size_t i = 0; i < result.inputs.tensors.size(); ++i) {
    const auto& t = result.inputs.tensors[i];
    in_table.AddRow({t.name, std::string(DataTypeName(t.tensor.type())), ShapeToString(t.tensor.shape()),
                     result.inputs.sources[i].source});
  }
  Table out_table({"output", "type", "shape", "min", "max", "mean", "NaN", "Inf"},
                  {false, false, false, true, true, true, true, true});
  for (const auto& o : result.outputs) {
    const TensorStats s = ComputeStats(o.tensor);
    out_table.AddRow({o.name, std::string(DataTypeName(o.tensor.type())), ShapeToString(o.tensor.shape()),
                      Number(s.min), Number(s.max), Number(s.mean), s.nan > 0 ? style.Red(std::to_string(s.nan)) : "0",
                      s.inf > 0 ? style.Red(std::to_string(s.inf)) : "0"});
  }
  out += in_table.Render(style);
  for (const auto& note : result.size_notes) out += style.Dim(fmt::format("  sizes found by running: {}\n", note));
  if (!result.outputs.empty()) out += "\n" + out_table.Render(style);
  for (const auto& spec : result.not_fetched) {
    out +=
        style.Dim(fmt::format("  output '{}' is a sequence, map or optional (a ZipMap of class "
                              "probabilities, say): computed, not fetched\n",
                              spec));
  }
  for (const auto& d : result.diagnoses) out += "\n" + RenderDiagnosis(d, style) + "\n";
  if (!flags.output_dir.empty())
    out += fmt::format("\noutputs saved to {} ({})\n", flags.output_dir.string(), flags.save_format);
  PrintText(stdout, out);
}

int Run(const RunFlags& flags) {
  int exit_code = kExitOk;
  SessionConfig config;
  config.provider = flags.provider;
  auto opened = OpenModel(flags.model, config, flags.format, "run", &exit_code);
  if (!opened.ok()) return exit_code;
  auto sources = ParseSources(flags.inputs);
  if (!sources.ok()) return Fail("run", sources.error(), flags.format);
  auto run = RunModelOnce(*opened->session, opened->inputs, *opened->model->proto, flags.model, *sources);
  if (!run.ok()) return Fail("run", run.error(), flags.format);
  if (run->failure) return Fail("run", *run->failure, flags.format, run->diagnoses);
  if (!flags.output_dir.empty()) {
    Status saved = CheckOutputFolder(flags.output_dir, "--output-dir");
    if (saved.ok()) saved = SaveOutputs(flags, run->inputs.tensors, run->outputs);
    if (!saved.ok()) return Fail("run", saved.error(), flags.format);
  }
  if (flags.format == Format::kJson) {
    PrintRunJson(flags, *run);
  } else {
    PrintRunText(flags, *run);
  }
  return kExitOk;
}

}  // namespace

void RegisterRun(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model once and summarise every output (min/max/mean, NaN/Inf)");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  flags->inputs.Register(cmd);
  cmd->add_option("--provider", flags->provider, "execution provider")->capture_default_str();
  cmd->add_option("--output-dir", flags->output_dir, "save the outputs (and, with --save-format pb, the inputs) here");
  cmd->add_option("--save-format", flags->save_format,
                  "npy: DIR/NAME.npy per output, with DIR/outputs.json naming the file of each; npz: DIR/outputs.npz; "
                  "pb: DIR/test_data_set_0/{input,output}_K.pb, "
                  "a reference for `ortkit validate`")
      ->check(CLI::IsMember({"npy", "npz", "pb"}))
      ->capture_default_str();
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
