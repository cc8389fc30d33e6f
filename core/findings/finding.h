#pragma once
// A finding: one thing the telemetry says about a kernel, with the numbers behind it and what a
// kernel engineer would try next. Findings are stored, shown in the findings panel, put into LLM
// prompts and used by the tuner to order its moves (tunerHints).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kl {

struct Finding {
    enum class Severity { Info, Warning, Critical };

    std::string id; // stable, e.g. "occupancy.register-limited", "stall.long_scoreboard"
    Severity severity = Severity::Info;
    std::string title; // one line with the key numbers
    std::string explanation; // why it matters, in a sentence or two
    std::map<std::string, double> evidence; // the numbers that triggered it, by name
    std::vector<std::string> directions; // what to try, in a kernel engineer's words
    std::vector<std::string> tunerHints; // machine-readable moves (see below)
    double priority = 0.0; // higher first: severity rank + estimated impact (0..1)

    bool operator==(const Finding&) const = default;
};

// The tuner hints findings may carry. The tuner maps them to a candidate's tunables by name and
// meaning (THREADS, VEC, ROWS, TILE_*); a hint it cannot map is ignored.
namespace hint {
inline constexpr const char* kFewerThreads = "fewer-threads";
inline constexpr const char* kMoreThreads = "more-threads";
inline constexpr const char* kSmallerTiles = "smaller-tiles";
inline constexpr const char* kFewerRegisters = "fewer-registers";
inline constexpr const char* kLessSharedMemory = "less-shared-memory";
inline constexpr const char* kWiderVectors = "wider-vectors";
inline constexpr const char* kMoreBytesInFlight = "more-bytes-in-flight";
inline constexpr const char* kMoreRowsPerBlock = "more-rows-per-block";
inline constexpr const char* kMoreBlocks = "more-blocks";
inline constexpr const char* kFewerBlocks = "fewer-blocks";
inline constexpr const char* kMoreWorkPerThread = "more-work-per-thread";
inline constexpr const char* kReuseOnChip = "reuse-on-chip";
inline constexpr const char* kFewerBarriers = "fewer-barriers";
inline constexpr const char* kPadShared = "pad-shared-memory";
inline constexpr const char* kMoreIlp = "more-ilp";
inline constexpr const char* kFewerBytes = "fewer-bytes";
inline constexpr const char* kLessUnrolling = "less-unrolling";
inline constexpr const char* kStaticIndexing = "static-indexing";
inline constexpr const char* kFuseLaunches = "fuse-launches";
// Compute-bound kernels: more FLOPs per byte fetched into the SM (bigger block tiles, more outputs per
// thread), a deeper pipeline feeding the math, and the tensor cores themselves (no tunable does that:
// the LLM's move).
inline constexpr const char* kLargerTiles = "larger-tiles";
inline constexpr const char* kMoreStages = "more-stages";
inline constexpr const char* kTensorCores = "use-tensor-cores";
} // namespace hint

std::string_view severityName(Finding::Severity severity); // "info", "warning", "critical"
std::optional<Finding::Severity> parseSeverity(std::string_view name);

// Storage form: {"id", "severity", "title", "explanation", "evidence":{...}, "directions":[...],
// "tuner_hints":[...], "priority"}. findingFromJson throws kl::Error "findings.bad-json" naming
// the field; unknown fields are ignored.
nlohmann::json toJson(const Finding& finding);
nlohmann::json toJson(const std::vector<Finding>& findings);
Finding findingFromJson(const nlohmann::json& json);
std::vector<Finding> findingsFromJson(const nlohmann::json& json);

} // namespace kl
