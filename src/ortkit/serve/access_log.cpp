#include "ortkit/serve/access_log.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit::serve {

std::string AccessRecordToJson(const AccessRecord& r) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  nlohmann::json j = {{"time", fmt::format("{}.{:03d}Z", stamp, millis)},
                      {"protocol", r.protocol},
                      {"method", r.method},
                      {"path", r.path},
                      {"peer", r.peer},
                      {"status", r.status},
                      {"duration_us", r.duration_us},
                      {"request_bytes", r.request_bytes},
                      {"response_bytes", r.response_bytes}};
  if (!r.model.empty()) j["model"] = r.model;
  if (!r.request_id.empty()) j["id"] = r.request_id;
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ortkit::serve
