#include "ortkit/core/cpus.h"

#include <sched.h>

#include <gtest/gtest.h>

#include "test_models.h"

namespace ortkit {
namespace {

using testing::TempDir;

TEST(CgroupCpuLimit, ReadsCgroupV2CpuMaxAndTakesTheSmallestAlongThePath) {
  TempDir root;
  root.Write("kubepods.slice/pod1/cpu.max", "400000 100000\n");
  root.Write("kubepods.slice/pod1/c1/cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(*CgroupCpuLimit("0::/kubepods.slice/pod1/c1\n", root.path()), 1.5);

  // A parent's limit binds a child that has none (or a larger one).
  root.Write("kubepods.slice/pod1/c1/cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(*CgroupCpuLimit("0::/kubepods.slice/pod1/c1\n", root.path()), 4.0);

  // A container with its own cgroup namespace sees itself at the root.
  TempDir container;
  container.Write("cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(*CgroupCpuLimit("0::/\n", container.path()), 2.0);
}

TEST(CgroupCpuLimit, NoLimitWhenUnlimitedMissingOrMalformed) {
  TempDir root;
  root.Write("user.slice/cpu.max", "max 100000\n");
  EXPECT_FALSE(CgroupCpuLimit("0::/user.slice\n", root.path()));
  EXPECT_FALSE(CgroupCpuLimit("0::/not/there\n", root.path()));
  for (const char* text : {"", "garbage", "0 100000", "100000 0", "-5 100000", "1e5x 100000", "100000", "inf 100000",
                           "nan 100000", "100000 inf"}) {
    root.Write("bad/cpu.max", text);
    EXPECT_FALSE(CgroupCpuLimit("0::/bad\n", root.path())) << "cpu.max: '" << text << "'";
  }
  EXPECT_FALSE(CgroupCpuLimit("", root.path()));
  EXPECT_FALSE(CgroupCpuLimit("no colons here\n::\n", root.path()));
  // '..' in the path does not climb out of the cgroup file system.
  TempDir outside;
  outside.Write("fs/cpu.max", "max 100000\n");
  outside.Write("cpu.max", "100000 100000\n");
  EXPECT_FALSE(CgroupCpuLimit("0::/../..\n", outside.path() / "fs"));
}

TEST(CgroupCpuLimit, ReadsCgroupV1CfsQuota) {
  TempDir root;
  // No cgroup namespace: the host's path does not exist in the container; its own cgroup is the mount.
  root.Write("cpu,cpuacct/cpu.cfs_quota_us", "250000\n");
  root.Write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const char* self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n";
  EXPECT_DOUBLE_EQ(*CgroupCpuLimit(self, root.path()), 2.5);

  TempDir unlimited;
  unlimited.Write("cpu/cpu.cfs_quota_us", "-1\n");
  unlimited.Write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_FALSE(CgroupCpuLimit("3:cpu:/\n", unlimited.path()));
  // cpuacct alone is not the cpu controller.
  EXPECT_FALSE(CgroupCpuLimit("4:cpuacct:/\n", root.path()));
}

TEST(CpuBudget, RoundsTheLimitUpAndStaysWithinTheAffinityMask) {
  EXPECT_EQ(BudgetOf(16, std::nullopt).cores, 16);
  EXPECT_EQ(BudgetOf(16, 1.5).cores, 2);
  EXPECT_EQ(BudgetOf(16, 2.0).cores, 2);
  EXPECT_EQ(BudgetOf(16, 2.000001).cores, 2);
  EXPECT_EQ(BudgetOf(16, 0.25).cores, 1);
  EXPECT_EQ(BudgetOf(2, 8.0).cores, 2);
  EXPECT_EQ(BudgetOf(0, std::nullopt).cores, 1);
  EXPECT_EQ(BudgetOf(4, 1e300).cores, 4);
  EXPECT_EQ(BudgetOf(16, std::nullopt).Describe(), "16 cores");
  EXPECT_EQ(BudgetOf(1, std::nullopt).Describe(), "1 core");
  EXPECT_EQ(BudgetOf(16, 1.5).Describe(), "2 cores (the cgroup's CPU limit of 1.5 CPUs; 16 in the affinity mask)");
  EXPECT_EQ(BudgetOf(2, 8.0).Describe(), "2 cores");
}

TEST(CpuBudget, FollowsTheCallingThreadsAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const CpuBudget pinned = UsableCpus();
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(pinned.affinity, 1);
  EXPECT_EQ(pinned.cores, 1);
  EXPECT_EQ(UsableCpus().affinity, CPU_COUNT(&saved));
}

}  // namespace
}  // namespace ortkit
