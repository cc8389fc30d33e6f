#pragma once
// Internal to the findings part: what the rule files share.
#include "core/findings/finding.h"
#include "core/findings/telemetry.h"
#include "core/findings/thresholds.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::rules {

struct Context {
    const Telemetry& t;
    const FindingThresholds& th;
    std::vector<Finding>& out;
};

// Where the kernel sits on the roofline of measured copy bandwidth and peak FLOP/s.
enum class Bound { Memory, Balanced, Compute };
struct Roofline {
    double intensity = 0.0; // FLOP per byte
    double ridge = 0.0; // FLOP per byte where the two ceilings meet
    Bound bound = Bound::Memory;
};
std::optional<Roofline> roofline(const Telemetry& t, const FindingThresholds& th);
// True unless the roofline says compute-bound: the memory rules apply when it is unknown.
bool notComputeBound(const Telemetry& t, const FindingThresholds& th);

// A positive, finite value or nothing: zero, negative and NaN timings mean "not measured".
std::optional<double> positive(std::optional<double> value);

// Fixed-point text for titles: num(26.54) = "27", num(3.14159, 1) = "3.1".
std::string num(double value, int decimals = 0);
// Counts for titles: count(2883584) = "2.9M", count(12345) = "12.3k", count(512) = "512".
std::string count(double value);

// Adds a finding; priority = severity rank (0, 1, 2) + impact clamped to [0, 0.999].
Finding& add(
    Context& c, std::string id, Finding::Severity severity, double impact, std::string title, std::string explanation);

void occupancyRules(Context& c); // occupancy.*, waves.tail-effect, grid.too-few-blocks
void localMemoryRules(Context& c); // local-memory.*
void memoryRules(Context& c); // roofline.*, bandwidth.*, compute.under-ceiling, dram.*, memory.*, cache.*,
                              // shared.bank-conflicts, throughput.latency-bound
void computeRules(Context& c); // compute.no-tensor-instructions, compute.tensor-pipe
void stallRules(Context& c); // stall.<reason>
void timingRules(Context& c); // launch.*, timing.noisy
void lineRules(Context& c); // lines.hot-line, lines.samples-dropped

} // namespace kl::rules
