#include "core/loop/candidate_pipeline.h"

#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/lines/line_heat.h"
#include "core/loop/evaluation.h"
#include "core/loop/iteration_recorder.h"
#include "core/loop/look_ahead.h"
#include "core/loop/measuring_setup.h"
#include "core/loop/pending_candidate.h"
#include "core/loop/store_records.h"
#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/pool/pool_trace.h"
#include "core/pool/runner_pool.h"
#include "core/runnerclient/evaluate_job.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/code_listings.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <future>
#include <set>

namespace kl {

namespace {

// What in the options changes a result: the same candidate measured with other options is another entry.
std::string optionsKey(const protocol::EvaluateOptions& o)
{
    return "seed=" + std::to_string(o.seed) + ";trials=" + std::to_string(o.trials) + ";reps="
        + std::to_string(o.minReps) + "-" + std::to_string(o.maxReps) + ";flush=" + std::to_string(o.flushBytes)
        + ";profile=" + std::string(protocol::metricSetName(o.profile)) + ";time=" + (o.time ? "1" : "0")
        + (o.pcSampling ? ";lines=1" : "") // a cached result without samples must not answer a request for them
        + (o.repetitions == protocol::EvaluateOptions::Repetitions::Fixed
                ? std::string(";reps=fixed")
                : ";reps=adaptive" + std::to_string(o.intervalHalfWidth) + "/" + std::to_string(o.adaptiveMinReps));
}

bool cacheable(const std::string& category)
{
    static const std::set<std::string> transient { "timeout", "crash", "runner-lost", "cancelled", "bad-message",
        "no-device", "bad-request", "out-of-memory" };
    return !transient.count(category) && category.rfind("runner.", 0) != 0; // a runner's fault says nothing of it
}

} // namespace

std::string candidateKey(const std::string& sourceHash, const TunableValues& tunables)
{
    std::string key = sourceHash;
    for (const auto& [k, v] : tunables)
        key += ";" + k + "=" + std::to_string(v);
    return key;
}

CandidatePipeline::CandidatePipeline(const Problem& problem, store::Store& store, pool::RunnerPool& runners,
    const LoopConfig& config, const MeasuringSetup& setup, IterationRecorder& recorder, LoopEvents& events)
    : m_problem(problem)
    , m_store(store)
    , m_pool(runners)
    , m_config(config)
    , m_setup(setup)
    , m_recorder(recorder)
    , m_events(events)
{
}

CandidatePipeline::~CandidatePipeline() = default;

void CandidatePipeline::phase(int round, LoopPhase p, const std::string& detail)
{
    m_events.publish(PhaseChanged { round, p, detail });
}

CompileOptions CandidatePipeline::compileOptions() const
{
    CompileOptions options;
    options.arch = m_problem.arch;
    options.includeDir = m_problem.dir;
    return options;
}

int CandidatePipeline::usableRunners() const { return m_pool.usableRunners(); }

EvaluatedCandidate CandidatePipeline::evaluate(
    const Proposal& proposal, int round, std::optional<std::int64_t> parentId, const std::atomic<bool>* cancel)
{
    auto pending = begin(proposal, round, nullptr, cancel);
    return complete(*pending, parentId, nullptr);
}

// The cache, then (unless the round compiles later) compile and static analysis here; the runner's job
// is queued on the pool and runs meanwhile.
std::unique_ptr<PendingCandidate> CandidatePipeline::begin(
    const Proposal& proposal, int round, const Incumbent* best, const std::atomic<bool>* cancel, bool queueNow)
{
    auto pending = std::make_unique<PendingCandidate>();
    pending->start = Clock::now();
    pending->round = round;
    pending->tag = "r" + std::to_string(round) + "." + std::to_string(++m_begun);
    pool::trace(pending->tag + " begin");
    EvaluatedCandidate& e = pending->e;
    EvaluationArtifacts& a = pending->a;
    e.proposal = proposal;
    IterationOutcome& o = e.outcome;
    o.round = round;
    o.proposer = proposal.proposer;
    o.hypothesis = proposal.hypothesis;
    o.predictedSpeedup = proposal.predictedSpeedup;
    o.fileName = proposal.candidate.fileName;
    o.sourceHash = contentHash(proposal.candidate.source);
    o.tunables = proposal.tunables;

    // Counters only for a candidate that may become the best: read here, on the loop's thread.
    if (m_config.profileWithin > 0.0 && best && best->outcome.speedup && proposal.proposer != "human")
        pending->profileMinSpeedup = *best->outcome.speedup / (1.0 + m_config.profileWithin);
    // A result measured under that policy may lack counters: never an answer for a session profiling all.
    a.cacheKey = store::evaluationCacheKey(
        { proposal.candidate.source, proposal.tunables, m_setup.problemHash, m_setup.device.name, m_setup.toolkit,
            optionsKey(m_config.evaluate) + (m_config.profileWithin > 0.0 ? ";profile=promising" : "") });
    std::optional<store::ResultRecord> cached;
    if (m_config.useCache)
        cached = m_store.cacheLookup(a.cacheKey);
    if (cached) {
        a.result = store::storedReply(*cached); // decoded once, as a runner's reply is
        if (!a.result)
            cached.reset(); // a row this version cannot read: measure again
    }

    if (cached) {
        o.fromCache = true;
        o.status = cached->status;
        o.category = cached->category;
        o.detail = cached->detail;
        a.compile = cached->compile; // statics a row this version cannot read are none: no findings
        a.statics = a.compile.statics;
    } else if (queueNow) {
        compileAndQueue(*pending, cancel);
    } else {
        pending->awaitingCompile = true; // the round compiles its candidates side by side (compile_stage.h)
    }
    return pending;
}

// Compile, static analysis and the pool's job: no store access, so a round's candidates may run
// this on several threads at once (the event stream and the pool are thread-safe).
void CandidatePipeline::compileAndQueue(PendingCandidate& queued, const std::atomic<bool>* cancel)
{
    PendingCandidate* pending = &queued;
    pending->awaitingCompile = false;
    // Compiled beside others: its turn passes however this ends (queued, failed, cancelled).
    struct PassTurn {
        pool::TurnOrder* order;
        int turn;
        ~PassTurn()
        {
            if (order)
                order->pass(turn);
        }
    } passTurn { pending->order, pending->turn };
    const auto start = pending->start;
    const int round = pending->round;
    const auto& proposal = pending->e.proposal;
    EvaluationArtifacts& a = pending->a;
    IterationOutcome& o = pending->e.outcome;
    phase(round, LoopPhase::Compile, o.fileName);
    // Compiled while the round before ran, when the proposer's guess was right (or compiling now: wait).
    std::optional<CompiledAhead> ahead = m_lookAhead ? m_lookAhead->take(proposal) : std::nullopt;
    if (ahead) {
        a.report = std::move(ahead->report);
        if (!a.report) {
            o.status = "failed";
            o.category = ahead->errorCategory;
            o.detail = ahead->errorDetail;
        }
    } else {
        try {
            a.report
                = analyseCandidate(m_problem, proposal.candidate, proposal.tunables, compileOptions(), m_setup.limits);
        } catch (const Error& error) {
            o.status = "failed";
            o.category = error.category();
            o.detail = error.what();
        }
    }
    o.phasesMs["compile"] = msSince(start); // on the round's path: for one compiled ahead, the wait
    pool::trace(pending->tag + (ahead ? " compiled ahead" : " compiled"));
    if (a.report) {
        a.compile.report = staticReportJson(*a.report);
        a.statics = staticTelemetry(*a.report);
        a.compile.statics = a.statics;
        if (ahead)
            a.compile.compiledAheadMs = ahead->millis;
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
        EvaluateJob job { m_setup.reference,
            CompiledCandidate { TunedCandidate { proposal.candidate, proposal.tunables }, a.report->compile },
            m_setup.baseline };
        std::optional<protocol::EvaluateRequest> request;
        const auto planned = Clock::now();
        try {
            protocol::EvaluateOptions asked = m_config.evaluate;
            asked.profileMinSpeedup = pending->profileMinSpeedup;
            request = buildEvaluateRequest(m_problem, job, asked, pending->tag);
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
            // On the runner's worker thread: only copies and the (thread-safe) event stream.
            jo.progress = [this, round, file = o.fileName](const protocol::Progress& p) {
                if (p.phase == "time")
                    phase(round, LoopPhase::Benchmark, file);
                else if (p.phase == "profile" || p.phase == "pc-sampling")
                    phase(round, LoopPhase::Profile, file);
            };
            o.phasesMs["request"] = msSince(planned);
            if (pending->order)
                pending->order->wait(pending->turn);
            pending->job = m_pool.submit(std::move(*request), std::move(jo));
            if (pending->order)
                pending->order->pass(pending->turn);
            pool::trace(pending->tag + " submitted");
        }
    }
    if (a.report) {
        // The iteration's PTX and SASS, for the SASS/PTX pane and `show --lines` (nvdisasm where there is
        // one, ~0.5-0.7 s a candidate on the H200 host): on a thread of their own once the job is queued,
        // so that neither the runner nor the next compile waits for the disassembler, and stored when
        // made: waiting for them held each round's last result by up to ~0.7 s with fast jobs.
        pending->listings
            = std::async(std::launch::async, [ptx = a.report->compile.ptx, cubin = a.report->compile.cubin] {
                  const auto listed = Clock::now();
                  auto listings = store::listingsOf(ptx, cubin);
                  listings.listingsMs = msSince(listed);
                  return listings;
              });
    }
}

// Waits for the runner's answer, then findings and the rows that record it, on the loop's thread.
EvaluatedCandidate CandidatePipeline::complete(
    PendingCandidate& pending, std::optional<std::int64_t> parentId, const Incumbent* incumbent)
{
    EvaluatedCandidate& e = pending.e;
    EvaluationArtifacts& a = pending.a;
    IterationOutcome& o = e.outcome;
    const auto& proposal = e.proposal;
    const int round = pending.round;
    const auto start = pending.start;
    m_recorder.storeListings(false);
    if (pending.job) {
        auto pooled = pending.job->get();
        pool::trace(pending.tag + " answered");
        a.result = std::move(pooled.result);
        o.endpoint = pooled.endpoint;
        if (a.result->device)
            o.device = a.result->device->name + " #" + std::to_string(a.result->device->index);
        o.status = std::string(protocol::statusName(a.result->header.status));
        o.category = pooled.fault.empty() ? std::string(protocol::categoryName(a.result->category())) : pooled.fault;
        o.detail = a.result->category() == protocol::Category::Passed || !pooled.fault.empty()
            ? a.result->header.detail
            : verificationBrief(*a.result);
        for (const auto& [k, v] : a.result->phasesMs)
            o.phasesMs[k] = v;
        a.statics = staticTelemetry(*a.report, dominantKernel(*a.result));
        a.compile.statics = a.statics;
    }

    // A cached result was decoded like a fresh one: the figures read the same typed value.
    if (a.result && a.result->timing) {
        takeFigures(o, *a.result->timing);
        a.timings = timingsOf(*a.result->timing);
    }
    if (o.category != "cancelled") {
        phase(round, LoopPhase::Synthesise, o.fileName);
        if (a.statics) {
            try {
                auto t = a.result ? telemetryFromResult(*a.result, *a.statics) : *a.statics;
                const auto& device = m_setup.device;
                if (t.peakTflops <= 0 && device.smCount > 0)
                    t.peakTflops = peakFp32Tflops(device.smCount, device.smClockMhz, device.computeCapability);
                // The statics counted the PTX; a cached row's stored listings say it from the SASS where
                // nvdisasm ran (there is no compile report on that path: never the executed counter alone).
                if (auto listed = storedTensorInstructions(a.compile))
                    t.tensorInstructions = std::move(listed);
                o.findings = synthesise(t);
            } catch (const Error&) {
                // Telemetry that cannot be read gives no findings; the result itself stands.
            }
        }
    }
    o.phasesMs["total"] = msSince(start);
    if (o.category == "cancelled")
        return e;
    const auto recording = Clock::now();
    m_recorder.record(o, proposal, parentId, a);
    // As recorded, for those who follow the loop without reading the store (core/report/live_iteration.h).
    o.state = "done";
    o.proposerDetail = proposerDetailFor(proposal.proposer, m_config.proposerDetail);
    o.parentCandidateId = parentId;
    if (a.result)
        o.reply = std::make_shared<const protocol::EvaluateResult>(*a.result);
    o.statics = store::storedStatics(a.compile);
    if (m_config.useCache && !o.fromCache && a.result && cacheable(o.category) && o.candidateId)
        m_recorder.cacheResult(a.cacheKey, o.index);
    if (pending.listings.valid() && o.index > 0)
        m_recorder.addListings(o.index, std::move(pending.listings));
    o.phasesMs["record"] = msSince(recording);
    pool::trace(pending.tag + " recorded as iteration " + std::to_string(o.index));
    e.timings = a.timings;
    if (incumbent && o.category == "passed" && !e.timings.empty())
        e.vsIncumbent = compareTimings(e.timings, incumbent->timings, m_config.noiseGain);
    if (a.statics) {
        const auto& t = *a.statics;
        e.statics.registers = t.registers;
        e.statics.sharedBytes = t.staticShared + t.dynamicShared;
        e.statics.spillBytes = t.spillStores + t.spillLoads;
        e.statics.occupancy = t.theoreticalOccupancy;
        e.statics.limiter = t.occupancyLimiter;
    }
    for (const auto& f : o.findings)
        if (f.id.rfind("stall.", 0) == 0) {
            e.statics.primaryStall = f.id.substr(6);
            break;
        }
    if (a.result && a.result->pcSampling)
        e.statics.hotLines = lines::hotLineTexts(*a.result->pcSampling, proposal.candidate.source, 3);
    return e;
}

} // namespace kl
