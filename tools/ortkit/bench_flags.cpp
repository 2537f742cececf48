// The flags of `ortkit bench`, registered with the defaults of the options they fill in (BenchFlags).
#include <fmt/format.h>

#include "bench_command.h"
#include "commands.h"
#include "number_flags.h"

namespace ortkit::cli {
namespace {

/// --dim, --batch, --shape, --input, --seed: the shapes measured and the inputs at each.
void RegisterShapeFlags(CLI::App* cmd, BenchFlags& flags) {
  cmd->add_option("model", flags.model, "the .onnx file (not needed with --compare)");
  cmd->add_option(
         "--dim", flags.dims,
         "sizes of a symbolic dimension, swept: --dim seq_len=16,64,256 (repeatable; several dims are crossed)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--batch", flags.batch,
                  "batch sizes to sweep, e.g. 1,8,32 (the inputs' shared symbolic first dimension)");
  cmd->add_option("--shape", flags.inputs.shapes, "full shape of one input, e.g. --shape x=1x3x224x224 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--input", flags.inputs.files, "input values: NAME=FILE or FILE/DIR, as in `ortkit run` (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", flags.inputs.seed, "seed for synthesised inputs")
      ->capture_default_str()
      ->check(SeedValidator());
}

/// The session's settings: threads, execution mode, optimisation level, provider, memory.
void RegisterSessionFlags(CLI::App* cmd, BenchFlags& flags) {
  SessionConfig& session = flags.session;
  cmd->add_option("--intra-threads", session.intra_op_threads,
                  "intra-op threads per session (default: the runtime's choice)");
  cmd->add_option("--inter-threads", session.inter_op_threads, "inter-op threads per session (parallel mode)");
  cmd->add_option("--execution-mode", session.sequential_execution, "sequential | parallel")
      ->transform(
          CLI::CheckedTransformer(std::vector<std::pair<std::string, bool>>{{"sequential", true}, {"parallel", false}})
              .description(""))
      ->transform(CLI::IsMember({"sequential", "parallel"}))
      ->type_name("TEXT")
      ->default_str(flags.ExecutionMode());
  cmd->add_option("--opt-level", flags.opt_level, "graph optimisation level: 0, 1, 2 or 99")->capture_default_str();
  cmd->add_option("--provider", session.provider, "execution provider")->capture_default_str();
  cmd->add_flag("--no-mem-pattern", flags.no_mem_pattern, "disable the memory pattern optimisation");
  cmd->add_flag("--no-arena", flags.no_arena, "disable the CPU memory arena");
}

/// How much is measured, by how many threads and sessions; --profile.
void RegisterMeasuringFlags(CLI::App* cmd, BenchFlags& flags) {
  BenchOptions& run = flags.run;
  auto* iterations = cmd->add_option("--iterations", run.iterations, "measured runs per shape (all threads together)")
                         ->capture_default_str();
  cmd->add_option("--duration", flags.duration, "measure each shape for this long instead, e.g. 10s, 500ms")
      ->excludes(iterations);
  cmd->add_option("--warmup", run.warmup, "untimed runs per session before measuring (after the timed first run)")
      ->capture_default_str();
  cmd->add_option("--concurrency", run.concurrency, "threads calling Run on each session")->capture_default_str();
  cmd->add_option("--sessions", flags.sessions, "sessions of the model, each called by --concurrency threads")
      ->capture_default_str();
  cmd->add_flag("--io-binding", run.io_binding, "bind inputs and outputs once and run the binding");
  cmd->add_flag(
      "--profile", flags.profile,
      "profile every shape in a separate profiled session and report top ops, op types, providers, copies and "
      "CPU fallbacks");
  cmd->add_option("--profile-prefix", flags.profile_prefix,
                  "file prefix of the kept trace (the runtime appends a timestamp)")
      ->capture_default_str();
  cmd->add_option("--profile-runs", flags.profile_runs, "profiled runs per shape")->capture_default_str();
}

/// What is written, --compare and --tune.
void RegisterReportFlags(CLI::App* cmd, BenchFlags& flags) {
  AddFormatFlag(cmd, flags.format, {Format::kText, Format::kJson, Format::kCsv, Format::kMarkdown});
  cmd->add_option("--plot", flags.plot, "write an SVG of latency and throughput against batch size");
  cmd->add_option("--report", flags.report_page,
                  "also write one self-contained HTML page (FILE.html): the latency of each shape and, with --profile, "
                  "the time of each node over the model's graph and by operator type; it opens offline");
  cmd->add_option("--compare", flags.compare,
                  "compare two saved --format json reports: BASE.json NEW.json; exit 1 if slower")
      ->expected(2);
  cmd->add_option("--min-change", flags.min_change, "with --compare: changes below this percentage are noise")
      ->check(RealNumberIn(0, 99.999, "%"))
      ->capture_default_str();
  cmd->add_flag("--tune", flags.tune,
                "sweep threads, execution mode, batch size and instances; recommend a configuration");
  cmd->add_option("--latency-budget", flags.latency_budget, "with --tune: the p99 latency to stay within, e.g. 50ms");
  cmd->add_option("--time-budget", flags.time_budget, "with --tune: time for the whole sweep")->capture_default_str();
  cmd->add_option("--max-instances", flags.max_instances, "with --tune: most session instances to try")
      ->capture_default_str();
  cmd->add_option("--write-config", flags.write_config, "with --tune: write the serving configuration (JSON) here");
}

}  // namespace

void RegisterBenchFlags(CLI::App* cmd, BenchFlags& flags) {
  RegisterShapeFlags(cmd, flags);
  RegisterSessionFlags(cmd, flags);
  RegisterMeasuringFlags(cmd, flags);
  RegisterReportFlags(cmd, flags);
}

}  // namespace ortkit::cli
