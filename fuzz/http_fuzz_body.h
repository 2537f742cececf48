#pragma once
// The body of the HTTP front-end fuzzer (http_fuzzer.cpp), kept apart from the libFuzzer entry
// point so that ordinary builds replay the seed corpus and the reproducers through it
// (ServeHttp.ReplayFuzzCorpus in tests/unit/serve_http_fuzz_test.cpp).

#include <string_view>

namespace ortkit::fuzz {

/// Writes `bytes`, as they are, to a new loopback connection of a real `ortkit serve` HTTP front
/// end (started once per process over a real InferenceCore serving a small batching model "m",
/// float32[batch, 4] -> Relu, with a 1 MiB body limit and a 1 s idle timeout), shuts the
/// connection for writing and reads whatever comes back until the server closes it. The bytes may
/// be anything: request lines, headers, chunked bodies with trailers, pipelined requests, the
/// binary tensor extension. Returns normally for any input; a crash, a sanitizer report, an
/// exception that ends the server, or a server that neither answers nor closes within 10 s
/// (abort) is the finding.
void RunHttpFuzzBody(std::string_view bytes);

/// Whether the server started by RunHttpFuzzBody still answers GET /v2/health/live with 200.
bool HttpFuzzServerAlive();

}  // namespace ortkit::fuzz
