#include "tensor_fuzz_body.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/npz.h"
#include "ortkit/tensor/tensor_proto.h"

namespace ortkit::fuzz {
namespace {

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type() || a.shape() != b.shape()) return false;
  if (a.is_string()) return a.strings() == b.strings();
  return a.byte_size() == b.byte_size() && (a.byte_size() == 0 || std::memcmp(a.data(), b.data(), a.byte_size()) == 0);
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "tensor fuzz body: %s\n", what);
  std::abort();
}

}  // namespace

void RunTensorFuzzBody(std::string_view bytes) {
  if (auto npy = ParseNpy(bytes, "fuzz.npy"); npy.ok()) {
    auto encoded = EncodeNpy(*npy);
    if (!encoded.ok()) Fail("a tensor read from .npy cannot be written as .npy");
    auto again = ParseNpy(*encoded, "again.npy");
    if (!again.ok() || !SameTensor(*npy, *again)) Fail(".npy round trip changed the tensor");
  }
  (void)ParseNpz(bytes, "fuzz.npz");
  if (auto pb = ParseTensorProto(bytes, "fuzz.pb"); pb.ok()) {
    auto proto = TensorToProto(pb->tensor, pb->name);
    if (!proto.ok()) Fail("a tensor read from .pb cannot be converted back");
    auto again = ParseTensorProto(proto->SerializeAsString(), "again.pb");
    if (!again.ok() || again->name != pb->name || !SameTensor(pb->tensor, again->tensor))
      Fail(".pb round trip changed the tensor");
  }
}

}  // namespace ortkit::fuzz
