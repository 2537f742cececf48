// The HTTP transport: cpp-httplib, one keep-alive connection per client.
#include <httplib.h>

#include <fmt/format.h>

#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {
namespace {

std::string DescribeTransportError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return "connection failed";
    case httplib::Error::Read: return "read failed";
    case httplib::Error::Write: return "write failed";
    case httplib::Error::ConnectionTimeout: return "timed out";
    case httplib::Error::ExceedRedirectCount: return "too many redirects";
    case httplib::Error::Canceled: return "canceled";
    default: return "transport error: " + httplib::to_string(error);
  }
}

void ApplyTimeouts(httplib::Client& client, int timeout_ms) {
  const auto timeout = std::chrono::milliseconds(timeout_ms);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
}

class HttpInferClient final : public InferClient {
 public:
  HttpInferClient(const std::string& base, const ClientOptions& options)
      : base_(base), options_(options), client_(base), infer_path_("/v2/models/" + options.model + "/infer") {
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);  // header and body leave in separate writes; Nagle would hold the body for an ACK
    ApplyTimeouts(client_, options.timeout_ms);
  }

  Status CheckReady() override {
    auto response = client_.Get("/v2/health/ready");
    if (!response) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {}: {}; is it running and listening there?", base_,
                                   DescribeTransportError(response.error())));
    }
    if (response->status != 200) {
      return MakeError(
          ErrorKind::kUnavailable,
          fmt::format("the server at {} is not ready: GET /v2/health/ready answered {}", base_, response->status));
    }
    return OkStatus();
  }

  Result<ServedModel> ModelMetadata() override {
    const std::string path = "/v2/models/" + options_.model;
    auto response = client_.Get(path);
    if (!response) {
      return MakeError(ErrorKind::kUnavailable, fmt::format("cannot reach the server at {}: {}", base_,
                                                            DescribeTransportError(response.error())));
    }
    if (response->status != 200) {
      return MakeError(
          response->status == 404 ? ErrorKind::kNotFound : ErrorKind::kUnavailable,
          fmt::format("GET {}{} answered {}: {}", base_, path, response->status, ErrorMessageOf(response->body)));
    }
    return ParseModelMetadata(response->body);
  }

  Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& outputs) override {
    return options_.json_tensors ? EncodeJsonRequest(inputs, outputs) : EncodeBinaryRequest(inputs, outputs);
  }

  InferOutcome Infer(const EncodedRequest& request) override {
    httplib::Headers headers;
    const char* content_type = "application/json";
    if (request.header_length > 0) {
      headers.emplace("Inference-Header-Content-Length", std::to_string(request.header_length));
      content_type = "application/octet-stream";
    }
    auto response = client_.Post(infer_path_, headers, request.body, content_type);
    if (!response) return {DescribeTransportError(response.error()), ""};
    if (response->status != 200) return {fmt::format("HTTP {}", response->status), ErrorMessageOf(response->body)};
    return {};
  }

 private:
  std::string base_;
  ClientOptions options_;
  httplib::Client client_;
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
  httplib::Client client(normalized);
  ApplyTimeouts(client, timeout_ms);
  auto response = client.Get(path);
  if (!response)
    return MakeError(ErrorKind::kUnavailable, fmt::format("GET {}: {}", url, DescribeTransportError(response.error())));
  if (response->status != 200)
    return MakeError(ErrorKind::kUnavailable, fmt::format("GET {} answered {}", url, response->status));
  return std::move(response->body);
}

Result<std::unique_ptr<InferClient>> CreateHttpClient(const ClientOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(std::string base, NormalizeHttpBase(options.url));
  return std::unique_ptr<InferClient>(std::make_unique<HttpInferClient>(base, options));
}

}  // namespace ortkit::perf
