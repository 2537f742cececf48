// ortkit: from an exported ONNX model to production on ONNX Runtime.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ortkit: check, validate, benchmark and serve ONNX models on ONNX Runtime", "ortkit"};
  app.set_version_flag("--version", std::string("ortkit ") + ORTKIT_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  int exit_code = ortkit::cli::kExitOk;
  // In the order of the chain: export, look, validate, measure, serve.
  ortkit::cli::RegisterExport(app, exit_code);
  ortkit::cli::RegisterInspect(app, exit_code);
  ortkit::cli::RegisterCheck(app, exit_code);
  ortkit::cli::RegisterRun(app, exit_code);
  ortkit::cli::RegisterValidate(app, exit_code);
  ortkit::cli::RegisterConvert(app, exit_code);
  ortkit::cli::RegisterFix(app, exit_code);
  ortkit::cli::RegisterDoctor(app, exit_code);
  ortkit::cli::RegisterReduce(app, exit_code);
  ortkit::cli::RegisterBench(app, exit_code);
  ortkit::cli::RegisterServe(app, exit_code);
  ortkit::cli::RegisterPerf(app, exit_code);
  ortkit::cli::RegisterEnv(app, exit_code);
  ortkit::cli::RegisterExplain(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return ortkit::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ortkit: internal error: %s\n", e.what());
    return ortkit::cli::kExitInternal;
  }
  return exit_code;
}
