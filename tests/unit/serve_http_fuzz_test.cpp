// The HTTP front end's fuzz corpus and reproducers, replayed against a real server through the
// fuzzer's own body (fuzz/http_fuzz_body.h).
#include <filesystem>

#include <gtest/gtest.h>

#include "http_fuzz_body.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

TEST(ServeHttp, ReplayFuzzCorpus) {
  int replayed = 0;
  for (const char* folder : {"fuzz/http_corpus", "fuzz/http_regressions"}) {
    for (const auto& entry : fs::directory_iterator(testing::SourcePath(folder))) {
      if (entry.path().filename().string()[0] == '.' || entry.path().filename() == "README.md") continue;
      SCOPED_TRACE(entry.path().string());
      fuzz::RunHttpFuzzBody(testing::ReadFile(entry.path()));
      EXPECT_TRUE(fuzz::HttpFuzzServerAlive());
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 27);  // 24 seeds (4 of the repository API), 3 reproducers
}

}  // namespace
}  // namespace ortkit
