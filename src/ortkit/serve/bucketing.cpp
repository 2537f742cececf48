#include "ortkit/serve/bucketing.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/text.h"
#include "ortkit/tensor/comparison.h"

namespace ortkit::serve {
namespace {

struct CopyPlan {
  const std::byte* src;
  std::byte* dst;
  std::span<const std::int64_t> src_shape;
  std::span<const std::int64_t> dst_shape;
  std::vector<std::int64_t> src_inner;  // elements below each axis
  std::vector<std::int64_t> dst_inner;
  std::vector<bool> same_below;  // src and dst agree on every axis below this one
  std::size_t element_size;
};

void CopyAxis(const CopyPlan& p, std::size_t axis, std::int64_t count, std::int64_t src_offset,
              std::int64_t dst_offset) {
  if (p.same_below[axis]) {
    std::memcpy(p.dst + dst_offset * p.element_size, p.src + src_offset * p.element_size,
                static_cast<std::size_t>(count * p.src_inner[axis]) * p.element_size);
    return;
  }
  const std::size_t next = axis + 1;
  const std::int64_t next_count = std::min(p.src_shape[next], p.dst_shape[next]);
  for (std::int64_t i = 0; i < count; ++i) {
    CopyAxis(p, next, next_count, src_offset + i * p.src_inner[axis], dst_offset + i * p.dst_inner[axis]);
  }
}

bool Mentions(const TensorSpec& spec, const std::string& dim) {
  return std::any_of(spec.dims.begin(), spec.dims.end(),
                     [&](const DimSpec& d) { return !d.fixed() && d.symbol == dim; });
}

int AxisOf(const TensorSpec& spec, const std::string& dim) {
  for (std::size_t a = 1; a < spec.dims.size(); ++a) {
    if (!spec.dims[a].fixed() && spec.dims[a].symbol == dim) return static_cast<int>(a);
  }
  return -1;
}

// A length that its bucket pads (so that the check exercises padding), or 0 when none pads.
std::int64_t PaddedLength(const BucketingConfig& config) {
  std::vector<std::int64_t> bounds = config.boundaries;
  if (config.multiple_of > 0) bounds = {config.multiple_of, 2 * config.multiple_of};
  for (std::int64_t b : bounds) {
    if (b < 2) continue;
    const std::int64_t length = std::max<std::int64_t>(1, b - std::max<std::int64_t>(1, b / 3));
    if (config.BucketFor(length) > length) return length;
  }
  return 0;
}

Result<std::vector<NamedTensor>> Pad(const std::vector<NamedTensor>& inputs, const BucketPlan& plan,
                                     std::int64_t padded) {
  std::vector<NamedTensor> result;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i].tensor;
    std::vector<std::int64_t> shape = t.shape();
    if (plan.input_axis[i] >= 0) shape[plan.input_axis[i]] = padded;
    ORTKIT_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(t.type(), shape));
    if (shape.empty())
      std::memcpy(out.data(), t.data(), t.byte_size());
    else
      CopyRows(t.data(), t.shape(), 0, out.data(), out.shape(), 0, shape[0], FindDataType(t.type())->size);
    result.push_back({inputs[i].name, std::move(out)});
  }
  return result;
}

}  // namespace

void CopyRows(const std::byte* src, std::span<const std::int64_t> src_shape, std::int64_t src_row, std::byte* dst,
              std::span<const std::int64_t> dst_shape, std::int64_t dst_row, std::int64_t rows,
              std::size_t element_size) {
  const std::size_t rank = src_shape.size();
  if (rank == 0 || rows <= 0) return;
  // The common case (no padding): rows are contiguous and equally long on both sides.
  if (std::equal(src_shape.begin() + 1, src_shape.end(), dst_shape.begin() + 1, dst_shape.end())) {
    std::size_t row_bytes = element_size;
    for (std::size_t a = 1; a < rank; ++a) row_bytes *= static_cast<std::size_t>(src_shape[a]);
    std::memcpy(dst + static_cast<std::size_t>(dst_row) * row_bytes,
                src + static_cast<std::size_t>(src_row) * row_bytes, static_cast<std::size_t>(rows) * row_bytes);
    return;
  }
  CopyPlan p{src,
             dst,
             src_shape,
             dst_shape,
             std::vector<std::int64_t>(rank, 1),
             std::vector<std::int64_t>(rank, 1),
             std::vector<bool>(rank, true),
             element_size};
  for (std::size_t a = rank; a-- > 1;) {
    p.src_inner[a - 1] = p.src_inner[a] * src_shape[a];
    p.dst_inner[a - 1] = p.dst_inner[a] * dst_shape[a];
    p.same_below[a - 1] = p.same_below[a] && src_shape[a] == dst_shape[a];
  }
  CopyAxis(p, 0, rows, src_row * p.src_inner[0], dst_row * p.dst_inner[0]);
}

Result<BucketPlan> PlanBucketing(const BucketingConfig& config, const std::vector<TensorSpec>& inputs,
                                 const std::vector<TensorSpec>& outputs) {
  BucketPlan plan;
  plan.config = config;
  bool found = false;
  std::vector<std::string> symbols;
  for (const auto& in : inputs) {
    plan.input_axis.push_back(AxisOf(in, config.dim));
    found = found || plan.input_axis.back() >= 0;
    for (std::size_t a = 0; a < in.dims.size(); ++a) {
      if (!in.dims[a].fixed() && !in.dims[a].symbol.empty())
        symbols.push_back(fmt::format("{} (input '{}' axis {})", in.dims[a].symbol, in.name, a));
    }
  }
  if (!found) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("bucketing.dim '{}' is not a symbolic dimension (after the batch axis) of any input; the "
                    "model's symbolic dimensions are: {}",
                    config.dim, symbols.empty() ? std::string("none") : fmt::format("{}", fmt::join(symbols, ", "))));
  }
  for (const auto& out : outputs) plan.output_axis.push_back(AxisOf(out, config.dim));
  plan.mask_input = config.mask_input;
  if (!plan.mask_input.empty()) {
    auto it =
        std::find_if(inputs.begin(), inputs.end(), [&](const TensorSpec& s) { return s.name == plan.mask_input; });
    if (it == inputs.end()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("bucketing.mask_input '{}' is not an input of the model", plan.mask_input));
    }
    if (!Mentions(*it, config.dim)) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("bucketing.mask_input '{}' ({}) has no '{}' dimension",
                                                                plan.mask_input, it->Describe(), config.dim));
    }
  } else {
    for (const auto& in : inputs) {
      if (NameHas(in.name, {"mask"}) && Mentions(in, config.dim)) {
        plan.mask_input = in.name;
        break;
      }
    }
  }
  return plan;
}

Status VerifyPaddingInvariance(Session& session, const std::vector<TensorSpec>& inputs,
                               const std::vector<TensorSpec>& outputs, const std::map<std::string, ValueHint>& hints,
                               BucketPlan* plan) {
  const std::int64_t length = PaddedLength(plan->config);
  if (length == 0) return OkStatus();  // no length is ever padded
  const std::int64_t padded = plan->config.BucketFor(length);
  InputPlan synth;
  synth.seed = 7;
  synth.dims[plan->config.dim] = length;
  for (const auto& in : inputs) {
    if (!in.dims.empty() && !in.dims[0].fixed() && !in.dims[0].symbol.empty()) synth.dims[in.dims[0].symbol] = 2;
  }
  ORTKIT_ASSIGN_OR_RETURN(auto plain_inputs, SynthesizeInputs(inputs, hints, synth));
  ORTKIT_ASSIGN_OR_RETURN(auto padded_inputs, Pad(plain_inputs, *plan, padded));
  auto plain = RunSession(session, RunRequest{plain_inputs, {}});
  if (!plain.ok())
    return MakeError(plain.error().kind,
                     "the padding-invariance check could not run the model: " + plain.error().message);
  auto with_padding = RunSession(session, RunRequest{padded_inputs, {}});
  if (!with_padding.ok()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("bucketing refused: the model fails on inputs padded along '{}' from {} to {}: {}",
                                 plan->config.dim, length, padded, with_padding.error().message));
  }
  const std::string mask_note =
      plan->mask_input.empty()
          ? std::string(
                " (no mask input was found: padded positions are attended to; set "
                "bucketing.mask_input or disable bucketing)")
          : fmt::format(" (padding filled with 0 in every input, mask '{}' included)", plan->mask_input);
  for (std::size_t o = 0; o < plain->size(); ++o) {
    const Tensor& want = (*plain)[o].tensor;
    const Tensor& got = (*with_padding)[o].tensor;
    if (plan->output_axis[o] < 0 && want.shape() != got.shape()) {
      // Not declared: learn the axis that grew from `length` to `padded`.
      for (std::size_t a = 1; a < want.shape().size() && a < got.shape().size(); ++a) {
        if (want.shape()[a] == length && got.shape()[a] == padded) {
          plan->output_axis[o] = static_cast<int>(a);
          break;
        }
      }
    }
    std::vector<std::int64_t> cut_shape = got.shape();
    if (plan->output_axis[o] >= 0 && plan->output_axis[o] < static_cast<int>(cut_shape.size())) {
      cut_shape[plan->output_axis[o]] = std::min(cut_shape[plan->output_axis[o]], length);
    }
    if (cut_shape != want.shape() || got.is_string()) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("bucketing refused: output '{}' does not follow the padding along '{}': {} without "
                      "padding, {} padded from {} to {}",
                      (*plain)[o].name, plan->config.dim, want.Describe(), got.Describe(), length, padded));
    }
    ORTKIT_ASSIGN_OR_RETURN(Tensor cut, Tensor::Allocate(got.type(), cut_shape));
    CopyRows(got.data(), got.shape(), 0, cut.data(), cut.shape(), 0, got.shape().empty() ? 0 : got.shape()[0],
             FindDataType(got.type())->size);
    if (got.shape().empty()) std::memcpy(cut.data(), got.data(), got.byte_size());
    OutputComparison c = CompareTensors((*plain)[o].name, want, cut, Tolerance{1e-4, 1e-4});
    if (!c.passed) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("bucketing refused: output '{}' changes when inputs are padded along '{}' from {} to "
                      "{}: max abs error {:.3g} (at {}), {} of {} elements differ{}",
                      (*plain)[o].name, plan->config.dim, length, padded, c.max_abs_error,
                      ShapeToString(c.worst_position), c.mismatches, c.elements, mask_note));
    }
  }
  return OkStatus();
}

}  // namespace ortkit::serve
