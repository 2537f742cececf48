#include "ortkit/serve/served_model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/units.h"
#include "ortkit/inputs/shape_search.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/repeated_run.h"
#include "ortkit/serve/request_values.h"
#include "ortkit/serve/thread_name.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::serve {

/// A request between Submit and its answer. Owned jointly by the queue's slices and the worker
/// running them; `mutex` guards the fields below it, which slices of a split request running on
/// two instances both write.
struct PendingRequest {
  InferRequest request;
  InferCallback done;
  std::vector<const Tensor*> inputs;                   // in the model's input order, pointing into request.inputs
  std::vector<std::size_t> wanted;                     // model output indices to answer with
  std::vector<std::vector<std::int64_t>> batch_inner;  // per input: the shape below axis 0 in a batch (padded)
  std::int64_t rows = 1;
  std::uint64_t row_bytes = 0;  // of inputs per row in a batch (padded), or of all inputs when not batchable
  std::int64_t length = -1;     // along the bucketed dim; -1 without bucketing
  bool padded = false;
  TimePoint enqueued;
  std::atomic<bool> started{false};

  std::mutex mutex;
  std::vector<NamedTensor> outputs;  // allocated by the first finished slice
  std::int64_t rows_done = 0;
  bool answered = false;
};

namespace {

// The most output bytes a batch of several requests may hold for as long as the slowest of them
// takes to read its answer (see RunBatch); bert-tiny's 64 rows of [8, 128] floats are 256 KiB.
constexpr std::size_t kViewBatchBytes = std::size_t{1} << 20;

// The runs one request of many rows may be split into: beyond, its rows would hold the instances
// (and every request queued behind it) for as long as they like.
constexpr std::int64_t kMaxRunsPerRequest = 1024;

// An input without values costs nothing to send whatever its dimensions, but the model may still
// make outputs or loops of their sizes ([2^40, 0] summed over its second axis): its dimensions,
// zeros left out, may multiply to at most this (what 64 MiB of one-byte values could shape).
constexpr std::uint64_t kMaxEmptyInputExtent = std::uint64_t{64} << 20;

// A batch runs on the thread that queued it (an event loop that also answers health probes and
// reads other requests) only when batches as large ran this quickly before; the loop runs due
// batches for at most kRequesterTurn before it leaves the rest to the workers.
constexpr auto kQuickRun = std::chrono::milliseconds(2);
constexpr auto kRequesterTurn = std::chrono::milliseconds(2);

std::uint64_t SaturatingAdd(std::uint64_t a, std::uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }
std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

// The bytes of `count` elements of `type`, saturating.
std::uint64_t BytesOf(DataType type, std::uint64_t count) { return SaturatingMul(count, FindDataType(type)->size); }

// The product of `shape`'s dimensions with zeros counted as ones, saturating.
std::uint64_t ExtentOf(std::span<const std::int64_t> shape) {
  std::uint64_t extent = 1;
  for (std::int64_t d : shape) {
    extent = SaturatingMul(extent, d > 1 ? static_cast<std::uint64_t>(d) : 1);
  }
  return extent;
}

std::uint64_t ElementsOf(std::span<const std::int64_t> shape) {
  for (std::int64_t d : shape) {
    if (d == 0) return 0;
  }
  return ExtentOf(shape);
}

// Where row `row` of an output's bytes `data` (shaped `shape`, rows along axis 0, of `type`) starts.
std::byte* RowsOf(std::byte* data, const std::vector<std::int64_t>& shape, DataType type, std::int64_t row) {
  std::size_t row_bytes = FindDataType(type)->size;
  for (std::size_t d = 1; d < shape.size(); ++d) row_bytes *= static_cast<std::size_t>(shape[d]);
  return data + row_bytes * static_cast<std::size_t>(row);
}

std::int64_t MicrosSince(TimePoint start, TimePoint end) {
  return std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
}

std::vector<std::int64_t> ProtocolShape(const TensorSpec& spec) {
  std::vector<std::int64_t> shape;
  for (const auto& d : spec.dims) shape.push_back(d.fixed() ? d.value : -1);
  return shape;
}

std::string TypeName(DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  return info != nullptr ? std::string(info->protocol) : std::string(DataTypeName(type));
}

// Every combination of the warm-up sizes; one empty plan when none are configured.
std::vector<InputPlan> WarmupPlans(const WarmupConfig& warmup) {
  std::vector<InputPlan> plans(1);
  for (const auto& [dim, sizes] : warmup.dims) {
    std::vector<InputPlan> next;
    for (const auto& plan : plans) {
      for (std::int64_t size : sizes) {
        InputPlan p = plan;
        p.dims[dim] = size;
        next.push_back(std::move(p));
      }
    }
    plans = std::move(next);
  }
  return plans;
}

Error Invalid(std::string message) { return MakeError(ErrorKind::kInvalidArgument, std::move(message)); }

std::string NamesOf(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const auto& s : specs) names.push_back(s.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// `role`: "input" or "output". The protocol's BYTES (string tensors) is not served: the message
// says what the model must become instead.
Status CheckServable(const TensorSpec& spec, std::string_view role) {
  if (spec.is_tensor && spec.type != DataType::kString && FindDataType(spec.type) != nullptr) return OkStatus();
  const bool input = role == "input";
  std::string what;
  std::string instead;
  if (!spec.is_tensor) {
    what = "not a tensor (a sequence, map or optional)";
    instead = fmt::format("serve a model whose {}s are tensors", role);
  } else if (spec.type == DataType::kString) {
    what = fmt::format("a string tensor ({})", spec.Describe());
    instead = input
                  ? "tokenise or encode the text before the model (a tokenizer in the client or a preprocessing "
                    "step) and serve a model whose inputs are the numbers (token ids)"
                  : "serve a model whose outputs are numeric (labels as class indices, mapped to names in the client)";
  } else {
    what = fmt::format("of element type {}", DataTypeName(spec.type));
    instead =
        "convert the model to a datatype the protocol has (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32 "
        "or FP64)";
  }
  return Invalid(fmt::format("{} '{}' is {}, and ortkit serve handles numeric and boolean tensors only: {}", role,
                             spec.name, what, instead));
}

// The bytes the inputs of one warm-up shape take, and which input takes the most; UINT64_MAX when
// beyond counting.
struct WarmupSize {
  std::uint64_t total = 0;
  std::string largest;  // "'x' float32[8, 16]"
  std::uint64_t largest_bytes = 0;
};

Result<WarmupSize> SizeOfWarmup(const std::vector<TensorSpec>& inputs, const InputPlan& plan) {
  WarmupSize size;
  for (const auto& spec : inputs) {
    ORTKIT_ASSIGN_OR_RETURN(auto shape, ResolveShape(spec, plan));
    const auto count = ElementCountOf(shape);
    const std::uint64_t element = FindDataType(spec.type)->size;
    const bool huge = !count.ok() || static_cast<std::uint64_t>(*count) > UINT64_MAX / element;
    const std::uint64_t bytes = huge ? UINT64_MAX : static_cast<std::uint64_t>(*count) * element;
    if (bytes >= size.largest_bytes) {
      size.largest_bytes = bytes;
      size.largest = fmt::format("'{}' {}{}", spec.name, DataTypeName(spec.type), ShapeToString(shape));
    }
    size.total = bytes > UINT64_MAX - size.total ? UINT64_MAX : size.total + bytes;
  }
  return size;
}

// The synthesiser's own refusal names the flags of `run` and `bench` (--dim, --shape, --input); the
// server's sizes come from the configuration's warmup.dims, or from the model itself.
Status CheckWarmupSize(const std::vector<TensorSpec>& inputs, const InputPlan& plan) {
  auto sized = SizeOfWarmup(inputs, plan);
  if (!sized.ok()) return MakeError(sized.error().kind, "warm-up inputs: " + sized.error().message);
  const WarmupSize& size = *sized;
  if (size.total <= plan.max_bytes) return OkStatus();
  std::vector<std::string> dims;
  for (const auto& [dim, value] : plan.dims) dims.push_back(fmt::format("{}={}", dim, value));
  auto human = [](std::uint64_t bytes) {
    return bytes == UINT64_MAX ? std::string("more than 16 EiB") : HumanBytes(bytes);
  };
  const std::string advice =
      dims.empty() ? "the model's own fixed dimensions make its inputs this large; serve a model with smaller ones"
                   : "give smaller sizes in the configuration's warmup.dims (the --config file, or config.json in "
                     "the model repository)";
  return Invalid(
      fmt::format("warm-up inputs for {} would take {} (the largest, {}, {}), over ortkit's limit of {} "
                  "for made-up inputs: {}",
                  dims.empty() ? std::string("the default sizes") : fmt::format("{}", fmt::join(dims, ", ")),
                  human(size.total), size.largest, human(size.largest_bytes), HumanBytes(plan.max_bytes), advice));
}

// The input's datatype, rank and fixed dimensions against the model's.
Status CheckInputFits(const NamedTensor& in, const TensorSpec& spec) {
  if (in.tensor.type() != spec.type) {
    return Invalid(fmt::format("input '{}' has datatype {} but the model expects {}", in.name,
                               TypeName(in.tensor.type()), TypeName(spec.type)));
  }
  const auto& shape = in.tensor.shape();
  if (shape.size() != spec.dims.size()) {
    return Invalid(fmt::format("input '{}' has shape {} (rank {}) but the model expects rank {} ({})", in.name,
                               ShapeToString(shape), shape.size(), spec.dims.size(),
                               ShapeToString(ProtocolShape(spec))));
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (spec.dims[d].fixed() && spec.dims[d].value != shape[d]) {
      return Invalid(fmt::format("input '{}' has shape {} but the model expects {} (dimension {} must be {})", in.name,
                                 ShapeToString(shape), ShapeToString(ProtocolShape(spec)), d, spec.dims[d].value));
    }
  }
  if (in.tensor.element_count() == 0 && ExtentOf(shape) > kMaxEmptyInputExtent) {
    return Invalid(fmt::format(
        "input '{}' has shape {}: it holds no values, but its other dimensions multiply to more than {}, which the "
        "model might still loop over or make outputs of; send at most {} along them",
        in.name, ShapeToString(shape), kMaxEmptyInputExtent, kMaxEmptyInputExtent));
  }
  return OkStatus();
}

// What the model file says about its inputs' values (token ids, masks), for synthetic inputs; none
// when the file does not load here (the session has loaded it already).
std::map<std::string, ValueHint> InputHints(const std::filesystem::path& path) {
  ModelLoad load = LoadModelFile(path);
  if (!load.model) return {};
  return AnalyzeInputValues(*load.model->proto);
}

// Batching needs every input and output to carry rows along a dynamic axis 0: why the first that
// does not cannot, or empty when all do.
std::string MissingRowAxis(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs) {
  for (const auto* list : {&inputs, &outputs}) {
    for (const auto& spec : *list) {
      if (spec.dims.empty() || spec.dims[0].fixed()) {
        return fmt::format("'{}' is {} (no dynamic first dimension)", spec.name, spec.Describe());
      }
    }
  }
  return {};
}

// Inputs of 2 rows: every symbolic first dimension 2, and an unnamed one given as a whole shape.
InputPlan TwoRowPlan(const std::vector<TensorSpec>& inputs) {
  InputPlan two;
  for (const auto& in : inputs) {
    if (!in.dims[0].symbol.empty()) two.dims[in.dims[0].symbol] = 2;
  }
  for (const auto& in : inputs) {
    if (!in.dims[0].symbol.empty()) continue;
    auto shape = ResolveShape(in, two);
    if (shape.ok()) {
      (*shape)[0] = 2;
      two.shapes[in.name] = *shape;
    }
  }
  return two;
}

// Runs inputs of 2 rows: why the outputs do not come back with 2 rows each, or empty when they do.
// Fails only when the inputs cannot be made.
Result<std::string> TwoRowsRefusal(Session& session, const std::vector<TensorSpec>& inputs,
                                   const std::map<std::string, ValueHint>& hints) {
  auto synthetic = SynthesizeInputs(inputs, hints, TwoRowPlan(inputs));
  if (!synthetic.ok())
    return MakeError(synthetic.error().kind, "making inputs of 2 rows: " + synthetic.error().message);
  auto result = RunSession(session, RunRequest{*synthetic, {}});
  if (!result.ok()) return "running 2 rows failed: " + result.error().message;
  for (const auto& out : *result) {
    if (out.tensor.shape().empty() || out.tensor.shape()[0] != 2) {
      return fmt::format("output '{}' is {} for inputs of 2 rows", out.name, out.tensor.Describe());
    }
  }
  return std::string();
}

// Whether a batch of several requests answers by views of its outputs (see RunBatch): while they
// hold at most kViewBatchBytes.
bool SmallEnoughToView(const std::vector<std::vector<std::int64_t>>& shapes, const std::vector<TensorSpec>& outputs) {
  std::size_t bytes = 0;
  for (std::size_t o = 0; o < shapes.size() && bytes <= kViewBatchBytes; ++o) {
    auto count = ElementCountOf(shapes[o]);
    bytes += count.ok() ? static_cast<std::size_t>(*count) * FindDataType(outputs[o].type)->size : kViewBatchBytes + 1;
  }
  return bytes <= kViewBatchBytes;
}

}  // namespace

/// A batch's rows, taken from its slices before the run.
struct BatchRows {
  std::int64_t total = 0;
  std::uint64_t bytes = 0;  // of inputs
  bool padded = false;      // some request is shorter than the bucket: the batch must start zeroed
  bool direct = false;      // one request taken whole and unpadded runs on its own tensors: no copy
};

/// The inputs of one run: the requests' own tensors, or batched copies of their rows.
struct BatchInputs {
  std::vector<Tensor> batched;         // reserved up front: `sources` point into it
  std::vector<const Tensor*> sources;  // in the model's input order
};

/// A run's outputs and how its requests are answered from them.
struct BatchOutputs {
  std::shared_ptr<InPlaceOutputs> results;  // shared with the views answered from it
  std::vector<std::vector<std::int64_t>> shapes;
  bool views = false;  // requests taken whole are answered by views of `results`
};

ServedModel::~ServedModel() { Stop(); }

Status ServedModel::Load(Runtime& runtime, int intra_op_threads, std::vector<std::string>* notes) {
  ORTKIT_RETURN_IF_ERROR(CreateInstances(runtime, intra_op_threads));
  ORTKIT_RETURN_IF_ERROR(DescribeTensors());
  const std::map<std::string, ValueHint> hints = InputHints(source_.path);
  ORTKIT_RETURN_IF_ERROR(DecideBatching(hints, notes));
  ORTKIT_RETURN_IF_ERROR(DecideBucketing(hints, notes));
  FindTies(hints, notes);
  ORTKIT_RETURN_IF_ERROR(WarmUp(hints));
  StartWorkers();
  ready_ = true;
  return OkStatus();
}

Status ServedModel::CreateInstances(Runtime& runtime, int intra_op_threads) {
  SessionConfig session_config = source_.config.ToSessionConfig();
  if (session_config.intra_op_threads == 0) session_config.intra_op_threads = intra_op_threads;
  for (int i = 0; i < source_.config.instances; ++i) {
    ORTKIT_ASSIGN_OR_RETURN(auto session, Session::Create(runtime, source_.path, session_config));
    instances_.push_back(std::move(session));
  }
  return OkStatus();
}

Status ServedModel::DescribeTensors() {
  Session& first = *instances_.front();
  ORTKIT_ASSIGN_OR_RETURN(inputs_, DescribeInputs(first));
  ORTKIT_ASSIGN_OR_RETURN(outputs_, DescribeOutputs(first));
  for (const auto* list : {&inputs_, &outputs_}) {
    for (const auto& spec : *list) ORTKIT_RETURN_IF_ERROR(CheckServable(spec, list == &inputs_ ? "input" : "output"));
  }
  for (const auto& s : inputs_) input_names_.push_back(s.name.c_str());
  for (const auto& s : outputs_) output_names_.push_back(s.name.c_str());
  std::map<std::string, std::size_t> symbols;  // symbol -> its index in symbol_uses_
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    for (std::size_t d = 0; d < inputs_[i].dims.size(); ++d) {
      const DimSpec& dim = inputs_[i].dims[d];
      if (dim.fixed() || dim.symbol.empty()) continue;
      auto [it, added] = symbols.emplace(dim.symbol, symbol_uses_.size());
      if (added) symbol_uses_.emplace_back();
      symbol_uses_[it->second].push_back({i, d});
    }
  }
  for (const auto& spec : outputs_) {
    auto& dims = output_dims_.emplace_back();
    for (const DimSpec& dim : spec.dims) {
      auto symbol = dim.fixed() || dim.symbol.empty() ? symbols.end() : symbols.find(dim.symbol);
      dims.push_back(
          {dim.fixed() ? dim.value : -1, symbol == symbols.end() ? -1 : static_cast<std::ptrdiff_t>(symbol->second)});
    }
  }
  metadata_.name = source_.name;
  metadata_.versions = {version_};
  for (const auto& s : inputs_) metadata_.inputs.push_back({s.name, s.type, ProtocolShape(s)});
  for (const auto& s : outputs_) metadata_.outputs.push_back({s.name, s.type, ProtocolShape(s)});
  return OkStatus();
}

Status ServedModel::DecideBatching(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes) {
  std::string not_batchable = MissingRowAxis(inputs_, outputs_);
  if (not_batchable.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(not_batchable, TwoRowsRefusal(*instances_.front(), inputs_, hints));
  }
  batchable_ = not_batchable.empty();
  BatchingConfig& batching = source_.config.batching;
  if (!batchable_ && batching.EffectiveMaxBatchSize() > 0) {
    notes->push_back(fmt::format("model '{}': batching off: {}", source_.name, not_batchable));
    batching.enabled = false;
  }
  return OkStatus();
}

Status ServedModel::DecideBucketing(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes) {
  ModelConfig& config = source_.config;
  if (!config.bucketing.enabled) return OkStatus();
  if (!batchable_ || config.batching.EffectiveMaxBatchSize() == 0) {
    notes->push_back(fmt::format("model '{}': bucketing off: it only helps requests share a batch, and batching is off",
                                 source_.name));
    config.bucketing.enabled = false;
    return OkStatus();
  }
  ORTKIT_ASSIGN_OR_RETURN(bucket_plan_, PlanBucketing(config.bucketing, inputs_, outputs_));
  ORTKIT_RETURN_IF_ERROR(VerifyPaddingInvariance(*instances_.front(), inputs_, outputs_, hints, &bucket_plan_));
  config.bucketing.mask_input = bucket_plan_.mask_input;
  bucketing_ = true;
  return OkStatus();
}

// Axes that must be equal though their names differ (tf2onnx names each input's batch apart): a request
// that sizes them apart is refused up front with the reason, not by the runtime's message from inside the graph.
// Only models with two dynamic axes of different names can have any; a few runs at typical sizes.
void ServedModel::FindTies(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes) {
  const std::vector<TensorSpec> named = NameUnnamedAxes(inputs_);
  std::set<std::string> symbols;
  for (const auto& spec : named) {
    for (const auto& d : spec.dims) {
      if (!d.fixed()) symbols.insert(d.symbol);
    }
  }
  if (symbols.size() < 2) return;
  for (const auto& group : FindTiedAxes(*instances_.front(), inputs_, hints)) {
    auto& uses = tied_uses_.emplace_back();
    std::vector<std::string> described;
    for (std::size_t i = 0; i < named.size(); ++i) {
      for (std::size_t d = 0; d < named[i].dims.size(); ++d) {
        if (named[i].dims[d].fixed() || std::find(group.begin(), group.end(), named[i].dims[d].symbol) == group.end())
          continue;
        uses.push_back({i, d});
        described.push_back(fmt::format("input '{}' axis {}", inputs_[i].name, d));
      }
    }
    notes->push_back(
        fmt::format("model '{}': {} must be equal (it runs only at equal sizes): requests that size "
                    "them apart are refused",
                    source_.name, fmt::join(described, " and ")));
  }
}

// Every instance on every configured shape, so that first requests do not pay for allocations and
// kernel selection.
Status ServedModel::WarmUp(const std::map<std::string, ValueHint>& hints) {
  for (const auto& plan : WarmupPlans(source_.config.warmup)) {
    ORTKIT_RETURN_IF_ERROR(CheckWarmupSize(inputs_, plan));
    auto synthetic = SynthesizeInputs(inputs_, hints, plan);
    if (!synthetic.ok()) return MakeError(synthetic.error().kind, "warm-up inputs: " + synthetic.error().message);
    std::uint64_t bytes = 0;
    for (const auto& input : *synthetic) bytes = SaturatingAdd(bytes, input.tensor.byte_size());
    for (auto& instance : instances_) {
      const TimePoint start = Clock::now();
      auto result = RunSession(*instance, RunRequest{*synthetic, {}});
      if (!result.ok()) return MakeError(result.error().kind, "warm-up run: " + result.error().message);
      // An instance's first runs pay for allocations and kernel choices: only quick ones teach.
      const Clock::duration took = Clock::now() - start;
      if (took <= kQuickRun) NoteRunTime(bytes, took);
    }
  }
  return OkStatus();
}

void ServedModel::StartWorkers() {
  const BatchingConfig& batching = source_.config.batching;
  BatchPolicy policy;
  policy.max_batch_size = batchable_ ? batching.EffectiveMaxBatchSize() : 0;
  policy.max_queue_delay = std::chrono::microseconds(batching.max_queue_delay_us);
  policy.preferred_batch_sizes = batching.preferred_batch_sizes;
  queue_ = std::make_unique<Queue>(policy, batching.max_queue_size, static_cast<int>(instances_.size()));
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    workers_.emplace_back([this, i] {
      NameThisThread(fmt::format("ortkit-{}-{}", i, source_.name));
      Work();
    });
  }
}

Status ServedModel::Validate(const InferRequest& request, PendingRequest* p) const {
  ORTKIT_RETURN_IF_ERROR(MatchInputs(request, p));
  ORTKIT_RETURN_IF_ERROR(CheckSymbolSizes(*p));
  if (batchable_) ORTKIT_RETURN_IF_ERROR(CountRows(p));
  ORTKIT_RETURN_IF_ERROR(MatchOutputs(request, p));
  ORTKIT_RETURN_IF_ERROR(CheckPlannedAnswer(*p));
  ORTKIT_RETURN_IF_ERROR(CheckScheduling(request));
  PlanBatchShapes(p);
  return OkStatus();
}

Status ServedModel::MatchInputs(const InferRequest& request, PendingRequest* p) const {
  p->inputs.assign(inputs_.size(), nullptr);
  for (const auto& in : request.inputs) {
    auto it = std::find_if(inputs_.begin(), inputs_.end(), [&](const TensorSpec& s) { return s.name == in.name; });
    if (it == inputs_.end()) {
      return Invalid(fmt::format("model '{}' has no input named '{}'; its inputs are: {}", source_.name, in.name,
                                 NamesOf(inputs_)));
    }
    const std::size_t index = it - inputs_.begin();
    if (p->inputs[index] != nullptr) return Invalid(fmt::format("input '{}' is given twice", in.name));
    ORTKIT_RETURN_IF_ERROR(CheckInputFits(in, *it));
    p->inputs[index] = &in.tensor;
  }
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    if (p->inputs[i] == nullptr) {
      return Invalid(fmt::format("input '{}' ({} {}) is missing", inputs_[i].name, TypeName(inputs_[i].type),
                                 ShapeToString(ProtocolShape(inputs_[i]))));
    }
  }
  return OkStatus();
}

Status ServedModel::CheckSymbolSizes(const PendingRequest& p) const {
  for (const auto& uses : symbol_uses_) {  // every input is present and of the model's rank by now
    const DimUse& first = uses.front();
    const std::int64_t size = p.inputs[first.input]->shape()[first.axis];
    for (const DimUse& use : uses) {
      const std::int64_t other = p.inputs[use.input]->shape()[use.axis];
      if (other != size) {
        return Invalid(fmt::format("dimension '{}' is {} in input '{}' but {} in input '{}'",
                                   inputs_[first.input].dims[first.axis].symbol, size, inputs_[first.input].name, other,
                                   inputs_[use.input].name));
      }
    }
  }
  for (const auto& uses : tied_uses_) {
    const DimUse& first = uses.front();
    const std::int64_t size = p.inputs[first.input]->shape()[first.axis];
    for (const DimUse& use : uses) {
      const std::int64_t other = p.inputs[use.input]->shape()[use.axis];
      if (other != size) {
        return Invalid(
            fmt::format("input '{}' axis {} is {} but input '{}' axis {} is {}: the model runs only when "
                        "they are equal",
                        inputs_[first.input].name, first.axis, size, inputs_[use.input].name, use.axis, other));
      }
    }
  }
  return OkStatus();
}

Status ServedModel::CountRows(PendingRequest* p) const {
  p->rows = p->inputs[0]->shape()[0];
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    if (p->inputs[i]->shape()[0] != p->rows) {
      return Invalid(fmt::format("input '{}' has {} rows (first dimension) but input '{}' has {}", inputs_[i].name,
                                 p->inputs[i]->shape()[0], inputs_[0].name, p->rows));
    }
  }
  if (p->rows < 1) {
    return Invalid(
        fmt::format("input '{}' has no rows (shape {})", inputs_[0].name, ShapeToString(p->inputs[0]->shape())));
  }
  const int per_run = source_.config.batching.EffectiveMaxBatchSize();
  if (per_run > 0 && p->rows > kMaxRunsPerRequest * per_run) {
    return Invalid(fmt::format(
        "input '{}' has {} rows: model '{}' runs at most {} rows at a time (batching.max_batch_size) and one "
        "request may take at most {} runs, so send at most {} rows per request",
        inputs_[0].name, p->rows, source_.name, per_run, kMaxRunsPerRequest, kMaxRunsPerRequest * per_run));
  }
  return OkStatus();
}

Status ServedModel::MatchOutputs(const InferRequest& request, PendingRequest* p) const {
  p->wanted.reserve(request.outputs.empty() ? outputs_.size() : std::min(request.outputs.size(), outputs_.size()));
  std::vector<bool> named(outputs_.size(), false);
  for (const auto& name : request.outputs) {
    auto it = std::find_if(outputs_.begin(), outputs_.end(), [&](const TensorSpec& s) { return s.name == name; });
    if (it == outputs_.end()) {
      return Invalid(fmt::format("model '{}' has no output named '{}'; its outputs are: {}", source_.name, name,
                                 NamesOf(outputs_)));
    }
    // Each mention would be answered with a copy of the output: a few bytes naming one output a
    // hundred thousand times would ask for gigabytes.
    if (named[it - outputs_.begin()]) {
      return OutputNamedTwice(name);
    }
    named[it - outputs_.begin()] = true;
    p->wanted.push_back(it - outputs_.begin());
  }
  if (request.outputs.empty()) {
    for (std::size_t o = 0; o < outputs_.size(); ++o) p->wanted.push_back(o);
  }
  return OkStatus();
}

Status ServedModel::CheckScheduling(const InferRequest& request) const {
  const int levels = source_.config.batching.priority_levels;
  if (request.priority < 0 || request.priority > levels) {
    return Invalid(
        fmt::format("priority {} is out of range: model '{}' has priority levels 1 (most urgent) to {}, "
                    "0 meaning the lowest",
                    request.priority, source_.name, levels));
  }
  if (request.timeout_us < 0) {
    return Invalid(
        fmt::format("timeout {} is negative: give the queue deadline in microseconds, or 0 for the "
                    "model's own (batching.timeout_us)",
                    request.timeout_us));
  }
  if (request.timeout_us > kMaxTimeoutUs) {
    return Invalid(fmt::format(
        "timeout {} is out of range: give the queue deadline in microseconds, 1 to {} (an hour), or 0 for the "
        "model's own (batching.timeout_us)",
        request.timeout_us, kMaxTimeoutUs));
  }
  return OkStatus();
}

Status ServedModel::CheckPlannedAnswer(const PendingRequest& p) const {
  std::vector<std::vector<std::int64_t>> shapes;
  shapes.reserve(p.wanted.size());
  for (std::size_t o : p.wanted) {
    std::vector<std::int64_t>& shape = shapes.emplace_back();
    for (std::size_t d = 0; d < output_dims_[o].size(); ++d) {
      const OutputDim& dim = output_dims_[o][d];
      if (dim.fixed >= 0) {
        shape.push_back(dim.fixed);
      } else if (dim.symbol >= 0) {
        const DimUse& use = symbol_uses_[dim.symbol].front();
        shape.push_back(p.inputs[use.input]->shape()[use.axis]);
      } else if (d == 0 && batchable_) {
        shape.push_back(p.rows);
      } else {
        shape.clear();  // known only once it has run: checked then
        break;
      }
    }
    // An unknown dimension makes the output's size unknown, unless another one is 0.
    if (shape.size() != output_dims_[o].size()) shape = {0};
  }
  return CheckAnswerSize(p, shapes);
}

Status ServedModel::CheckAnswerSize(const PendingRequest& p,
                                    const std::vector<std::vector<std::int64_t>>& shapes) const {
  std::uint64_t total = 0;
  std::size_t largest = 0;
  std::uint64_t largest_cost = 0;
  for (std::size_t k = 0; k < p.wanted.size(); ++k) {
    const TensorSpec& spec = outputs_[p.wanted[k]];
    const std::uint64_t cost = p.request.answer_cost ? p.request.answer_cost(spec.name, spec.type, shapes[k])
                                                     : BytesOf(spec.type, ElementsOf(shapes[k]));
    if (cost >= largest_cost) largest = k, largest_cost = cost;
    total = SaturatingAdd(total, cost);
  }
  if (total <= limits_.max_answer_bytes) return OkStatus();
  const TensorSpec& spec = outputs_[p.wanted[largest]];
  const std::uint64_t values = BytesOf(spec.type, ElementsOf(shapes[largest]));
  const auto human = [](std::uint64_t bytes) {
    return bytes == UINT64_MAX ? std::string("more than 16 EiB") : HumanBytes(bytes);
  };
  return Invalid(fmt::format(
      "the answer would take {} (output '{}' {}{} {}{}), over the server's limit of {} per answer (--max-answer-mb): "
      "ask for fewer outputs or a smaller input{}",
      human(total), spec.name, TypeName(spec.type), ShapeToString(shapes[largest]), human(largest_cost),
      largest_cost > values ? fmt::format(" as text, its values {}", human(values)) : "",
      HumanBytes(limits_.max_answer_bytes), largest_cost > values ? ", or for binary data (the values' bytes)" : ""));
}

void ServedModel::PlanBatchShapes(PendingRequest* p) const {
  p->batch_inner.reserve(inputs_.size());
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const auto& shape = p->inputs[i]->shape();
    p->batch_inner.emplace_back(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
  }
  if (bucketing_) {
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const int axis = bucket_plan_.input_axis[i];
      if (axis < 0) continue;
      p->length = p->inputs[i]->shape()[axis];
      const std::int64_t padded = bucket_plan_.config.BucketFor(p->length);
      p->padded = p->padded || padded != p->length;
      p->batch_inner[i][axis - 1] = padded;
    }
  }
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const std::uint64_t bytes =
        batchable_ ? BytesOf(inputs_[i].type, ElementsOf(p->batch_inner[i])) : p->inputs[i]->byte_size();
    p->row_bytes = SaturatingAdd(p->row_bytes, bytes);
  }
}

void ServedModel::Submit(InferRequest request, InferCallback done, Dispatch dispatch) {
  auto pending = std::make_shared<PendingRequest>();
  pending->enqueued = Clock::now();
  pending->request = std::move(request);
  pending->done = std::move(done);
  if (!ready_ || stopped_) {
    Fail(*pending, MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not ready", source_.name)));
    return;
  }
  Status valid = Validate(pending->request, pending.get());
  if (!valid.ok()) {
    Fail(*pending, valid.error());
    return;
  }
  QueueEntry entry;
  entry.rows_left = pending->rows;
  entry.enqueued = pending->enqueued;
  const std::int64_t timeout_us =
      pending->request.timeout_us > 0 ? pending->request.timeout_us : source_.config.batching.timeout_us;
  if (timeout_us > 0) entry.deadline = DeadlineAfter(entry.enqueued, std::chrono::microseconds(timeout_us));
  const int levels = source_.config.batching.priority_levels;
  entry.priority = pending->request.priority == 0 ? levels - 1 : static_cast<int>(pending->request.priority - 1);
  if (batchable_) {
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      entry.shape_key.append(reinterpret_cast<const char*>(pending->batch_inner[i].data()),
                             pending->batch_inner[i].size() * sizeof(std::int64_t));
      entry.shape_key.push_back('|');
    }
  }
  entry.row_bytes = pending->row_bytes;
  // kLater: the caller runs RunQueued() next; a worker is woken only for what it leaves.
  Status queued = queue_->Enqueue(std::move(entry), pending, /*wake_worker=*/dispatch == Dispatch::kWorker);
  if (!queued.ok()) {
    metrics_.rejected.fetch_add(1, std::memory_order_relaxed);
    Fail(*pending, queued.error());
  }
}

void ServedModel::RunQueued() {
  if (!queue_) return;
  Queue::Batch batch;
  const TimePoint turn_ends = Clock::now() + kRequesterTurn;
  while (queue_->TryTake(&batch, io_run_bytes_.load(std::memory_order_relaxed))) {
    Execute(batch);
    const bool turn_over = Clock::now() >= turn_ends;
    queue_->Release(&batch, /*wake_worker=*/turn_over);
    if (turn_over) return;
  }
}

void ServedModel::Fail(PendingRequest& pending, const Error& error) {
  {
    std::lock_guard lock(pending.mutex);
    if (pending.answered) return;
    pending.answered = true;
  }
  metrics_.request_failure.fetch_add(1, std::memory_order_relaxed);
  metrics_.request_us.Observe(MicrosSince(pending.enqueued, Clock::now()));
  pending.done(error);
}

void ServedModel::NoteRunTime(std::uint64_t bytes, Clock::duration took) {
  // Instances racing here only move the bound between two runs' sizes: it picks a thread, nothing more.
  const std::uint64_t bound = io_run_bytes_.load(std::memory_order_relaxed);
  if (took <= kQuickRun && bytes > bound) io_run_bytes_.store(bytes, std::memory_order_relaxed);
  if (took > kQuickRun && bytes <= bound) io_run_bytes_.store(bytes / 2, std::memory_order_relaxed);
}

void ServedModel::Work() {
  Queue::Batch batch;
  while (queue_->Next(&batch)) Execute(batch);
}

void ServedModel::Execute(Queue::Batch& batch) {
  for (auto& p : batch.expired) {
    metrics_.timed_out.fetch_add(1, std::memory_order_relaxed);
    Fail(*p, MakeError(ErrorKind::kUnavailable,
                       fmt::format("the request waited {} us in model '{}''s queue, past its timeout",
                                   MicrosSince(p->enqueued, Clock::now()), source_.name)));
  }
  batch.expired.clear();
  if (!batch.slices.empty()) RunBatch(*instances_[batch.instance], batch.slices);
  // Drop the requests now: their answers are sent, and a worker keeps its batch until the next one.
  batch.slices.clear();
}

// Requests taken whole are answered from the runtime's own outputs, without a copy: their views
// share the outputs until the last answer is written. Always for a batch of one whole request (no
// other request's bytes are pinned); for a batch of several only while its outputs are small, so
// that a slow client pins at most kViewBatchBytes; larger batches copy each request's rows out.
void ServedModel::RunBatch(Session& session, std::vector<Queue::Slice>& slices) {
  const TimePoint start = Clock::now();
  const BatchRows rows = TakeRows(slices, start);
  Result<InPlaceOutputs> ran = RunRows(session, slices, rows);
  const TimePoint end = Clock::now();
  NoteRunTime(rows.bytes, end - start);
  metrics_.execution_count.fetch_add(1, std::memory_order_relaxed);
  metrics_.inference_count.fetch_add(static_cast<std::uint64_t>(rows.total), std::memory_order_relaxed);
  metrics_.compute_us.Observe(MicrosSince(start, end));
  Result<BatchOutputs> outputs = ran.ok() ? CollectOutputs(std::move(ran).value(), rows) : ran.error();
  if (!outputs.ok()) {
    for (auto& s : slices) Fail(*s.payload, outputs.error());
    return;
  }
  std::int64_t row = 0;  // each slice's first row in the batch
  for (auto& s : slices) {
    AnswerSlice(s, row, *outputs);
    row += s.rows;
  }
}

BatchRows ServedModel::TakeRows(const std::vector<Queue::Slice>& slices, TimePoint start) {
  BatchRows rows;
  for (const auto& s : slices) {
    rows.total += s.rows;
    rows.bytes = SaturatingAdd(rows.bytes, SaturatingMul(static_cast<std::uint64_t>(s.rows), s.payload->row_bytes));
    rows.padded = rows.padded || s.payload->padded;
    if (!s.payload->started.exchange(true)) metrics_.queue_us.Observe(MicrosSince(s.payload->enqueued, start));
  }
  const PendingRequest& first = *slices.front().payload;
  rows.direct = slices.size() == 1 && slices.front().rows == first.rows && !first.padded;
  return rows;
}

Result<InPlaceOutputs> ServedModel::RunRows(Session& session, const std::vector<Queue::Slice>& slices,
                                            const BatchRows& rows) const {
  BatchInputs inputs;
  ORTKIT_RETURN_IF_ERROR(AssembleInputs(slices, rows, &inputs));
  auto ran = RunInPlace(session, input_names_, inputs.sources, output_names_);
  if (!ran.ok()) {
    return MakeError(ErrorKind::kRuntime,
                     fmt::format("model '{}' failed to run: {}", source_.name, ran.error().message));
  }
  return ran;
}

Status ServedModel::AssembleInputs(const std::vector<Queue::Slice>& slices, const BatchRows& rows,
                                   BatchInputs* inputs) const {
  const PendingRequest& first = *slices.front().payload;
  inputs->batched.reserve(inputs_.size());
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const Tensor* source = first.inputs[i];
    if (rows.direct) {
      inputs->sources.push_back(source);
      continue;
    }
    std::vector<std::int64_t> shape{rows.total};
    shape.insert(shape.end(), first.batch_inner[i].begin(), first.batch_inner[i].end());
    auto tensor = rows.padded ? Tensor::Zeros(source->type(), shape) : Tensor::Allocate(source->type(), shape);
    if (!tensor.ok()) {
      return MakeError(ErrorKind::kInternal,
                       fmt::format("model '{}': assembling the batch: {}", source_.name, tensor.error().message));
    }
    const std::size_t element = FindDataType(source->type())->size;
    std::int64_t row = 0;
    for (const auto& s : slices) {
      const Tensor& t = *s.payload->inputs[i];
      CopyRows(t.data(), t.shape(), s.row_begin, tensor->data(), tensor->shape(), row, s.rows, element);
      row += s.rows;
    }
    inputs->batched.push_back(std::move(tensor).value());
    inputs->sources.push_back(&inputs->batched.back());
  }
  return OkStatus();
}

Result<BatchOutputs> ServedModel::CollectOutputs(InPlaceOutputs outputs, const BatchRows& rows) const {
  BatchOutputs batch;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    batch.shapes.push_back(outputs.Shape(o));
    if (batchable_ && (batch.shapes.back().empty() || batch.shapes.back()[0] != rows.total)) {
      return MakeError(ErrorKind::kRuntime,
                       fmt::format("output '{}' has shape {} for a batch of {} rows", outputs_[o].name,
                                   ShapeToString(batch.shapes.back()), rows.total));
    }
  }
  batch.views = rows.direct || (batchable_ && SmallEnoughToView(batch.shapes, outputs_));
  batch.results = std::make_shared<InPlaceOutputs>(std::move(outputs));
  return batch;
}

void ServedModel::AnswerSlice(const Queue::Slice& slice, std::int64_t at, const BatchOutputs& batch) {
  PendingRequest& p = *slice.payload;
  Result<bool> complete = WriteSlice(p, slice, at, batch);
  if (!complete.ok()) return Fail(p, complete.error());
  if (!*complete) return;
  metrics_.request_success.fetch_add(1, std::memory_order_relaxed);
  metrics_.request_us.Observe(MicrosSince(p.enqueued, Clock::now()));
  InferResponse response{source_.name, version_, p.request.id, std::move(p.outputs)};
  p.done(std::move(response));
}

Result<bool> ServedModel::WriteSlice(PendingRequest& p, const Queue::Slice& slice, std::int64_t at,
                                     const BatchOutputs& batch) const {
  std::lock_guard lock(p.mutex);
  if (p.answered) return false;
  if (p.outputs.empty()) ORTKIT_RETURN_IF_ERROR(AllocateAnswer(p, slice, at, batch));
  for (std::size_t k = 0; k < p.wanted.size(); ++k) {
    const std::size_t o = p.wanted[k];
    Tensor& dst = p.outputs[k].tensor;
    if (dst.is_view()) continue;  // made by AllocateAnswer, of this slice's rows: a view is only of a whole request
    const std::byte* src = batch.results->Data(o);
    if (batchable_) {
      CopyRows(src, batch.shapes[o], at, dst.data(), dst.shape(), slice.row_begin, slice.rows,
               FindDataType(dst.type())->size);
    } else {
      std::memcpy(dst.data(), src, dst.byte_size());
    }
  }
  p.rows_done += slice.rows;
  if (p.rows_done != p.rows) return false;
  p.answered = true;
  return true;
}

Status ServedModel::AllocateAnswer(PendingRequest& p, const Queue::Slice& slice, std::int64_t at,
                                   const BatchOutputs& batch) const {
  const bool whole = slice.row_begin == 0 && slice.rows == p.rows;
  const std::size_t inner = batchable_ ? 1 : 0;  // the first axis below the rows
  std::vector<std::vector<std::int64_t>> shapes;
  shapes.reserve(p.wanted.size());
  for (std::size_t o : p.wanted) {
    std::vector<std::int64_t>& shape = shapes.emplace_back(batch.shapes[o]);
    if (batchable_) shape[0] = p.rows;
    if (bucketing_ && bucket_plan_.output_axis[o] > 0 && p.length >= 0) {
      shape[bucket_plan_.output_axis[o]] = std::min(shape[bucket_plan_.output_axis[o]], p.length);
    }
  }
  ORTKIT_RETURN_IF_ERROR(CheckAnswerSize(p, shapes));
  for (std::size_t k = 0; k < p.wanted.size(); ++k) {
    const std::size_t o = p.wanted[k];
    const std::vector<std::int64_t>& batch_shape = batch.shapes[o];
    std::vector<std::int64_t>& shape = shapes[k];
    // A view needs the request's rows to be one contiguous run of the output: not cut back to a length.
    const bool view = batch.views && whole && outputs_[o].type != DataType::kString &&
                      std::equal(shape.begin() + inner, shape.end(), batch_shape.begin() + inner, batch_shape.end());
    auto tensor =
        view ? Tensor::View(outputs_[o].type, shape,
                            std::shared_ptr<std::byte>(
                                batch.results, RowsOf(batch.results->Data(o), batch_shape, outputs_[o].type, at)))
             : Tensor::Allocate(outputs_[o].type, shape);
    if (!tensor.ok()) return tensor.error();
    p.outputs.push_back({outputs_[o].name, std::move(tensor).value()});
  }
  return OkStatus();
}

void ServedModel::Stop() {
  if (stopped_.exchange(true)) return;
  if (queue_) queue_->Stop();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  ready_ = false;
}

MetricsSample ServedModel::Sample() const {
  return MetricsSample{source_.name, version_, &metrics_, queue_ ? queue_->depth() : 0};
}

}  // namespace ortkit::serve
