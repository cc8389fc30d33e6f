#include "core/report/static_severity.h"

#include <cstdio>

namespace kl::report {

const char* severityName(Severity s)
{
    return s == Severity::Critical ? "critical" : s == Severity::Warning ? "warning" : "none";
}

Severity staticSeverity(const StaticReport::PerLaunch& l, StaticFigure figure, const FindingThresholds& t)
{
    const auto& r = l.resources;
    const auto& o = l.occupancy;
    switch (figure) {
    case StaticFigure::SpillStores:
        return r.spillStoreBytes > 0 ? Severity::Critical : Severity::None;
    case StaticFigure::SpillLoads:
        return r.spillLoadBytes > 0 ? Severity::Critical : Severity::None;
    case StaticFigure::StackFrame:
        return r.stackFrameBytes > 0 ? Severity::Warning : Severity::None;
    case StaticFigure::Occupancy:
        if (!o.error.empty() || o.theoretical < t.occupancyCritical)
            return Severity::Critical;
        return o.theoretical < t.occupancyLow ? Severity::Warning : Severity::None;
    case StaticFigure::Limiter:
        return o.error.empty() && o.theoretical < t.occupancyLow ? Severity::Warning : Severity::None;
    case StaticFigure::Shared:
        return l.needsSharedOptIn ? Severity::Warning : Severity::None;
    case StaticFigure::Waves: // less than one wave leaves SMs idle
        return l.waves > 0.0 && l.waves < 1.0 ? Severity::Warning : Severity::None;
    }
    return Severity::None;
}

std::vector<std::string> staticSeverityLines(const StaticReport::PerLaunch& l, const FindingThresholds& t)
{
    char what[160];
    std::vector<std::pair<Severity, std::string>> found;
    auto add = [&](StaticFigure f, const std::string& text) {
        if (const auto s = staticSeverity(l, f, t); s != Severity::None)
            found.emplace_back(s, text);
    };
    add(StaticFigure::SpillStores, std::to_string(l.resources.spillStoreBytes) + " B of spill stores");
    add(StaticFigure::SpillLoads, std::to_string(l.resources.spillLoadBytes) + " B of spill loads");
    add(StaticFigure::StackFrame, std::to_string(l.resources.stackFrameBytes) + " B stack frame (local memory)");
    if (!l.occupancy.error.empty()) {
        add(StaticFigure::Occupancy, "cannot launch: " + l.occupancy.error);
    } else {
        std::snprintf(what, sizeof what, "theoretical occupancy %.1f %%, limited by %s",
            100.0 * l.occupancy.theoretical, occupancyLimiterName(l.occupancy.limiter));
        add(StaticFigure::Occupancy, what);
    }
    add(StaticFigure::Shared, std::to_string(l.sharedBytes) + " B of shared memory needs the opt-in");
    std::snprintf(what, sizeof what, "%.2f waves: some SMs stay idle", l.waves);
    add(StaticFigure::Waves, what);
    std::vector<std::string> lines;
    for (const auto level : { Severity::Critical, Severity::Warning })
        for (const auto& [s, text] : found)
            if (s == level)
                lines.push_back(std::string(severityName(s)) + ": " + l.kernel + " at " + l.sizes.label + ": " + text);
    return lines;
}

} // namespace kl::report
