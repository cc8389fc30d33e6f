#pragma once
// The FlashInfer Trace schema, checked in C++: the rules of flashinfer-bench's documentation
// (docs/flashinfer_trace/{definition,workload,solution,trace}.mdx) and of the pydantic models it
// documents (flashinfer_bench/data/*.py), written here from them, and the dataset layout its validator
// checks (docs/flashinfer_trace/validate.mdx: "layout", "definition", "workload", "solution", "trace").
// Each problem is one line "<file>: <where>: <what>"; none means the files pass.
#include "core/field_formats/export_redaction.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kl::fieldformats {

// `where` prefixes each problem ("definitions/gemm/gemm.json").
// A field, or null where it is missing; a field's text, empty where it is missing or not a string. The
// lenient readers of the format's files, for the checks and the import alike.
const Json& fieldOf(const Json& obj, const char* field);
std::string textOf(const Json& obj, const char* field);

std::vector<std::string> checkDefinition(const Json& definition, const std::string& where);
std::vector<std::string> checkSolution(const Json& solution, const std::string& where);
// A Trace line; workload-only (workloads/*.jsonl) when `workloadOnly`. With the definition, the
// workload's axes and inputs are checked against it too.
std::vector<std::string> checkTrace(
    const Json& trace, bool workloadOnly, const Json* definition, const std::string& where);
// A whole dataset folder: every file's schema, the layout's path rules, and that each workload and
// trace names a definition there, and each trace a solution there.
std::vector<std::string> checkTraceSet(const std::filesystem::path& dir);

} // namespace kl::fieldformats
