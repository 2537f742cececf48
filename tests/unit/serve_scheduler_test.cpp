// The batching decision as a pure function of the queue and the clock, and the queue around it.
#include <gtest/gtest.h>

#include <memory>

#include "ortkit/serve/run_when_idle.h"
#include "ortkit/serve/scheduler.h"

namespace ortkit::serve {
namespace {

using std::chrono::microseconds;

const TimePoint kT0 = TimePoint() + std::chrono::seconds(100);

QueueEntry Entry(std::int64_t rows, int at_us, std::string key = "k", int priority = 0) {
  QueueEntry e;
  e.rows_left = rows;
  e.enqueued = kT0 + microseconds(at_us);
  e.shape_key = std::move(key);
  e.priority = priority;
  return e;
}

BatchPolicy Policy(int max_batch, int delay_us, std::vector<int> preferred = {}) {
  return BatchPolicy{max_batch, microseconds(delay_us), std::move(preferred)};
}

TEST(ServeDecideBatch, WaitsForTheDelayWhileOtherInstancesAreBusy) {
  std::vector<QueueEntry> q = {Entry(1, 0), Entry(2, 10)};
  auto d = DecideBatch(q, kT0 + microseconds(100), Policy(8, 500), false, /*others_busy=*/true);
  EXPECT_TRUE(d.run.empty());
  EXPECT_EQ(d.wake_at, kT0 + microseconds(500));
  d = DecideBatch(q, kT0 + microseconds(500), Policy(8, 500), false, true);
  ASSERT_EQ(d.run.size(), 2u);
  EXPECT_EQ(d.run[0].rows + d.run[1].rows, 3);
}

TEST(ServeDecideBatch, RunsAtOnceWhenEveryInstanceIsIdle) {
  std::vector<QueueEntry> q = {Entry(1, 0)};
  auto d = DecideBatch(q, kT0 + microseconds(1), Policy(8, 500), false, /*others_busy=*/false);
  ASSERT_EQ(d.run.size(), 1u);
}

TEST(ServeDecideBatch, FullOrPreferredSizeRunsWithoutWaiting) {
  std::vector<QueueEntry> q = {Entry(3, 0), Entry(5, 1)};
  auto d = DecideBatch(q, kT0 + microseconds(2), Policy(8, 1000), false, true);
  ASSERT_EQ(d.run.size(), 2u);  // 8 rows: full
  std::vector<QueueEntry> four = {Entry(2, 0), Entry(2, 1)};
  d = DecideBatch(four, kT0 + microseconds(2), Policy(16, 1000, {4, 8}), false, true);
  EXPECT_EQ(d.run.size(), 2u);  // 4 rows: a preferred size
  std::vector<QueueEntry> three = {Entry(2, 0), Entry(1, 1)};
  d = DecideBatch(three, kT0 + microseconds(2), Policy(16, 1000, {4, 8}), false, true);
  EXPECT_TRUE(d.run.empty());
}

TEST(ServeDecideBatch, SplitsTheRequestThatDoesNotFit) {
  std::vector<QueueEntry> q = {Entry(5, 0), Entry(6, 1), Entry(2, 2)};
  auto d = DecideBatch(q, kT0, Policy(8, 0), false, true);
  ASSERT_EQ(d.run.size(), 2u);
  EXPECT_EQ(d.run[0].index, 0u);
  EXPECT_EQ(d.run[0].rows, 5);
  EXPECT_EQ(d.run[1].index, 1u);
  EXPECT_EQ(d.run[1].rows, 3);  // 3 of its 6 rows; the other 3 stay queued
  // A request larger than the batch runs in slices of max_batch_size.
  std::vector<QueueEntry> big = {Entry(20, 0)};
  d = DecideBatch(big, kT0, Policy(8, 0), false, true);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].rows, 8);
}

TEST(ServeDecideBatch, AStartedRequestRunsItsRestWithoutWaiting) {
  std::vector<QueueEntry> q = {Entry(3, 0)};
  q[0].started = true;
  auto d = DecideBatch(q, kT0, Policy(8, 100000), false, true);
  ASSERT_EQ(d.run.size(), 1u);
}

TEST(ServeDecideBatch, OnlyEqualShapeKeysShareABatch) {
  std::vector<QueueEntry> q = {Entry(2, 0, "a"), Entry(2, 1, "b"), Entry(2, 2, "a")};
  auto d = DecideBatch(q, kT0 + microseconds(10), Policy(8, 5), false, true);
  ASSERT_EQ(d.run.size(), 2u);
  EXPECT_EQ(d.run[0].index, 0u);
  EXPECT_EQ(d.run[1].index, 2u);
}

TEST(ServeDecideBatch, AFullGroupRunsWhileAnOlderGroupWaits) {
  std::vector<QueueEntry> q = {Entry(1, 0, "a"), Entry(8, 1, "b")};
  auto d = DecideBatch(q, kT0 + microseconds(2), Policy(8, 1000), false, true);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].index, 1u);
}

TEST(ServeDecideBatch, HigherPriorityGoesFirst) {
  std::vector<QueueEntry> q = {Entry(4, 0, "k", 1), Entry(4, 5, "k", 0), Entry(4, 6, "k", 1)};
  auto d = DecideBatch(q, kT0 + microseconds(10), Policy(8, 0), false, true);
  ASSERT_EQ(d.run.size(), 2u);
  EXPECT_EQ(d.run[0].index, 1u);  // priority 0, though it came later
  EXPECT_EQ(d.run[1].index, 0u);
}

TEST(ServeDecideBatch, ExpiredRequestsComeBackAndDoNotRun) {
  std::vector<QueueEntry> q = {Entry(1, 0), Entry(1, 1)};
  q[0].deadline = kT0 + microseconds(50);
  auto d = DecideBatch(q, kT0 + microseconds(60), Policy(8, 1000), false, true);
  ASSERT_EQ(d.expired.size(), 1u);
  EXPECT_EQ(d.expired[0], 0u);
  EXPECT_TRUE(d.run.empty());
  // Before the deadline, the wake-up time accounts for it.
  d = DecideBatch(q, kT0 + microseconds(10), Policy(8, 1000), false, true);
  EXPECT_EQ(d.wake_at, kT0 + microseconds(50));
}

TEST(ServeDecideBatch, NoBatchingRunsTheHeadWithAllItsRows) {
  std::vector<QueueEntry> q = {Entry(7, 0), Entry(1, 1)};
  auto d = DecideBatch(q, kT0, Policy(0, 1000), false, true);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].rows, 7);
}

TEST(ServeDecideBatch, DrainingRunsWithoutWaiting) {
  std::vector<QueueEntry> q = {Entry(1, 0)};
  auto d = DecideBatch(q, kT0, Policy(8, 1000000), /*draining=*/true, true);
  EXPECT_EQ(d.run.size(), 1u);
}

TEST(ServeDecideBatch, AnOlderThinBucketRunsBeforeAYoungerFullOneOnceItsDelayPassed) {
  // Bucket "a" holds one old request; bucket "b" fills up later. While "a" waits for its delay a
  // full "b" may go first, but once "a" is due it runs first: the oldest due head wins.
  std::vector<QueueEntry> q = {Entry(1, 0, "a"), Entry(4, 100, "b"), Entry(4, 200, "b")};
  auto d = DecideBatch(q, kT0 + microseconds(300), Policy(8, 1000), false, /*others_busy=*/true);
  ASSERT_EQ(d.run.size(), 2u);
  EXPECT_EQ(d.run[0].index, 1u);
  d = DecideBatch(q, kT0 + microseconds(1000), Policy(8, 1000), false, true);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].index, 0u);
  // With every instance idle nothing waits, and the oldest head goes first.
  d = DecideBatch(q, kT0 + microseconds(300), Policy(8, 1000), false, /*others_busy=*/false);
  ASSERT_EQ(d.run.size(), 1u);
  EXPECT_EQ(d.run[0].index, 0u);
}

TEST(ServeBatchQueue, TryTakeClaimsAnIdleInstanceWithoutBlocking) {
  BatchQueue<int> queue(Policy(8, 1000000), 8, /*instances=*/1);
  BatchQueue<int>::Batch batch;
  EXPECT_FALSE(queue.TryTake(&batch));  // nothing queued
  QueueEntry e = Entry(2, 0);
  e.enqueued = Clock::now();
  ASSERT_TRUE(queue.Enqueue(e, 7, /*wake_worker=*/false).ok());
  ASSERT_TRUE(queue.TryTake(&batch));  // the only instance is idle: due at once despite the delay
  EXPECT_EQ(batch.instance, 0);
  ASSERT_EQ(batch.slices.size(), 1u);
  EXPECT_EQ(batch.slices[0].payload, 7);
  EXPECT_EQ(batch.slices[0].rows, 2);
  ASSERT_TRUE(queue.Enqueue(e, 8, false).ok());
  BatchQueue<int>::Batch other;
  EXPECT_FALSE(queue.TryTake(&other));  // the instance is busy
  EXPECT_EQ(other.instance, -1);
  queue.Release(&batch);
  EXPECT_EQ(batch.instance, -1);
  ASSERT_TRUE(queue.TryTake(&other));
  EXPECT_EQ(other.slices[0].payload, 8);
  queue.Release(&other);
  EXPECT_EQ(queue.depth(), 0u);
}

// An event loop that runs batches itself (TryTake) must not take one that may run for long: it
// is left to a worker, which Next() hands it to.
TEST(ServeBatchQueue, TryTakeLeavesBatchesOverItsByteLimitToAWorker) {
  BatchQueue<int> queue(Policy(8, 0), 8, /*instances=*/1);
  QueueEntry e = Entry(3, 0);
  e.enqueued = Clock::now();
  e.row_bytes = 100;
  ASSERT_TRUE(queue.Enqueue(e, 7, /*wake_worker=*/false).ok());
  BatchQueue<int>::Batch batch;
  EXPECT_FALSE(queue.TryTake(&batch, 299));  // 300 bytes of rows
  EXPECT_EQ(batch.instance, -1);
  EXPECT_EQ(queue.depth(), 1u);
  ASSERT_TRUE(queue.Next(&batch));
  ASSERT_EQ(batch.slices.size(), 1u);
  EXPECT_EQ(batch.slices[0].rows, 3);
  queue.Release(&batch);
  ASSERT_TRUE(queue.Enqueue(e, 8, false).ok());
  ASSERT_TRUE(queue.TryTake(&batch, 300));
  EXPECT_EQ(batch.slices[0].payload, 8);
}

TEST(ServeBatchQueue, RejectsBeyondMaxQueueSizeAtOnce) {
  BatchQueue<int> queue(Policy(8, 1000), 2);
  EXPECT_TRUE(queue.Enqueue(Entry(1, 0), 1).ok());
  EXPECT_TRUE(queue.Enqueue(Entry(1, 0), 2).ok());
  Status third = queue.Enqueue(Entry(1, 0), 3);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(queue.depth(), 2u);
}

TEST(ServeBatchQueue, SplitRowsComeOutInOrderAndStopDrains) {
  BatchQueue<int> queue(Policy(4, 0), 8);
  QueueEntry e = Entry(10, 0);
  e.enqueued = Clock::now();
  ASSERT_TRUE(queue.Enqueue(e, 42).ok());
  queue.Stop();
  EXPECT_FALSE(queue.Enqueue(Entry(1, 0), 43).ok());
  BatchQueue<int>::Batch batch;
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  while (queue.Next(&batch)) {
    EXPECT_EQ(batch.instance, 0);
    for (const auto& s : batch.slices) {
      EXPECT_EQ(s.payload, 42);
      seen.emplace_back(s.row_begin, s.rows);
    }
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 4}, {4, 4}, {8, 2}}));
  EXPECT_EQ(queue.depth(), 0u);
}

// When the thread that takes requests runs them: once nothing else is ready (the loop asks
// wanted()), at once when overdue, and it may sleep only when nothing is wanted and the busy poll
// has run out.
TEST(ServeRunWhenIdle, RunsWhatIsQueuedOnlyAfterTheReadyEvents) {
  RunWhenIdle run(microseconds(0), std::chrono::seconds(10));
  EXPECT_FALSE(run.wanted());
  EXPECT_FALSE(run.Poll()) << "nothing wanted and no busy poll: the thread may sleep";
  run.Queued();
  run.Handled();
  EXPECT_TRUE(run.wanted());
  EXPECT_TRUE(run.Poll()) << "a run is wanted: look for ready events without sleeping";
  EXPECT_FALSE(run.Overdue()) << "ready events first, within the read-ahead";
  run.Running();
  EXPECT_FALSE(run.wanted());
  EXPECT_FALSE(run.Poll());
}

TEST(ServeRunWhenIdle, AStreamOfEventsDoesNotHoldTheRunBackPastTheReadAhead) {
  RunWhenIdle run(microseconds(0), microseconds(0));
  EXPECT_FALSE(run.Overdue()) << "nothing queued";
  run.Queued();
  EXPECT_TRUE(run.Overdue());
  run.Running();
  EXPECT_FALSE(run.Overdue());
}

TEST(ServeRunWhenIdle, BusyPollKeepsTheThreadAwakeAfterAnEvent) {
  RunWhenIdle run(std::chrono::seconds(10));
  run.Handled();
  EXPECT_TRUE(run.Poll());
  RunWhenIdle sleeper(microseconds(0));
  sleeper.Handled();
  EXPECT_FALSE(sleeper.Poll());
}

}  // namespace
}  // namespace ortkit::serve
