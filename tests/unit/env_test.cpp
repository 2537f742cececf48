// The pieces of `ortkit env` on this machine's real files and programs: child processes, ELF
// headers of the ONNX Runtime library the tests load, the dynamic loader, the CUDA release table,
// and the report for a CUDA request on the CPU build. tests/e2e/env.sh builds real Python
// environments (CPU and GPU wheels side by side, a GPU build without CUDA) around them.

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/process.h"
#include "ortkit/env/environment.h"
#include "ortkit/env/provider_probe.h"
#include "ortkit/env/shared_libraries.h"
#include "test_models.h"

namespace ortkit {
namespace {

bool HasCode(const std::vector<Diagnosis>& diagnoses, std::string_view code) {
  return std::any_of(diagnoses.begin(), diagnoses.end(), [&](const Diagnosis& d) { return d.code == code; });
}

TEST(RunProcess, CollectsBothStreamsAndTheExitCode) {
  auto run = RunProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->out, "out\n");
  EXPECT_EQ(run->err, "err\n");
  EXPECT_FALSE(run->timed_out);
}

TEST(RunProcess, AMissingProgramIsNotFound) {
  auto run = RunProcess({"/nonexistent/ortkit-no-such-program"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(run.error().message.find("ortkit-no-such-program"), std::string::npos);
}

TEST(RunProcess, AHangIsKilledAtTheTimeout) {
  ProcessOptions options;
  options.timeout = std::chrono::milliseconds(200);
  auto run = RunProcess({"sleep", "30"}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, 9);
}

TEST(RunProcess, ACrashIsReportedBySignal) {
  auto run = RunProcess({"sh", "-c", "kill -SEGV $$"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->signal, 11);
  EXPECT_EQ(run->exit_code, -1);
}

TEST(RunProcess, OutputBeyondTheLimitIsDroppedNotBuffered) {
  ProcessOptions options;
  options.max_output = 1000;
  auto run = RunProcess({"sh", "-c", "head -c 5000000 /dev/zero"}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->out.size(), 1000u);
  EXPECT_EQ(run->exit_code, 0);
}

TEST(RunProcess, TheEnvironmentIsSetOverThisProcesssOwn) {
  ProcessOptions options;
  options.environment = {"ORTKIT_TEST_VALUE=given", "HOME=/elsewhere"};
  auto run = RunProcess({"sh", "-c", "echo \"$ORTKIT_TEST_VALUE $HOME\"; test -n \"$PATH\""}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->out, "given /elsewhere\n");
  EXPECT_EQ(run->exit_code, 0);  // the rest of the environment is kept
}

TEST(RunProcess, AChildWritingToOurOutputIsWaitedForAndTimedOut) {
  ProcessOptions options;
  options.inherit_output = true;
  options.timeout = std::chrono::milliseconds(0);  // no limit
  auto run = RunProcess({"sh", "-c", "exit 4"}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 4);
  EXPECT_TRUE(run->out.empty());
  options.timeout = std::chrono::milliseconds(200);
  auto hang = RunProcess({"sleep", "30"}, options);
  ASSERT_TRUE(hang.ok());
  EXPECT_TRUE(hang->timed_out);
  EXPECT_EQ(hang->signal, 9);
}

TEST(SharedLibraries, ReadsWhatTheLoadedOnnxRuntimeNeeds) {
  const auto library = Runtime::LibraryPath();
  ASSERT_FALSE(library.empty());
  EXPECT_NE(library.filename().string().find("libonnxruntime.so"), std::string::npos) << library;
  auto needed = ReadNeededLibraries(library);
  ASSERT_TRUE(needed.ok()) << needed.error().message;
  EXPECT_NE(std::find(needed->begin(), needed->end(), "libc.so.6"), needed->end());
  EXPECT_NE(std::find(needed->begin(), needed->end(), "libstdc++.so.6"), needed->end());
}

TEST(SharedLibraries, TruncatedAndForeignBytesAreErrorsNotCrashes) {
  const std::string bytes = testing::ReadFile(Runtime::LibraryPath());
  ASSERT_GT(bytes.size(), 1u << 20);
  for (std::size_t size : {0ul, 3ul, 63ul, 64ul, 200ul, 4096ul, 65536ul, bytes.size() / 2}) {
    auto needed = ParseNeededLibraries(std::string_view(bytes).substr(0, size));
    if (!needed.ok()) {
      EXPECT_EQ(needed.error().kind, ErrorKind::kInvalidArgument) << size;
    }
  }
  EXPECT_FALSE(ParseNeededLibraries("#!/bin/sh\necho not a library\n").ok());
  std::string corrupt = bytes.substr(0, 4096);
  for (std::size_t i = 32; i < 64; ++i) corrupt[i] = '\xff';  // program header offset and counts
  auto needed = ParseNeededLibraries(corrupt);
  EXPECT_FALSE(needed.ok());
  EXPECT_FALSE(ReadNeededLibraries("/nonexistent/libx.so").ok());
}

TEST(SharedLibraries, TheLoaderFindsLibcAndNamesWhatItCannotFind) {
  const LibraryProbe libc = ProbeLibrary("libc.so.6");
  EXPECT_TRUE(libc.found());
  EXPECT_EQ(libc.where, "the dynamic loader's search path");
  const LibraryProbe missing = ProbeLibrary("libortkit-no-such-library.so.7", {"/nonexistent"});
  EXPECT_FALSE(missing.found());
  EXPECT_NE(missing.error.find("libortkit-no-such-library.so.7"), std::string::npos) << missing.error;
  EXPECT_EQ(LibraryVersion(missing), "");
}

TEST(CudaRequirement, TheTableGivesEachReleaseItsMajors) {
  const auto now = CudaRequirementFor("b", "1.29.0", "");
  EXPECT_EQ(now.cuda_major, 13);
  EXPECT_EQ(now.cudnn_major, 9);
  EXPECT_NE(std::find(now.libraries.begin(), now.libraries.end(), "libcudart.so.13"), now.libraries.end());
  EXPECT_EQ(now.libraries.back(), "libcudnn.so.9");
  EXPECT_EQ(CudaRequirementFor("b", "1.20.1", "").cuda_major, 12);
  EXPECT_EQ(CudaRequirementFor("b", "1.16.3", "").cudnn_major, 8);
}

TEST(CudaRequirement, TheProviderLibraryOnDiskWinsOverTheTable) {
  // The GPU build scripts/setup.sh installs: its CUDA provider names its CUDA libraries itself.
  const auto provider = testing::SourcePath(".deps/onnxruntime-gpu-1.29.0/lib/libonnxruntime_providers_cuda.so");
  ASSERT_TRUE(std::filesystem::exists(provider)) << "run scripts/setup.sh";
  const auto need = CudaRequirementFor("gpu build", "1.29.0", provider);
  EXPECT_EQ(need.source, "read from " + provider.string());
  EXPECT_EQ(need.cuda_major, 13);
  for (const char* name : {"libcublasLt.so.13", "libcublas.so.13", "libcudart.so.13", "libcurand.so.10"}) {
    EXPECT_NE(std::find(need.libraries.begin(), need.libraries.end(), name), need.libraries.end()) << name;
  }
  EXPECT_EQ(std::find(need.libraries.begin(), need.libraries.end(), "libcuda.so.1"), need.libraries.end())
      << "the driver's library is checked as the driver, not as a CUDA library";
}

TEST(Environment, TheFixLeavesTheGpuBuild) {
  const std::vector<OrtDistribution> both = {{"onnxruntime", "1.29.0", "/v", true},
                                             {"onnxruntime-gpu", "1.29.0", "/v", false}};
  EXPECT_EQ(ConflictFix(both), "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu==1.29.0");
  const std::vector<OrtDistribution> versions = {{"onnxruntime", "1.28.0", "/v", false},
                                                 {"onnxruntime", "1.29.0", "/v", true}};
  EXPECT_EQ(ConflictFix(versions), "pip uninstall -y onnxruntime && pip install onnxruntime==1.29.0");
}

TEST(ProviderProbe, TheCpuRunsEveryNodeOfTheProbeAndSaysWhere) {
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok());
  const ProviderProbe probe = ProbeProvider(**runtime, "cpu");
  ASSERT_TRUE(probe.Ran()) << probe.error;
  EXPECT_TRUE(probe.placement_error.empty()) << probe.placement_error;
  // The probe has three nodes (MatMul, Add, Relu) and optimisations are off: all three on the CPU.
  ASSERT_EQ(probe.placement.size(), 1U) << probe.PlacementText();
  EXPECT_EQ(probe.placement[0].first, "CPUExecutionProvider");
  EXPECT_EQ(probe.placement[0].second, 3);
  EXPECT_TRUE(probe.UsedProvider());
  EXPECT_TRUE(probe.cpu_fallbacks.empty());
  EXPECT_EQ(probe.max_abs_diff, -1) << "the CPU is not compared with itself";
  EXPECT_EQ(probe.Describe(), "ran on CPUExecutionProvider 3 nodes");
  const auto json = probe.ToJson();
  EXPECT_EQ(json.at("placement").at(0).at("nodes"), 3);
  EXPECT_TRUE(json.at("ran").get<bool>());
}

TEST(ProviderProbe, AProviderThisBuildLacksIsAnErrorNotACrash) {
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok());
  if (Runtime::AvailableProviders().size() > 1) GTEST_SKIP() << "linked against a GPU build";
  const ProviderProbe probe = ProbeProvider(**runtime, "cuda");
  EXPECT_FALSE(probe.Ran());
  EXPECT_NE(probe.error.find("cuda"), std::string::npos) << probe.error;
  EXPECT_FALSE(probe.UsedProvider());
  EXPECT_EQ(probe.Describe(), probe.error);
}

TEST(Environment, CudaOnTheCpuBuildIsNotBuiltNeverACrash) {
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok());
  if (Runtime::AvailableProviders().size() > 1) GTEST_SKIP() << "linked against a GPU build";
  EnvironmentOptions options;
  options.skip_python = true;
  options.provider = "cuda";
  const auto report = InspectEnvironment(**runtime, options);
  ASSERT_TRUE(HasCode(report.diagnoses, "env.provider-not-built"));
  EXPECT_FALSE(report.own.cuda_built);
  ASSERT_TRUE(report.own.cuda_session.has_value());
  EXPECT_FALSE(report.own.cuda_session->Ran());
  EXPECT_FALSE(report.own.cuda_session->UsedProvider());
  // Asked for the CPU, the same machine has nothing to report about ortkit's runtime.
  options.provider = "cpu";
  EXPECT_FALSE(HasCode(InspectEnvironment(**runtime, options).diagnoses, "env.provider-not-built"));
}

}  // namespace
}  // namespace ortkit
