#include "ortkit/perf/http_infer.h"

#include <fmt/format.h>

namespace ortkit::perf {

std::string InferPath(const std::string& model) { return "/v2/models/" + model + "/infer"; }

HttpRequest InferRequestOf(const std::string& path, const EncodedRequest& request) {
  const bool binary = request.header_length > 0;
  return {"POST", path, request.body, binary ? "application/octet-stream" : "application/json", request.header_length};
}

InferOutcome InferOutcomeOf(const HttpAnswer& answer) {
  if (!answer.ok()) return {answer.error, answer.detail};
  if (answer.status != 200) return {fmt::format("HTTP {}", answer.status), ErrorMessageOf(answer.body)};
  return {};
}

}  // namespace ortkit::perf
