// libFuzzer entry point over ortkit serve's HTTP front end, fed raw bytes over a real loopback
// connection; see fuzz/README.md and `scripts/fuzz.sh SECONDS http`.
#include <cstddef>
#include <cstdint>

#include "http_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ortkit::fuzz::RunHttpFuzzBody({reinterpret_cast<const char*>(data), size});
  return 0;
}
