// The loopback round trip that bounds serving overhead: a TCP echo over 127.0.0.1 with Nagle off,
// the echo thread pinned to one core and the client to another (as serve_bench.sh pins server and
// load generator). Prints the median and p99 of `iterations` round trips of `bytes` bytes, in µs.
// The echo sleeps in read() between requests; run_echo is the polling server with a model inside.
//   loopback_rtt [server_core=0] [client_core=1] [iterations=20000] [bytes=512]
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "loopback.h"

using loopback::NoDelay;
using loopback::Pin;
using loopback::ReadAll;

int main(int argc, char** argv) {
  const int server_core = argc > 1 ? std::atoi(argv[1]) : 0;
  const int client_core = argc > 2 ? std::atoi(argv[2]) : 1;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 20000;
  const std::size_t bytes = argc > 4 ? static_cast<std::size_t>(std::atoi(argv[4])) : 512;

  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::perror("loopback_rtt: listen");
    return 1;
  }
  std::thread echo([&] {
    Pin(server_core);
    const int fd = accept(listener, nullptr, nullptr);
    NoDelay(fd);
    std::vector<char> buffer(bytes);
    while (ReadAll(fd, buffer.data(), bytes)) {
      if (write(fd, buffer.data(), bytes) != static_cast<ssize_t>(bytes)) break;
    }
    close(fd);
  });

  Pin(client_core);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    std::perror("loopback_rtt: connect");
    return 1;
  }
  NoDelay(fd);
  std::vector<char> buffer(bytes, 'x');
  std::vector<double> samples;
  for (int i = 0; i < iterations + 1000; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (write(fd, buffer.data(), bytes) != static_cast<ssize_t>(bytes) || !ReadAll(fd, buffer.data(), bytes)) return 1;
    if (i >= 1000)
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  close(fd);
  echo.join();
  close(listener);
  std::sort(samples.begin(), samples.end());
  std::printf("{\"rtt_us_p50\": %.2f, \"rtt_us_p99\": %.2f, \"iterations\": %d, \"bytes\": %zu}\n",
              samples[samples.size() / 2], samples[samples.size() * 99 / 100], iterations, bytes);
  return 0;
}
