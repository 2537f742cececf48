// libFuzzer entry point over the model loader; see fuzz/README.md and scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "model_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ortkit::fuzz::RunModelFuzzBody({reinterpret_cast<const char*>(data), size});
  return 0;
}
