#include "core/findings/telemetry.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

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

void readDevice(Telemetry& t, const json& device, const json& timing)
{
    readInto(t.smCount, device, "sm_count");
    if (const auto peak = number(device, "peak_tflops")) {
        t.peakTflops = *peak;
        return;
    }
    // Prefer the clock recorded with the timing: clocks are not locked (GPU-NOTES.md).
    const auto clock = number(timing, "sm_clock_mhz") ? number(timing, "sm_clock_mhz") : number(device, "sm_clock_mhz");
    t.peakTflops = peakFp32Tflops(t.smCount, clock.value_or(0.0), text(device, "compute_capability"));
}

void readTiming(Telemetry& t, const json& timing, const std::string& sizeLabel, double deviceCopyGbps)
{
    const auto cases = timing.find("cases");
    if (cases == timing.end() || !cases->is_array())
        bad("timing.cases", "expected an array");
    const json* chosen = nullptr;
    for (const auto& c : *cases) {
        if (sizeLabel.empty() || text(c, "label") == sizeLabel) {
            chosen = &c;
            break;
        }
    }
    if (!chosen) {
        if (!sizeLabel.empty() && !cases->empty())
            bad("timing.cases", "no timed case labelled \"" + sizeLabel + "\"");
        return;
    }
    const json& c = *chosen;
    t.sizeLabel = text(c, "label");
    t.bytes = number(c, "bytes");
    t.flops = number(c, "flops");
    const json candidate = c.value("candidate", json::object());
    t.medianUs = number(candidate, "median_us");
    t.cv = number(candidate, "cv");
    t.graphMedianUs = number(candidate, "graph_median_us");
    t.gbps = number(c, "gbps");
    t.tflops = number(c, "tflops");
    t.pctOfCopy = number(c, "pct_of_copy");
    t.pctOfSol = number(c, "pct_of_sol");
    t.solBound = parseBound(text(c, "sol_bound"));
    t.precision = parsePrecision(text(c, "compute"));
    if (const auto ceiling = number(c, "ceiling_tflops"); ceiling && *ceiling > 0)
        t.peakTflops = *ceiling; // the precision's, at the timing's clock

    deriveRates(t, number(c.value("copy", json::object()), "median_us"), deviceCopyGbps);
}

// `strict`: the caller named the kernel, so a profile that never mentions it is an error;
// otherwise the static report's name is preferred and the first kernel at the size taken when it
// is not there.
void readProfile(
    Telemetry& t, const json& profile, const std::string& kernel, const std::string& sizeLabel, bool strict)
{
    if (text(profile, "status") != "ok")
        return; // unavailable or skipped: the counter rules stay silent
    const auto kernels = profile.find("kernels");
    if (kernels == profile.end() || !kernels->is_array())
        bad("profile.kernels", "expected an array");
    const json* chosen = nullptr;
    const json* sameCase = nullptr;
    bool kernelSeen = false;
    for (const auto& k : *kernels) {
        const auto name = text(k, "kernel");
        kernelSeen = kernelSeen || name == kernel;
        if (!sizeLabel.empty() && k.contains("case") && text(k, "case") != sizeLabel)
            continue;
        if (!sameCase)
            sameCase = &k;
        if (kernel.empty() || name == kernel) {
            chosen = &k;
            break;
        }
    }
    if (strict && !kernelSeen && !kernels->empty())
        bad("profile.kernels", "no profile for kernel \"" + kernel + "\"");
    if (!chosen && !strict)
        chosen = sameCase;
    if (!chosen)
        return; // profiled at another size only: the counter rules stay silent
    if (t.kernel.empty())
        t.kernel = text(*chosen, "kernel");
    const auto metrics = chosen->find("metrics");
    if (metrics == chosen->end() || !metrics->is_object())
        bad("profile.kernels[].metrics", "expected an object");
    for (const auto& [name, value] : metrics->items()) {
        if (value.is_number())
            t.metrics[name] = value.get<double>();
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

Telemetry telemetryFromJson(const json& result, const std::string& kernel, const std::string& sizeLabel)
{
    if (!result.is_object())
        bad({}, "a runner result must be a JSON object");
    if (result.contains("v") && result["v"] != 1)
        bad("v", "unsupported protocol version");
    if (!result.contains("timing") && !result.contains("profile") && !result.contains("static"))
        bad({}, "neither timing, profile nor static resources");
    try {
        Telemetry t;
        t.kernel = kernel;
        const json none = json::object();
        const json& device = result.contains("device") && result["device"].is_object() ? result["device"] : none;
        const json& timing = result.contains("timing") && result["timing"].is_object() ? result["timing"] : none;
        if (result.contains("static") && !result["static"].is_null())
            readStatic(t, result["static"]);
        readDevice(t, device, timing);
        if (!timing.empty())
            readTiming(t, timing, sizeLabel, number(device, "copy_bandwidth_gbps").value_or(0.0));
        if (result.contains("profile") && result["profile"].is_object())
            readProfile(t, result["profile"], kernel.empty() ? t.kernel : kernel,
                sizeLabel.empty() ? t.sizeLabel : sizeLabel, !kernel.empty());
        if (result.contains("pc_sampling")) {
            try {
                t.lineSamples = lines::pcSamplingFromJson(result["pc_sampling"]);
            } catch (const Error& error) {
                bad("pc_sampling", error.where() + ": " + error.message());
            }
        }
        return t;
    } catch (const json::exception& e) {
        bad({}, e.what());
    }
}

Telemetry loadTelemetry(const std::filesystem::path& path, const std::string& kernel, const std::string& sizeLabel)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("findings.unreadable", path.string(), {}, "cannot open the file");
    std::stringstream buffer;
    buffer << in.rdbuf();
    json doc;
    try {
        doc = json::parse(buffer.str());
    } catch (const json::parse_error& e) {
        throw Error("findings.bad-json", path.string(), "byte " + std::to_string(e.byte), e.what());
    }
    try {
        return telemetryFromJson(doc, kernel, sizeLabel);
    } catch (const Error& e) {
        throw Error(e.category(), path.string(), e.where(), e.message());
    }
}

} // namespace kl
