// libFuzzer entry point over the .npy, .npz and TensorProto readers:
//   cmake -S . -B build-fuzz-tensor -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DORTKIT_BUILD_FUZZERS=ON
//   ninja -C build-fuzz-tensor tensor_fuzzer
//   build-fuzz-tensor/fuzz/tensor_fuzzer -dict=fuzz/tensor.dict -max_len=4096 WORK_DIR fuzz/tensor_corpus
#include <cstddef>
#include <cstdint>

#include "tensor_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ortkit::fuzz::RunTensorFuzzBody({reinterpret_cast<const char*>(data), size});
  return 0;
}
