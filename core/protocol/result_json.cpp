// JSON of the result lines (describe, shutdown, evaluate).
#include "core/model/error.h"
#include "core/protocol/json_reader.h"
#include "core/protocol/messages.h"
#include "core/protocol/pc_sampling_json.h"
#include "core/protocol/wire.h"

namespace kl::protocol {

namespace {

constexpr std::array<std::pair<ProfileStatus, std::string_view>, 3> kProfileStatuses { {
    { ProfileStatus::Ok, "ok" },
    { ProfileStatus::Unavailable, "unavailable" },
    { ProfileStatus::Skipped, "skipped" },
} };

nlohmann::json optionalNumber(const std::optional<double>& value)
{
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json openResult(const ResultHeader& h)
{
    auto j = envelope("result", h.id);
    j["status"] = statusName(h.status);
    if (h.category)
        j["category"] = categoryName(*h.category);
    if (!h.detail.empty())
        j["detail"] = h.detail;
    return j;
}

Category readCategory(const JsonReader& r, const std::string& key)
{
    const auto text = r.string(key);
    if (const auto c = parseCategory(text))
        return *c;
    r.fail(key, "\"" + text + "\" is not a result category of protocol v1");
}

ResultHeader readHeader(const JsonReader& r)
{
    ResultHeader h;
    h.id = r.stringOr("id", ""); // empty: a bad-request answer to a line whose id could not be read
    const auto status = r.string("status");
    const auto s = parseStatus(status);
    if (!s)
        r.fail("status", "\"" + status + "\" is not ok, failed or error");
    h.status = *s;
    if (r.has("category"))
        h.category = readCategory(r, "category");
    h.detail = r.stringOr("detail", "");
    return h;
}

std::vector<std::int64_t> readIndex(const JsonReader& r, const std::string& key)
{
    std::vector<std::int64_t> index;
    for (const auto& i : r.arrayOr(key))
        index.push_back(i.asInteger());
    return index;
}

nlohmann::json toJson(const ErrorWindow& w)
{
    nlohmann::json expected = nlohmann::json::array(), actual = nlohmann::json::array();
    for (const double v : w.expected)
        expected.push_back(anyNumber(v));
    for (const double v : w.actual)
        actual.push_back(anyNumber(v));
    return { { "start", w.start }, { "expected", expected }, { "actual", actual } };
}

ErrorWindow readWindow(const JsonReader& r)
{
    ErrorWindow w;
    w.start = readIndex(r, "start");
    for (const auto& v : r.array("expected"))
        w.expected.push_back(readAnyNumber(v));
    for (const auto& v : r.array("actual"))
        w.actual.push_back(readAnyNumber(v));
    if (w.expected.size() != w.actual.size())
        r.fail("actual",
            "has " + std::to_string(w.actual.size()) + " values for " + std::to_string(w.expected.size())
                + " expected");
    return w;
}

nlohmann::json toJson(const CaseVerification& c)
{
    nlohmann::json j { { "label", c.label }, { "kind", caseKindName(c.kind) }, { "trial", c.trial },
        { "passed", c.passed }, { "elements", c.elements }, { "mismatches", c.mismatches },
        { "unwritten", c.unwritten }, { "nan", c.nan }, { "max_abs_error", anyNumber(c.maxAbsError) },
        { "max_rel_error", anyNumber(c.maxRelError) }, { "worst_index", c.worstIndex },
        { "worst_output", c.worstOutput } };
    if (c.category)
        j["category"] = categoryName(*c.category);
    j["window"] = c.window ? toJson(*c.window) : nlohmann::json(nullptr);
    return j;
}

CaseVerification readCaseVerification(const JsonReader& r)
{
    r.requireObject();
    CaseVerification c;
    c.label = r.string("label");
    const auto kind = r.string("kind");
    const auto k = parseCaseKind(kind);
    if (!k)
        r.fail("kind", "\"" + kind + "\" is not main, fuzz or padded");
    c.kind = *k;
    c.trial = static_cast<int>(r.integerOr("trial", 0));
    c.passed = r.boolean("passed");
    if (r.has("category"))
        c.category = readCategory(r, "category");
    c.elements = r.integerOr("elements", 0);
    c.mismatches = r.integerOr("mismatches", 0);
    c.unwritten = r.integerOr("unwritten", 0);
    c.nan = r.integerOr("nan", 0);
    if (r.value().contains("max_abs_error"))
        c.maxAbsError = readAnyNumber(JsonReader(r.value().at("max_abs_error"), r.pathOf("max_abs_error")));
    if (r.value().contains("max_rel_error"))
        c.maxRelError = readAnyNumber(JsonReader(r.value().at("max_rel_error"), r.pathOf("max_rel_error")));
    c.worstIndex = readIndex(r, "worst_index");
    c.worstOutput = r.stringOr("worst_output", "");
    if (auto w = r.optionalObject("window"))
        c.window = readWindow(*w);
    return c;
}

nlohmann::json toJson(const TimingSummary& t)
{
    nlohmann::json j { { "median_us", t.medianUs }, { "p20_us", t.p20Us }, { "p80_us", t.p80Us }, { "min_us", t.minUs },
        { "mean_us", t.meanUs }, { "cv", t.cv }, { "reps", t.reps },
        { "graph_median_us", optionalNumber(t.graphMedianUs) }, { "samples_us", t.samplesUs } };
    // Only from runners that report them: older fixtures keep their keys.
    if (t.medianLowUs && t.medianHighUs)
        j["median_ci_us"] = { *t.medianLowUs, *t.medianHighUs };
    if (!t.stoppedBy.empty())
        j["stopped_by"] = t.stoppedBy;
    return j;
}

TimingSummary readSummary(const JsonReader& r)
{
    TimingSummary t;
    t.medianUs = r.number("median_us");
    t.p20Us = r.numberOr("p20_us", t.medianUs);
    t.p80Us = r.numberOr("p80_us", t.medianUs);
    t.minUs = r.numberOr("min_us", t.medianUs);
    t.meanUs = r.numberOr("mean_us", t.medianUs);
    t.cv = r.numberOr("cv", 0.0);
    t.reps = static_cast<int>(r.integerOr("reps", 0));
    t.graphMedianUs = r.optionalNumber("graph_median_us");
    if (const auto ci = r.arrayOr("median_ci_us"); ci.size() == 2) {
        t.medianLowUs = ci[0].asNumber();
        t.medianHighUs = ci[1].asNumber();
    }
    t.stoppedBy = r.stringOr("stopped_by", "");
    for (const auto& s : r.arrayOr("samples_us"))
        t.samplesUs.push_back(s.asNumber());
    return t;
}

nlohmann::json toJson(const CaseTiming& c)
{
    nlohmann::json j { { "label", c.label }, { "bytes", wholeOrReal(c.bytes) }, { "flops", wholeOrReal(c.flops) },
        { "candidate", toJson(c.candidate) },
        { "baseline", c.baseline ? toJson(*c.baseline) : nlohmann::json(nullptr) },
        { "copy", c.copy ? toJson(*c.copy) : nlohmann::json(nullptr) }, { "gbps", c.gbps }, { "tflops", c.tflops },
        { "pct_of_copy", optionalNumber(c.pctOfCopy) },
        { "speedup_vs_baseline", optionalNumber(c.speedupVsBaseline) } };
    // Only with a PyTorch reference: older readers and fixtures see the same keys as before.
    if (c.eager) {
        j["eager"] = toJson(*c.eager);
        j["speedup_vs_eager"] = optionalNumber(c.speedupVsEager);
    }
    if (c.torchCompile) {
        j["torch_compile"] = toJson(*c.torchCompile);
        j["speedup_vs_compile"] = optionalNumber(c.speedupVsCompile);
    }
    if (!c.torchCompileError.empty())
        j["torch_compile_error"] = c.torchCompileError;
    if (!c.copySource.empty())
        j["copy_source"] = c.copySource;
    // Only where the request named a precision: older readers and fixtures see the same keys as before.
    if (c.compute)
        j["compute"] = precisionName(*c.compute);
    if (c.computeReason)
        j["compute_reason"] = ceilingReasonName(*c.computeReason);
    if (c.ceilingTflops)
        j["ceiling_tflops"] = *c.ceilingTflops;
    if (c.solUs)
        j["sol_us"] = *c.solUs;
    if (c.pctOfSol)
        j["pct_of_sol"] = *c.pctOfSol;
    if (c.solBound)
        j["sol_bound"] = boundName(*c.solBound);
    return j;
}

CaseTiming readCaseTiming(const JsonReader& r)
{
    r.requireObject();
    CaseTiming c;
    c.label = r.string("label");
    c.bytes = r.numberOr("bytes", 0.0);
    c.flops = r.numberOr("flops", 0.0);
    c.candidate = readSummary(r.object("candidate"));
    if (auto b = r.optionalObject("baseline"))
        c.baseline = readSummary(*b);
    if (auto b = r.optionalObject("copy"))
        c.copy = readSummary(*b);
    c.gbps = r.numberOr("gbps", 0.0);
    c.tflops = r.numberOr("tflops", 0.0);
    c.pctOfCopy = r.optionalNumber("pct_of_copy");
    c.speedupVsBaseline = r.optionalNumber("speedup_vs_baseline");
    if (auto e = r.optionalObject("eager"))
        c.eager = readSummary(*e);
    if (auto e = r.optionalObject("torch_compile"))
        c.torchCompile = readSummary(*e);
    c.speedupVsEager = r.optionalNumber("speedup_vs_eager");
    c.speedupVsCompile = r.optionalNumber("speedup_vs_compile");
    c.torchCompileError = r.stringOr("torch_compile_error", "");
    c.copySource = r.stringOr("copy_source", "");
    c.compute = parsePrecision(r.stringOr("compute", ""));
    c.computeReason = parseCeilingReason(r.stringOr("compute_reason", ""));
    c.ceilingTflops = r.optionalNumber("ceiling_tflops");
    c.solUs = r.optionalNumber("sol_us");
    c.pctOfSol = r.optionalNumber("pct_of_sol");
    c.solBound = parseBound(r.stringOr("sol_bound", ""));
    return c;
}

nlohmann::json toJson(const Profile& p)
{
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : p.kernels)
        kernels.push_back({ { "kernel", k.kernel }, { "case", k.caseLabel }, { "metrics", k.metrics } });
    nlohmann::json j { { "status", nameOf(kProfileStatuses, p.status) }, { "passes", p.passes },
        { "kernels", kernels } };
    if (!p.reason.empty())
        j["reason"] = p.reason;
    if (p.metricSet)
        j["metric_set"] = metricSetName(*p.metricSet);
    return j;
}

Profile readProfile(const JsonReader& r)
{
    Profile p;
    p.status = readEnum(r, "status", kProfileStatuses);
    p.reason = r.stringOr("reason", "");
    if (r.has("metric_set")) {
        const auto name = r.string("metric_set");
        p.metricSet = parseMetricSet(name);
        if (!p.metricSet)
            r.fail("metric_set", "\"" + name + "\" is not none, default, sol or stalls");
    }
    p.passes = static_cast<int>(r.integerOr("passes", 0));
    for (const auto& k : r.arrayOr("kernels")) {
        k.requireObject();
        KernelProfile kp;
        kp.kernel = k.string("kernel");
        kp.caseLabel = k.stringOr("case", "");
        if (auto metrics = k.optionalObject("metrics"))
            for (const auto& [name, value] : metrics->value().items())
                kp.metrics[name] = JsonReader(value, metrics->pathOf(name)).asNumber();
        p.kernels.push_back(std::move(kp));
    }
    return p;
}

} // namespace

std::string_view profileStatusName(ProfileStatus status) { return nameOf(kProfileStatuses, status); }
std::optional<ProfileStatus> parseProfileStatus(std::string_view name) { return valueOf(kProfileStatuses, name); }

EvaluateResult EvaluateResult::failure(std::string id, Category category, std::string detail)
{
    EvaluateResult r;
    r.header = ResultHeader { std::move(id), statusOf(category), category, std::move(detail) };
    return r;
}

void to_json(nlohmann::json& j, const DeviceDescription& d)
{
    j = { { "index", d.index }, { "name", d.name }, { "uuid", d.uuid }, { "compute_capability", d.computeCapability },
        { "sm_count", d.smCount }, { "l2_bytes", d.l2Bytes }, { "shared_per_sm", d.sharedPerSm },
        { "shared_per_block", d.sharedPerBlock }, { "shared_per_block_optin", d.sharedPerBlockOptin },
        { "registers_per_sm", d.registersPerSm }, { "max_threads_per_sm", d.maxThreadsPerSm },
        { "max_blocks_per_sm", d.maxBlocksPerSm }, { "warp_size", d.warpSize }, { "memory_bytes", d.memoryBytes },
        { "memory_bus_bits", d.memoryBusBits }, { "sm_clock_mhz", d.smClockMhz },
        { "memory_clock_mhz", d.memoryClockMhz }, { "driver_version", d.driverVersion },
        { "runtime_toolkit", d.runtimeToolkit }, { "copy_bandwidth_gbps", d.copyBandwidthGbps },
        { "copy_bandwidth_bytes", d.copyBandwidthBytes } };
    if (d.tensorFp16Tflops > 0) {
        j["tensor_fp16_tflops"] = d.tensorFp16Tflops;
        j["tensor_fp16_clock_mhz"] = d.tensorFp16ClockMhz;
    }
}

void from_json(const nlohmann::json& j, DeviceDescription& d)
{
    // Called for the "device" field of a result; paths are named from there.
    const JsonReader r(j, "device");
    r.requireObject();
    d.index = static_cast<int>(r.integerOr("index", 0));
    d.name = r.string("name");
    d.uuid = r.stringOr("uuid", "");
    d.computeCapability = r.string("compute_capability");
    d.smCount = static_cast<int>(r.integer("sm_count"));
    d.l2Bytes = r.integerOr("l2_bytes", 0);
    d.sharedPerSm = r.integerOr("shared_per_sm", 0);
    d.sharedPerBlock = r.integerOr("shared_per_block", 0);
    d.sharedPerBlockOptin = r.integerOr("shared_per_block_optin", 0);
    d.registersPerSm = r.integerOr("registers_per_sm", 0);
    d.maxThreadsPerSm = static_cast<int>(r.integerOr("max_threads_per_sm", 0));
    d.maxBlocksPerSm = static_cast<int>(r.integerOr("max_blocks_per_sm", 0));
    d.warpSize = static_cast<int>(r.integerOr("warp_size", 32));
    d.memoryBytes = r.integerOr("memory_bytes", 0);
    d.memoryBusBits = static_cast<int>(r.integerOr("memory_bus_bits", 0));
    d.smClockMhz = r.numberOr("sm_clock_mhz", 0.0);
    d.memoryClockMhz = r.numberOr("memory_clock_mhz", 0.0);
    d.driverVersion = r.stringOr("driver_version", "");
    d.runtimeToolkit = r.stringOr("runtime_toolkit", "");
    d.copyBandwidthGbps = r.numberOr("copy_bandwidth_gbps", 0.0);
    d.copyBandwidthBytes = r.integerOr("copy_bandwidth_bytes", 0);
    d.tensorFp16Tflops = r.numberOr("tensor_fp16_tflops", 0.0);
    d.tensorFp16ClockMhz = r.numberOr("tensor_fp16_clock_mhz", 0.0);
}

void to_json(nlohmann::json& j, const DescribeResult& m)
{
    j = openResult(m.header);
    if (m.device)
        j["device"] = *m.device;
}

void from_json(const nlohmann::json& j, DescribeResult& m)
{
    const auto r = openEnvelope(j, DescribeResult::kType);
    m.header = readHeader(r);
    m.device.reset();
    if (r.has("device"))
        m.device = r.object("device").value().get<DeviceDescription>();
    if (m.header.status == Status::Ok && !m.device)
        r.fail("device", "missing required field (status is ok)");
    if (m.header.status != Status::Ok && !m.header.category)
        r.fail("category", "missing required field (status is " + std::string(statusName(m.header.status)) + ")");
}

void to_json(nlohmann::json& j, const ShutdownResult& m) { j = openResult(m.header); }

void from_json(const nlohmann::json& j, ShutdownResult& m)
{
    m.header = readHeader(openEnvelope(j, ShutdownResult::kType));
}

void to_json(nlohmann::json& j, const EvaluateResult& m)
{
    auto h = m.header;
    if (!h.category)
        h.category = Category::Passed;
    j = openResult(h);
    j["device"] = m.device ? nlohmann::json(*m.device) : nlohmann::json(nullptr);
    j["verification"] = m.verification ? nlohmann::json(*m.verification) : nlohmann::json(nullptr);
    j["timing"] = m.timing ? nlohmann::json(*m.timing) : nlohmann::json(nullptr);
    j["profile"] = m.profile ? nlohmann::json(*m.profile) : nlohmann::json(nullptr);
    j["pc_sampling"] = m.pcSampling ? pcSamplingJson(*m.pcSampling) : nlohmann::json(nullptr);
    j["phases_ms"] = m.phasesMs;
}

namespace {

Verification readVerification(const JsonReader& v)
{
    Verification ver;
    ver.passed = v.boolean("passed");
    for (const auto& c : v.arrayOr("cases"))
        ver.cases.push_back(readCaseVerification(c));
    return ver;
}

Timing readTiming(const JsonReader& t)
{
    Timing timing;
    timing.smClockMhz = t.optionalNumber("sm_clock_mhz");
    timing.temperatureC = t.optionalNumber("temperature_c");
    timing.repetitions = t.stringOr("repetitions", "");
    for (const auto& c : t.arrayOr("cases"))
        timing.cases.push_back(readCaseTiming(c));
    return timing;
}

} // namespace

void to_json(nlohmann::json& j, const Verification& m)
{
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : m.cases)
        cases.push_back(toJson(c));
    j = { { "passed", m.passed }, { "cases", cases } };
}

void to_json(nlohmann::json& j, const Timing& m)
{
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : m.cases)
        cases.push_back(toJson(c));
    j = { { "sm_clock_mhz", optionalNumber(m.smClockMhz) }, { "cases", cases } };
    if (m.temperatureC)
        j["temperature_c"] = *m.temperatureC;
    if (!m.repetitions.empty())
        j["repetitions"] = m.repetitions;
}

void to_json(nlohmann::json& j, const Profile& m) { j = toJson(m); }

void from_json(const nlohmann::json& j, Verification& m)
{
    const JsonReader r(j, "verification");
    r.requireObject();
    m = readVerification(r);
}

void from_json(const nlohmann::json& j, Timing& m)
{
    const JsonReader r(j, "timing");
    r.requireObject();
    m = readTiming(r);
}

void from_json(const nlohmann::json& j, Profile& m)
{
    const JsonReader r(j, "profile");
    r.requireObject();
    m = readProfile(r);
}

void from_json(const nlohmann::json& j, EvaluateResult& m)
{
    const auto r = openEnvelope(j, EvaluateResult::kType);
    m = EvaluateResult {};
    m.header = readHeader(r);
    if (!m.header.category) {
        if (m.header.status != Status::Ok)
            r.fail("category", "missing required field (status is " + std::string(statusName(m.header.status)) + ")");
        m.header.category = Category::Passed;
    }
    if (r.has("device"))
        m.device = r.object("device").value().get<DeviceDescription>();
    if (auto v = r.optionalObject("verification"))
        m.verification = readVerification(*v);
    if (auto t = r.optionalObject("timing"))
        m.timing = readTiming(*t);
    if (auto p = r.optionalObject("profile"))
        m.profile = readProfile(*p);
    if (const auto sampling = r.value().find("pc_sampling"); sampling != r.value().end()) {
        try {
            m.pcSampling = pcSamplingFromJson(*sampling);
        } catch (const Error& e) {
            m.pcSamplingUnreadable = e.where() + ": " + e.message();
        }
    }
    if (auto p = r.optionalObject("phases_ms"))
        for (const auto& [name, value] : p->value().items())
            m.phasesMs[name] = JsonReader(value, p->pathOf(name)).asNumber();
}

} // namespace kl::protocol
