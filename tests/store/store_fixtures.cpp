#include "store_fixtures.h"

namespace kl::store::fixtures {

ProblemRecord problem(const std::string& name)
{
    ProblemRecord record;
    record.name = name;
    record.json = R"({"name":")" + name + R"(","symbols":["M","N"],"sizes":{"main":[{"M":8192,"N":4096}]}})";
    record.referenceSource = "// reference\n__global__ void ref(const float* x, float* y) { y[0] = x[0]; }\n";
    record.baselineSource = "// baseline\n__global__ void base(const float* x, float* y) { y[0] = x[0]; }\n";
    return record;
}

CandidateRecord candidate(int seed, std::optional<std::int64_t> parent)
{
    CandidateRecord record;
    // A handful of distinct sources, as a tuner would produce: many candidates share one.
    record.source = "// @kl tunable THREADS = 256 in 64, 128, 256, 512\n// variant " + std::to_string(seed % 5)
        + "\n__global__ void ln_gelu(const __half* x, __half* y, int M, int N) {\n"
        + std::string(static_cast<std::size_t>(400 + seed % 5 * 50), ' ') + "}\n";
    record.fileName = "candidate.cu";
    record.parentId = parent;
    record.proposer = seed % 3 == 0 ? CandidateRecord::Proposer::Llm
        : seed % 3 == 1             ? CandidateRecord::Proposer::Tuner
                                    : CandidateRecord::Proposer::Human;
    record.proposerDetail = seed % 3 == 0 ? "openai/gpt-4o" : "evolutionary";
    record.tunables = { { "THREADS", 64 << (seed % 4) }, { "VEC", 1 << (seed % 3) } };
    record.hypothesis = "wider loads put more bytes in flight (" + std::to_string(seed) + ")";
    return record;
}

ResultRecord passedResult(int seed)
{
    ResultRecord result;
    result.status = "ok";
    result.category = "passed";
    result.detail = "verified at 12 sizes, 2 trials";
    const double median = 40.0 + seed % 17;
    result.medianUs = median;
    result.p20Us = median - 0.25;
    result.p80Us = median + 0.5;
    result.cv = 0.01 + (seed % 5) * 0.001;
    result.gbps = 134234112.0 / (median * 1000.0);
    result.pctOfCopy = 36.0 / median * 100.0;
    result.speedup = 135.0 / median;
    result.smClockMhz = 1980;
    result.toolkit = "13.0";
    protocol::CaseTiming timed;
    timed.label = "8192x4096";
    timed.candidate.medianUs = median;
    timed.candidate.p20Us = *result.p20Us;
    timed.candidate.p80Us = *result.p80Us;
    timed.candidate.minUs = *result.p20Us;
    timed.candidate.meanUs = median;
    timed.candidate.cv = *result.cv;
    for (int i = 0; i < 400; ++i)
        timed.candidate.samplesUs.push_back(median + ((i * 37 + seed) % 100) * 0.01);
    timed.gbps = *result.gbps;
    timed.pctOfCopy = *result.pctOfCopy;
    result.timing = protocol::Timing { 1980.0, std::nullopt, {}, { timed } };
    protocol::CaseVerification fuzz;
    fuzz.label = "7x1000";
    fuzz.kind = protocol::CaseKind::Fuzz;
    fuzz.passed = true;
    result.verification = protocol::Verification { true, { fuzz } };
    protocol::DeviceDescription device;
    device.name = "NVIDIA H200";
    device.computeCapability = "9.0";
    device.smCount = 132;
    device.l2Bytes = 62914560;
    result.device = device;
    result.compile.report = { { "registers", 32 + seed % 4 * 8 }, { "spill_store_bytes", 0 } };
    result.profile = protocol::Profile { protocol::ProfileStatus::Ok, {}, protocol::MetricSet::Default, 0, {} };
    for (int i = 0; i < 20; ++i)
        result.metrics[{ "ln_gelu", "8192x4096", "metric_" + std::to_string(i) }] = seed * 0.5 + i;
    return result;
}

ResultRecord failedResult(int seed)
{
    ResultRecord result;
    result.status = "failed";
    result.category = "wrong-result";
    result.detail = "12 of 7000 elements off at 7x1000";
    protocol::CaseVerification fuzz;
    fuzz.label = "7x1000";
    fuzz.kind = protocol::CaseKind::Fuzz;
    fuzz.category = protocol::Category::WrongResult;
    fuzz.mismatches = 12 + seed;
    result.verification = protocol::Verification { false, { fuzz } };
    result.toolkit = "13.0";
    return result;
}

std::vector<FindingRecord> findings(int seed)
{
    return {
        { "bandwidth.under-ceiling", "warning", "DRAM at 41% of the copy ceiling",
            { { "dram_pct", 41.0 + seed % 10 }, { "ceiling_gbps", 4250 } },
            { "more bytes in flight per SM", "16-byte loads" } },
        { "occupancy.register-limited", "info", "occupancy 50%: limited by registers (72/thread)",
            { { "registers", 72 }, { "occupancy", 0.5 } }, { "fewer live values", "__launch_bounds__" } },
        { "tail.effect", "info", "last wave 12% full", { { "waves", 3.12 } }, {} },
    };
}

ExchangeRecord exchange(int seed)
{
    ExchangeRecord record;
    record.role = "coder";
    Exchange& e = record.exchange;
    e.provider = "openai";
    e.model = "gpt-4o";
    // A body with credentials in it, which the store scrubs (the clients never send one like it).
    e.requestBody = nlohmann::json(
        { { "model", "gpt-4o" }, { "max_tokens", 4096 },
            { "messages", { { { "role", "user" }, { "content", "iteration " + std::to_string(seed) } } } },
            { "headers", { { "Authorization", "Bearer sk-secret" }, { "x-api-key", "sk-secret" } } } })
                        .dump();
    e.prompt = { { "user", "iteration " + std::to_string(seed) } };
    e.choices = { { "Plan: vectorise.\n```cuda\n__global__ void k() {}\n```", "stop" } };
    e.usage = { 1200, 300 + seed, true };
    e.latencyMs = 2500.0 + seed;
    e.attempts = 1;
    e.httpStatus = 200;
    return record;
}

void recordTunerSessions(Store& store, const TunerSessions& what)
{
    for (int s = 0; s < what.sessions; ++s) {
        SessionRecord session;
        session.problemHash = store.addProblem(problem());
        session.device = "NVIDIA H200 #0";
        session.proposer = "tuner";
        const auto id = store.createSession(session);
        for (int i = 0; i < what.iterations; ++i) {
            const auto ref = store.beginIteration(id, store.addCandidate(id, candidate(i)));
            auto result = passedResult(i);
            if (what.adjust)
                what.adjust(s, i, result);
            store.recordResult(ref, result);
            if (what.findings)
                store.recordFindings(ref, findings(i));
            store.finishIteration(ref);
        }
        store.finishSession(id, "finished");
    }
}

} // namespace kl::store::fixtures
