#pragma once
// A runner's evaluate reply (docs/runner-protocol.md) as a ResultRecord, so that the loop
// stores what the runner said without re-deriving the summary itself.
#include "core/store/records.h"

namespace kl::store {

// status, category, detail, verification, timing, device, profile and the SM clock come across
// as they are. The summary columns come from the timed cases: with one case, its figures; with
// several main sizes, the geometric mean over the cases of median, p20, p80, GB/s, % of copy and
// speedup, and the largest cv. Metrics are flattened from profile.kernels[] as
// "KERNEL/CASE/METRIC". The toolkit is device.runtime_toolkit unless `toolkit` is given.
ResultRecord resultFromRunnerReply(const nlohmann::json& reply, const std::string& toolkit = {});

} // namespace kl::store
