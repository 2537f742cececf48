#include "ortkit/bench/shape_sweep.h"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/numbers.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit {
namespace {

constexpr std::size_t kMaxPoints = 256;

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

/// Sizes as parsed: whole numbers, none past 2^62 (no tensor has such a dimension); below 1 is refused
/// after parsing (CheckPositive), with a message of its own.
constexpr NumberRange<std::int64_t> kParsedSizes{std::numeric_limits<std::int64_t>::min(), std::int64_t{1} << 62};

/// A benchmarked size is at least 1.
Status CheckPositive(std::int64_t v, const std::string& context) {
  if (v >= 1) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("{}: size {} is impossible; a benchmarked dimension must be at least 1", context, v));
}

Result<std::int64_t> ParsePositive(const std::string& text, const std::string& context) {
  ORTKIT_ASSIGN_OR_RETURN(const std::int64_t v, ParseWholeNumber(text, context, kParsedSizes));
  ORTKIT_RETURN_IF_ERROR(CheckPositive(v, context));
  return v;
}

std::set<std::string> SymbolicDims(const std::vector<TensorSpec>& inputs) {
  std::set<std::string> symbols;
  for (const auto& spec : inputs) {
    for (const auto& d : spec.dims) {
      if (!d.fixed() && !d.symbol.empty()) symbols.insert(d.symbol);
    }
  }
  return symbols;
}

Status CheckSweptDimsExist(const std::vector<TensorSpec>& inputs, const std::vector<SweepAxis>& sweeps) {
  const std::set<std::string> symbols = SymbolicDims(inputs);
  for (const auto& sweep : sweeps) {
    if (!symbols.count(sweep.dim)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       symbols.empty()
                           ? fmt::format("--dim {}: the model has no symbolic input dimensions to set", sweep.dim)
                           : fmt::format("--dim {}: no input has a dimension named '{}'; symbolic dimensions: {}",
                                         sweep.dim, sweep.dim, fmt::join(symbols, ", ")));
    }
  }
  return OkStatus();
}

// --batch for inputs without a shared symbolic batch dimension: a fixed first dimension accepts
// exactly its own size, which is then the batch.
Result<std::int64_t> FixedBatch(const std::vector<TensorSpec>& inputs, const std::vector<std::int64_t>& batches) {
  std::vector<std::string> firsts;
  std::set<std::int64_t> fixed;
  for (const auto& spec : inputs) {
    firsts.push_back(fmt::format("{} {}", spec.name, spec.Describe()));
    if (!spec.dims.empty() && spec.dims[0].fixed()) fixed.insert(spec.dims[0].value);
  }
  const bool only_fixed = fixed.size() == 1 && std::all_of(batches.begin(), batches.end(),
                                                           [&](std::int64_t b) { return b == *fixed.begin(); });
  if (!only_fixed) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--batch {}: impossible shape; the inputs have no shared symbolic batch (first) "
                                 "dimension to set: {}",
                                 fmt::join(batches, ","), fmt::join(firsts, "; ")));
  }
  return *fixed.begin();
}

// Every combination of the axes' sizes, the first axis varying fastest.
Result<std::vector<ShapePoint>> CrossAxes(const std::vector<SweepAxis>& axes, const std::string& batch_symbol,
                                          std::int64_t fixed_batch) {
  std::size_t total = 1;
  for (const auto& axis : axes) {
    total *= axis.values.size();
    if (total > kMaxPoints) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("--batch and --dim make more than {} shapes to measure; sweep fewer sizes", kMaxPoints));
    }
  }
  std::vector<ShapePoint> points;
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    ShapePoint point;
    point.batch = fixed_batch;
    std::vector<std::string> parts;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const std::int64_t v = axes[a].values[index[a]];
      point.dims[axes[a].dim] = v;
      if (axes[a].dim == batch_symbol) point.batch = v;
      parts.push_back(fmt::format("{}={}", axes[a].dim, v));
    }
    point.label = parts.empty() ? "default" : fmt::format("{}", fmt::join(parts, " "));
    points.push_back(std::move(point));
    for (std::size_t a = 0; a < axes.size(); ++a) {
      if (++index[a] < axes[a].values.size()) break;
      index[a] = 0;
    }
  }
  return points;
}

}  // namespace

Result<std::vector<std::int64_t>> ParseSizeList(const std::string& text, const std::string& flag) {
  const std::string context = fmt::format("{} {}", flag, text);
  ORTKIT_ASSIGN_OR_RETURN(std::vector<std::int64_t> sizes, ParseWholeNumberList(text, context, kParsedSizes));
  for (auto v = sizes.begin(); v != sizes.end(); ++v) {
    ORTKIT_RETURN_IF_ERROR(CheckPositive(*v, context));
    if (std::find(sizes.begin(), v, *v) != v) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: {} is listed twice", context, *v));
    }
  }
  return sizes;
}

Result<std::vector<SweepAxis>> ParseSweepAxes(const std::vector<std::string>& values) {
  std::vector<SweepAxis> sweeps;
  for (const auto& value : values) {
    SweepAxis* current = nullptr;
    for (const auto& item : Split(value, ',')) {
      const auto eq = item.find('=');
      std::string number = item;
      if (eq != std::string::npos) {
        const std::string name = item.substr(0, eq);
        if (name.empty()) {
          return MakeError(ErrorKind::kInvalidArgument, fmt::format("--dim '{}': expected NAME=SIZE[,SIZE...]", value));
        }
        auto existing = std::find_if(sweeps.begin(), sweeps.end(), [&](const SweepAxis& s) { return s.dim == name; });
        if (existing != sweeps.end()) {
          return MakeError(ErrorKind::kInvalidArgument, fmt::format("--dim {}: '{}' is given twice", value, name));
        }
        sweeps.push_back({name, {}});
        current = &sweeps.back();
        number = item.substr(eq + 1);
      } else if (current == nullptr) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--dim '{}': expected NAME=SIZE[,SIZE...], e.g. --dim seq_len=16,64", value));
      }
      ORTKIT_ASSIGN_OR_RETURN(std::int64_t v, ParsePositive(number, "--dim " + value));
      if (std::find(current->values.begin(), current->values.end(), v) != current->values.end()) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--dim {}: {}={} is listed twice", value, current->dim, v));
      }
      current->values.push_back(v);
    }
  }
  return sweeps;
}

std::string FindBatchSymbol(const std::vector<TensorSpec>& inputs) {
  std::string symbol;
  for (const auto& spec : inputs) {
    if (spec.dims.empty() || spec.dims[0].fixed()) continue;
    if (spec.dims[0].symbol.empty()) return "";
    if (symbol.empty())
      symbol = spec.dims[0].symbol;
    else if (symbol != spec.dims[0].symbol)
      return "";
  }
  return symbol;
}

Result<std::vector<ShapePoint>> ExpandShapePoints(const std::vector<TensorSpec>& inputs,
                                                  const std::vector<std::int64_t>& batches,
                                                  const std::vector<SweepAxis>& sweeps) {
  ORTKIT_RETURN_IF_ERROR(CheckSweptDimsExist(inputs, sweeps));
  const std::string batch_symbol = FindBatchSymbol(inputs);
  std::vector<SweepAxis> axes;
  std::int64_t fixed_batch = 1;
  if (!batches.empty()) {
    if (batch_symbol.empty()) {
      ORTKIT_ASSIGN_OR_RETURN(fixed_batch, FixedBatch(inputs, batches));
    } else {
      if (std::any_of(sweeps.begin(), sweeps.end(), [&](const SweepAxis& s) { return s.dim == batch_symbol; })) {
        return MakeError(
            ErrorKind::kInvalidArgument,
            fmt::format("--dim {} and --batch both set the batch dimension '{}'; use one", batch_symbol, batch_symbol));
      }
      axes.push_back({batch_symbol, batches});
    }
  } else if (!batch_symbol.empty()) {
    auto swept = std::find_if(sweeps.begin(), sweeps.end(), [&](const SweepAxis& s) { return s.dim == batch_symbol; });
    // The first axis every input shares is a batch, whatever its name (p2o.DynamicDimension.0): 1 by default.
    if (swept == sweeps.end()) axes.push_back({batch_symbol, {1}});
  }
  // The batch axis first in `axes` so that it varies fastest in the expansion.
  for (const auto& s : sweeps) {
    if (s.dim == batch_symbol)
      axes.insert(axes.begin(), s);
    else
      axes.push_back(s);
  }
  return CrossAxes(axes, batch_symbol, fixed_batch);
}

}  // namespace ortkit
