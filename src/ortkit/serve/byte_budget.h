#pragma once
// The bytes of requests and answers the server holds at once, across its connections and front
// ends, against one limit (--max-inflight-bytes): a body that would take the server past it is
// refused (HTTP 503 with Retry-After, gRPC UNAVAILABLE) before it is read or decoded, instead of
// being held while the client trickles it in. Without it, a thousand connections each sending a
// 64 MiB body could make the server hold 64 GiB.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "ortkit/core/memory.h"
#include "ortkit/core/result.h"

namespace ortkit::serve {

/// One limit shared by every request. Thread-safe: one atomic counter, no lock.
class ByteBudget {
 public:
  /// What one request holds of the budget; given back when destroyed or Release()d. Movable; used
  /// by one thread at a time (whichever has the request).
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation() { Release(); }

    /// Holds max(bytes(), `bytes`). Growing fails, and nothing changes, when the budget cannot take
    /// the difference, unless nothing else is held: one request within the body limit is always
    /// served, whatever the limit.
    bool GrowTo(std::uint64_t bytes);
    void Release();
    std::uint64_t bytes() const { return bytes_; }
    /// Its budget's Refusal() for growing by `bytes` for `what` ("the body"): for a GrowTo that failed.
    Error Refusal(std::uint64_t bytes, std::string_view what) const { return budget_->Refusal(bytes, what); }

   private:
    friend class ByteBudget;
    ByteBudget* budget_ = nullptr;
    std::uint64_t bytes_ = 0;
  };

  /// `limit` 0: no limit (what is held is still counted).
  explicit ByteBudget(std::uint64_t limit) : limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  /// An empty reservation against this budget, which must outlive it.
  Reservation Reserve() {
    Reservation r;
    r.budget_ = this;
    return r;
  }

  std::uint64_t limit() const { return limit_; }
  std::uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

  /// kUnavailable for a request that needed `bytes` more than the budget had left: what it asked,
  /// what the server holds, the limit and its flag.
  Error Refusal(std::uint64_t bytes, std::string_view what) const;

  /// The Prometheus text of the budget: ortkit_inflight_bytes, ortkit_inflight_limit_bytes and
  /// ortkit_inflight_refused_total.
  std::string MetricsText() const;

 private:
  bool TryGrow(std::uint64_t mine, std::uint64_t more);
  void Shrink(std::uint64_t less) { held_.fetch_sub(less, std::memory_order_relaxed); }

  const std::uint64_t limit_;
  std::atomic<std::uint64_t> held_{0};
  std::atomic<std::uint64_t> refused_{0};
};

/// The default limit for a server whose largest body is `max_body_bytes` on `memory`: room for
/// four of the largest bodies, or an eighth of the memory, whichever is less (at least 16 MiB).
std::uint64_t DefaultInflightBytes(std::uint64_t max_body_bytes, const MemoryBudget& memory);

}  // namespace ortkit::serve
