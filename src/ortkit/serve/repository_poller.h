#pragma once
// --model-control poll: the repository's files decide what is served. Every period the poller digests each
// model folder by content (DigestModelFolder) and reloads a model whose files changed once they have stayed
// the same for a whole period, so that a file still being copied is never loaded; a new model folder loads,
// a removed one unloads. Each load runs on a thread of its own: one that hangs or fails holds no other back.

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"

namespace ortkit::serve {

/// What the poller did, one sentence ("model 'a': its files changed: reloaded").
using PollLog = std::function<void(const std::string&)>;

class RepositoryPoller {
 public:
  /// Digests the repository's models as they are now, the baseline the served copies were loaded from:
  /// call it before InferenceCore::LoadModels(), then Start().
  RepositoryPoller(InferenceCore& core, std::filesystem::path repository, std::chrono::milliseconds period,
                   PollLog log);
  ~RepositoryPoller();  ///< Stop()
  RepositoryPoller(const RepositoryPoller&) = delete;
  RepositoryPoller& operator=(const RepositoryPoller&) = delete;

  /// Polls every period on a thread of its own until Stop().
  void Start();
  /// Ends the polling and waits for the loads it started.
  void Stop();
  /// One poll: what changed and stayed still since the last poll is loaded or unloaded (on their own threads).
  void PollOnce();

 private:
  struct Seen {
    std::string served;     // the digest of the files the served copy came from ("": none)
    std::string pending;    // the digest of the last poll, when it differs from `served`
    bool missing = false;   // the folder was gone at the last poll
    std::future<void> job;  // a load or unload under way
  };
  void Launch(const std::string& name, Seen& seen, const std::string& digest);

  InferenceCore& core_;
  std::filesystem::path repository_;
  std::chrono::milliseconds period_;
  PollLog log_;
  std::map<std::string, Seen> seen_;  // by model; touched by the polling thread only (or PollOnce's caller)
  DigestCache digests_;               // the hashes of files unchanged since the last poll; the same thread
  bool unreadable_ = false;           // the repository could not be read at the last poll
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace ortkit::serve
