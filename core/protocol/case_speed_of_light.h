#pragma once
// Speed of light of one timed case as the runner reports it (ceiling_tflops, sol_us, pct_of_sol,
// sol_bound): one rule for the runner and for the runner double that replays recorded timings.
#include "core/protocol/messages.h"

namespace kl::protocol {

// At the SM clock the runs left: the case's precision's ceiling from the architecture's rate, the floor
// (core/verify/speed_of_light.h), % of it and the bound. No ceiling without a precision or a known rate;
// the memory side alone then still gives % of SOL.
void addSpeedOfLight(CaseTiming& timed, const DeviceDescription& device, double clockMhz);

} // namespace kl::protocol
