#pragma once
// The per-model serving configuration (docs/serving.md): one JSON file per model, written by
// `ortkit bench --tune --write-config` and read by `ortkit serve --config` / --model-repository.
// Every key is optional; the in-class defaults below are the documented defaults.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit::serve {

/// "session": how each instance's ONNX Runtime session is built.
struct SessionSettings {
  std::string provider = "cpu";
  int intra_op_threads = 1;  ///< per instance; 0: cores divided among all instances of all models
  int inter_op_threads = 1;
  bool sequential_execution = true;  ///< "execution_mode": "sequential" | "parallel"
  int optimization_level = 99;       ///< 0 | 1 | 2 | 99
};

/// The longest queue deadline, of a configuration (batching.timeout_us) or of a request (its
/// "timeout" parameter): an hour. Longer ones said nothing a deadline of 0 (none) does not, and
/// from about 9.2e12 us on, the deadline's arithmetic in nanoseconds wrapped into the past.
inline constexpr std::int64_t kMaxTimeoutUs = 3'600'000'000;

/// "batching": the dynamic batcher.
struct BatchingConfig {
  bool enabled = true;
  int max_batch_size = 16;  ///< rows per Run; 0 (or enabled=false): one request per Run
  std::int64_t max_queue_delay_us = 500;
  std::vector<int> preferred_batch_sizes;
  int max_queue_size = 256;     ///< queued requests beyond which new ones are rejected at once
  std::int64_t timeout_us = 0;  ///< deadline of a request in the queue, 0 to kMaxTimeoutUs; 0: none
  int priority_levels = 1;      ///< request priority 1 (highest) .. priority_levels; 0 or absent: the lowest

  /// Rows per Run after `enabled` is applied: 0 when batching is off.
  int EffectiveMaxBatchSize() const { return enabled ? max_batch_size : 0; }
};

/// "bucketing": pad a symbolic dimension up to bucket boundaries so that requests of different
/// lengths share a batch.
struct BucketingConfig {
  bool enabled = false;                  ///< true when the key is present and not null
  std::string dim;                       ///< symbolic dimension name ("seq_len")
  std::vector<std::int64_t> boundaries;  ///< strictly ascending
  std::int64_t multiple_of = 0;          ///< instead of boundaries
  std::string mask_input;                ///< empty: detected (an input whose name contains "mask")

  /// The padded length for `length`: the first boundary >= length, or the next multiple of
  /// `multiple_of`. A length above the last boundary is not padded (it forms its own bucket).
  std::int64_t BucketFor(std::int64_t length) const;
};

/// "warmup": shapes run once per instance before the model reports ready.
struct WarmupConfig {
  std::map<std::string, std::vector<std::int64_t>> dims;  ///< symbolic dim -> sizes; each combination is run
};

/// "version_policy": which of a model's numeric version folders are served, as Triton's
/// (`{"latest": {"num_versions": N}}`, `{"all": {}}`, `{"specific": {"versions": [1, 3]}}`).
struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int latest = 1;                      ///< kLatest: the highest this many versions
  std::vector<std::int64_t> versions;  ///< kSpecific: ascending, each >= 1

  /// The versions of `available` (any order) that the policy serves, ascending.
  std::vector<std::int64_t> Select(std::vector<std::int64_t> available) const;
  /// "latest 1", "all", "specific [1, 3]": for messages.
  std::string Describe() const;
};

struct ModelConfig {
  std::string name;   ///< empty: the --model NAME or the repository folder name
  int instances = 1;  ///< session instances; a free instance takes the next batch
  VersionPolicy version_policy;
  SessionSettings session;
  BatchingConfig batching;
  BucketingConfig bucketing;
  WarmupConfig warmup;

  /// The runtime's session configuration for one instance.
  SessionConfig ToSessionConfig() const;
};

/// Values that replace every model's configured ones (`ortkit serve` flags); unset: the file's value.
struct ConfigOverrides {
  std::optional<int> instances;
  std::optional<int> intra_op_threads;
  std::optional<std::string> provider;
  std::optional<int> max_batch_size;  ///< also drops the preferred batch sizes above it
  std::optional<std::int64_t> max_queue_delay_us;
  std::optional<int> max_queue_size;
  std::optional<std::int64_t> timeout_us;
  bool no_batching = false;
  bool no_bucketing = false;

  /// Writes the values that are set into `config` (which ValidateModelConfig should check after).
  void ApplyTo(ModelConfig* config) const;
};

/// Parses the JSON text of a configuration file. `origin` (a file name) prefixes every error.
/// Unknown keys are errors (a misspelt key would otherwise be silently ignored), except the
/// "tuning" object that `bench --tune` writes for people, and Triton's top-level "max_batch_size"
/// that the server's config endpoint adds (it must agree with "batching", or stands for
/// batching.max_batch_size without it), so that what the endpoint answers parses back. Errors are kInvalidArgument and
/// name the key and the value ("encoder.json: batching.max_batch_size: expected an integer >= 0, got -3").
Result<ModelConfig> ParseModelConfig(std::string_view json_text, std::string_view origin);

/// Checks every value's range and the keys that depend on each other. ParseModelConfig runs it on
/// the file; run it again after anything else changes the configuration (command-line flags).
/// Errors are kInvalidArgument and name `origin`, the key, its flag when one sets it, and the value.
Status ValidateModelConfig(const ModelConfig& config, std::string_view origin);

/// Reads and parses `path` (kIo when it cannot be read).
Result<ModelConfig> LoadModelConfig(const std::filesystem::path& path);

/// The configuration as JSON text, with every key (what the server actually uses).
std::string ModelConfigToJson(const ModelConfig& config);

}  // namespace ortkit::serve
