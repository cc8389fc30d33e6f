#pragma once
// A session's evaluations as Kernel Tuner's T4 results JSON (kernel_tuner/schema/T4/1.0.0/
// results-schema.json, what kernel_tuner.file_utils.store_output_file writes and KTdashboard reads):
// one result per evaluated iteration, its tunables as the configuration, "time" (the first main size's
// median, ms) as the objective, each main size's median and the other figures as measurements, the timed
// runs of the first size as times.runtimes, and invalidity from the verdict: correct, compile, runtime,
// correctness, timeout. Refused proposals were never evaluated and are left out.
#include "core/field_formats/export_redaction.h"

#include <cstdint>
#include <filesystem>

namespace kl::store {
class Store;
}

namespace kl::fieldformats {

inline constexpr const char* kT4SchemaVersion = "1.0.0";

Json kernelTunerResults(const store::Store& store, std::int64_t session);
// The schema's own rules (required fields, the invalidity words, the version pattern): empty when it passes.
std::vector<std::string> checkKernelTunerResults(const Json& results);
// Writes kernelTunerResults to `file`; "store.export-*" (checkExportTarget), "trace.write-failed".
int exportKernelTuner(const store::Store& store, std::int64_t session, const std::filesystem::path& file,
    const ExportSecrets& secrets, bool overwrite);

} // namespace kl::fieldformats
