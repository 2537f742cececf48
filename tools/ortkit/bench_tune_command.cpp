// `ortkit bench MODEL --tune --latency-budget 50ms`: the tuner (bench/tune) over one workload, its
// recommendation turned into serve's own ModelConfig and written with serve's writer
// (--write-config), and the tuner's report.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_command.h"
#include "bench_render.h"
#include "commands.h"
#include "failure.h"
#include "ortkit/bench/tune.h"
#include "ortkit/core/cpus.h"
#include "ortkit/serve/model_config.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::cli {
namespace {

/// `text` with each byte that is not UTF-8 replaced by U+FFFD, as JsonText writes it: a file name
/// may hold such bytes, and serve's writer (nlohmann::json::dump) throws on them.
std::string ValidUtf8(const std::string& text) { return nlohmann::json::parse(JsonText(text)).get<std::string>(); }

/// The recommendation as the serving configuration `ortkit serve --config` reads; what the tuner
/// does not decide keeps serve's defaults.
serve::ModelConfig ServingConfig(const ServingRecommendation& r, const BenchFlags& flags) {
  serve::ModelConfig config;
  config.name = ValidUtf8(flags.model.stem().string());
  config.instances = r.candidate.instances;
  config.session.provider = flags.session.provider;
  config.session.intra_op_threads = r.candidate.intra_op_threads;
  config.session.inter_op_threads = r.candidate.inter_op_threads;
  config.session.sequential_execution = !r.candidate.parallel;
  config.session.optimization_level = flags.opt_level;
  config.batching.enabled = r.batching;
  config.batching.max_batch_size = static_cast<int>(r.max_batch_size);
  config.batching.max_queue_delay_us = r.max_queue_delay_us;
  for (std::int64_t size : r.preferred_batch_sizes)
    config.batching.preferred_batch_sizes.push_back(static_cast<int>(size));
  config.warmup.dims = r.warmup_dims;
  return config;
}

/// The file --write-config writes (and --format json shows): serve's writer's JSON with the
/// tuner's explanation as "tuning"; null when nothing fits the budget.
nlohmann::json ServingConfigFile(const TuneReport& report, const TuneOptions& options, const BenchFlags& flags,
                                 const TuneWorkload& workload) {
  const auto recommended =
      RecommendServing(report, workload.batch_dim.empty() ? "batch" : workload.batch_dim, workload.other_dims);
  if (!recommended) return nlohmann::json();
  nlohmann::json file = nlohmann::json::parse(serve::ModelConfigToJson(ServingConfig(*recommended, flags)));
  // The tuner does not pad lengths: the key is left out, as absent and null both mean no bucketing.
  if (file.contains("bucketing") && file["bucketing"].is_null()) file.erase("bucketing");
  file["tuning"] = TuningExplanationJson(report, options);
  return file;
}

std::string TuneJson(const BenchFlags& flags, const TuneOptions& options, const TuneReport& report,
                     const nlohmann::json& serving) {
  nlohmann::json json = {{"model", flags.model.string()},
                         {"latency_budget_ms", options.latency_budget_ms},
                         {"time_budget_s", options.time_budget_s},
                         {"elapsed_s", report.elapsed_s}};
  json["measurements"] = nlohmann::json::array();
  for (std::size_t i = 0; i < report.measurements.size(); ++i) {
    const auto& t = report.measurements[i];
    nlohmann::json row = {{"intra_op_threads", t.candidate.intra_op_threads},
                          {"inter_op_threads", t.candidate.inter_op_threads},
                          {"execution_mode", t.candidate.parallel ? "parallel" : "sequential"},
                          {"instances", t.candidate.instances},
                          {"batch", t.candidate.batch},
                          {"measured", t.measured},
                          {"chosen", report.best == i}};
    if (t.measured) {
      row["latency_ms"] = LatencyStatsJson(t.latency);
      row["samples_per_s"] = t.samples_per_s;
      row["within_budget"] = t.latency.p99 <= options.latency_budget_ms;
    }
    if (!t.note.empty()) row["note"] = t.note;
    json["measurements"].push_back(std::move(row));
  }
  json["config"] = serving;
  if (!flags.write_config.empty() && report.best) json["written_to"] = flags.write_config.string();
  return JsonText(json) + "\n";
}

/// Why a measured candidate was or was not chosen.
std::string Why(const TuneReport& report, const TuneMeasurement& t, bool chosen, double latency_budget_ms) {
  if (!t.measured || !t.note.empty()) return t.note;
  if (t.latency.p99 > latency_budget_ms) return fmt::format("p99 over the {} ms budget", latency_budget_ms);
  if (chosen) return "highest throughput within the budget";
  return fmt::format("{:.0f}% of the best's throughput",
                     report.best ? 100 * t.samples_per_s / report.measurements[*report.best].samples_per_s : 0.0);
}

std::string TuneText(const BenchFlags& flags, const TuneOptions& options, const TuneReport& report,
                     const Style& style) {
  const double budget_ms = options.latency_budget_ms;
  Table table({"", "intra", "inter", "mode", "instances", "batch", "p50 ms", "p99 ms", "samples/s", "CPU", "why"},
              {false, true, true, false, true, true, true, true, true, true, false});
  for (std::size_t i = 0; i < report.measurements.size(); ++i) {
    const auto& t = report.measurements[i];
    const bool chosen = report.best == i;
    auto cell = [&](const std::string& s) { return chosen ? style.Green(s) : t.measured ? s : style.Dim(s); };
    auto figure = [&](const std::string& s) { return t.measured ? cell(s) : std::string("-"); };
    table.AddRow({chosen ? style.Green("→") : "", cell(std::to_string(t.candidate.intra_op_threads)),
                  cell(std::to_string(t.candidate.inter_op_threads)),
                  cell(t.candidate.parallel ? "parallel" : "sequential"), cell(std::to_string(t.candidate.instances)),
                  cell(std::to_string(t.candidate.batch)), figure(Milliseconds(t.latency.p50)),
                  figure(Milliseconds(t.latency.p99)), figure(FixedDecimals(t.samples_per_s, 1)),
                  figure(fmt::format("{:.0f}%", t.cpu_utilisation * 100)), cell(Why(report, t, chosen, budget_ms))});
  }
  std::string out = fmt::format("{} {}: p99 within {} ms, {} core{}, {:.1f} s of {} s spent\n\n",
                                style.Bold("ortkit bench --tune"), flags.model.string(), budget_ms, options.space.cores,
                                options.space.cores == 1 ? "" : "s", report.elapsed_s, options.time_budget_s);
  out += table.Render(style);
  if (!report.best)
    return out + style.Red(fmt::format("\nno configuration keeps p99 within {} ms; nothing written", budget_ms)) + "\n";
  const auto& best = report.measurements[*report.best];
  out += fmt::format("\nrecommended: {} — {:.1f} samples/s at p99 {} ms\n", best.candidate.Describe(),
                     best.samples_per_s, Milliseconds(best.latency.p99));
  if (!flags.write_config.empty())
    out += fmt::format("serving configuration written to {}\n", flags.write_config.string());
  return out;
}

/// The tuner's options: the budgets, the session the flags give, and the space to search.
TuneOptions TuneOptionsFor(const BenchFlags& flags, const BenchPlan& plan, const TuneWorkload& workload) {
  TuneOptions options;
  options.latency_budget_ms = plan.latency_budget_ms;
  options.time_budget_s = plan.time_budget_s;
  options.base = plan.config;
  options.space.cores = UsableCpus().cores;
  options.space.batches = workload.batches;
  options.space.max_instances = flags.max_instances;
  return options;
}

}  // namespace

int RunTune(const BenchFlags& flags, const BenchPlan& plan) {
  const Format format = flags.format;
  int exit_code = kExitOk;
  auto opened = OpenModel(flags.model, plan.config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  auto workload = PlanTuneWorkload(NameUnnamedAxes(opened->inputs), plan.batches, plan.sweeps);
  if (!workload.ok()) return Fail("bench", AsUsageError(workload.error()), format);
  auto sources = ParseBenchInputs(flags);
  if (!sources.ok()) return Fail("bench", AsUsageError(sources.error()), format);
  if (auto notes = SettleBenchSizes(*opened, workload->first, *sources); !notes.ok())
    return Fail("bench", AsUsageError(notes.error()), format);
  // Check the inputs once before spending the time budget.
  const InputsForPoint inputs = PointInputMaker(*opened, *sources);
  if (auto first = inputs(workload->first); !first.ok()) return Fail("bench", AsUsageError(first.error()), format);

  const TuneOptions options = TuneOptionsFor(flags, plan, *workload);
  ProgressBar progress;
  TuneOptions with_progress = options;
  with_progress.progress = [&](std::size_t done, std::size_t total) {
    progress.Show(fmt::format("tuning {}/{}", done, total), static_cast<double>(done) / static_cast<double>(total));
  };
  InputsForBatch inputs_for_batch = [&](std::int64_t batch) -> Result<std::vector<NamedTensor>> {
    ORTKIT_ASSIGN_OR_RETURN(auto made, inputs(workload->AtBatch(batch)));
    return std::move(made.tensors);
  };
  opened->session.reset();  // the tuner creates its own sessions; this one would only hold memory
  auto report = Tune(*opened->runtime, flags.model, inputs_for_batch, with_progress);
  progress.Clear();
  // A tuning run that fails is the model's (exit 1), whatever the kind, as ever.
  if (!report.ok())
    return Fail("bench", MakeError(ErrorKind::kRuntime, "tuning failed: " + report.error().message), format);

  const nlohmann::json serving = ServingConfigFile(*report, options, flags, *workload);
  if (report->best && !flags.write_config.empty()) {
    auto written = WriteTextFile(flags.write_config, JsonText(serving) + "\n");
    if (!written.ok()) return Fail("bench", AsUsageError(written.error()), format);
  }
  const std::string out = format == Format::kJson ? TuneJson(flags, options, *report, serving)
                                                  : TuneText(flags, options, *report, Style::ForStream(stdout));
  PrintText(stdout, out);
  return report->best ? kExitOk : kExitFindings;
}

}  // namespace ortkit::cli
