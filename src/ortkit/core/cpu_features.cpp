#include "ortkit/core/cpu_features.h"

#include <string_view>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ortkit {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kBit(int n) { return 1U << n; }

// The register state the operating system saves on a context switch (XGETBV of XCR0): a feature
// whose registers it does not save cannot be used, whatever CPUID says.
unsigned long long SavedRegisterState() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & kBit(27)) == 0) return 0;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

void DetectX86(CpuFeatures& f) {
  f.architecture = "x86_64";
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return;
  const bool avx = (ecx & kBit(28)) != 0;
  f.f16c = (ecx & kBit(29)) != 0;
  const unsigned long long xcr0 = SavedRegisterState();
  const bool ymm = (xcr0 & 0x6) == 0x6;
  const bool zmm = (xcr0 & 0xe6) == 0xe6;
  const bool tiles = (xcr0 & 0x60000) == 0x60000;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return;
  f.avx2 = avx && ymm && (ebx & kBit(5)) != 0;
  f.avx512 = zmm && (ebx & kBit(16)) != 0 && (ebx & kBit(30)) != 0 && (ebx & kBit(31)) != 0;  // F, BW, VL
  f.avx512_vnni = f.avx512 && (ecx & kBit(11)) != 0;
  f.amx_int8 = tiles && (edx & kBit(25)) != 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) f.avx_vnni = ymm && (eax & kBit(4)) != 0;
}
#endif

}  // namespace

std::string CpuFeatures::Describe() const {
  std::vector<std::string_view> names;
  if (amx_int8) names.push_back("amx_int8");
  if (avx512_vnni) names.push_back("avx512_vnni");
  if (avx_vnni) names.push_back("avx_vnni");
  if (avx512) names.push_back("avx512");
  if (avx2) names.push_back("avx2");
  if (f16c) names.push_back("f16c");
  if (arm_i8mm) names.push_back("i8mm");
  if (arm_dot_product) names.push_back("dotprod");
  std::string text;
  for (auto name : names) text += (text.empty() ? "" : " ") + std::string(name);
  return text.empty() ? "none" : text;
}

CpuFeatures DetectCpuFeatures() {
  CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
  DetectX86(features);
#elif defined(__aarch64__) && defined(__linux__)
  features.architecture = "aarch64";
  const unsigned long caps = getauxval(AT_HWCAP);
  features.arm_dot_product = (caps & HWCAP_ASIMDDP) != 0;
#ifdef HWCAP2_I8MM
  features.arm_i8mm = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
#endif
#else
  features.architecture = "other";
#endif
  return features;
}

}  // namespace ortkit
