// libFuzzer entry point over the KServe v2 REST request decoder and the response encoder; see
// fuzz/README.md and `scripts/fuzz.sh SECONDS rest`.
#include <cstddef>
#include <cstdint>

#include "rest_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ortkit::fuzz::RunRestFuzzBody({reinterpret_cast<const char*>(data), size});
  return 0;
}
