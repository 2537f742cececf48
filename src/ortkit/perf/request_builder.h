#pragma once
// The requests `ortkit perf` sends, built before the timed region from the model's metadata and the
// command's input options: one encoded request per size of the varied dimension (--lengths), each from
// the tensors of --input-data where it gives them and synthesised inputs otherwise.

#include <string>

#include "ortkit/core/result.h"
#include "ortkit/perf/infer_client.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::perf {

/// What the requests are made of; the in-class defaults are the command's flag defaults.
struct RequestOptions {
  InputPlan plan;                      ///< --dim, --shape, --seed
  std::string input_data = "random";   ///< "random", or a FILE/DIR of tensors named after inputs (ReadTensors)
  std::string lengths;                 ///< --lengths as given (ParseLengths); empty: every request the same size
  std::string length_dim = "seq_len";  ///< the dynamic dimension `lengths` varies
  std::string model;                   ///< the model's name as the command gave it, for messages
};

/// One request per size of `options.length_dim` (a single one, lengths {1, 1}, without `options.lengths`),
/// encoded by `client` for its protocol. Request k's synthesised inputs use seed plan.seed * 1000 + its size;
/// tensors read from `options.input_data` are sent as they are. Fails with kInvalidArgument, naming the flag,
/// for a plan the model's inputs do not fit, a tensor that is not an input, --lengths with a file, or a
/// --length-dim no input has; and for what reading, synthesising or encoding the inputs fails with.
Result<RequestSet> BuildRequests(const RequestOptions& options, const RemoteModel& model, InferClient& client);

}  // namespace ortkit::perf
