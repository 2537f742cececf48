#pragma once
// The body of the REST request fuzzer (rest_fuzzer.cpp), kept apart from the libFuzzer entry point
// so that ordinary builds replay the seed corpus and the reproducers through it
// (ServeRestCodec.ReplayFuzzCorpus in tests/unit/serve_rest_fuzz_test.cpp).

#include <string_view>

namespace ortkit::fuzz {

/// Decodes `bytes` as a KServe v2 REST infer request. The first byte chooses how the
/// Inference-Header-Content-Length is passed (its low two bits; seeds use the digits '0'..'3'):
///   0  none: the rest is the whole body, all JSON;
///   1  the next two bytes (little-endian) are the header length, counted from the body's start;
///   2  the next two bytes are the length of the binary tail: the header length is the body's
///      size minus that (so mutations inside the JSON keep the split aligned);
///   3  the next two bytes are how far past the body's end the header length points
///      (0xFFFF: SIZE_MAX).
/// A request that decodes is answered with its own inputs as outputs, encoded as the request
/// asked, all binary, all JSON and mixed (the first output binary); the all-binary answer and (when
/// every value is finite) the JSON and mixed answers, turned back into requests, must decode to
/// the same tensors. Returns normally for any
/// input; a crash, sanitizer report, hang, escaping exception or failed round trip (abort) is the
/// finding.
void RunRestFuzzBody(std::string_view bytes);

}  // namespace ortkit::fuzz
