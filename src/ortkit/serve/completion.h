#pragma once
// A flag one thread sets and another waits on, as a bare futex: std::future and std::atomic::wait
// spin and sched_yield before sleeping, which on a busy core hands the CPU to the other request
// threads, one context switch per yield.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace ortkit::serve {

class Completion {
 public:
  /// Something is now pending: Wait() blocks until Set().
  void Arm() { state_.store(kPending, std::memory_order_relaxed); }

  /// Marks it done and wakes the waiter, if one sleeps. The last access to this object.
  void Set() {
    if (state_.exchange(kDone, std::memory_order_acq_rel) == kSleeping) {
      syscall(SYS_futex, Word(), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
  }

  /// Returns once Set() was called after the last Arm() (at once when never armed).
  void Wait() {
    int state = kPending;
    while (!state_.compare_exchange_weak(state, kSleeping, std::memory_order_acq_rel) && state != kDone) {
      if (state == kSleeping) break;
    }
    while (state_.load(std::memory_order_acquire) != kDone) {
      syscall(SYS_futex, Word(), FUTEX_WAIT_PRIVATE, kSleeping, nullptr, nullptr, 0);
    }
  }

 private:
  static constexpr int kDone = 0, kPending = 1, kSleeping = 2;
  static_assert(sizeof(std::atomic<int>) == sizeof(int));
  int* Word() { return reinterpret_cast<int*>(&state_); }

  std::atomic<int> state_{kDone};
};

}  // namespace ortkit::serve
