#pragma once
// A runner's evaluate reply (docs/runner-protocol.md) as a ResultRecord, so that the loop
// stores what the runner said without re-deriving the summary itself. The loop hands over the
// typed reply it decoded once; the JSON reader is for stored rows and recorded fixtures.
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <optional>

namespace kl::store {

// status, category, detail, verification, timing, device, profile, pc_sampling and the SM clock come across
// as they are. `sizes` holds each timed case's own figures; the headline median, p20, p80, cv,
// GB/s and % of copy are the first case's (never a mix of sizes), the speedup the geometric mean
// over the cases. Metrics are flattened from profile.kernels[] as "KERNEL/CASE/METRIC". The
// toolkit is device.runtime_toolkit unless `toolkit` is given. Size values (M, N, ...) are filled
// by the store from the session's problem when the result is recorded.
ResultRecord resultFromRunnerReply(const nlohmann::json& reply, const std::string& toolkit = {});

// The same record from the typed reply: the figures are read from the typed value, the verification,
// timing, device and profile columns hold its protocol JSON. For any reply R,
// resultFromEvaluateResult(R) equals resultFromRunnerReply(nlohmann::json(R)).
ResultRecord resultFromEvaluateResult(const protocol::EvaluateResult& reply, const std::string& toolkit = {});

// The other way: a stored result (a cache hit, a recorded session) as the runner's reply it was recorded
// from; nullopt when the row cannot be read as protocol v1.
std::optional<protocol::EvaluateResult> storedReply(const ResultRecord& result);

// A stored "device" column (a result's, or a session's device info) as the runner described it, decoded
// once here for the readers; nullopt when absent or not a device description.
std::optional<protocol::DeviceDescription> storedDevice(const nlohmann::json& device);
// A stored "timing" or "verification" column as the runner's typed value; nullopt when absent or not
// readable as protocol v1. What readers read instead of the column's keys.
std::optional<protocol::Timing> storedTiming(const nlohmann::json& timing);
std::optional<protocol::Verification> storedVerification(const nlohmann::json& verification);
// A stored compile record's static facts (its "telemetry"); empty where it has none.
KernelStatics storedStatics(const nlohmann::json& compile);

} // namespace kl::store
