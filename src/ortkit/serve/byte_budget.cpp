#include "ortkit/serve/byte_budget.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "ortkit/core/units.h"

namespace ortkit::serve {

ByteBudget::Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ByteBudget::Reservation& ByteBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool ByteBudget::Reservation::GrowTo(std::uint64_t bytes) {
  if (budget_ == nullptr || bytes <= bytes_) return true;
  if (!budget_->TryGrow(bytes_, bytes - bytes_)) return false;
  bytes_ = bytes;
  return true;
}

void ByteBudget::Reservation::Release() {
  if (budget_ != nullptr && bytes_ > 0) budget_->Shrink(bytes_);
  bytes_ = 0;
}

bool ByteBudget::TryGrow(std::uint64_t mine, std::uint64_t more) {
  std::uint64_t held = held_.load(std::memory_order_relaxed);
  do {
    const bool alone = held == mine;
    if (limit_ > 0 && !alone && (more > limit_ || held > limit_ - more)) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!held_.compare_exchange_weak(held, held + more, std::memory_order_relaxed));
  return true;
}

Error ByteBudget::Refusal(std::uint64_t bytes, std::string_view what) const {
  return MakeError(ErrorKind::kUnavailable,
                   fmt::format("the server holds {} of requests and answers, and {} ({}) would take it past its "
                               "limit of {} (--max-inflight-bytes): retry shortly",
                               HumanBytes(held()), what, HumanBytes(bytes), HumanBytes(limit_)));
}

std::string ByteBudget::MetricsText() const {
  return fmt::format(
      "# HELP ortkit_inflight_bytes Bytes of request bodies, inputs and answers the server holds now\n"
      "# TYPE ortkit_inflight_bytes gauge\nortkit_inflight_bytes {}\n"
      "# HELP ortkit_inflight_limit_bytes The most it may hold (--max-inflight-bytes; 0: no limit)\n"
      "# TYPE ortkit_inflight_limit_bytes gauge\nortkit_inflight_limit_bytes {}\n"
      "# HELP ortkit_inflight_refused_total Requests refused because they would take it past the limit\n"
      "# TYPE ortkit_inflight_refused_total counter\nortkit_inflight_refused_total {}\n",
      held(), limit_, refused());
}

std::uint64_t DefaultInflightBytes(std::uint64_t max_body_bytes, const MemoryBudget& memory) {
  constexpr std::uint64_t kFloor = std::uint64_t{16} << 20;
  const std::uint64_t bodies = max_body_bytes > UINT64_MAX / 4 ? UINT64_MAX : 4 * max_body_bytes;
  const std::uint64_t share = memory.bytes > 0 ? memory.bytes / 8 : bodies;
  return std::max(kFloor, std::min(bodies, share));
}

}  // namespace ortkit::serve
