#pragma once
// A runner's evaluate reply (docs/runner-protocol.md) as a ResultRecord and back, so that the loop
// stores what the runner said without re-deriving the summary itself: the record holds the reply's
// typed parts as they are; JSON is written only when the store writes the row.
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <optional>

namespace kl::store {

// status, category, detail, verification, timing, device, profile, pc_sampling and the SM clock come across
// as they are. `sizes` holds each timed case's own figures; the headline median, p20, p80, cv,
// GB/s and % of copy are the first case's (never a mix of sizes), the speedup the geometric mean
// over the cases. Metrics are the profile's kernels' (kernel, case, metric). The toolkit is
// device.runtime_toolkit unless `toolkit` is given. Size values (M, N, ...) are filled by the store
// from the session's problem when the result is recorded. A pc_sampling that does not decode is left out.
ResultRecord resultFromEvaluateResult(const protocol::EvaluateResult& reply, const std::string& toolkit = {});

// The other way: a stored result (a cache hit, a recorded session) as the runner's reply it was
// recorded from; nullopt when its status or category is not protocol v1's.
std::optional<protocol::EvaluateResult> storedReply(const ResultRecord& result);

// The result's parts as the store keeps them (status, category, detail, verification, timing,
// profile, compile, device, pc_sampling): what `show --json` prints.
nlohmann::json storedColumns(const ResultRecord& result);

// Each timed case's own figures, in order; figures that are not finite numbers are left out.
std::vector<SizeResult> sizeResultsOf(const protocol::Timing& timing);

// A compile record's static facts as the charts draw them; empty where it has none.
KernelStatics storedStatics(const CompileRecord& compile);

} // namespace kl::store
