#pragma once
// One structured line per request, written by the front ends through a callback so that the
// library never prints: the serve command decides where the lines go.

#include <cstdint>
#include <functional>
#include <string>

namespace ortkit::serve {

struct AccessRecord {
  std::string protocol;  ///< "http" or "grpc"
  std::string method;    ///< "POST", or the gRPC method name
  std::string path;
  std::string peer;
  std::string model;
  std::string request_id;
  int status = 0;  ///< HTTP status, or the gRPC status code
  std::int64_t duration_us = 0;
  std::size_t request_bytes = 0;
  std::size_t response_bytes = 0;
  std::string error;  ///< the error message when the request failed
};

/// Called once per request from the front end's threads; must be thread-safe.
using AccessLog = std::function<void(const AccessRecord&)>;

/// The record as one line of JSON (no trailing newline), with the current UTC time in "time".
std::string AccessRecordToJson(const AccessRecord& record);

}  // namespace ortkit::serve
