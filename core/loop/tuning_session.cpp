#include "core/loop/tuning_session.h"

#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/loop/continue_from_here.h"
#include "core/loop/evaluation.h"
#include "core/loop/look_ahead.h"
#include "core/loop/pending_candidate.h"
#include "core/loop/round_decision.h"
#include "core/loop/scaling.h"
#include "core/loop/stored_forms.h"
#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/pool/compile_stage.h"
#include "core/pool/pool_trace.h"
#include "core/pool/runner_pool.h"
#include "core/runnerclient/evaluate_job.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>

namespace kl {

namespace {

// A proposer that throws (a bug, input it could not handle) costs its round, not the session: the
// round is stored as proposer.internal with the error, and the loop goes on.
std::vector<Proposal> proposeOrFail(
    Proposer& proposer, const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    try {
        return proposer.propose(context, count, cancel);
    } catch (const std::exception& e) {
        std::string what = e.what();
        for (auto& c : what) // stored and printed as JSON: ASCII is always valid
            if (static_cast<unsigned char>(c) >= 0x80)
                c = '?';
        const auto kind = proposer.kind();
        Proposal failed;
        failed.proposer = kind.substr(0, kind.find('+'));
        failed.failure = "internal";
        failed.failureDetail = "the proposer failed: " + what.substr(0, 2000);
        return { failed };
    }
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

void TuningSession::phase(int round, LoopPhase p, const std::string& detail)
{
    m_events->publish(PhaseChanged { round, p, detail });
}

void TuningSession::startRunners()
{
    // The reference and the baseline compile while the runners start (CUDA, the first describe's copy
    // bandwidth): neither needs the other.
    const bool kernel = m_problem.hasBaselineKernel();
    auto compiling = std::async(std::launch::async, [this, kernel] {
        if (!kernel)
            return EvaluateJob { compileReference(m_problem), {}, std::nullopt };
        return compileEvaluateJob(
            m_problem, TunedCandidate { m_problem.baseline, m_problem.baseline.defaults() }, std::nullopt);
    });
    pool::trace("starting the runners");
    m_device = m_pool->start(); // throws runner.no-device when no runner has a GPU (the compile is waited for)
    m_limits = limitsOf(m_device, m_problem.arch);
    m_briefing.setDevice(m_device, m_limits);
    pool::trace("runners started: " + m_device.name);

    auto job = compiling.get();
    if (!job.reference.compiled.ok)
        throw Error("problem.reference-compile", m_problem.referencePath.string(), {},
            "the reference does not compile: " + job.reference.compiled.summary);
    if (kernel && !job.candidate.compiled.ok)
        throw Error("problem.baseline-compile", m_problem.baselinePath.string(), {},
            "the baseline does not compile: " + job.candidate.compiled.summary);
    m_reference = std::make_unique<Reference>();
    m_reference->reference = job.reference;
    if (kernel) {
        m_reference->baseline = job.candidate;
        m_reference->toolkit = job.candidate.compiled.nvrtcVersion;
    } else {
        // No baseline compiled to read the compiler's version from: the language stands in for it.
        m_reference->toolkit = std::string("first-kernel ") + candidateLanguageName(m_problem.language());
    }
    pool::trace(kernel ? "reference and baseline compiled" : "reference ready; no baseline kernel (PyTorch eager)");

    m_problemHash = m_store.addProblem(store::problemRecord(m_problem));
}

bool TuningSession::noIncumbentYet() const { return m_best && m_best->timings.empty() && m_best->outcome.index == 0; }

void TuningSession::prepare(const std::string& proposerName)
{
    startRunners();
    store::SessionRecord s;
    s.problemHash = m_problemHash;
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
    m_recorder.beginSession(m_sessionId, m_reference->toolkit);
    m_events->publish(SessionStarted { m_sessionId, m_problem.name, s.proposer, m_device, m_config.mode,
        m_config.stop.maxIterations, std::max(1, m_config.candidatesPerIteration) });
}

double TuningSession::decide(std::vector<EvaluatedCandidate>& batch)
{
    const auto decision = decideRound(batch, noIncumbentYet() ? nullptr : m_best.get(), m_config.noiseGain);
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (batch[i].outcome.index > 0)
            m_recorder.recordDecision(batch[i].outcome.index, decision.decisions[i]);
    if (!decision.kept)
        return 0.0;
    const auto& winner = batch[*decision.kept];
    m_best->proposal = winner.proposal;
    m_best->outcome = winner.outcome;
    m_best->timings = winner.timings;
    m_best->statics = winner.statics;
    return decision.gain;
}

LoopSummary TuningSession::finish(LoopSummary summary, std::string status, Clock::time_point start)
{
    summary.passAtK = m_scaling.passAtK();
    summary.speedupAtK = m_scaling.speedupAtK();
    summary.sessionId = m_sessionId;
    summary.wallSeconds = msSince(start) / 1000.0;
    if (summary.wallSeconds > 0)
        summary.candidatesPerMinute = summary.evaluated * 60.0 / summary.wallSeconds;
    summary.baseline = m_baseline;
    if (m_best && !noIncumbentYet())
        summary.best = m_best->outcome;
    if (noIncumbentYet() && status == "finished")
        status = "failed"; // a problem with no kernel, and none passed: nothing was found to keep
    summary.cancelled = status == "cancelled";
    m_recorder.storeListings(true);
    if (m_lookAhead) {
        m_lookAhead->dropWaiting();
        const auto tally = m_lookAhead->tally();
        summary.compiledAhead = tally.compiled;
        summary.usedAhead = tally.taken;
        m_lookAhead.reset(); // joins a compile under way (< 0.5 s)
    }
    m_store.recordSessionSummary(m_sessionId, toJson(summary));
    m_store.finishSession(m_sessionId, status);
    m_finished = true;
    phase(summary.rounds, LoopPhase::Finished, summary.stopReason);
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

CompileOptions TuningSession::compileOptions() const
{
    CompileOptions options;
    options.arch = m_problem.arch;
    options.includeDir = m_problem.dir;
    return options;
}

void TuningSession::lookAhead(const Proposer& proposer, int nextRound, const std::vector<EvaluatedCandidate>& arrived,
    const std::vector<std::unique_ptr<Pending>>& pending, std::size_t next)
{
    if (!m_lookAhead || next >= pending.size() || !pending[next]->job)
        return;
    if (pending[next]->job->wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        return; // its result is in: guess once it is read
    std::vector<const EvaluatedCandidate*> running;
    for (std::size_t i = next; i < pending.size(); ++i)
        running.push_back(&pending[i]->e);
    m_lookAhead->guess(proposer, nextRound, remainingAfter(nextRound - 1), m_best.get(), arrived, running);
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
    m_scaling = {};
    m_briefing.readExamples(m_store, m_sessionId);

    const int aheadWidth = m_config.compileAhead < 0 ? CompileAhead::widthForThisHost() : m_config.compileAhead;
    if (aheadWidth > 0)
        m_lookAhead = std::make_unique<LookAhead>(
            m_problem, m_briefing, compileOptions(), m_limits, aheadWidth, m_config.candidatesPerIteration);
    if (m_problem.hasBaselineKernel()) {
        if (auto stopped = measureBaseline(proposer, summary, cancel))
            return finish(summary, *stopped, start);
    } else {
        // No kernel yet: PyTorch eager, timed in every job, is the baseline; the first candidate to pass
        // becomes the incumbent (decide()). The proposer must be able to write a kernel from nothing.
        m_best = std::make_unique<Incumbent>();
        try {
            proposer.warmUp(m_problem, m_problem.baseline);
        } catch (...) {
        }
    }

    LoopProgress progress;
    for (int round = 1;; ++round) {
        progress.wallSeconds = msSince(start) / 1000.0;
        progress.bestSpeedup = m_best->outcome.speedup.value_or(1.0);
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
        const RoundEnd end = runRound(proposer, round, remaining, progress, summary, cancel);
        if (end == RoundEnd::Cancelled) {
            summary.stopReason = "cancelled";
            return finish(summary, "cancelled", start);
        }
        if (end == RoundEnd::Exhausted) {
            progress.proposerExhausted = true;
            summary.stopReason = *stopReason(stop, progress);
            break;
        }
    }
    return finish(summary, "finished", start);
}

// One round: the proposals, each refused, reviewed or queued in the order proposed, their results
// collected, the round decided.
TuningSession::RoundEnd TuningSession::runRound(Proposer& proposer, int round, int remaining, LoopProgress& progress,
    LoopSummary& summary, const std::atomic<bool>* cancel)
{
    if (m_best) // "continue from here", asked for while the last round ran
        if (const auto previous = m_continueFromHere->adopt(*m_best))
            m_events->publish(IncumbentChanged { m_best->outcome, *previous });
    const auto ctx = m_briefing.context(*m_best, round, remaining);
    phase(round, LoopPhase::Propose, proposer.kind());
    pool::trace("round " + std::to_string(round) + " proposing");
    auto proposals = proposeOrFail(proposer, ctx, std::max(1, m_config.candidatesPerIteration), cancel);
    pool::trace("round " + std::to_string(round) + ": " + std::to_string(proposals.size()) + " proposals");
    if (m_lookAhead)
        m_lookAhead->dropWaiting(); // guesses not started: the CPU is the real round's now
    if (cancel && cancel->load()) // e.g. while an LLM was still writing
        return RoundEnd::Cancelled;
    if (proposals.empty())
        return RoundEnd::Exhausted;
    std::vector<EvaluatedCandidate> batch;
    RoundTally tally; // for the stop rules: proposer failures count apart from measured gains
    tally.proposals = int(proposals.size());
    tally.cycle = proposer.cycle();
    // Candidates queued on the pool, recorded in the order proposed (a refusal waits for those before it).
    std::vector<std::unique_ptr<Pending>> pending;
    const auto collect = [&] { collectRound(proposer, round, pending, batch, summary); };
    pool::TurnOrder order;
    auto compiled = compileTogether(proposals, round, order, cancel);
    for (std::size_t at = 0; at < proposals.size(); ++at) {
        auto& p = proposals[at];
        summary.tokens += exchangeTokens(p.exchanges);
        if (cancel && cancel->load()) {
            for (auto& rest : compiled) // queued already: answered as cancelled, never recorded
                if (rest)
                    pending.push_back(std::move(rest));
            break;
        }
        if (!p.failure.empty()) {
            auto refused = refusedOutcome(p, round);
            refused.status = "error";
            refused.category = "proposer." + p.failure;
            refused.detail = p.failureDetail;
            ++tally.proposerFailures;
            tally.lastFailure = refused.category;
            collect();
            refuse(refused, p, nullptr, {});
            continue;
        }
        // The engineer's own candidates (Evaluate, Edit) are not reviewed: they wrote them.
        if (m_config.mode == LoopMode::Review && m_gate && p.proposer != "human" && !review(p, ctx, round, collect))
            continue;
        pending.push_back(compiled[at] ? std::move(compiled[at]) : begin(p, round, cancel));
    }
    collect();
    closeRound(batch, round, tally);
    summary.rounds = round;
    recordRound(progress, tally);
    return cancel && cancel->load() ? RoundEnd::Cancelled : RoundEnd::Next;
}

// The queued candidates' results, in order, into the round's batch; the next round's guesses compile
// while each runs.
void TuningSession::collectRound(Proposer& proposer, int round, std::vector<std::unique_ptr<Pending>>& pending,
    std::vector<EvaluatedCandidate>& batch, LoopSummary& summary)
{
    for (std::size_t next = 0; next < pending.size(); ++next) {
        lookAhead(proposer, round + 1, batch, pending, next); // while pending[next] runs
        auto e = complete(*pending[next], m_best->outcome.candidateId);
        if (e.outcome.category == "cancelled")
            continue;
        ++summary.evaluated;
        if (e.outcome.category == "passed")
            ++summary.passed;
        batch.push_back(std::move(e));
    }
    pending.clear();
}

// Without review, the round's candidates compile side by side (the whole round at once, up to the CPU's
// threads), each queued on the pool once compiled and its turn come, so that no GPU waits behind another
// candidate's compile and the jobs still run in the order proposed (core/pool/compile_stage.h); the cache
// is read first, here, on the loop's store. One entry per proposal, null where it is begun later.
std::vector<std::unique_ptr<TuningSession::Pending>> TuningSession::compileTogether(
    const std::vector<Proposal>& proposals, int round, pool::TurnOrder& order, const std::atomic<bool>* cancel)
{
    std::vector<std::unique_ptr<Pending>> compiled(proposals.size());
    if ((m_config.mode == LoopMode::Review && m_gate) || proposals.size() <= 1)
        return compiled;
    std::vector<Pending*> toCompile;
    for (std::size_t i = 0; i < proposals.size(); ++i)
        if (proposals[i].failure.empty()) {
            compiled[i] = begin(proposals[i], round, cancel, false);
            if (compiled[i]->awaitingCompile) {
                compiled[i]->order = &order;
                compiled[i]->turn = int(toCompile.size());
                toCompile.push_back(compiled[i].get());
            }
        }
    pool::compileConcurrently(int(toCompile.size()),
        pool::roundCompileWidth(m_pool->usableRunners(), int(toCompile.size())),
        [&](int i) { compileAndQueue(*toCompile[std::size_t(i)], cancel); });
    return compiled;
}

// The engineer's decision on `p`: false when it was rejected or steered (recorded as such, after the
// candidates queued before it, by `collect`); a replacement takes its place in `p`.
bool TuningSession::review(Proposal& p, const ProposalContext& ctx, int round, const std::function<void()>& collect)
{
    phase(round, LoopPhase::Review, p.hypothesis);
    m_events->publish(ReviewRequested { round, p, ctx.best, ctx.bestTunables });
    const auto d = m_gate->review(p, ctx);
    if (d.kind == ReviewDecision::Kind::Reject || d.kind == ReviewDecision::Kind::Steer) {
        store::DecisionRecord record;
        record.kind = d.kind == ReviewDecision::Kind::Reject ? store::DecisionRecord::Kind::Reject
                                                             : store::DecisionRecord::Kind::Steer;
        record.reason = d.reason;
        record.steering = d.steering;
        if (!d.steering.empty())
            m_briefing.addSteering(d.steering);
        auto refused = refusedOutcome(p, round);
        refused.category = d.kind == ReviewDecision::Kind::Reject ? "rejected" : "steered";
        refused.detail = d.kind == ReviewDecision::Kind::Reject ? d.reason : d.steering;
        collect();
        refuse(refused, p, &record, d.reason);
        return false;
    }
    if (d.kind == ReviewDecision::Kind::Replace && d.replacement) {
        p.candidate = *d.replacement;
        p.tunables = d.replacement->withOverrides(d.replacementTunables);
        p.proposer = "human";
        p.hypothesis = d.reason.empty() ? "edited by the engineer" : d.reason;
    }
    return true;
}

IterationOutcome TuningSession::refusedOutcome(const Proposal& p, int round) const
{
    IterationOutcome o;
    o.round = round;
    o.proposer = p.proposer;
    o.hypothesis = p.hypothesis;
    o.sourceHash = contentHash(p.candidate.source);
    o.tunables = p.tunables;
    return o;
}

// A proposal that never ran, recorded, remembered and told as an iteration.
void TuningSession::refuse(
    IterationOutcome& o, const Proposal& p, const store::DecisionRecord* decision, const std::string& rejection)
{
    m_recorder.recordRefusal(o, p, decision);
    m_continueFromHere->remember({ p, o, {}, {}, {} });
    m_briefing.addToHistory(historyEntry(o, rejection));
    m_events->publish(IterationFinished { o });
}

// The round decided: the new best if any, pass@k's tally, every iteration told, and what the stop
// rules count of it.
void TuningSession::closeRound(std::vector<EvaluatedCandidate>& batch, int round, RoundTally& tally)
{
    phase(round, LoopPhase::Decide, {});
    const int incumbent = m_best->outcome.index;
    const bool firstKernelRound = noIncumbentYet();
    const double gain = decide(batch);
    bool anyPassed = false;
    std::optional<double> bestOverIncumbent;
    for (const auto& e : batch)
        if (e.outcome.category == "passed") {
            anyPassed = true;
            if (e.outcome.speedupOverBest && (!bestOverIncumbent || *e.outcome.speedupOverBest > *bestOverIncumbent))
                bestOverIncumbent = e.outcome.speedupOverBest;
        }
    m_scaling.addRound(anyPassed, bestOverIncumbent);
    m_recorder.storeListings(false); // those made by now are in the store before the window reads the round
    for (const auto& e : batch) {
        m_continueFromHere->remember(e);
        m_briefing.addToHistory(historyEntry(e.outcome));
        m_events->publish(IterationFinished { e.outcome });
    }
    if (m_best->outcome.index != incumbent)
        m_events->publish(
            IncumbentChanged { m_best->outcome, incumbent > 0 ? std::optional<int>(incumbent) : std::nullopt });
    pool::trace("round " + std::to_string(round) + " decided");
    tally.gain = gain;
    tally.measured = std::any_of(
        batch.begin(), batch.end(), [](const auto& e) { return e.outcome.category == "passed" && !e.timings.empty(); });
    if (firstKernelRound) {
        // The first kernel is a start, not a gain: patience counts from the rounds after it.
        tally.withoutKernel = !tally.measured;
        tally.measured = false;
        for (const auto& e : batch)
            if (e.outcome.category != "passed")
                tally.lastFailure = e.outcome.category + ": " + e.outcome.detail.substr(0, 160);
    }
}

std::optional<std::string> TuningSession::measureBaseline(
    Proposer& proposer, LoopSummary& summary, const std::atomic<bool>* cancel)
{
    Proposal base { m_problem.baseline, m_problem.baseline.defaults(), "baseline", "the problem's baseline", {}, {}, {},
        {} };
    // The proposer's own set-up overlaps the baseline's job; a failure there comes back from propose().
    auto warmUp = std::async(std::launch::async, [&proposer, this] {
        try {
            proposer.warmUp(m_problem, m_problem.baseline);
        } catch (...) {
        }
    });
    std::vector<std::unique_ptr<Pending>> baseline;
    baseline.push_back(begin(base, 0, cancel));
    warmUp.get();
    lookAhead(proposer, 1, {}, baseline, 0); // while the baseline's job runs
    auto first = complete(*baseline.front(), std::nullopt);
    if (first.outcome.category == "cancelled") {
        summary.stopReason = "cancelled";
        return std::string("cancelled");
    }
    ++summary.evaluated;
    first.outcome.kept = first.outcome.category == "passed";
    m_baseline = first.outcome;
    m_briefing.setBaseline(first.outcome);
    m_briefing.addToHistory(historyEntry(first.outcome));
    m_events->publish(IterationFinished { first.outcome });
    if (!first.outcome.kept) {
        summary.stopReason = "the baseline did not pass: " + first.outcome.category + ": " + first.outcome.detail;
        return std::string("failed");
    }
    ++summary.passed;
    m_best = std::make_unique<Incumbent>(Incumbent { base, first.outcome, first.timings, first.statics });
    m_continueFromHere->remember(first);
    m_events->publish(IncumbentChanged { first.outcome, std::nullopt });
    return std::nullopt;
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

} // namespace kl
