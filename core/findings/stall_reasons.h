#pragma once
// Warp stall reasons as Nsight Compute names them in "Warp State Statistics", with what each one
// means and what usually helps. The CUPTI metric for reason R is
// smsp__average_warps_issue_stalled_<R>_per_issue_active.ratio: cycles a warp spent in that state
// per issued instruction. "selected" (the warp issued) is listed but is not a stall.
#include <string>
#include <vector>

namespace kl {

struct StallReason {
    std::string name; // as in the metric: "long_scoreboard"
    std::string label; // as Nsight Compute shows it: "Stall Long Scoreboard"
    std::string meaning; // completes "Warps were ..."
    std::vector<std::string> directions;
    std::vector<std::string> tunerHints;
    bool isStall = true; // false for "selected"
};

// Every reason on sm_90, in a fixed order.
const std::vector<StallReason>& stallReasons();
const StallReason* stallReason(const std::string& name);

} // namespace kl
