#pragma once
// A session run many times on the same inputs, as a benchmark runs it: the inputs are wrapped once,
// without a copy, so that each timed run does nothing but run; and, after the first run, each
// thread may get an IO binding whose outputs are allocated once, at the first run's shapes.

#include <memory>
#include <span>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

class RepeatedRun {
 public:
  /// One thread's IO binding: inputs bound to the wrapped tensors, outputs to buffers of the first
  /// run's shapes (a sequence or map output is bound to the CPU, allocated by each run).
  class Binding {
   public:
    Binding(Binding&&) noexcept;
    Binding& operator=(Binding&&) noexcept;
    ~Binding();
    /// One run into the bound buffers. Errors as RepeatedRun::Run's.
    Status Run();

   private:
    friend class RepeatedRun;
    struct State;
    explicit Binding(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
  };

  /// Checks `inputs` against the session's inputs and wraps them; `inputs` must outlive the run.
  static Result<RepeatedRun> Prepare(Session& session, std::span<const NamedTensor> inputs);
  RepeatedRun(RepeatedRun&&) noexcept;
  RepeatedRun& operator=(RepeatedRun&&) noexcept;
  ~RepeatedRun();

  /// The first run: its outputs' shapes are kept for Bind. Not to be called while other threads run.
  Status RunFirst();
  /// One run, outputs computed and dropped; safe from several threads at once. Fails with
  /// kInvalidArgument when ONNX Runtime rejects the inputs, else kRuntime, the message being
  /// "running the model on PROVIDER: " and the runtime's own.
  Status Run();
  /// An IO binding for one thread, after RunFirst.
  Result<Binding> Bind();

 private:
  struct State;
  explicit RepeatedRun(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ortkit
