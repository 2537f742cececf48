#include "ortkit/core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace ortkit {
namespace {

// A pipe whose ends close themselves; the child's ends are closed in the parent right after spawning.
struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) {
      read = fds[0];
      write = fds[1];
    }
  }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool ok() const { return read >= 0; }
  void CloseRead() {
    if (read >= 0) close(read);
    read = -1;
  }
  void CloseWrite() {
    if (write >= 0) close(write);
    write = -1;
  }
};

// Reads both streams until the child closes them or the deadline passes.
bool Pump(Pipe& out, Pipe& err, const ProcessOptions& options, ProcessOutput& result) {
  const bool limited = options.timeout.count() > 0;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::array<char, 65536> buffer;
  while (out.read >= 0 || err.read >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (limited && left.count() <= 0) return false;
    std::array<pollfd, 2> fds{pollfd{out.read, POLLIN, 0}, pollfd{err.read, POLLIN, 0}};
    if (poll(fds.data(), fds.size(), limited ? static_cast<int>(left.count()) : -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      Pipe& pipe = i == 0 ? out : err;
      std::string& text = i == 0 ? result.out : result.err;
      const ssize_t n = ::read(pipe.read, buffer.data(), buffer.size());
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        pipe.CloseRead();
        continue;
      }
      const std::size_t keep = std::min<std::size_t>(n, options.max_output - std::min(options.max_output, text.size()));
      text.append(buffer.data(), keep);
    }
  }
  return true;
}

// Waits for a child whose output is its own until it ends or the deadline passes.
bool Await(pid_t pid, const ProcessOptions& options, int& status) {
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  while (true) {
    const pid_t done = waitpid(pid, &status, options.timeout.count() > 0 ? WNOHANG : 0);
    if (done == pid) return true;
    if (done < 0 && errno != EINTR) return true;
    if (options.timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) return false;
    if (done == 0) usleep(20'000);
  }
}

// This process's environment with `overrides` (NAME=VALUE) set over it.
std::vector<std::string> Environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> entries(overrides);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    const bool overridden = std::any_of(overrides.begin(), overrides.end(),
                                        [&](const std::string& o) { return o.substr(0, o.find('=')) == name; });
    if (!overridden) entries.push_back(entry);
  }
  return entries;
}

}  // namespace

Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return MakeError(ErrorKind::kInvalidArgument, "no program to run");
  Pipe out, err;
  if (!out.ok() || !err.ok()) {
    return MakeError(ErrorKind::kIo, std::string("creating pipes: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!options.inherit_output) {
    posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> environment = Environment(options.environment);
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return MakeError(spawned == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                     "cannot run '" + argv[0] + "': " + std::strerror(spawned));
  }
  out.CloseWrite();
  err.CloseWrite();
  ProcessOutput result;
  int status = 0;
  if (options.inherit_output) {
    out.CloseRead();
    err.CloseRead();
    if (!Await(pid, options, status)) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  } else {
    if (!Pump(out, err, options, result)) {
      kill(pid, SIGKILL);
      result.timed_out = true;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace ortkit
