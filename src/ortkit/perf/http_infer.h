#pragma once
// What a KServe v2 infer call is over HTTP, shared by the blocking client (http_client.cpp) and the event
// loop (http_loop.cpp): where it is posted, the request an encoded one becomes, and the outcome an answer
// comes to. Internal to perf.

#include <string>

#include "ortkit/perf/http_transport.h"
#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {

/// "/v2/models/MODEL/infer".
std::string InferPath(const std::string& model);

/// The POST of `request` to `path`: binary tensor data when the request has a JSON header length, else JSON.
/// Views `path` and `request`, which must outlive the exchange.
HttpRequest InferRequestOf(const std::string& path, const EncodedRequest& request);

/// The outcome of an infer answer: its status and, for an error status, the server's message.
InferOutcome InferOutcomeOf(const HttpAnswer& answer);

}  // namespace ortkit::perf
