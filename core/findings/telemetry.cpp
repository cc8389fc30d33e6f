#include "core/findings/telemetry.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace kl {

using nlohmann::json;

std::optional<double> Telemetry::metric(const std::string& name) const
{
    const auto it = metrics.find(name);
    if (it == metrics.end() || !std::isfinite(it->second))
        return std::nullopt;
    return it->second;
}

std::optional<double> Telemetry::percent(const std::string& name) const
{
    const auto value = metric(name);
    if (!value)
        return std::nullopt;
    return std::clamp(*value, 0.0, 100.0);
}

std::string metric::stallRatio(const std::string& reason)
{
    return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

double peakFp32Tflops(int smCount, double smClockMhz, const std::string& computeCapability)
{
    // FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, arithmetic throughput).
    static const std::map<std::string, int> lanes { { "7.0", 64 }, { "7.5", 64 }, { "8.0", 64 }, { "8.6", 128 },
        { "8.7", 128 }, { "8.9", 128 }, { "9.0", 128 }, { "10.0", 128 }, { "12.0", 128 } };
    const auto it = lanes.find(computeCapability);
    if (it == lanes.end() || smCount <= 0 || !(smClockMhz > 0))
        return 0.0;
    return smCount * it->second * 2.0 * smClockMhz * 1e6 / 1e12;
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& message)
{
    throw Error("findings.bad-telemetry", {}, where, message);
}

// A finite number at `key`, or nothing (absent, null, a string, NaN).
std::optional<double> number(const json& object, const char* key)
{
    if (!object.is_object())
        return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number())
        return std::nullopt;
    const double value = it->get<double>();
    return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::string text(const json& object, const char* key)
{
    if (!object.is_object())
        return {};
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

template <typename T> void readInto(T& target, const json& object, const char* key)
{
    if (const auto value = number(object, key))
        target = static_cast<T>(*value);
}

void readStatic(Telemetry& t, const json& s)
{
    if (!s.is_object())
        bad("static", "expected an object");
    if (const auto name = text(s, "kernel"); !name.empty())
        t.kernel = name;
    readInto(t.registers, s, "registers");
    readInto(t.threadsPerBlock, s, "threads_per_block");
    readInto(t.staticShared, s, "static_shared");
    readInto(t.dynamicShared, s, "dynamic_shared");
    readInto(t.stackFrame, s, "stack_frame");
    readInto(t.spillStores, s, "spill_stores");
    readInto(t.spillLoads, s, "spill_loads");
    readInto(t.blocksPerSm, s, "blocks_per_sm");
    readInto(t.theoreticalOccupancy, s, "theoretical_occupancy");
    readInto(t.gridBlocks, s, "grid_blocks");
    t.occupancyLimiter = text(s, "occupancy_limiter");
    // Counted in the compiled code with the static report; absent from rows stored before it was.
    if (const auto found = s.find("tensor_instructions"); found != s.end() && found->is_object()) {
        lines::TensorInstructions tensor;
        readInto(tensor.count, *found, "count");
        tensor.source = text(*found, "source");
        if (const auto ops = found->find("by_opcode"); ops != found->end() && ops->is_object())
            for (const auto& [opcode, n] : ops->items())
                if (n.is_number_integer())
                    tensor.byOpcode[opcode] = n.get<std::int64_t>();
        t.tensorInstructions = tensor;
    }
}

} // namespace

void deriveRates(Telemetry& t, std::optional<double> copyMedianUs, double deviceCopyGbps)
{
    if (t.bytes && copyMedianUs && *copyMedianUs > 0)
        t.copyGbps = *t.bytes / *copyMedianUs / 1e3;
    else if (deviceCopyGbps > 0)
        t.copyGbps = deviceCopyGbps;
    const bool timed = t.medianUs && *t.medianUs > 0;
    if (!t.gbps && t.bytes && timed)
        t.gbps = *t.bytes / *t.medianUs / 1e3;
    if (!t.tflops && t.flops && timed)
        t.tflops = *t.flops / *t.medianUs / 1e6;
    if (!t.pctOfCopy && t.gbps && t.copyGbps && *t.copyGbps > 0)
        t.pctOfCopy = 100.0 * *t.gbps / *t.copyGbps;
}

Telemetry staticTelemetryFromJson(const json& statics)
{
    Telemetry t;
    readStatic(t, statics);
    return t;
}

json staticTelemetryJson(const Telemetry& t)
{
    json out {
        { "kernel", t.kernel },
        { "registers", t.registers },
        { "threads_per_block", t.threadsPerBlock },
        { "static_shared", t.staticShared },
        { "dynamic_shared", t.dynamicShared },
        { "stack_frame", t.stackFrame },
        { "spill_stores", t.spillStores },
        { "spill_loads", t.spillLoads },
        { "blocks_per_sm", t.blocksPerSm },
        { "theoretical_occupancy", t.theoreticalOccupancy },
        { "occupancy_limiter", t.occupancyLimiter },
        { "grid_blocks", t.gridBlocks },
    };
    if (t.tensorInstructions)
        out["tensor_instructions"] = { { "count", t.tensorInstructions->count },
            { "source", t.tensorInstructions->source }, { "by_opcode", t.tensorInstructions->byOpcode } };
    return out;
}

} // namespace kl
