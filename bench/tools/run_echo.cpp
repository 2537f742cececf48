// The thinnest server there can be: what is left of a serving stack once everything that is not
// the model or the socket is taken away, as the bound serve_bench.sh holds ortkit serve against.
//
// `clients` TCP connections over 127.0.0.1 (Nagle off), each a closed loop: send `request_bytes`,
// wait for the answer, send again, all driven by one event loop as `ortkit perf` drives HTTP. The server thread polls
// them with epoll (never sleeping, as `serve --http-busy-poll-us` does), reads the requests that have arrived, runs the
// model once on a batch of that many rows (at most `max_batch`; Ort::Session::Run on inputs made beforehand, every
// output), and sends each client its rows' output bytes. No protocol, no parsing, no queue. The
// server is pinned to one core and the clients to another, as serve_bench.sh pins server and load
// generator, so the Run shares its core with the sockets' work exactly as the server's does.
//   clients = 1: a raw Run plus a loopback round trip, measured as one (the overhead bound)
//   clients > 1: the most a server can answer on one core over TCP at that concurrency
// Prints throughput, latency p50/p99, the median Run and the mean batch, as JSON.
//   run_echo MODEL SEQ_LEN [server_core=0] [client_core=1] [clients=1] [seconds=3] [max_batch=64]
//            [request_bytes=767]
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <onnxruntime_cxx_api.h>

#include "ortkit/model/model_file.h"
#include "ortkit/runtime/ort_handles.h"  // the raw session, to compare ortkit's path with
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/synthesis.h"

#include "loopback.h"

namespace {

using loopback::NoDelay;
using loopback::Pin;
using loopback::ReadAll;
using loopback::WriteAll;

using Clock = std::chrono::steady_clock;

double Percentile(const std::vector<double>& sorted, int p) {
  return sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, sorted.size() * p / 100)];
}

// The model at batch sizes 1..max_batch on synthesised inputs made once per size.
class Model {
 public:
  static bool Fail(const std::string& what, const ortkit::Error& error) {
    std::fprintf(stderr, "run_echo: %s: %s\n", what.c_str(), error.message.c_str());
    return false;
  }

  bool Load(const char* path, std::int64_t seq_len, std::int64_t max_batch) {
    auto load = ortkit::LoadModelFile(path);
    if (!load.model) {
      std::fprintf(stderr, "run_echo: %s is not a usable model\n", path);
      return false;
    }
    hints_ = ortkit::AnalyzeInputValues(*load.model->proto);
    seq_len_ = seq_len;
    auto runtime = ortkit::Runtime::Create();
    if (!runtime.ok()) return Fail("starting ONNX Runtime", runtime.error());
    runtime_ = std::move(runtime).value();
    ortkit::SessionConfig config;
    config.intra_op_threads = 1;
    auto session = ortkit::Session::Create(*runtime_, path, config);
    if (!session.ok()) return Fail("creating the session", session.error());
    session_ = std::move(session).value();
    auto specs = ortkit::DescribeInputs(*session_);
    if (!specs.ok()) return Fail("describing the inputs", specs.error());
    specs_ = std::move(specs).value();
    Ort::AllocatorWithDefaultOptions allocator;
    for (const auto& spec : specs_) input_names_.push_back(spec.name);
    for (std::size_t i = 0; i < ortkit::OrtSession(*session_).GetOutputCount(); ++i)
      output_names_.push_back(ortkit::OrtSession(*session_).GetOutputNameAllocated(i, allocator).get());
    for (auto& name : input_names_) input_ptrs_.push_back(name.c_str());
    for (auto& name : output_names_) output_ptrs_.push_back(name.c_str());
    // Every batch size the server may run, made before anything is timed.
    for (std::int64_t batch = 1; batch <= max_batch; ++batch) {
      if (!Prepare(batch)) return false;
    }
    return true;
  }

  /// Runs on the inputs Load() made for `batch` rows (1..max_batch).
  std::vector<Ort::Value> Run(std::int64_t batch) {
    auto& values = inputs_.at(batch).values;
    return ortkit::OrtSession(*session_).Run(Ort::RunOptions{nullptr}, input_ptrs_.data(), values.data(), values.size(),
                                             output_ptrs_.data(), output_ptrs_.size());
  }

 private:
  struct Batch {
    std::vector<ortkit::NamedTensor> tensors;
    std::vector<Ort::Value> values;
  };

  // Makes the inputs for `batch` rows; false when they cannot be made.
  bool Prepare(std::int64_t batch) {
    ortkit::InputPlan plan;
    plan.dims["batch"] = batch;
    plan.dims["seq_len"] = seq_len_;
    auto inputs = ortkit::SynthesizeInputs(specs_, hints_, plan);
    if (!inputs.ok()) return Fail("synthesising inputs", inputs.error());
    Batch& b = inputs_[batch];
    b.tensors = std::move(inputs).value();
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    for (const auto& input : b.tensors) b.values.push_back(ortkit::ToOrtValue(input.tensor, memory, allocator));
    return true;
  }

  std::unique_ptr<ortkit::Runtime> runtime_;
  std::unique_ptr<ortkit::Session> session_;
  std::vector<ortkit::TensorSpec> specs_;
  std::map<std::string, ortkit::ValueHint> hints_;
  std::int64_t seq_len_ = 1;
  std::vector<std::string> input_names_, output_names_;
  std::vector<const char*> input_ptrs_, output_ptrs_;
  std::map<std::int64_t, Batch> inputs_;
};

std::size_t ByteSize(const Ort::Value& value) {
  const auto info = value.GetTensorTypeAndShapeInfo();
  return info.GetElementCount() * ortkit::FindDataType(static_cast<ortkit::DataType>(info.GetElementType()))->size;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: run_echo MODEL.onnx SEQ_LEN [server_core] [client_core] [clients] [seconds] [max_batch] "
                 "[request_bytes]\n");
    return 2;
  }
  const std::int64_t seq_len = std::atoll(argv[2]);
  const int server_core = argc > 3 ? std::atoi(argv[3]) : 0;
  const int client_core = argc > 4 ? std::atoi(argv[4]) : 1;
  const int clients = argc > 5 ? std::max(1, std::atoi(argv[5])) : 1;
  const double seconds = argc > 6 ? std::max(0.5, std::atof(argv[6])) : 3;
  const std::int64_t max_batch = argc > 7 ? std::max(1, std::atoi(argv[7])) : 64;
  const std::size_t request_bytes = argc > 8 ? static_cast<std::size_t>(std::max(1, std::atoi(argv[8]))) : 767;

  Model model;
  if (!model.Load(argv[1], seq_len, max_batch)) return 1;
  std::size_t reply_bytes = 0;  // one row's outputs
  for (auto& output : model.Run(1)) reply_bytes += ByteSize(output);

  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listener, clients) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::perror("run_echo: listen");
    return 1;
  }

  std::vector<double> runs;
  std::uint64_t batches = 0, rows = 0;
  std::thread server([&] {
    Pin(server_core);
    const int epoll = epoll_create1(0);
    std::map<int, std::size_t> got;  // bytes of the current request read, per connection
    for (int i = 0; i < clients; ++i) {
      const int fd = accept(listener, nullptr, nullptr);
      NoDelay(fd);
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.fd = fd;
      epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
      got[fd] = 0;
    }
    std::vector<char> request(request_bytes), reply(reply_bytes);
    std::vector<epoll_event> events(static_cast<std::size_t>(clients));
    std::vector<int> ready;
    for (std::size_t open = got.size(); open > 0;) {
      const int n = epoll_wait(epoll, events.data(), clients, 0);
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        const ssize_t r = recv(fd, request.data(), request_bytes - got[fd], MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN)) {
          epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
          close(fd);
          --open;
        } else if (r > 0 && (got[fd] += static_cast<std::size_t>(r)) == request_bytes) {
          got[fd] = 0;
          ready.push_back(fd);
        }
      }
      for (std::size_t at = 0; at < ready.size();) {
        const auto batch =
            static_cast<std::int64_t>(std::min<std::size_t>(ready.size() - at, static_cast<std::size_t>(max_batch)));
        const auto start = Clock::now();
        auto outputs = model.Run(batch);
        runs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        ++batches;
        rows += static_cast<std::uint64_t>(batch);
        for (std::int64_t row = 0; row < batch; ++row) {
          std::size_t offset = 0;
          for (auto& output : outputs) {
            const std::size_t bytes = ByteSize(output) / static_cast<std::size_t>(batch);
            std::memcpy(reply.data() + offset, static_cast<const char*>(output.GetTensorRawData()) + row * bytes,
                        bytes);
            offset += bytes;
          }
          WriteAll(ready[at + static_cast<std::size_t>(row)], reply.data(), reply_bytes);
        }
        at += static_cast<std::size_t>(batch);
      }
      ready.clear();
    }
    close(epoll);
  });

  // The clients: closed loops on their own core, one event loop over all connections as `ortkit perf`
  // drives HTTP, timed after a one-second warm-up.
  std::atomic<bool> measuring{false}, stop{false};
  std::vector<double> latencies;
  std::thread load([&] {
    Pin(client_core);
    const int epoll = epoll_create1(0);
    struct Connection {
      int fd = -1;
      std::size_t got = 0;  // bytes of the answer read
      Clock::time_point sent;
    };
    std::vector<Connection> connections(static_cast<std::size_t>(clients));
    std::vector<char> request(request_bytes, 'x'), reply(reply_bytes);
    for (std::size_t c = 0; c < connections.size(); ++c) {
      Connection& connection = connections[c];
      connection.fd = socket(AF_INET, SOCK_STREAM, 0);
      if (connect(connection.fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        std::perror("run_echo: connect");
        std::exit(1);
      }
      NoDelay(connection.fd);
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = c;
      epoll_ctl(epoll, EPOLL_CTL_ADD, connection.fd, &event);
      connection.sent = Clock::now();
      WriteAll(connection.fd, request.data(), request_bytes);
    }
    std::vector<epoll_event> events(connections.size());
    while (!stop.load(std::memory_order_relaxed)) {
      const int n = epoll_wait(epoll, events.data(), clients, 100);
      for (int i = 0; i < n; ++i) {
        Connection& connection = connections[events[static_cast<std::size_t>(i)].data.u64];
        const ssize_t r = recv(connection.fd, reply.data(), reply_bytes - connection.got, MSG_DONTWAIT);
        if (r <= 0 || (connection.got += static_cast<std::size_t>(r)) < reply_bytes) continue;
        connection.got = 0;
        if (measuring.load(std::memory_order_relaxed))
          latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - connection.sent).count());
        connection.sent = Clock::now();
        WriteAll(connection.fd, request.data(), request_bytes);
      }
    }
    for (auto& connection : connections) close(connection.fd);
    close(epoll);
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  measuring = true;
  const auto began = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measuring = false;
  const double window = std::chrono::duration<double>(Clock::now() - began).count();
  stop = true;
  load.join();
  server.join();
  close(listener);

  std::sort(latencies.begin(), latencies.end());
  std::sort(runs.begin(), runs.end());
  std::printf(
      "{\"clients\": %d, \"throughput\": %.1f, \"latency_us_p50\": %.2f, \"latency_us_p99\": %.2f, \"run_us_p50\": "
      "%.2f, "
      "\"mean_batch\": %.2f, \"request_bytes\": %zu, \"reply_bytes\": %zu}\n",
      clients, static_cast<double>(latencies.size()) / window, Percentile(latencies, 50), Percentile(latencies, 99),
      Percentile(runs, 50), batches ? static_cast<double>(rows) / static_cast<double>(batches) : 0.0, request_bytes,
      reply_bytes);
  return 0;
}
