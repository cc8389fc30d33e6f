#include "core/loop/tuning_session.h"

#include "core/loop/candidate_pipeline.h"
#include "core/loop/continue_from_here.h"
#include "core/loop/look_ahead.h"
#include "core/loop/measuring_setup.h"
#include "core/loop/pending_candidate.h"
#include "core/loop/round_runner.h"
#include "core/loop/session_append.h"
#include "core/loop/store_records.h"
#include "core/model/error.h"
#include "core/pool/runner_pool.h"
#include "core/store/store.h"

#include <algorithm>

namespace kl {

TuningSession::TuningSession(const Problem& problem, store::Store& store, RunnerClient& runner, LoopConfig config)
    : m_problem(problem)
    , m_store(store)
    , m_ownPool(std::make_unique<pool::RunnerPool>(runner))
    , m_pool(m_ownPool.get())
    , m_config(std::move(config))
    , m_recorder(store, m_config.proposerDetail)
    , m_briefing(problem)
    , m_continueFromHere(std::make_unique<ContinueFromHere>())
{
}

TuningSession::TuningSession(const Problem& problem, store::Store& store, pool::RunnerPool& runners, LoopConfig config)
    : m_problem(problem)
    , m_store(store)
    , m_pool(&runners)
    , m_config(std::move(config))
    , m_recorder(store, m_config.proposerDetail)
    , m_briefing(problem)
    , m_continueFromHere(std::make_unique<ContinueFromHere>())
{
}

TuningSession::~TuningSession()
{
    // An error that escaped run() (a store that failed, a bug) still leaves the stored session with a
    // status: never "running" once no loop runs it.
    if (m_created && !m_finished)
        try {
            m_store.finishSession(m_sessionId, "failed");
        } catch (const std::exception&) {
        }
}

void TuningSession::startMeasuring()
{
    m_setup = std::make_unique<MeasuringSetup>(kl::startMeasuring(m_problem, *m_pool, m_store));
    m_device = m_setup->device;
    m_briefing.setDevice(m_setup->device, m_setup->limits);
    m_pipeline
        = std::make_unique<CandidatePipeline>(m_problem, m_store, *m_pool, m_config, *m_setup, m_recorder, *m_events);
}

void TuningSession::prepare(const std::string& proposerName)
{
    startMeasuring();
    store::SessionRecord s;
    s.problemHash = m_setup->problemHash;
    s.label = m_config.label;
    const auto endpoints = m_pool->endpoints();
    s.device = m_device.name
        + (endpoints.size() > 1 ? " x" + std::to_string(m_pool->usableRunners())
                                : " #" + std::to_string(m_device.index));
    s.deviceInfo = m_device;
    s.proposer = m_config.proposerDetail.empty() ? proposerName : m_config.proposerDetail;
    s.mode = m_config.mode == LoopMode::Review ? "review" : "auto";
    s.config
        = { { "max_iterations", m_config.stop.maxIterations }, { "max_wall_seconds", m_config.stop.maxWallSeconds },
              { "target_speedup", m_config.stop.targetSpeedup }, { "patience", m_config.stop.patience },
              { "min_gain", m_config.stop.minGain }, { "max_failed_rounds", m_config.stop.maxFailedRounds },
              { "candidates_per_iteration", m_config.candidatesPerIteration },
              { "metric_set", std::string(protocol::metricSetName(m_config.evaluate.profile)) },
              { "trials", m_config.evaluate.trials }, { "seed", m_config.evaluate.seed }, { "runners", endpoints } };
    m_sessionId = m_store.createSession(s);
    m_created = true;
    m_recorder.beginSession(m_sessionId, m_setup->toolkit);
    m_events->publish(SessionStarted { m_sessionId, m_problem.name, s.proposer, m_device, m_config.mode,
        m_config.stop.maxIterations, std::max(1, m_config.candidatesPerIteration) });
}

LoopSummary TuningSession::finish(LoopSummary summary, std::string status, Clock::time_point start)
{
    summary.passAtK = m_rounds->scaling().passAtK();
    summary.speedupAtK = m_rounds->scaling().speedupAtK();
    summary.sessionId = m_sessionId;
    summary.wallSeconds = msSince(start) / 1000.0;
    if (summary.wallSeconds > 0)
        summary.candidatesPerMinute = summary.evaluated * 60.0 / summary.wallSeconds;
    summary.baseline = m_rounds->baseline();
    const bool noKernel = m_rounds->noIncumbentYet();
    if (m_rounds->incumbent() && !noKernel)
        summary.best = m_rounds->incumbent()->outcome;
    if (noKernel && status == "finished")
        status = "failed"; // a problem with no kernel, and none passed: nothing was found to keep
    summary.cancelled = status == "cancelled";
    m_recorder.storeListings(true);
    if (m_lookAhead) {
        m_lookAhead->dropWaiting();
        const auto tally = m_lookAhead->tally();
        summary.compiledAhead = tally.compiled;
        summary.usedAhead = tally.taken;
        m_pipeline->setLookAhead(nullptr);
        m_rounds->dropLookAhead();
        m_lookAhead.reset(); // joins a compile under way (< 0.5 s)
    }
    m_store.recordSessionSummary(m_sessionId, storedSummary(summary));
    m_store.finishSession(m_sessionId, status);
    m_finished = true;
    m_events->publish(PhaseChanged { summary.rounds, LoopPhase::Finished, summary.stopReason });
    m_events->publish(SessionFinished { status, summary });
    return summary;
}

void TuningSession::continueFrom(int iterationIndex) { m_continueFromHere->ask(iterationIndex); }

void TuningSession::extendBudget(int rounds)
{
    if (rounds > 0)
        m_extraRounds.fetch_add(rounds);
}

StopPolicy TuningSession::currentStop() const
{
    StopPolicy stop = m_config.stop;
    if (stop.maxIterations > 0)
        stop.maxIterations += m_extraRounds.load();
    return stop;
}

int TuningSession::remainingAfter(int rounds) const
{
    const StopPolicy stop = currentStop();
    return stop.maxIterations > 0 ? stop.maxIterations - rounds : 1000;
}

LoopSummary TuningSession::run(Proposer& proposer, const std::atomic<bool>* cancel)
{
    const auto start = Clock::now();
    // No kernel yet: the proposer must write one from nothing. Refused before the runners start or
    // anything is stored.
    if (!m_problem.hasBaselineKernel() && !proposer.writesKernels())
        throw Error("problem.no-kernel", m_problem.file.string(), "baseline",
            "the problem has no kernel yet and the " + proposer.kind()
                + " proposer cannot write one: ask a model for the first kernel (--proposer llm) or start from "
                  "torch.compile's kernel (--start inductor)");
    prepare(proposer.kind());
    LoopSummary summary;
    summary.candidatesPerRound = std::max(1, m_config.candidatesPerIteration);
    m_briefing.readExamples(m_store, m_sessionId);

    const int aheadWidth = m_config.compileAhead < 0 ? CompileAhead::widthForThisHost() : m_config.compileAhead;
    if (aheadWidth > 0)
        m_lookAhead = std::make_unique<LookAhead>(m_problem, m_briefing, m_pipeline->compileOptions(), m_setup->limits,
            aheadWidth, m_config.candidatesPerIteration);
    m_pipeline->setLookAhead(m_lookAhead.get());
    m_rounds = std::make_unique<RoundRunner>(m_problem, m_config, *m_pipeline, m_recorder, m_briefing, *m_events,
        *m_continueFromHere, m_gate, m_lookAhead.get(), [this](int rounds) { return remainingAfter(rounds); });
    if (m_problem.hasBaselineKernel()) {
        if (auto stopped = m_rounds->measureBaseline(proposer, summary, cancel))
            return finish(summary, *stopped, start);
    } else {
        // No kernel yet: PyTorch eager, timed in every job, is the baseline; the first candidate to pass
        // becomes the incumbent. The proposer must be able to write a kernel from nothing.
        m_rounds->startWithoutKernel(proposer);
    }

    LoopProgress progress;
    for (int round = 1;; ++round) {
        progress.wallSeconds = msSince(start) / 1000.0;
        progress.bestSpeedup = m_rounds->incumbent()->outcome.speedup.value_or(1.0);
        const StopPolicy stop = currentStop(); // the budget may have been extended from another thread
        if (auto reason = stopReason(stop, progress)) {
            summary.stopReason = *reason;
            break;
        }
        if (cancel && cancel->load()) {
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
        const int remaining = stop.maxIterations > 0 ? stop.maxIterations - progress.iterations : 1000;
        const auto end = m_rounds->run(proposer, round, remaining, progress, summary, cancel);
        if (end == RoundRunner::End::Cancelled) {
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
        if (end == RoundRunner::End::Exhausted) {
            progress.proposerExhausted = true;
            summary.stopReason = *stopReason(stop, progress);
            break;
        }
    }
    return finish(summary, "finished", start);
}

LoopSummary TuningSession::evaluateOne(
    const Candidate& candidate, const TunableValues& tunables, const std::atomic<bool>* cancel)
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

LoopSummary TuningSession::evaluateInto(
    std::int64_t sessionId, const Candidate& candidate, const TunableValues& tunables, const std::atomic<bool>* cancel)
{
    SessionAppend append(m_problem, m_store, m_recorder, *m_events, [this]() -> CandidatePipeline& {
        startMeasuring();
        return *m_pipeline;
    });
    return append.evaluateInto(sessionId, candidate, tunables, cancel);
}

} // namespace kl
