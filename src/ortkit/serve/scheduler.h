#pragma once
// The dynamic batcher: a queue with a narrow interface (Enqueue, Next, Stop, depth) around one
// pure decision function, DecideBatch, that looks at the queue and the clock and says which rows
// to run now (or when to look again). Keeping the decision pure lets it be tested without threads.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit::serve {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

/// `start` + `wait`, or TimePoint::max() where that would not fit the clock's nanoseconds.
inline TimePoint DeadlineAfter(TimePoint start, std::chrono::microseconds wait) {
  const auto room = std::chrono::duration_cast<std::chrono::microseconds>(TimePoint::max() - start);
  return wait >= room ? TimePoint::max() : start + wait;
}

struct BatchPolicy {
  int max_batch_size = 0;  ///< rows per batch; 0: every request runs alone, whatever its rows
  std::chrono::microseconds max_queue_delay{0};
  std::vector<int> preferred_batch_sizes;  ///< a group reaching one of these runs at once
};

/// What the decision function sees of one queued request.
struct QueueEntry {
  std::int64_t rows_left = 1;  ///< rows not yet taken into a batch
  bool started = false;        ///< some of its rows already ran (then it can no longer expire)
  TimePoint enqueued;
  TimePoint deadline = TimePoint::max();
  int priority = 0;             ///< 0 is the most urgent
  std::string shape_key;        ///< requests batch together only when their keys are equal
  std::uint64_t row_bytes = 0;  ///< bytes of input per row, for TryTake's limit
};

/// `rows` rows taken from the front of the remaining rows of queue entry `index`.
struct BatchSlice {
  std::size_t index = 0;
  std::int64_t rows = 0;
};

struct BatchDecision {
  std::vector<BatchSlice> run;           ///< empty: nothing is due
  std::vector<std::size_t> expired;      ///< entries past their deadline, to fail
  TimePoint wake_at = TimePoint::max();  ///< when nothing runs: decide again then (or on a new request)
};

/// The batching decision. Requests are grouped by shape_key and ordered by (priority, arrival);
/// the group whose head comes first and that is due runs: a group is due when it holds
/// max_batch_size rows, when its rows equal a preferred batch size, when its head has waited
/// max_queue_delay, when `draining`, or when no other instance is busy (`others_busy` false):
/// waiting then only adds latency, since requests pile up by themselves while instances run. A due group yields up to
/// max_batch_size rows, the last request split when it does not fit (its remaining rows stay queued, first in line).
/// With max_batch_size 0 the head runs alone with all its rows. Never started requests whose deadline is <= now are
/// returned in `expired` and take no part in the decision.
BatchDecision DecideBatch(std::span<const QueueEntry> queue, TimePoint now, const BatchPolicy& policy, bool draining,
                          bool others_busy);

/// The queue of one model and its pool of `instances` execution slots. Thread-safe. Payload is
/// what the caller needs to answer a request (the queue copies it into each slice, so a shared
/// pointer fits). Batches are taken either by worker threads blocking in Next() or, without any
/// thread handoff, by a request's own thread through TryTake() when a slot is idle.
template <typename Payload>
class BatchQueue {
 public:
  struct Slice {
    Payload payload;
    std::int64_t row_begin = 0;  ///< first row of the request in this slice
    std::int64_t rows = 0;
  };
  /// What one taker got: a slot (`instance`, -1 when none is held), the rows to run on it and the
  /// requests past their deadline (answer them with a timeout).
  struct Batch {
    int instance = -1;
    std::vector<Slice> slices;
    std::vector<Payload> expired;
  };

  BatchQueue(BatchPolicy policy, int max_queue_size, int instances = 1)
      : policy_(std::move(policy)), max_queue_size_(max_queue_size), instances_(std::max(1, instances)) {
    for (int i = instances_ - 1; i >= 0; --i) idle_.push_back(i);
  }
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  /// Queues a request of entry.rows_left rows. Fails with kUnavailable, at once, when the queue
  /// holds max_queue_size requests or Stop() was called; the payload is then not kept. With
  /// `wake_worker` false the caller promises to call TryTake() next (a worker is then woken only
  /// if TryTake finds nothing due while a slot is idle, to keep the delay's timer).
  Status Enqueue(QueueEntry entry, Payload payload, bool wake_worker = true) {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return MakeError(ErrorKind::kUnavailable, "the server is shutting down");
      if (static_cast<int>(entries_.size()) >= max_queue_size_) {
        return MakeError(ErrorKind::kUnavailable,
                         "the queue is full (" + std::to_string(max_queue_size_) + " requests waiting); retry later");
      }
      items_.push_back(Item{std::move(payload), entry.rows_left});
      entries_.push_back(std::move(entry));
      // With every slot busy nobody could act on the request: whoever frees a slot looks again.
      wake = wake_worker && !idle_.empty();
    }
    if (wake) wake_.notify_one();
    return OkStatus();
  }

  /// Without blocking: when a slot is idle and rows are due now, claims the slot and fills
  /// `batch` (give it back with Release()); expired requests are handed out in any case. Rows due
  /// whose inputs take more than `max_bytes` are left to a worker, which is woken.
  /// Returns whether `batch` holds anything to do.
  bool TryTake(Batch* batch, std::uint64_t max_bytes = UINT64_MAX) {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      batch->slices.clear();
      batch->expired.clear();
      if (!idle_.empty() && !entries_.empty()) {
        BatchDecision decision = DecideBatch(entries_, Clock::now(), policy_, stopped_, busy() > 0);
        if (BytesOf(decision) > max_bytes) decision.run.clear();
        Take(decision, batch);
        // Not due yet, or not for this thread: some worker must take it.
        wake = batch->slices.empty() && !entries_.empty();
      }
    }
    if (wake) wake_.notify_one();
    return !batch->slices.empty() || !batch->expired.empty();
  }

  /// Gives back the slot of `batch` (if it holds one); wakes a worker when requests wait, unless
  /// the caller goes on with TryTake() itself (`wake_worker` false).
  void Release(Batch* batch, bool wake_worker = true) {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      if (batch->instance >= 0) idle_.push_back(batch->instance);
      wake = wake_worker && !entries_.empty();
    }
    batch->instance = -1;
    if (wake) wake_.notify_one();
  }

  /// Releases the slot `batch` holds, then blocks until rows are due and a slot is idle, or
  /// requests expired. Fills `batch` (possibly with expired requests only). Returns false once
  /// Stop() was called and the queue is empty: every request queued before Stop() comes out of
  /// some Next() or TryTake() call.
  bool Next(Batch* batch) {
    bool more_due = false;
    {
      std::unique_lock lock(mutex_);
      if (batch->instance >= 0) idle_.push_back(batch->instance);
      batch->instance = -1;
      batch->slices.clear();
      batch->expired.clear();
      while (true) {
        if (stopped_ && entries_.empty()) return false;
        if (idle_.empty() || entries_.empty()) {
          wake_.wait(lock);
          continue;
        }
        BatchDecision decision = DecideBatch(entries_, Clock::now(), policy_, stopped_, busy() > 0);
        if (!decision.run.empty() || !decision.expired.empty()) {
          Take(decision, batch);
          more_due = !entries_.empty() && !idle_.empty();
          break;
        }
        if (decision.wake_at == TimePoint::max())
          wake_.wait(lock);
        else
          wake_.wait_until(lock, decision.wake_at);
      }
    }
    // Another idle worker may find the rest due; wake it outside the lock.
    if (more_due) wake_.notify_one();
    return true;
  }

  /// No new requests; queued ones still come out of Next() without waiting for the delay.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    wake_.notify_all();
  }

  /// Requests waiting (a split request counts once until its last rows are taken).
  std::size_t depth() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  struct Item {
    Payload payload;
    std::int64_t rows_total = 0;
  };

  int busy() const { return instances_ - static_cast<int>(idle_.size()); }  // requires mutex_

  // The input bytes of the rows `decision` runs, saturating. Requires mutex_.
  std::uint64_t BytesOf(const BatchDecision& decision) const {
    std::uint64_t bytes = 0;
    for (const BatchSlice& s : decision.run) {
      const std::uint64_t row = entries_[s.index].row_bytes;
      const auto rows = static_cast<std::uint64_t>(s.rows);
      const std::uint64_t slice = row != 0 && rows > UINT64_MAX / row ? UINT64_MAX : rows * row;
      bytes = slice > UINT64_MAX - bytes ? UINT64_MAX : bytes + slice;
    }
    return bytes;
  }

  // Moves the decided rows out of the queue, claiming an idle slot when rows run. Requires mutex_.
  void Take(const BatchDecision& decision, Batch* batch) {
    if (!decision.run.empty()) {
      batch->instance = idle_.back();
      idle_.pop_back();
    }
    std::vector<bool> remove(entries_.size(), false);
    for (std::size_t index : decision.expired) {
      batch->expired.push_back(items_[index].payload);
      remove[index] = true;
    }
    for (const BatchSlice& s : decision.run) {
      QueueEntry& e = entries_[s.index];
      batch->slices.push_back(Slice{items_[s.index].payload, items_[s.index].rows_total - e.rows_left, s.rows});
      e.rows_left -= s.rows;
      e.started = true;
      if (e.rows_left == 0) remove[s.index] = true;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (remove[i]) continue;
      if (kept != i) {
        entries_[kept] = std::move(entries_[i]);
        items_[kept] = std::move(items_[i]);
      }
      ++kept;
    }
    entries_.resize(kept);
    items_.resize(kept);
  }

  const BatchPolicy policy_;
  const int max_queue_size_;
  const int instances_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<QueueEntry> entries_;  // guarded by mutex_; in arrival order
  std::vector<Item> items_;          // guarded by mutex_; parallel to entries_
  std::vector<int> idle_;            // guarded by mutex_: slots free to run a batch
  bool stopped_ = false;             // guarded by mutex_
};

}  // namespace ortkit::serve
