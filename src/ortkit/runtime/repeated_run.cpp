#include "ortkit/runtime/repeated_run.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ortkit/runtime/ort_handles.h"
#include "ortkit/runtime/run.h"

namespace ortkit {

struct RepeatedRun::State {
  Session* session = nullptr;
  std::vector<const char*> input_names;  ///< into the caller's tensors' names
  std::vector<Ort::Value> input_values;  ///< over the caller's tensors' data: no copy
  std::vector<std::string> output_name_storage;
  std::vector<const char*> output_names;
  std::vector<Ort::Value> first_outputs;  ///< from RunFirst: shapes and types for Bind
};

struct RepeatedRun::Binding::State {
  Session* session = nullptr;
  Ort::IoBinding binding;
  std::optional<Ort::Allocator> device;  ///< the session's allocator of device memory; outlives `outputs`
  std::vector<Ort::Value> outputs;
};

namespace {

template <typename Body>
Status Guarded(const Session& session, Body&& body) {
  try {
    body();
    return OkStatus();
  } catch (const Ort::Exception& e) {
    const ErrorKind kind =
        e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT ? ErrorKind::kInvalidArgument : ErrorKind::kRuntime;
    return MakeError(kind, fmt::format("running the model on {}: {}", session.config().provider, e.what()));
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime,
                     fmt::format("running the model on {}: {}", session.config().provider, e.what()));
  }
}

}  // namespace

RepeatedRun::RepeatedRun(std::unique_ptr<State> state) : state_(std::move(state)) {}
RepeatedRun::RepeatedRun(RepeatedRun&&) noexcept = default;
RepeatedRun& RepeatedRun::operator=(RepeatedRun&&) noexcept = default;
RepeatedRun::~RepeatedRun() = default;

RepeatedRun::Binding::Binding(std::unique_ptr<State> state) : state_(std::move(state)) {}
RepeatedRun::Binding::Binding(Binding&&) noexcept = default;
RepeatedRun::Binding& RepeatedRun::Binding::operator=(Binding&&) noexcept = default;
RepeatedRun::Binding::~Binding() = default;

Result<RepeatedRun> RepeatedRun::Prepare(Session& session, std::span<const NamedTensor> inputs) {
  ORTKIT_ASSIGN_OR_RETURN(auto input_specs, DescribeInputs(session));
  ORTKIT_RETURN_IF_ERROR(CheckInputs(inputs, input_specs));
  ORTKIT_ASSIGN_OR_RETURN(auto output_specs, DescribeOutputs(session));
  auto state = std::make_unique<State>();
  state->session = &session;
  try {
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    for (const auto& in : inputs) {
      state->input_values.push_back(ToOrtValue(in.tensor, memory, allocator));
      state->input_names.push_back(in.name.c_str());
    }
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kInvalidArgument, std::string("wrapping the inputs: ") + e.what());
  }
  for (auto& spec : output_specs) state->output_name_storage.push_back(std::move(spec.name));
  for (const auto& name : state->output_name_storage) state->output_names.push_back(name.c_str());
  return RepeatedRun(std::move(state));
}

Status RepeatedRun::RunFirst() {
  State& s = *state_;
  return Guarded(*s.session, [&] {
    s.first_outputs = OrtSession(*s.session)
                          .Run(Ort::RunOptions{nullptr}, s.input_names.data(), s.input_values.data(),
                               s.input_values.size(), s.output_names.data(), s.output_names.size());
  });
}

Status RepeatedRun::Run() {
  State& s = *state_;
  return Guarded(*s.session, [&] {
    OrtSession(*s.session)
        .Run(Ort::RunOptions{nullptr}, s.input_names.data(), s.input_values.data(), s.input_values.size(),
             s.output_names.data(), s.output_names.size());
  });
}

Result<RepeatedRun::Binding> RepeatedRun::Bind() {
  State& s = *state_;
  if (s.first_outputs.size() != s.output_names.size())
    return MakeError(ErrorKind::kInternal, "binding outputs before the first run");
  try {
    auto bound = std::make_unique<Binding::State>(
        Binding::State{s.session, Ort::IoBinding(OrtSession(*s.session)), std::nullopt, {}});
    // BindInput copies a host tensor to the device of the node that reads it once, here, not per run.
    for (std::size_t i = 0; i < s.input_values.size(); ++i)
      bound->binding.BindInput(s.input_names[i], s.input_values[i]);
    const ProviderInfo* provider = FindProvider(s.session->config().provider);
    const bool on_device = provider != nullptr && provider->device_memory;
    const Ort::MemoryInfo memory = on_device ? Ort::MemoryInfo("Cuda", OrtDeviceAllocator, 0, OrtMemTypeDefault)
                                             : Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    if (on_device) bound->device.emplace(OrtSession(*s.session), memory);
    Ort::AllocatorWithDefaultOptions host;
    bound->outputs.reserve(s.output_names.size());  // bound buffers must not move
    for (std::size_t i = 0; i < s.output_names.size(); ++i) {
      const Ort::Value& first = s.first_outputs[i];
      if (!first.IsTensor()) {
        bound->binding.BindOutput(s.output_names[i], memory);
        continue;
      }
      const auto info = first.GetTensorTypeAndShapeInfo();
      const std::vector<std::int64_t> shape = info.GetShape();
      OrtAllocator* allocator = bound->device ? static_cast<OrtAllocator*>(*bound->device) : host;
      bound->outputs.push_back(Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), info.GetElementType()));
      bound->binding.BindOutput(s.output_names[i], bound->outputs.back());
    }
    return Binding(std::move(bound));
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kRuntime, std::string("binding inputs and outputs: ") + e.what());
  }
}

bool RepeatedRun::Binding::OnDevice() const { return state_->device.has_value(); }

Status RepeatedRun::Binding::Run() {
  State& s = *state_;
  return Guarded(*s.session, [&] { OrtSession(*s.session).Run(Ort::RunOptions{nullptr}, s.binding); });
}

struct InPlaceOutputs::State {
  std::vector<Ort::Value> values;
};

InPlaceOutputs::InPlaceOutputs() : state_(std::make_unique<State>()) {}
InPlaceOutputs::InPlaceOutputs(InPlaceOutputs&&) noexcept = default;
InPlaceOutputs& InPlaceOutputs::operator=(InPlaceOutputs&&) noexcept = default;
InPlaceOutputs::~InPlaceOutputs() = default;

std::size_t InPlaceOutputs::size() const { return state_->values.size(); }

std::vector<std::int64_t> InPlaceOutputs::Shape(std::size_t output) const {
  return state_->values[output].GetTensorTypeAndShapeInfo().GetShape();
}

std::byte* InPlaceOutputs::Data(std::size_t output) {
  return static_cast<std::byte*>(state_->values[output].GetTensorMutableRawData());
}

Result<InPlaceOutputs> RunInPlace(Session& session, std::span<const char* const> input_names,
                                  std::span<const Tensor* const> inputs, std::span<const char* const> output_names) {
  InPlaceOutputs outputs;
  try {
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<Ort::Value> values;
    values.reserve(inputs.size());
    for (const Tensor* input : inputs) values.push_back(ToOrtValue(*input, memory, allocator));
    outputs.state_->values = OrtSession(session).Run(Ort::RunOptions{nullptr}, input_names.data(), values.data(),
                                                     values.size(), output_names.data(), output_names.size());
  } catch (const Ort::Exception& e) {
    return MakeError(e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT ? ErrorKind::kInvalidArgument : ErrorKind::kRuntime,
                     e.what());
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, e.what());
  }
  return outputs;
}

}  // namespace ortkit
