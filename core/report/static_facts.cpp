#include "core/report/static_facts.h"

#include <cmath>

namespace kl::report {

std::string staticFactsText(const Telemetry& t)
{
    const auto count = [](std::int64_t n) { return std::to_string(n); };
    std::string text = (t.kernel.empty() ? std::string("the main kernel") : t.kernel) + ": ";
    text += t.registers > 0 ? std::to_string(t.registers) + " registers/thread" : "registers unknown";
    text += ", " + count(t.staticShared) + " B static + " + count(t.dynamicShared) + " B dynamic shared";
    text += t.spillStores > 0 || t.spillLoads > 0
        ? ", spills: " + count(t.spillStores) + " B stored, " + count(t.spillLoads) + " B loaded"
        : std::string(", no spills");
    text += ", stack " + count(t.stackFrame) + " B";
    if (t.gridBlocks > 0 || t.threadsPerBlock > 0)
        text += "; " + (t.gridBlocks > 0 ? count(t.gridBlocks) : std::string("?")) + " blocks x "
            + (t.threadsPerBlock > 0 ? std::to_string(t.threadsPerBlock) : std::string("?")) + " threads";
    if (t.blocksPerSm > 0)
        text += ", " + std::to_string(t.blocksPerSm) + " blocks/SM";
    if (t.theoreticalOccupancy > 0.0) {
        text += ", theoretical occupancy " + std::to_string(std::lround(t.theoreticalOccupancy * 100.0)) + "%";
        if (!t.occupancyLimiter.empty())
            text += " (limited by " + t.occupancyLimiter + ")";
    }
    if (t.tensorInstructions)
        text += "; " + t.tensorInstructions->text();
    return text;
}

} // namespace kl::report
