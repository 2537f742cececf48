#include "ortkit/check/target_runtime.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

// Sources (docs/compatibility.md names them row by row): ONNX Runtime's compatibility page
// (docs/reference/compatibility.md) up to 1.20, its release notes, and the checks in its source
// at each release (onnxruntime/core/graph/model.cc compares the IR version with the bundled ONNX's
// IR_VERSION; model_load_utils.h compares each opset with ONNX's last released opset). Where the
// page and the source disagree (ai.onnx.ml for 1.11 and 1.18-1.20, IR for 1.15) the source is
// what the release does. The 1.29 row was confirmed against the 1.29.0 binary.
// clang-format off
constexpr std::array kReleases = std::to_array<OrtRelease>({
  {"1.10", "Dec 2021", "1.10",   8, 15, 2, "CUDA 11 / cuDNN 8"},
  {"1.11", "Mar 2022", "1.11",   8, 16, 3, "CUDA 11 / cuDNN 8"},
  {"1.12", "Jul 2022", "1.12",   8, 17, 3, "CUDA 11 / cuDNN 8"},
  {"1.13", "Oct 2022", "1.12",   8, 17, 3, "CUDA 11 / cuDNN 8"},
  {"1.14", "Feb 2023", "1.13",   8, 18, 3, "CUDA 11 / cuDNN 8"},
  {"1.15", "May 2023", "1.14",   9, 19, 3, "CUDA 11 / cuDNN 8"},
  {"1.16", "Sep 2023", "1.14.1", 9, 19, 3, "CUDA 11 / cuDNN 8"},
  {"1.17", "Jan 2024", "1.15",   9, 20, 4, "CUDA 11 / cuDNN 8 (also CUDA 12)"},
  {"1.18", "May 2024", "1.16",  10, 21, 5, "CUDA 11 / cuDNN 8 (also CUDA 12)"},
  {"1.19", "Aug 2024", "1.16.1", 10, 21, 5, "CUDA 12 / cuDNN 9"},
  {"1.20", "Nov 2024", "1.16.1", 10, 21, 5, "CUDA 12 / cuDNN 9"},
  {"1.21", "Mar 2025", "1.17",  10, 22, 5, "CUDA 12 / cuDNN 9"},
  {"1.22", "May 2025", "1.17",  10, 22, 5, "CUDA 12 / cuDNN 9"},
  {"1.23", "Sep 2025", "1.18",  11, 23, 5, "CUDA 12 / cuDNN 9"},
  {"1.24", "Feb 2026", "1.20.1", 13, 25, 5, "CUDA 12 / cuDNN 9 (also CUDA 13)"},
  {"1.25", "Apr 2026", "1.21",  13, 26, 5, "CUDA 12 or 13 / cuDNN 9"},
  {"1.26", "May 2026", "1.21",  13, 26, 5, "CUDA 12 or 13 / cuDNN 9"},
  {"1.27", "Jun 2026", "1.21",  13, 26, 5, "CUDA 13 / cuDNN 9 (CUDA 12 deprecated)"},
  {"1.28", "Jul 2026", "1.22",  13, 26, 5, ""},
  {"1.29", "Aug 2026", "1.22",  13, 26, 5, ""},
});

// CPU kernels, from docs/OperatorKernels.md across releases. Only rows that were clear of a
// release's branch point are listed.
constexpr std::array kNotes = std::to_array<OperatorNote>({
  {"", "Pad", 19, "mode", "wrap", "1.16", "Pad-19's 'wrap' mode", false},
  {"", "DFT", 20, "", "", "1.17", "DFT-20", false},
  {"", "AffineGrid", 20, "", "", "1.17", "AffineGrid-20", true},
  {"", "IsInf", 20, "", "", "1.17", "IsInf-20", false},
  {"", "IsNaN", 20, "", "", "1.17", "IsNaN-20", false},
  {"", "GridSample", 20, "", "", "1.17", "GridSample-20", false},
  {"", "Gelu", 20, "", "", "1.18", "Gelu-20", true},
  {"", "ImageDecoder", 20, "", "", "", "ImageDecoder-20", false},
  {"ai.onnx.ml", "TreeEnsemble", 5, "", "", "1.21", "TreeEnsemble (ai.onnx.ml 5)", false},
  {"", "RMSNormalization", 23, "", "", "1.23", "RMSNormalization-23", true},
  {"", "RotaryEmbedding", 23, "", "", "1.23", "RotaryEmbedding-23", true},
  {"", "Attention", 23, "", "", "1.23", "Attention-23", true},
  {"", "TensorScatter", 24, "", "", "1.25", "TensorScatter-24", false},
});
// clang-format on

// "1.16.3" -> {1, 16}; nullopt when it is not MAJOR.MINOR[.PATCH].
std::optional<std::pair<int, int>> ParseVersion(std::string_view text) {
  int major = 0;
  int minor = 0;
  auto [p, e] = std::from_chars(text.data(), text.data() + text.size(), major);
  if (e != std::errc() || p == text.data() + text.size() || *p != '.') return std::nullopt;
  auto [q, f] = std::from_chars(p + 1, text.data() + text.size(), minor);
  if (f != std::errc() || (q != text.data() + text.size() && *q != '.')) return std::nullopt;
  return std::pair{major, minor};
}

bool Older(std::string_view a, std::string_view b) { return ParseVersion(a) < ParseVersion(b); }

// The newest release that loads IR `ir` and ai.onnx `opset`, for the fix.
const OrtRelease* FirstLoading(int ir, int opset, int ml_opset) {
  for (const OrtRelease& r : kReleases) {
    if (ir <= r.max_ir && opset <= r.max_opset && ml_opset <= r.max_ml_opset) return &r;
  }
  return nullptr;
}

std::string DomainName(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

// Exporters' own spelling of the opset flag.
std::string ExportFix(int opset) {
  return fmt::format(
      "Export again with opset {0}: torch.onnx.export(..., opset_version={0}) (with PyTorch 2.x's default exporter "
      "also dynamo=False if the opset is below 18), or python -m tf2onnx.convert ... --opset {0}.",
      opset);
}

// The ai.onnx and ai.onnx.ml opsets a model imports (0 for none).
struct ImportedOpsets {
  int onnx = 0;
  int ml = 0;
};

ImportedOpsets ImportedOpsetsOf(const onnx::ModelProto& model) {
  ImportedOpsets opsets;
  for (const auto& import : model.opset_import()) {
    const std::string domain = DomainName(import.domain());
    if (domain == "ai.onnx") opsets.onnx = static_cast<int>(import.version());
    if (domain == "ai.onnx.ml") opsets.ml = static_cast<int>(import.version());
  }
  return opsets;
}

// What a refusal to load can be told besides exporting again: converting the file, and the first
// release that loads it as it is.
struct LoadFixes {
  std::string convert;
  std::string upgrade;
};

LoadFixes LoadFixesFor(const onnx::ModelProto& model, const OrtRelease& target, const ImportedOpsets& opsets) {
  const OrtRelease* loads = FirstLoading(static_cast<int>(model.ir_version()), opsets.onnx, opsets.ml);
  LoadFixes fixes;
  fixes.upgrade = loads == nullptr
                      ? ""
                      : fmt::format(" Or deploy ONNX Runtime {} or newer, the first that loads it.", loads->version);
  fixes.convert = fmt::format(
      " Or convert this file: ortkit convert MODEL --target-ort {} --out FILE (its outputs are compared with the "
      "original's before it is written).",
      target.version);
  return fixes;
}

Diagnosis IrVersionRefusal(const onnx::ModelProto& model, const OrtRelease& target, const ImportedOpsets& opsets,
                           const LoadFixes& fixes) {
  auto d = Diagnose("target.ir-version",
                    fmt::format("ONNX Runtime {} refuses the model: \"Unsupported model IR version: {}, max supported "
                                "IR version: {}\"",
                                target.version, model.ir_version(), target.max_ir),
                    Location{});
  d.fix = ExportFix(std::min(opsets.onnx, target.max_opset)) +
          fmt::format(
              " Exporters stamp the IR version of their ONNX package; with opset {} or lower, setting "
              "model.ir_version = {} before onnx.save is safe.{}",
              target.max_opset, target.max_ir, fixes.convert + fixes.upgrade);
  return d;
}

// One target.opset error per imported domain newer than `target` loads.
std::vector<Diagnosis> OpsetRefusals(const onnx::ModelProto& model, const OrtRelease& target, const LoadFixes& fixes) {
  std::vector<Diagnosis> out;
  for (const auto& import : model.opset_import()) {
    const std::string domain = DomainName(import.domain());
    const int max = domain == "ai.onnx" ? target.max_opset : domain == "ai.onnx.ml" ? target.max_ml_opset : -1;
    if (max < 0 || import.version() <= max) continue;
    auto d = Diagnose(
        "target.opset",
        fmt::format("ONNX Runtime {} refuses the model: \"ONNX Runtime only *guarantees* support for models stamped "
                    "with official released onnx opset versions. Opset {} is under development and support for this "
                    "is limited. The operator schemas and or other functionality may change before next ONNX release "
                    "and in this case ONNX Runtime will not guarantee backward compatibility. Current official "
                    "support for domain {} is till opset {}.\"",
                    target.version, import.version(), domain, max),
        Location{});
    if (domain == "ai.onnx") d.fix = ExportFix(max) + fixes.convert + fixes.upgrade;
    if (domain == "ai.onnx.ml") {
      d.fix =
          fmt::format("Convert the classic-ML part with target_opset={{'ai.onnx.ml': {}}} (skl2onnx, onnxmltools).{}",
                      max, fixes.upgrade);
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Whether `note` is about `node` in a model importing `imported` and loaded on `target`.
bool NoteApplies(const OperatorNote& note, const onnx::NodeProto& node, int imported, const OrtRelease& target) {
  if (node.op_type() != note.op_type || DomainName(node.domain()) != DomainName(std::string(note.domain)) ||
      imported < note.since_opset) {
    return false;
  }
  if (!note.first_release.empty() && !Older(target.version, note.first_release)) return false;
  return note.attribute.empty() ||
         std::any_of(node.attribute().begin(), node.attribute().end(),
                     [&](const onnx::AttributeProto& a) { return a.name() == note.attribute && a.s() == note.value; });
}

Diagnosis MissingKernel(const OperatorNote& note, const onnx::NodeProto& node, int imported, const OrtRelease& target) {
  Location at;
  at.node = node.name();
  at.op_type = node.op_type();
  auto d = Diagnose(
      "target.operator",
      fmt::format("ONNX Runtime {} loads opset {} but has no CPU kernel for {}{}: {}", target.version, imported,
                  note.subject,
                  note.first_release.empty() ? " (no release has one yet)"
                                             : fmt::format(" (it came in ONNX Runtime {})", note.first_release),
                  note.function ? "it runs expanded from its ONNX function definition instead of a kernel"
                                : "the session fails to load"),
      at);
  if (note.function) d.severity = Severity::kWarning;
  d.fix = note.first_release.empty()
              ? std::string("Replace the operator in the export, or run it outside the model.")
              : fmt::format(
                    "Deploy ONNX Runtime {} or newer, or export with an opset below {} so that the "
                    "exporter writes the operator's older form.",
                    note.first_release, note.since_opset);
  return d;
}

// The model loads on `target`; does every operator have a kernel there? One finding per node.
std::vector<Diagnosis> MissingKernels(const onnx::ModelProto& model, const OrtRelease& target,
                                      const ImportedOpsets& opsets) {
  std::vector<Diagnosis> out;
  std::set<std::string> reported;
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& node : graph.node()) {
      for (const OperatorNote& note : kNotes) {
        const int imported = note.domain == "ai.onnx.ml" ? opsets.ml : opsets.onnx;
        if (!NoteApplies(note, node, imported, target)) continue;
        if (!reported.insert(fmt::format("{}/{}", node.op_type(), node.name())).second) continue;
        out.push_back(MissingKernel(note, node, imported, target));
      }
    }
  });
  return out;
}

}  // namespace

std::span<const OrtRelease> OrtReleases() { return kReleases; }
std::span<const OperatorNote> OperatorNotes() { return kNotes; }

const OrtRelease* FindOrtRelease(std::string_view version) {
  const auto wanted = ParseVersion(version);
  if (!wanted) return nullptr;
  for (const OrtRelease& r : kReleases) {
    if (ParseVersion(r.version) == wanted) return &r;
  }
  return nullptr;
}

std::string KnownOrtReleases() {
  std::string out;
  for (const OrtRelease& r : kReleases) out += (out.empty() ? "" : ", ") + std::string(r.version);
  return out;
}

std::vector<Diagnosis> CheckTargetRuntime(const onnx::ModelProto& model, const OrtRelease& target) {
  const ImportedOpsets opsets = ImportedOpsetsOf(model);
  const LoadFixes fixes = LoadFixesFor(model, target, opsets);
  // ONNX Runtime checks the IR version first and stops there: so does this.
  if (model.ir_version() > target.max_ir) return {IrVersionRefusal(model, target, opsets, fixes)};
  std::vector<Diagnosis> refusals = OpsetRefusals(model, target, fixes);
  if (!refusals.empty()) return refusals;
  return MissingKernels(model, target, opsets);
}

}  // namespace ortkit
