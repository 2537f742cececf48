#include "ortkit/core/memory.h"

#include <gtest/gtest.h>

#include "test_models.h"

namespace ortkit {
namespace {

using testing::TempDir;

TEST(CgroupMemoryLimit, ReadsCgroupV2MemoryMaxAndTakesTheSmallestAlongThePath) {
  TempDir root;
  root.Write("kubepods.slice/pod1/memory.max", "4294967296\n");
  root.Write("kubepods.slice/pod1/c1/memory.max", "max\n");
  EXPECT_EQ(*CgroupMemoryLimit("0::/kubepods.slice/pod1/c1\n", root.path()), std::uint64_t{4} << 30);
  root.Write("kubepods.slice/pod1/c1/memory.max", "536870912\n");
  EXPECT_EQ(*CgroupMemoryLimit("0::/kubepods.slice/pod1/c1\n", root.path()), std::uint64_t{512} << 20);
  root.Write("top/memory.max", "max\n");
  EXPECT_FALSE(CgroupMemoryLimit("0::/top\n", root.path()));
  for (const char* text : {"", "garbage", "0", "-5", "12x"}) {
    root.Write("bad/memory.max", text);
    EXPECT_FALSE(CgroupMemoryLimit("0::/bad\n", root.path())) << "memory.max: '" << text << "'";
  }
}

TEST(CgroupMemoryLimit, ReadsCgroupV1AndTakesItsHugeValueForNoLimit) {
  TempDir root;
  root.Write("memory/memory.limit_in_bytes", "2147483648\n");
  const char* self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n";
  EXPECT_EQ(*CgroupMemoryLimit(self, root.path()), std::uint64_t{2} << 30);
  TempDir unlimited;
  unlimited.Write("memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_FALSE(CgroupMemoryLimit("4:memory:/\n", unlimited.path()));
  EXPECT_FALSE(CgroupMemoryLimit("4:cpu:/\n", root.path()));
}

TEST(MemoryBudget, TheSmallerOfTheMachineAndTheCgroup) {
  EXPECT_EQ(*MemTotalOf("MemTotal:       24522444 kB\nMemFree: 1 kB\n"), std::uint64_t{24522444} * 1024);
  EXPECT_FALSE(MemTotalOf("MemFree: 1 kB\n"));
  const MemoryBudget limited = BudgetOfMemory(std::uint64_t{16} << 30, std::uint64_t{2} << 30);
  EXPECT_EQ(limited.bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(limited.Describe(), "2.0 GiB (the cgroup's memory limit; 16.0 GiB in the machine)");
  EXPECT_EQ(BudgetOfMemory(std::uint64_t{16} << 30, std::uint64_t{64} << 30).bytes, std::uint64_t{16} << 30);
  EXPECT_EQ(BudgetOfMemory(std::uint64_t{16} << 30, std::nullopt).Describe(), "16.0 GiB");
  EXPECT_GT(UsableMemory().bytes, 0u);
}

}  // namespace
}  // namespace ortkit
