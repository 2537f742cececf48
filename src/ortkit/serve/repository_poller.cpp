#include "ortkit/serve/repository_poller.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "ortkit/serve/model_repository.h"

namespace ortkit::serve {

RepositoryPoller::RepositoryPoller(InferenceCore& core, std::filesystem::path repository,
                                   std::chrono::milliseconds period, PollLog log)
    : core_(core), repository_(std::move(repository)), period_(period), log_(std::move(log)) {
  auto scan = ScanModelRepository(repository_);
  if (!scan.ok()) return;
  for (const auto& model : scan->models) {
    auto digest = DigestModelFolder(model.folder, &digests_);
    seen_[model.name].served = digest.ok() ? *digest : "";
  }
}

RepositoryPoller::~RepositoryPoller() {
  Stop();
  for (auto& [name, seen] : seen_) {
    if (seen.job.valid()) seen.job.wait();
  }
}

void RepositoryPoller::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stop_; })) {
      lock.unlock();
      PollOnce();
      lock.lock();
    }
  });
}

void RepositoryPoller::Stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RepositoryPoller::Launch(const std::string& name, Seen& seen, const std::string& digest) {
  const bool added = seen.served.empty();
  seen.served = digest;
  seen.pending.clear();
  const auto still = std::chrono::duration<double>(period_).count();
  seen.job = std::async(std::launch::async, [this, name, added, still] {
    const Status loaded = core_.ReloadFromRepository(name);
    if (loaded.ok()) {
      log_(added ? fmt::format("model '{}' appeared in the repository: loaded", name)
                 : fmt::format("model '{}': its files changed and stayed the same for {:g} s: reloaded", name, still));
    } else {
      log_(fmt::format("model '{}': its new files did not load ({}){}", name, loaded.error().message,
                       added ? "" : "; the copy served before serves on"));
    }
  });
}

void RepositoryPoller::PollOnce() {
  for (auto& [name, seen] : seen_) {
    if (seen.job.valid() && seen.job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) seen.job.get();
  }
  auto scan = ScanModelRepository(repository_);
  if (!scan.ok()) {
    // A mount that blinks must not unload every model: what is served serves on until the folder is back.
    if (!unreadable_) log_(fmt::format("{}: serving on what is loaded until it can be read", scan.error().message));
    unreadable_ = true;
    return;
  }
  if (unreadable_) log_(fmt::format("the repository {} can be read again", repository_.string()));
  unreadable_ = false;
  std::set<std::string> present;
  for (const auto& model : scan->models) {
    present.insert(model.name);
    Seen& seen = seen_[model.name];
    seen.missing = false;
    if (seen.job.valid()) continue;  // a load under way: look again at the next poll
    auto digest = DigestModelFolder(model.folder, &digests_);
    if (!digest.ok()) {  // a file vanished while read: the folder is changing
      seen.pending.clear();
      continue;
    }
    if (*digest == seen.served) {
      seen.pending.clear();
    } else if (*digest != seen.pending) {
      seen.pending = *digest;  // changed since the last poll: wait until it stays the same for a period
    } else {
      Launch(model.name, seen, *digest);
    }
  }
  digests_.Prune();
  for (auto it = seen_.begin(); it != seen_.end();) {
    Seen& seen = it->second;
    if (present.count(it->first) || seen.job.valid()) {
      ++it;
      continue;
    }
    if (seen.served.empty()) {  // nothing is served from it
      it = seen_.erase(it);
      continue;
    }
    if (!seen.missing) {  // gone for one poll only: it may be a folder being renamed into place
      seen.missing = true;
      ++it;
      continue;
    }
    seen.served.clear();
    seen.pending.clear();
    seen.job = std::async(std::launch::async, [this, name = it->first] {
      const Status unloaded = core_.UnloadFromRepository(name);
      log_(unloaded.ok() ? fmt::format("model '{}' left the repository: unloaded", name)
                         : fmt::format("model '{}' left the repository; unloading it failed: {}", name,
                                       unloaded.error().message));
    });
    ++it;
  }
}

}  // namespace ortkit::serve
