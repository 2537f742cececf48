#pragma once
// What the loopback measurement tools share: pinning a thread to a core, and whole reads and
// writes on a TCP socket with Nagle's algorithm off.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace loopback {

inline void Pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

inline bool ReadAll(int fd, char* data, std::size_t size) {
  for (std::size_t got = 0; got < size;) {
    const ssize_t n = read(fd, data + got, size - got);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

/// Also on a non-blocking socket (it retries while the send buffer is full).
inline bool WriteAll(int fd, const char* data, std::size_t size) {
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

inline void NoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace loopback
