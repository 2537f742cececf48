// The server's budget of bytes held at once (serve/byte_budget.h), without threads, and its
// default from the memory.
#include <gtest/gtest.h>

#include "ortkit/serve/byte_budget.h"

namespace ortkit::serve {
namespace {

TEST(ServeByteBudget, RefusesWhatWouldPassTheLimitUnlessNothingElseIsHeld) {
  ByteBudget budget(1000);
  auto a = budget.Reserve();
  ASSERT_TRUE(a.GrowTo(600));
  auto b = budget.Reserve();
  EXPECT_FALSE(b.GrowTo(500));  // 1,100 > 1,000
  EXPECT_EQ(b.bytes(), 0u);
  EXPECT_TRUE(b.GrowTo(400));
  EXPECT_EQ(budget.held(), 1000u);
  EXPECT_EQ(budget.refused(), 1u);
  EXPECT_TRUE(a.GrowTo(100));  // within what it holds: nothing changes
  EXPECT_EQ(a.bytes(), 600u);
  a.Release();
  EXPECT_EQ(budget.held(), 400u);
  // Alone, a request is served whatever the limit: a body of the largest size always gets through.
  b.Release();
  auto alone = budget.Reserve();
  EXPECT_TRUE(alone.GrowTo(5000));
  auto other = budget.Reserve();
  EXPECT_FALSE(other.GrowTo(1));
  {
    auto moved = std::move(alone);
    EXPECT_EQ(moved.bytes(), 5000u);
    EXPECT_EQ(alone.bytes(), 0u);
  }
  EXPECT_EQ(budget.held(), 0u);  // given back when the reservation went
  const std::string refusal = budget.Refusal(300, "its body").message;
  EXPECT_EQ(refusal,
            "the server holds 0 B of requests and answers, and its body (300 B) would take it past its limit of "
            "1000 B (--max-inflight-bytes): retry shortly");
  EXPECT_NE(budget.MetricsText().find("ortkit_inflight_refused_total 2\n"), std::string::npos) << budget.MetricsText();
}

TEST(ServeByteBudget, WithoutALimitItCountsOnly) {
  ByteBudget budget(0);
  auto a = budget.Reserve();
  EXPECT_TRUE(a.GrowTo(UINT64_MAX / 2));
  auto b = budget.Reserve();
  EXPECT_TRUE(b.GrowTo(1000));
  EXPECT_EQ(budget.held(), UINT64_MAX / 2 + 1000);
}

TEST(ServeByteBudget, TheDefaultLeavesRoomForFourBodiesOrAnEighthOfTheMemory) {
  const std::uint64_t mib = std::uint64_t{1} << 20;
  EXPECT_EQ(DefaultInflightBytes(64 * mib, BudgetOfMemory(std::uint64_t{24} << 30, std::nullopt)), 256 * mib);
  EXPECT_EQ(DefaultInflightBytes(64 * mib, BudgetOfMemory(std::uint64_t{24} << 30, 1024 * mib)), 128 * mib);
  EXPECT_EQ(DefaultInflightBytes(1024 * mib, BudgetOfMemory(std::uint64_t{64} << 30, std::nullopt)), 4096 * mib);
  EXPECT_EQ(DefaultInflightBytes(mib, BudgetOfMemory(std::uint64_t{24} << 30, std::nullopt)), 16 * mib);
}

}  // namespace
}  // namespace ortkit::serve
