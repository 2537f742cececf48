#pragma once
// The instruction-set features of this CPU that decide how a model is best quantised for it: whether
// 8-bit dot products exist (x86 VNNI, ARM's dot product), which vector width the kernels use.

#include <string>

namespace ortkit {

struct CpuFeatures {
  std::string architecture;  ///< "x86_64", "aarch64", or the compiler's name for another
  bool avx2 = false;
  bool avx512 = false;  ///< AVX-512 F, BW and VL, what ONNX Runtime's AVX-512 kernels need
  bool avx512_vnni = false;
  bool avx_vnni = false;  ///< the 256-bit VNNI of CPUs without AVX-512
  bool amx_int8 = false;
  bool f16c = false;
  bool arm_dot_product = false;  ///< ARMv8.2 SDOT/UDOT
  bool arm_i8mm = false;         ///< ARMv8.6 8-bit matrix multiply

  /// 8-bit multiply-accumulate without saturating a 16-bit intermediate (VNNI, AMX, ARM dot
  /// products): int8 weights may use their full range.
  bool HasInt8DotProduct() const { return avx512_vnni || avx_vnni || amx_int8 || arm_dot_product; }
  /// "avx512_vnni avx512 avx2 f16c" (what ortkit uses of them, in that order), or "none".
  std::string Describe() const;
};

/// The features of the CPU this process runs on (CPUID on x86, the auxiliary vector on ARM; the
/// operating system's support for the wider registers is checked too, as XGETBV reports it).
CpuFeatures DetectCpuFeatures();

}  // namespace ortkit
