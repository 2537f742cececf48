#pragma once
// Runs without copies, for the benchmark and the server. RepeatedRun: a session run many times on
// the same inputs, as a benchmark runs it: the inputs are wrapped once, so that each timed run does
// nothing but run; and, after the first run, each thread may get an IO binding whose outputs are
// allocated once, at the first run's shapes. RunInPlace: one run whose outputs stay in ONNX
// Runtime's own buffers, for a server to answer from or copy rows out of.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

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
    /// Whether the outputs are bound in the provider's device memory (CUDA, TensorRT): a run then copies
    /// nothing between host and device. The inputs are copied to the device once, when bound.
    bool OnDevice() const;

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
  /// An IO binding for one thread, after RunFirst: inputs bound once (on a GPU provider copied to the
  /// device there), outputs preallocated at the first run's shapes, in device memory on a GPU provider.
  Result<Binding> Bind();

 private:
  struct State;
  explicit RepeatedRun(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// The outputs of RunInPlace, in ONNX Runtime's own buffers: each output's shape and bytes (tensor
/// outputs only; the run asks for tensors).
class InPlaceOutputs {
 public:
  InPlaceOutputs();
  InPlaceOutputs(InPlaceOutputs&&) noexcept;
  InPlaceOutputs& operator=(InPlaceOutputs&&) noexcept;
  ~InPlaceOutputs();

  std::size_t size() const;
  std::vector<std::int64_t> Shape(std::size_t output) const;
  std::byte* Data(std::size_t output);

 private:
  friend Result<InPlaceOutputs> RunInPlace(Session&, std::span<const char* const>, std::span<const Tensor* const>,
                                           std::span<const char* const>);
  struct State;
  std::unique_ptr<State> state_;
};

/// Runs `session` on `inputs` (named `input_names`, wrapped without a copy) for the outputs named
/// `output_names`. Fails with kInvalidArgument when ONNX Runtime rejects the inputs, else kRuntime;
/// the message is the runtime's own.
Result<InPlaceOutputs> RunInPlace(Session& session, std::span<const char* const> input_names,
                                  std::span<const Tensor* const> inputs, std::span<const char* const> output_names);

}  // namespace ortkit
