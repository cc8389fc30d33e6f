#pragma once
// The words FlashInfer Trace uses for what KernelLoop records (docs/flashinfer_trace/ of
// flashinfer-ai/flashinfer-bench): dtypes, evaluation statuses, hardware names, and the safe names its
// folder layout needs.
#include "core/model/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kl::fieldformats {

// "float16", "bfloat16", "float32", "int8", "int32", "int64"; nullopt for f64 and u8, which the
// Definition's dtype list does not have.
std::optional<std::string_view> flashInferDType(DType type);
// The KernelLoop dtype of a FlashInfer one; nullopt for those KernelLoop has no tensors of
// (float8_*, float4_e2m1, int16, bool).
std::optional<DType> kernelLoopDType(std::string_view flashInferName);

// A stored result's category as an evaluation status: "PASSED", "INCORRECT_NUMERICAL" (wrong values,
// NaN, outputs left unwritten or stale), "COMPILE_ERROR" (compile.*, plan.*, candidate.*: it never ran),
// "TIMEOUT", "RUNTIME_ERROR" (launch failures, faults, crashes, a write outside the output, a changed
// input, a time below the physical floor). Nullopt where no kernel was judged: a refused or steered
// proposal, a proposer's failure, a cancelled job.
std::optional<std::string_view> evaluationStatus(std::string_view category);

// "NVIDIA H200" -> "NVIDIA_H200", as the Trace's environment and a Solution's target_hardware name GPUs.
std::string hardwareName(const std::string& deviceName);
// Letters, digits and '_' only (anything else becomes '_', lower case): definition and solution names
// and the folder names of the layout (definitions/<op_type>/<name>.json, solutions/<author>/...).
std::string safeName(const std::string& text);
// A UUID-shaped text made from a hash: the same workload gets the same uuid in every export.
std::string uuidFromHash(const std::string& hexHash);
// Milliseconds since the Unix epoch as ISO 8601 UTC ("2026-11-29T13:38:04Z").
std::string isoTimestamp(std::int64_t ms);

} // namespace kl::fieldformats
