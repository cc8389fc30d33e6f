#pragma once
// Kernel trajectories as JSONL for training and study: schema "kernelloop-trajectories", version 1.0.0
// (docs/formats.md). One "session" line per session, then one "iteration" line per iteration: the prompt
// messages and the reply of each LLM exchange (keys never: every string passes the export redactor), the
// kernel and its unified diff to its parent, the compile's category and log, the verdict with the error
// report of each failing case, the timings of each main size with the statistic (the median) and its
// spread, the findings, the proposer, and the engineer's decision with its reason or steering text.
// Then "preference" lines: two proposals from the same parent, one kept and one refused, with who
// decided ("engineer": accepted or edited against rejected or steered, in a review session;
// "measurement": the loop kept one for its time and reverted the other).
//
// The engineer's decision of an iteration: reject and steer as recorded; in a review session every
// proposal that ran was accepted by the engineer, or edited (the candidate then is the engineer's,
// proposer "human"); without review the loop decided (auto-keep, auto-revert).
#include "core/field_formats/export_redaction.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::fieldformats {

inline constexpr const char* kTrajectorySchema = "kernelloop-trajectories";
inline constexpr const char* kTrajectoryVersion = "1.0.0";

struct TrajectorySummary {
    int sessions = 0;
    int iterations = 0;
    int preferencePairs = 0;
};

// The lines, each one JSON object, for the sessions in order.
std::vector<Json> trajectoryRecords(
    const store::Store& store, const std::vector<std::int64_t>& sessions, TrajectorySummary* summary = nullptr);

// Writes them to `file` (a regular file; an existing one only with overwrite), redacted. Throws
// "trace.write-failed", and store::checkExportTarget's "store.export-*".
TrajectorySummary exportTrajectories(const store::Store& store, const std::vector<std::int64_t>& sessions,
    const std::filesystem::path& file, const ExportSecrets& secrets, bool overwrite);

} // namespace kl::fieldformats
