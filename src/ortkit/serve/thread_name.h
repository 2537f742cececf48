#pragma once
// Names the serving threads for `top -H`, `ps -L`, debuggers and per-thread pinning.

#include <pthread.h>

#include <string>
#include <string_view>

namespace ortkit::serve {

/// Names the calling thread; Linux keeps the first 15 bytes.
inline void NameThisThread(std::string_view name) {
  const std::string kept(name.substr(0, 15));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace ortkit::serve
