// HTTP's InferLoop (infer_client.h): one load thread's exchanges over many non-blocking connections, watched by
// one epoll set.
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ortkit/perf/http_infer.h"
#include "ortkit/perf/http_transport.h"
#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {
namespace {

/// The exchanges of one load thread over many connections: each connection is non-blocking and watched by one
/// epoll set, for writing while its request is not all sent and for reading while its answer comes in.
class HttpInferLoop final : public InferLoop {
 public:
  HttpInferLoop(const std::string& base, const ClientOptions& options, std::size_t connections, int epoll)
      : epoll_(epoll), infer_path_(InferPath(options.model)), slots_(connections) {
    for (auto& slot : slots_)
      slot.connection = std::make_unique<HttpConnection>(ServerAddress::FromBase(base), options.timeout_ms, false);
    events_.resize(connections);
  }
  ~HttpInferLoop() override { ::close(epoll_); }
  HttpInferLoop(const HttpInferLoop&) = delete;
  HttpInferLoop& operator=(const HttpInferLoop&) = delete;

  void Send(std::size_t connection, const EncodedRequest& request) override {
    Slot& slot = slots_.at(connection);
    slot.request = InferRequestOf(infer_path_, request);
    slot.in_flight = true;
    ++in_flight_;
    Advance(connection, slot.connection->Begin(slot.request));
  }

  void Wait(int wait_ms, const std::function<void(std::size_t, const InferOutcome&)>& answered) override {
    if (finished_.empty() && in_flight_ > 0) {
      const int n = epoll_wait(epoll_, events_.data(), static_cast<int>(events_.size()), WaitMs(wait_ms));
      for (int i = 0; i < n; ++i) {
        const auto connection = static_cast<std::size_t>(events_[static_cast<std::size_t>(i)].data.u64);
        Slot& slot = slots_[connection];
        if (slot.in_flight)
          Advance(connection, slot.connection->Progress());
        else
          slot.connection->Close();  // idle, yet readable: the server closed it (or sent what nobody asked for)
      }
      TimeOutOverdue();
    }
    std::vector<std::pair<std::size_t, InferOutcome>> finished;
    finished.swap(finished_);  // `answered` may Send, which may finish at once
    for (const auto& [connection, outcome] : finished) {
      --in_flight_;
      answered(connection, outcome);
    }
  }

  std::size_t in_flight() const override { return in_flight_; }

 private:
  struct Slot {
    std::unique_ptr<HttpConnection> connection;
    HttpRequest request;
    bool in_flight = false;            // started and not yet reported
    std::uint64_t watched_socket = 0;  // the connection's socket in the epoll set (its sockets_opened), and for what
    std::uint32_t watched_events = 0;
  };

  // Takes the exchange on from `step`: waits for its socket, sends it once more (Resendable), or finishes it.
  void Advance(std::size_t connection, ExchangeStep step) {
    Slot& slot = slots_[connection];
    HttpConnection& exchange = *slot.connection;
    if (step == ExchangeStep::kFailed && exchange.Resendable()) step = exchange.Begin(slot.request);
    if (step == ExchangeStep::kWouldBlock) return Watch(slot, exchange.wants_write() ? EPOLLOUT : EPOLLIN);
    Finish(connection, InferOutcomeOf(exchange.TakeAnswer()));
  }

  void Finish(std::size_t connection, InferOutcome outcome) {
    Slot& slot = slots_[connection];
    slot.in_flight = false;
    finished_.emplace_back(connection, std::move(outcome));
  }

  // Watches the slot's socket for `events`: added to the epoll set once per socket, modified when they change.
  void Watch(Slot& slot, std::uint32_t events) {
    const HttpConnection& connection = *slot.connection;
    const bool added = slot.watched_socket == connection.sockets_opened();
    if (added && events == slot.watched_events) return;
    epoll_event event{};
    event.events = events;
    event.data.u64 = static_cast<std::uint64_t>(&slot - slots_.data());
    if (epoll_ctl(epoll_, added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, connection.fd(), &event) == 0) {
      slot.watched_socket = connection.sockets_opened();
      slot.watched_events = events;
    }
  }

  // No longer than `wait_ms`, nor past the earliest deadline of an exchange in flight.
  int WaitMs(int wait_ms) const {
    const auto now = std::chrono::steady_clock::now();
    for (const auto& slot : slots_) {
      if (!slot.in_flight) continue;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(slot.connection->deadline() - now).count();
      wait_ms = static_cast<int>(std::clamp<std::int64_t>(left, 0, wait_ms));
    }
    return wait_ms;
  }

  void TimeOutOverdue() {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = slots_[i];
      if (!slot.in_flight || !slot.connection->Overdue(now)) continue;
      slot.connection->TimeOut();
      Finish(i, InferOutcomeOf(slot.connection->TakeAnswer()));
    }
  }

  int epoll_;
  std::string infer_path_;
  std::vector<Slot> slots_;
  std::vector<epoll_event> events_;
  std::vector<std::pair<std::size_t, InferOutcome>> finished_;
  std::size_t in_flight_ = 0;
};

}  // namespace

Result<std::unique_ptr<InferLoop>> CreateHttpLoop(const ClientOptions& options, std::size_t connections) {
  ORTKIT_ASSIGN_OR_RETURN(std::string base, NormalizeHttpBase(options.url));
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  if (epoll < 0) return MakeError(ErrorKind::kInternal, fmt::format("epoll_create1: {}", ErrnoText(errno)));
  return std::unique_ptr<InferLoop>(std::make_unique<HttpInferLoop>(base, options, connections, epoll));
}

}  // namespace ortkit::perf
