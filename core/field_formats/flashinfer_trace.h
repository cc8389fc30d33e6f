#pragma once
// Sessions as a FlashInfer Trace dataset (flashinfer-ai/flashinfer-bench, docs/flashinfer_trace/), in
// its folder layout:
//   definitions/<op_type>/<definition>.json                      the problem (flashinfer_definition.h)
//   workloads/<op_type>/<definition>.jsonl                       its main and fuzz size sets
//   solutions/<author>/<op_type>/<definition>/<solution>.json    each evaluated kernel
//   traces/<author>/<op_type>/<definition>.jsonl                 each evaluation, one line per main size
// The author is who proposed the kernel: "baseline" (the problem's), "inductor", "kernelloop-tuner",
// "kernelloop-llm", "human". Every trace names a solution that is in solutions/, failed ones included
// (FlashInfer-Bench's validator refuses a trace whose solution it cannot find); the passing kernels are
// those with PASSED traces. A trace's status is the evaluation's real one (flashinfer_names.h);
// latency_ms is the median of the size's timed runs (cold L2, CUDA events), reference_latency_ms the
// PyTorch reference timed in the same job (eager) where there is one, else the problem's baseline timed in
// the same job; each trace's "kernelloop" field says which, with the statistic, spread and clocks.
// What was written is checked against the schema (flashinfer_check.h) before the export returns.
#include "core/field_formats/export_redaction.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::fieldformats {

struct TraceExportOptions {
    ExportSecrets secrets;
    bool overwrite = false; // write into a folder that is not empty (replacing files of the same names)
};

struct TraceExportSummary {
    std::vector<std::string> definitions;
    int workloads = 0;
    int solutions = 0;
    int traces = 0;
    int skipped = 0; // iterations no kernel was judged in (refused, steered, proposer failures)
    std::vector<std::string> schemaProblems; // what the schema check found in the written files (empty: none)
};

// Throws kl::Error "trace.not-a-folder", "trace.folder-not-empty" (unless overwrite), "trace.write-failed",
// "trace.unsupported-dtype", and the store's errors.
TraceExportSummary exportFlashInferTrace(const store::Store& store, const std::vector<std::int64_t>& sessions,
    const std::filesystem::path& dir, const TraceExportOptions& options);

// Writes `text` to `path`, creating its folders; "trace.write-failed" when it cannot.
void writeExportFile(const std::filesystem::path& path, const std::string& text);
// Whether `dir` may receive an export: missing, an empty folder, or (with overwrite) any folder.
void checkExportFolder(const std::filesystem::path& dir, bool overwrite);

} // namespace kl::fieldformats
