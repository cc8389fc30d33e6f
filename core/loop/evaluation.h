#pragma once
// The pieces of one evaluation that the loop records and that findings are computed from.
#include "core/compile/static_report.h"
#include "core/findings/telemetry.h"
#include "core/loop/comparison.h"
#include "core/loop/loop_values.h"
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct EvaluationArtifacts {
    std::optional<StaticReport> report;
    std::optional<protocol::EvaluateResult> result;
    store::CompileRecord compile; // the compile report as stored
    std::optional<Telemetry> statics; // the static facts findings read (stored as compile.statics)
    std::vector<SizeTiming> timings; // per main size, for the noise-aware comparison
    std::string cacheKey;
};

// The flat static facts findings read, for the main kernel at the first main size. `kernel` picks
// a launch by name (source or lowered); empty picks the first. Stored as CompileRecord::statics.
Telemetry staticTelemetry(const StaticReport& report, const std::string& kernel = {});

// The tensor-core instructions in the code listings a stored compile record holds (store/code_listings.h):
// the SASS where nvdisasm ran, else the PTX; nothing when the row keeps no listing.
std::optional<lines::TensorInstructions> storedTensorInstructions(const store::CompileRecord& compile);

// What the findings read of a runner's typed reply on top of the static facts: the device, one timed
// case and one profiled kernel. An empty `kernel` / `sizeLabel` takes the static facts' kernel (else
// the first profiled) and the first timed case; anything absent stays unknown. Throws
// "findings.bad-telemetry" for a `kernel` or `sizeLabel` the reply does not hold.
Telemetry telemetryFromResult(const protocol::EvaluateResult& result, Telemetry statics = {},
    const std::string& kernel = {}, const std::string& sizeLabel = {});

// A recorded runner reply (a fixture, a dump) read as the loop reads a live one: decoded by the
// protocol, its optional "static" object (staticTelemetryFromJson's keys) as the static facts, then
// telemetryFromResult. Throws "findings.bad-telemetry" for a reply the protocol does not read, one with
// neither timing, profile nor static facts, PC samples that do not decode, or names it does not hold;
// loadTelemetry also "findings.unreadable" and "findings.bad-json".
Telemetry telemetryFromRecordedReply(
    const nlohmann::json& reply, const std::string& kernel = {}, const std::string& sizeLabel = {});
Telemetry loadTelemetry(
    const std::filesystem::path& path, const std::string& kernel = {}, const std::string& sizeLabel = {});

// The kernel the profile spent most time in (gpu__time_duration.sum), or empty.
std::string dominantKernel(const protocol::EvaluateResult& result);

// Per main size timings, for the noise-aware comparison.
std::vector<SizeTiming> timingsOf(const protocol::Timing& timing);

// The first main size's median, GB/s and % of copy, and the speedup as the geometric mean over
// the main sizes (with each size's own in speedupBySize).
void takeFigures(IterationOutcome& outcome, const protocol::Timing& timing);

// One line for the engineer and the proposer: which case failed, where, by how much.
std::string verificationBrief(const protocol::EvaluateResult& result);

} // namespace kl
