// HTTP's InferClient (infer_client.h): the blocking client of one load thread over one keep-alive connection,
// and the one-off GET of a metrics scrape.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ortkit/perf/http_infer.h"
#include "ortkit/perf/http_transport.h"
#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {
namespace {

class HttpInferClient final : public InferClient {
 public:
  HttpInferClient(const std::string& base, const ClientOptions& options)
      : options_(options),
        connection_(ServerAddress::FromBase(base), options.timeout_ms),
        infer_path_(InferPath(options.model)) {}

  Status CheckReady() override {
    const HttpAnswer answer = connection_.Exchange({"GET", "/v2/health/ready", {}, {}, 0});
    if (!answer.ok()) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {}: {}; is it running and listening there?", base(),
                                   answer.Describe()));
    }
    if (answer.status != 200) {
      return MakeError(
          ErrorKind::kUnavailable,
          fmt::format("the server at {} is not ready: GET /v2/health/ready answered {}", base(), answer.status));
    }
    return OkStatus();
  }

  Result<RemoteModel> ModelMetadata() override {
    const std::string path = "/v2/models/" + options_.model;
    const HttpAnswer answer = connection_.Exchange({"GET", path, {}, {}, 0});
    if (!answer.ok())
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {}: {}", base(), answer.Describe()));
    if (answer.status != 200) {
      return MakeError(
          answer.status == 404 ? ErrorKind::kNotFound : ErrorKind::kUnavailable,
          fmt::format("GET {}{} answered {}: {}", base(), path, answer.status, ErrorMessageOf(answer.body)));
    }
    return ParseModelMetadata(answer.body);
  }

  Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& outputs) override {
    return options_.json_tensors ? EncodeJsonRequest(inputs, outputs) : EncodeBinaryRequest(inputs, outputs);
  }

  InferOutcome Infer(const EncodedRequest& request) override {
    return InferOutcomeOf(connection_.Exchange(InferRequestOf(infer_path_, request)));
  }

 private:
  const std::string& base() const { return connection_.endpoint().base; }

  ClientOptions options_;
  HttpConnection connection_;
  std::string infer_path_;
};

}  // namespace

Result<std::string> NormalizeHttpBase(const std::string& url) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0)
    rest = rest.substr(7);
  else if (rest.find("://") != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--url '{}': only http:// (or a bare host:port) is supported", url));
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (rest.find('/') != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--url '{}': give host:port without a path", url));
  }
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size() ||
      rest.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--url '{}': expected host:port, e.g. 127.0.0.1:8000", url));
  }
  return "http://" + rest;
}

Result<std::string> HttpGetText(const std::string& url, int timeout_ms) {
  const auto scheme_end = url.find("://");
  const auto path_begin = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string base = path_begin == std::string::npos ? url : url.substr(0, path_begin);
  const std::string path = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  ORTKIT_ASSIGN_OR_RETURN(std::string normalized, NormalizeHttpBase(base));
  HttpConnection connection(ServerAddress::FromBase(normalized), timeout_ms);
  HttpAnswer answer = connection.Exchange({"GET", path, {}, {}, 0});
  if (!answer.ok()) return MakeError(ErrorKind::kUnavailable, fmt::format("GET {}: {}", url, answer.Describe()));
  if (answer.status != 200)
    return MakeError(ErrorKind::kUnavailable, fmt::format("GET {} answered {}", url, answer.status));
  return std::move(answer.body);
}

Result<std::unique_ptr<InferClient>> CreateHttpClient(const ClientOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(std::string base, NormalizeHttpBase(options.url));
  return std::unique_ptr<InferClient>(std::make_unique<HttpInferClient>(base, options));
}

}  // namespace ortkit::perf
