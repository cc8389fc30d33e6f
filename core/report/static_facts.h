#pragma once
// An iteration's static facts (what ptxas and the occupancy calculator said of its main kernel, as the
// findings read them) in words, for `show`: registers, shared and local memory, the launch and the
// theoretical occupancy with what limits it, the tensor-core instructions where the code was kept.
#include "core/findings/telemetry.h"

#include <string>

namespace kl::report {

// "layernorm_gelu: 40 registers/thread, 128 B static + 0 B dynamic shared, no spills, stack 0 B;
// 8192 blocks x 256 threads, 6 blocks/SM, theoretical occupancy 75% (limited by registers)".
std::string staticFactsText(const Telemetry& facts);

} // namespace kl::report
