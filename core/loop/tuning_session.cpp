#include "core/loop/tuning_session.h"

#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/loop/evaluation.h"
#include "core/loop/scaling.h"
#include "core/loop/stored_forms.h"
#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/runnerclient/evaluate_job.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace kl {

namespace {

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string candidateKey(const std::string& sourceHash, const TunableValues& tunables)
{
    std::string key = sourceHash;
    for (const auto& [k, v] : tunables)
        key += ";" + k + "=" + std::to_string(v);
    return key;
}

DeviceLimits limitsOf(const protocol::DeviceDescription& d, const std::string& arch)
{
    auto limits = DeviceLimits::forArch(arch);
    limits.name = d.name;
    if (d.smCount > 0)
        limits.smCount = d.smCount;
    if (d.sharedPerSm > 0)
        limits.sharedPerSm = d.sharedPerSm;
    if (d.sharedPerBlock > 0)
        limits.sharedPerBlock = d.sharedPerBlock;
    if (d.sharedPerBlockOptin > 0)
        limits.sharedPerBlockOptin = d.sharedPerBlockOptin;
    if (d.registersPerSm > 0)
        limits.registersPerSm = int(d.registersPerSm);
    if (d.maxThreadsPerSm > 0)
        limits.maxThreadsPerSm = d.maxThreadsPerSm;
    if (d.maxBlocksPerSm > 0)
        limits.maxBlocksPerSm = d.maxBlocksPerSm;
    if (d.l2Bytes > 0)
        limits.l2Bytes = d.l2Bytes;
    return limits;
}

// What in the options changes a result: the same candidate measured with other options is another entry.
std::string optionsKey(const protocol::EvaluateOptions& o)
{
    return "seed=" + std::to_string(o.seed) + ";trials=" + std::to_string(o.trials) + ";reps="
           + std::to_string(o.minReps) + "-" + std::to_string(o.maxReps) + ";flush=" + std::to_string(o.flushBytes)
           + ";profile=" + std::string(protocol::metricSetName(o.profile)) + ";time=" + (o.time ? "1" : "0");
}

bool cacheable(const std::string& category)
{
    static const std::set<std::string> transient { "timeout", "crash", "runner-lost", "cancelled", "bad-message",
                                                    "no-device", "bad-request", "out-of-memory" };
    return !transient.count(category);
}

} // namespace

const char* loopPhaseName(LoopPhase phase)
{
    switch (phase) {
    case LoopPhase::Propose:
        return "propose";
    case LoopPhase::Review:
        return "review";
    case LoopPhase::Compile:
        return "compile";
    case LoopPhase::Verify:
        return "verify";
    case LoopPhase::Benchmark:
        return "benchmark";
    case LoopPhase::Profile:
        return "profile";
    case LoopPhase::Synthesise:
        return "synthesise";
    case LoopPhase::Decide:
        return "decide";
    case LoopPhase::Finished:
        return "finished";
    }
    return "?";
}

struct TuningSession::Incumbent {
    Proposal proposal;
    IterationOutcome outcome;
    std::vector<SizeTiming> timings;
    StaticSummary statics;
};

struct TuningSession::Reference {
    CompiledCandidate reference;
    CompiledCandidate baseline;
};

TuningSession::TuningSession(const Problem& problem, store::Store& store, RunnerClient& runner, LoopConfig config)
    : m_problem(problem)
    , m_store(store)
    , m_runner(runner)
    , m_config(std::move(config))
{
}

TuningSession::~TuningSession() = default;

void TuningSession::phase(int round, LoopPhase p, const std::string& detail)
{
    if (m_observer)
        m_observer->phaseChanged(round, p, detail);
}

void TuningSession::prepare(const std::string& proposerName)
{
    const auto hello = m_runner.start();
    if (!hello.deviceOk)
        throw Error("runner.no-device", {}, {}, "no GPU: " + hello.detail);
    m_device = m_runner.describe();
    m_limits = limitsOf(m_device, m_problem.arch);

    auto job = compileEvaluateJob(m_problem, TunedCandidate { m_problem.baseline, m_problem.baseline.defaults() },
                                  std::nullopt);
    if (!job.reference.compiled.ok)
        throw Error("problem.reference-compile", m_problem.referencePath.string(), {},
                    "the reference does not compile: " + job.reference.compiled.summary);
    if (!job.candidate.compiled.ok)
        throw Error("problem.baseline-compile", m_problem.baselinePath.string(), {},
                    "the baseline does not compile: " + job.candidate.compiled.summary);
    m_reference = std::make_unique<Reference>(Reference { job.reference, job.candidate });

    m_problemHash = m_store.addProblem(store::problemRecord(m_problem));
    store::SessionRecord s;
    s.problemHash = m_problemHash;
    s.label = m_config.label;
    s.device = m_device.name + " #" + std::to_string(m_device.index);
    nlohmann::json device = m_device;
    s.deviceInfo = device;
    s.proposer = m_config.proposerDetail.empty() ? proposerName : m_config.proposerDetail;
    s.mode = m_config.mode == LoopMode::Review ? "review" : "auto";
    s.config = { { "max_iterations", m_config.stop.maxIterations },
                 { "max_wall_seconds", m_config.stop.maxWallSeconds },
                 { "target_speedup", m_config.stop.targetSpeedup },
                 { "patience", m_config.stop.patience },
                 { "min_gain", m_config.stop.minGain },
                 { "max_failed_rounds", m_config.stop.maxFailedRounds },
                 { "candidates_per_iteration", m_config.candidatesPerIteration },
                 { "metric_set", std::string(protocol::metricSetName(m_config.evaluate.profile)) },
                 { "trials", m_config.evaluate.trials },
                 { "seed", m_config.evaluate.seed } };
    m_sessionId = m_store.createSession(s);
}

EvaluatedCandidate TuningSession::evaluate(const Proposal& proposal, int round, std::optional<std::int64_t> parentId,
                                           const std::atomic<bool>* cancel)
{
    const auto start = Clock::now();
    EvaluatedCandidate e;
    e.proposal = proposal;
    IterationOutcome& o = e.outcome;
    o.round = round;
    o.proposer = proposal.proposer;
    o.hypothesis = proposal.hypothesis;
    o.predictedSpeedup = proposal.predictedSpeedup;
    o.fileName = proposal.candidate.fileName;
    o.sourceHash = contentHash(proposal.candidate.source);
    o.tunables = proposal.tunables;
    EvaluationArtifacts a;

    a.cacheKey = store::evaluationCacheKey({ proposal.candidate.source, proposal.tunables, m_problemHash,
                                             m_device.name, m_reference->baseline.compiled.nvrtcVersion,
                                             optionsKey(m_config.evaluate) });
    std::optional<store::ResultRecord> cached;
    if (m_config.useCache)
        cached = m_store.cacheLookup(a.cacheKey);

    if (cached) {
        o.fromCache = true;
        o.status = cached->status;
        o.category = cached->category;
        o.detail = cached->detail;
        a.staticJson = cached->compile;
        a.resultJson = { { "device", cached->device }, { "timing", cached->timing }, { "profile", cached->profile },
                         { "verification", cached->verification } };
    } else {
        phase(round, LoopPhase::Compile, o.fileName);
        CompileOptions options;
        options.arch = m_problem.arch;
        options.includeDir = m_problem.dir;
        try {
            a.report = analyseCandidate(m_problem, proposal.candidate, proposal.tunables, options, m_limits);
        } catch (const Error& error) {
            o.status = "failed";
            o.category = error.category();
            o.detail = error.what();
        }
        o.phasesMs["compile"] = msSince(start);
        if (a.report) {
            a.staticJson = staticReportJson(*a.report);
            a.staticJson["telemetry"] = telemetryStatic(*a.report);
            if (!a.report->compile.ok) {
                o.status = "failed";
                o.category = std::string("compile.") + compileErrorKindName(a.report->compile.kind);
                o.detail = a.report->compile.summary;
            } else if (!a.report->ok()) {
                o.status = "failed";
                o.category = "too-many-resources";
                o.detail = a.report->firstProblem();
            }
        }
        if (o.category.empty()) {
            EvaluateJob job { m_reference->reference,
                              CompiledCandidate { TunedCandidate { proposal.candidate, proposal.tunables },
                                                  a.report->compile },
                              m_reference->baseline };
            std::optional<protocol::EvaluateRequest> request;
            try {
                request = buildEvaluateRequest(m_problem, job, m_config.evaluate);
            } catch (const Error& error) {
                o.status = "failed";
                o.category = error.category();
                o.detail = error.what();
            }
            if (request) {
                phase(round, LoopPhase::Verify, o.fileName);
                JobOptions jo;
                jo.timeout = m_config.jobTimeout;
                jo.cancel = cancel;
                jo.progress = [&](const protocol::Progress& p) {
                    if (p.phase == "time")
                        phase(round, LoopPhase::Benchmark, o.fileName);
                    else if (p.phase == "profile" || p.phase == "pc-sampling")
                        phase(round, LoopPhase::Profile, o.fileName);
                };
                a.result = m_runner.evaluate(*request, jo);
                o.status = std::string(protocol::statusName(a.result->header.status));
                o.category = std::string(protocol::categoryName(a.result->category()));
                o.detail = a.result->category() == protocol::Category::Passed ? a.result->header.detail
                                                                              : verificationBrief(*a.result);
                for (const auto& [k, v] : a.result->phasesMs)
                    o.phasesMs[k] = v;
                a.resultJson = *a.result;
                a.staticJson["telemetry"] = telemetryStatic(*a.report, dominantKernel(*a.result));
            }
        }
    }

    // Timing and findings come from the stored forms, so a cached result is read the same way.
    if (a.resultJson.is_object() && a.resultJson.contains("timing") && a.resultJson["timing"].is_object()) {
        const auto& cases = a.resultJson["timing"]["cases"];
        std::vector<double> speedups;
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const auto& c = cases[i];
            if (i == 0) {
                o.medianUs = c["candidate"].value("median_us", 0.0);
                if (c.contains("gbps") && c["gbps"].is_number())
                    o.gbps = c["gbps"].get<double>();
                if (c.contains("pct_of_copy") && c["pct_of_copy"].is_number())
                    o.pctOfCopy = c["pct_of_copy"].get<double>();
            }
            if (c.contains("speedup_vs_baseline") && c["speedup_vs_baseline"].is_number()) {
                speedups.push_back(c["speedup_vs_baseline"].get<double>());
                o.speedupBySize[c.value("label", "")] = speedups.back();
            }
        }
        if (!speedups.empty())
            o.speedup = geometricMean(speedups);
        a.timings = timingsFromJson(a.resultJson["timing"]);
    }
    if (o.category != "cancelled") {
        phase(round, LoopPhase::Synthesise, o.fileName);
        if (a.staticJson.is_object() && a.staticJson.contains("telemetry")) {
            nlohmann::json doc = a.resultJson.is_object() ? a.resultJson : nlohmann::json::object();
            doc["static"] = a.staticJson["telemetry"];
            try {
                auto t = telemetryFromJson(doc);
                if (t.peakTflops <= 0 && m_device.smCount > 0)
                    t.peakTflops = peakFp32Tflops(m_device.smCount, m_device.smClockMhz, m_device.computeCapability);
                o.findings = synthesise(t);
            } catch (const Error&) {
                // Telemetry that cannot be read gives no findings; the result itself stands.
            }
        }
    }
    o.phasesMs["total"] = msSince(start);
    if (o.category == "cancelled")
        return e;
    record(o, proposal, parentId, a);
    if (m_config.useCache && !o.fromCache && a.result && cacheable(o.category) && o.candidateId) {
        if (auto detail = m_store.iteration(m_sessionId, o.index); detail && detail->result)
            m_store.cacheStore(a.cacheKey, detail->result->id);
    }
    e.timings = a.timings;
    if (a.staticJson.is_object() && a.staticJson.contains("telemetry")) {
        const auto& t = a.staticJson["telemetry"];
        e.statics.registers = t.value("registers", 0);
        e.statics.sharedBytes = t.value("static_shared", std::int64_t(0)) + t.value("dynamic_shared", std::int64_t(0));
        e.statics.spillBytes = t.value("spill_stores", std::int64_t(0)) + t.value("spill_loads", std::int64_t(0));
        e.statics.occupancy = t.value("theoretical_occupancy", 0.0);
        e.statics.limiter = t.value("occupancy_limiter", "");
    }
    for (const auto& f : o.findings)
        if (f.id.rfind("stall.", 0) == 0) {
            e.statics.primaryStall = f.id.substr(6);
            break;
        }
    return e;
}

void TuningSession::record(IterationOutcome& o, const Proposal& proposal, std::optional<std::int64_t> parentId,
                           const EvaluationArtifacts& a)
{
    const auto key = candidateKey(o.sourceHash, proposal.tunables);
    if (auto it = m_candidateIds.find(key); it != m_candidateIds.end()) {
        o.candidateId = it->second;
    } else {
        store::CandidateRecord c;
        c.source = proposal.candidate.source;
        c.fileName = proposal.candidate.fileName;
        c.parentId = parentId;
        c.proposer = storedProposer(proposal.proposer);
        c.proposerDetail = proposerDetailFor(proposal.proposer, m_config.proposerDetail);
        c.tunables = proposal.tunables;
        c.hypothesis = proposal.hypothesis;
        c.predictedSpeedup = proposal.predictedSpeedup;
        o.candidateId = m_store.addCandidate(m_sessionId, c);
        m_candidateIds[key] = *o.candidateId;
    }
    const auto ref = m_store.beginIteration(m_sessionId, o.candidateId, o.round);
    o.index = ref.index;
    if (!o.category.empty()) {
        // The runner's reply as the store reads it; the loop's own verdict and first-size figures on top
        // (the outcome also covers failures before the runner and results from the cache).
        auto r = store::resultFromRunnerReply(a.resultJson.is_object() ? a.resultJson : nlohmann::json::object(),
                                              m_reference->baseline.compiled.nvrtcVersion);
        r.status = o.status;
        r.category = o.category;
        r.detail = o.detail;
        r.medianUs = o.medianUs;
        r.gbps = o.gbps;
        r.pctOfCopy = o.pctOfCopy;
        r.speedup = o.speedup;
        r.fromCache = o.fromCache;
        r.compile = a.staticJson;
        m_store.recordResult(ref, r);
        if (!o.findings.empty())
            m_store.recordFindings(ref, findingRecords(o.findings));
    }
    for (const auto& x : proposal.exchanges)
        m_store.recordExchange(ref, exchangeRecord(x));
    m_store.finishIteration(ref, "done");
}

void TuningSession::recordRefusal(IterationOutcome& o, const Proposal& proposal, const store::DecisionRecord* decision)
{
    store::CandidateRecord c;
    c.source = proposal.candidate.source;
    c.fileName = proposal.candidate.fileName.empty() ? "candidate.cu" : proposal.candidate.fileName;
    c.proposer = storedProposer(proposal.proposer);
    c.proposerDetail = proposerDetailFor(proposal.proposer, m_config.proposerDetail);
    c.tunables = proposal.tunables;
    c.hypothesis = proposal.hypothesis;
    c.predictedSpeedup = proposal.predictedSpeedup;
    o.candidateId = m_store.addCandidate(m_sessionId, c);
    const auto ref = m_store.beginIteration(m_sessionId, o.candidateId, o.round);
    o.index = ref.index;
    if (!proposal.failure.empty()) {
        store::ResultRecord r;
        r.status = "error";
        r.category = o.category;
        r.detail = o.detail;
        m_store.recordResult(ref, r);
    }
    for (const auto& x : proposal.exchanges)
        m_store.recordExchange(ref, exchangeRecord(x));
    if (decision)
        m_store.recordDecision(ref, *decision);
    m_store.finishIteration(ref, proposal.failure.empty() ? "refused" : "proposer-error");
}

double TuningSession::decide(std::vector<EvaluatedCandidate>& batch)
{
    EvaluatedCandidate* winner = nullptr;
    Comparison winning;
    for (auto& e : batch) {
        auto& o = e.outcome;
        if (o.category != "passed" || e.timings.empty())
            continue;
        const auto c = compareTimings(e.timings, m_best->timings, m_config.noiseGain);
        o.comparison = c.summary();
        o.losesOnSomeSize = c.losesOnSomeSize;
        o.speedupOverBest = c.speedup;
        if (c.faster && (!winner || c.low > winning.low)) {
            winner = &e;
            winning = c;
        }
    }
    for (auto& e : batch) {
        auto& o = e.outcome;
        store::DecisionRecord d;
        if (&e == winner) {
            d.kind = store::DecisionRecord::Kind::AutoKeep;
            d.reason = "new best: " + o.comparison + " over the previous best";
            o.kept = true;
        } else {
            d.kind = store::DecisionRecord::Kind::AutoRevert;
            d.reason = o.category != "passed" ? o.category + ": " + o.detail
                                              : "not faster beyond the noise: " + o.comparison;
        }
        if (o.index > 0)
            m_store.recordDecision({ m_sessionId, o.index }, d);
    }
    if (!winner)
        return 0.0;
    const double gain = winning.speedup - 1.0;
    m_best->proposal = winner->proposal;
    m_best->outcome = winner->outcome;
    m_best->timings = winner->timings;
    m_best->statics = winner->statics;
    return gain;
}

ProposalContext TuningSession::context(int round, int remaining) const
{
    ProposalContext ctx;
    ctx.problem = &m_problem;
    ctx.iteration = round;
    ctx.best = m_best->proposal.candidate;
    ctx.bestTunables = m_best->proposal.tunables;
    ctx.bestSourceHash = m_best->outcome.sourceHash;
    ctx.bestMedianUs = m_best->outcome.medianUs;
    ctx.bestSpeedup = m_best->outcome.speedup;
    if (m_baseline)
        ctx.baselineMedianUs = m_baseline->medianUs;
    ctx.bestStatic = m_best->statics;
    ctx.bestFindings = m_best->outcome.findings;
    ctx.bestGbps = m_best->outcome.gbps;
    ctx.bestPctOfCopy = m_best->outcome.pctOfCopy;
    ctx.hardware.name = m_device.name;
    ctx.hardware.arch = m_problem.arch;
    ctx.hardware.smCount = m_device.smCount;
    ctx.hardware.l2Bytes = m_device.l2Bytes;
    ctx.hardware.sharedPerSm = m_device.sharedPerSm;
    ctx.hardware.sharedPerBlockOptIn = m_limits.sharedPerBlockOptin;
    ctx.hardware.registersPerSm = m_limits.registersPerSm;
    ctx.hardware.maxWarpsPerSm = m_limits.maxThreadsPerSm / m_limits.warpSize;
    ctx.hardware.smClockMhz = m_device.smClockMhz;
    ctx.hardware.copyGbps = m_device.copyBandwidthGbps;
    ctx.hardware.peakTflops = peakFp32Tflops(m_device.smCount, m_device.smClockMhz, m_device.computeCapability);
    ctx.history = m_history;
    ctx.steering = m_steering;
    ctx.remainingBudget = remaining;
    ctx.examples = m_examples;
    return ctx;
}

namespace {
EvaluatedProposal historyEntry(const IterationOutcome& o, std::string rejection = {})
{
    EvaluatedProposal h;
    h.iteration = o.index;
    h.proposer = o.proposer;
    h.sourceHash = o.sourceHash;
    h.tunables = o.tunables;
    h.hypothesis = o.hypothesis;
    h.category = o.category;
    h.detail = o.detail;
    h.medianUs = o.medianUs;
    h.speedup = o.speedup;
    h.kept = o.kept;
    h.findings = o.findings;
    h.rejection = std::move(rejection);
    return h;
}
} // namespace

nlohmann::json toJson(const LoopSummary& s)
{
    nlohmann::json j = { { "stop_reason", s.stopReason },
                         { "rounds", s.rounds },
                         { "evaluated", s.evaluated },
                         { "passed", s.passed },
                         { "wall_seconds", s.wallSeconds },
                         { "candidates_per_minute", s.candidatesPerMinute },
                         { "candidates_per_round", s.candidatesPerRound },
                         { "tokens", s.tokens },
                         { "cancelled", s.cancelled } };
    if (s.passAtK)
        j["pass_at_k"] = *s.passAtK;
    if (s.speedupAtK)
        j["speedup_at_k"] = *s.speedupAtK;
    if (s.baseline && s.baseline->medianUs)
        j["baseline_us"] = *s.baseline->medianUs;
    if (s.best) {
        j["best_iteration"] = s.best->index;
        if (s.best->medianUs)
            j["best_us"] = *s.best->medianUs;
        if (s.best->speedup)
            j["best_speedup"] = *s.best->speedup;
        if (s.best->pctOfCopy)
            j["best_pct_of_copy"] = *s.best->pctOfCopy;
    }
    return j;
}

LoopSummary TuningSession::finish(LoopSummary summary, const std::string& status, Clock::time_point start)
{
    summary.passAtK = m_scaling.passAtK();
    summary.speedupAtK = m_scaling.speedupAtK();
    summary.sessionId = m_sessionId;
    summary.wallSeconds = msSince(start) / 1000.0;
    if (summary.wallSeconds > 0)
        summary.candidatesPerMinute = summary.evaluated * 60.0 / summary.wallSeconds;
    summary.baseline = m_baseline;
    if (m_best)
        summary.best = m_best->outcome;
    summary.cancelled = status == "cancelled";
    m_store.recordSessionSummary(m_sessionId, toJson(summary));
    m_store.finishSession(m_sessionId, status);
    phase(summary.rounds, LoopPhase::Finished, summary.stopReason);
    return summary;
}

LoopSummary TuningSession::run(Proposer& proposer, const std::atomic<bool>* cancel)
{
    const auto start = Clock::now();
    prepare(proposer.kind());
    LoopSummary summary;
    summary.candidatesPerRound = std::max(1, m_config.candidatesPerIteration);
    m_scaling = {};
    m_examples.clear();
    for (const auto& row : m_store.bestVerifiedCandidates(m_problem.name, { m_sessionId }, 3)) {
        char text[64];
        std::snprintf(text, sizeof text, "%.2fx over its baseline", row.speedup);
        std::string summaryText = text;
        if (row.pctOfCopy) {
            std::snprintf(text, sizeof text, ", %.0f%% of a same-size copy", *row.pctOfCopy);
            summaryText += text;
        }
        m_examples.push_back({ row.problemName, summaryText + ", verified", row.source, row.speedup });
    }

    Proposal base { m_problem.baseline, m_problem.baseline.defaults(), "baseline", "the problem's baseline", {}, {}, {}, {} };
    auto first = evaluate(base, 0, std::nullopt, cancel);
    if (first.outcome.category == "cancelled") {
        summary.stopReason = "cancelled";
        return finish(summary, "cancelled", start);
    }
    ++summary.evaluated;
    first.outcome.kept = first.outcome.category == "passed";
    m_baseline = first.outcome;
    m_history.push_back(historyEntry(first.outcome));
    if (m_observer)
        m_observer->iterationFinished(first.outcome);
    if (!first.outcome.kept) {
        summary.stopReason = "the baseline did not pass: " + first.outcome.category + ": " + first.outcome.detail;
        return finish(summary, "failed", start);
    }
    ++summary.passed;
    m_best = std::make_unique<Incumbent>(Incumbent { base, first.outcome, first.timings, first.statics });

    LoopProgress progress;
    for (int round = 1;; ++round) {
        progress.wallSeconds = msSince(start) / 1000.0;
        progress.bestSpeedup = m_best->outcome.speedup.value_or(1.0);
        if (auto reason = stopReason(m_config.stop, progress)) {
            summary.stopReason = *reason;
            break;
        }
        if (cancel && cancel->load()) {
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
        const int remaining = m_config.stop.maxIterations > 0 ? m_config.stop.maxIterations - progress.iterations : 1000;
        const auto ctx = context(round, remaining);
        phase(round, LoopPhase::Propose, proposer.kind());
        auto proposals = proposer.propose(ctx, std::max(1, m_config.candidatesPerIteration), cancel);
        if (cancel && cancel->load()) { // e.g. while an LLM was still writing
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
        if (proposals.empty()) {
            progress.proposerExhausted = true;
            summary.stopReason = *stopReason(m_config.stop, progress);
            break;
        }
        std::vector<EvaluatedCandidate> batch;
        RoundTally tally; // for the stop rules: proposer failures count apart from measured gains
        tally.proposals = int(proposals.size());
        for (auto& p : proposals) {
            summary.tokens += exchangeTokens(p.exchanges);
            if (cancel && cancel->load())
                break;
            IterationOutcome refused;
            refused.round = round;
            refused.proposer = p.proposer;
            refused.hypothesis = p.hypothesis;
            refused.sourceHash = contentHash(p.candidate.source);
            refused.tunables = p.tunables;
            if (!p.failure.empty()) {
                refused.status = "error";
                refused.category = "proposer." + p.failure;
                refused.detail = p.failureDetail;
                ++tally.proposerFailures;
                tally.lastFailure = refused.category;
                recordRefusal(refused, p, nullptr);
                m_history.push_back(historyEntry(refused));
                if (m_observer)
                    m_observer->iterationFinished(refused);
                continue;
            }
            if (m_config.mode == LoopMode::Review && m_gate) {
                phase(round, LoopPhase::Review, p.hypothesis);
                const auto d = m_gate->review(p, ctx);
                store::DecisionRecord record;
                if (d.kind == ReviewDecision::Kind::Reject || d.kind == ReviewDecision::Kind::Steer) {
                    record.kind = d.kind == ReviewDecision::Kind::Reject ? store::DecisionRecord::Kind::Reject
                                                                         : store::DecisionRecord::Kind::Steer;
                    record.reason = d.reason;
                    record.steering = d.steering;
                    if (!d.steering.empty())
                        m_steering.push_back(d.steering);
                    refused.category = d.kind == ReviewDecision::Kind::Reject ? "rejected" : "steered";
                    refused.detail = d.kind == ReviewDecision::Kind::Reject ? d.reason : d.steering;
                    recordRefusal(refused, p, &record);
                    m_history.push_back(historyEntry(refused, d.reason));
                    if (m_observer)
                        m_observer->iterationFinished(refused);
                    continue;
                }
                if (d.kind == ReviewDecision::Kind::Replace && d.replacement) {
                    p.candidate = *d.replacement;
                    p.tunables = d.replacement->withOverrides(d.replacementTunables);
                    p.proposer = "human";
                    p.hypothesis = d.reason.empty() ? "edited by the engineer" : d.reason;
                }
            }
            auto e = evaluate(p, round, m_best->outcome.candidateId, cancel);
            if (e.outcome.category == "cancelled")
                break;
            ++summary.evaluated;
            if (e.outcome.category == "passed")
                ++summary.passed;
            batch.push_back(std::move(e));
        }
        phase(round, LoopPhase::Decide, {});
        const double gain = decide(batch);
        {
            bool anyPassed = false;
            std::optional<double> best;
            for (const auto& e : batch)
                if (e.outcome.category == "passed") {
                    anyPassed = true;
                    if (e.outcome.speedupOverBest && (!best || *e.outcome.speedupOverBest > *best))
                        best = e.outcome.speedupOverBest;
                }
            m_scaling.addRound(anyPassed, best);
        }
        for (const auto& e : batch) {
            m_history.push_back(historyEntry(e.outcome));
            if (m_observer)
                m_observer->iterationFinished(e.outcome);
        }
        summary.rounds = round;
        tally.gain = gain;
        tally.measured = std::any_of(batch.begin(), batch.end(),
                                     [](const auto& e) { return e.outcome.category == "passed" && !e.timings.empty(); });
        recordRound(progress, tally);
        if (cancel && cancel->load()) {
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
    }
    return finish(summary, "finished", start);
}

LoopSummary TuningSession::evaluateOne(const Candidate& candidate, const TunableValues& tunables,
                                       const std::atomic<bool>* cancel)
{
    class One : public Proposer {
    public:
        One(const Candidate& c, const TunableValues& t)
            : m_c(c)
            , m_t(t)
        {
        }
        std::string kind() const override { return "human"; }
        std::vector<Proposal> propose(const ProposalContext&, int, const std::atomic<bool>*) override
        {
            if (m_done)
                return {};
            m_done = true;
            return { Proposal { m_c, m_t, "human", "a hand-written candidate", {}, {}, {}, {} } };
        }

    private:
        Candidate m_c;
        TunableValues m_t;
        bool m_done = false;
    } one(candidate, tunables);
    auto saved = m_config.stop;
    m_config.stop = StopPolicy { 1, 0.0, 0.0, 0, 0.0 };
    auto summary = run(one, cancel);
    m_config.stop = saved;
    return summary;
}

} // namespace kl
