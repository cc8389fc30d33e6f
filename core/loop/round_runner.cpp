#include "core/loop/round_runner.h"

#include "core/loop/candidate_pipeline.h"
#include "core/loop/continue_from_here.h"
#include "core/loop/iteration_recorder.h"
#include "core/loop/look_ahead.h"
#include "core/loop/pending_candidate.h"
#include "core/loop/round_decision.h"
#include "core/loop/store_records.h"
#include "core/model/hash.h"
#include "core/pool/compile_stage.h"
#include "core/pool/pool_trace.h"
#include "core/store/records.h"

#include <algorithm>
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

RoundRunner::RoundRunner(const Problem& problem, const LoopConfig& config, CandidatePipeline& pipeline,
    IterationRecorder& recorder, ProposerBriefing& briefing, LoopEvents& events, ContinueFromHere& continueFromHere,
    ReviewGate* gate, LookAhead* lookAhead, std::function<int(int)> remainingAfter)
    : m_problem(problem)
    , m_config(config)
    , m_pipeline(pipeline)
    , m_recorder(recorder)
    , m_briefing(briefing)
    , m_events(events)
    , m_continueFromHere(continueFromHere)
    , m_gate(gate)
    , m_lookAhead(lookAhead)
    , m_remainingAfter(std::move(remainingAfter))
{
}

RoundRunner::~RoundRunner() = default;

bool RoundRunner::noIncumbentYet() const { return m_best && m_best->timings.empty() && m_best->outcome.index == 0; }

void RoundRunner::phase(int round, LoopPhase p, const std::string& detail)
{
    m_events.publish(PhaseChanged { round, p, detail });
}

void RoundRunner::startWithoutKernel(Proposer& proposer)
{
    m_best = std::make_unique<Incumbent>();
    try {
        proposer.warmUp(m_problem, m_problem.baseline);
    } catch (...) {
    }
}

// One round: the proposals, each refused, reviewed or queued in the order proposed, their results
// collected, the round decided.
RoundRunner::End RoundRunner::run(Proposer& proposer, int round, int remaining, LoopProgress& progress,
    LoopSummary& summary, const std::atomic<bool>* cancel)
{
    if (m_best) // "continue from here", asked for while the last round ran
        if (const auto previous = m_continueFromHere.adopt(*m_best))
            m_events.publish(IncumbentChanged { m_best->outcome, *previous });
    const auto ctx = m_briefing.context(*m_best, round, remaining);
    phase(round, LoopPhase::Propose, proposer.kind());
    pool::trace("round " + std::to_string(round) + " proposing");
    auto proposals = proposeOrFail(proposer, ctx, std::max(1, m_config.candidatesPerIteration), cancel);
    pool::trace("round " + std::to_string(round) + ": " + std::to_string(proposals.size()) + " proposals");
    if (m_lookAhead)
        m_lookAhead->dropWaiting(); // guesses not started: the CPU is the real round's now
    if (cancel && cancel->load()) // e.g. while an LLM was still writing
        return End::Cancelled;
    if (proposals.empty())
        return End::Exhausted;
    std::vector<EvaluatedCandidate> batch;
    RoundTally tally; // for the stop rules: proposer failures count apart from measured gains
    tally.proposals = int(proposals.size());
    tally.cycle = proposer.cycle();
    // Candidates queued on the pool, recorded in the order proposed (a refusal waits for those before it).
    Pending pending;
    const auto collected = [&] { collect(proposer, round, pending, batch, summary); };
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
            collected();
            refuse(refused, p, nullptr, {});
            continue;
        }
        // The engineer's own candidates (Evaluate, Edit) are not reviewed: they wrote them.
        if (m_config.mode == LoopMode::Review && m_gate && p.proposer != "human" && !review(p, ctx, round, collected))
            continue;
        pending.push_back(compiled[at] ? std::move(compiled[at]) : m_pipeline.begin(p, round, m_best.get(), cancel));
    }
    collected();
    close(batch, round, tally);
    summary.rounds = round;
    recordRound(progress, tally);
    return cancel && cancel->load() ? End::Cancelled : End::Next;
}

// The queued candidates' results, in order, into the round's batch; the next round's guesses compile
// while each runs.
void RoundRunner::collect(
    Proposer& proposer, int round, Pending& pending, std::vector<EvaluatedCandidate>& batch, LoopSummary& summary)
{
    for (std::size_t next = 0; next < pending.size(); ++next) {
        lookAhead(proposer, round + 1, batch, pending, next); // while pending[next] runs
        auto e = m_pipeline.complete(*pending[next], m_best->outcome.candidateId, bar());
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
RoundRunner::Pending RoundRunner::compileTogether(
    const std::vector<Proposal>& proposals, int round, pool::TurnOrder& order, const std::atomic<bool>* cancel)
{
    Pending compiled(proposals.size());
    if ((m_config.mode == LoopMode::Review && m_gate) || proposals.size() <= 1)
        return compiled;
    std::vector<PendingCandidate*> toCompile;
    for (std::size_t i = 0; i < proposals.size(); ++i)
        if (proposals[i].failure.empty()) {
            compiled[i] = m_pipeline.begin(proposals[i], round, m_best.get(), cancel, false);
            if (compiled[i]->awaitingCompile) {
                compiled[i]->order = &order;
                compiled[i]->turn = int(toCompile.size());
                toCompile.push_back(compiled[i].get());
            }
        }
    pool::compileConcurrently(int(toCompile.size()),
        pool::roundCompileWidth(m_pipeline.usableRunners(), int(toCompile.size())),
        [&](int i) { m_pipeline.compileAndQueue(*toCompile[std::size_t(i)], cancel); });
    return compiled;
}

// The engineer's decision on `p`: false when it was rejected or steered (recorded as such, after the
// candidates queued before it, by `collectQueued`); a replacement takes its place in `p`.
bool RoundRunner::review(Proposal& p, const ProposalContext& ctx, int round, const std::function<void()>& collectQueued)
{
    phase(round, LoopPhase::Review, p.hypothesis);
    m_events.publish(ReviewRequested { round, p, ctx.best, ctx.bestTunables });
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
        collectQueued();
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

IterationOutcome RoundRunner::refusedOutcome(const Proposal& p, int round) const
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
void RoundRunner::refuse(
    IterationOutcome& o, const Proposal& p, const store::DecisionRecord* decision, const std::string& rejection)
{
    m_recorder.recordRefusal(o, p, decision);
    o.state = p.failure.empty() ? "refused" : "proposer-error";
    o.proposerDetail = proposerDetailFor(p.proposer, m_config.proposerDetail);
    if (decision)
        o.decision = decision->kind;
    m_continueFromHere.remember({ p, o, {}, {}, {} });
    m_briefing.addToHistory(historyEntry(o, rejection));
    m_events.publish(IterationFinished { o });
}

// The round decided: the new best if any, pass@k's tally, every iteration told, and what the stop
// rules count of it.
void RoundRunner::close(std::vector<EvaluatedCandidate>& batch, int round, RoundTally& tally)
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
        m_continueFromHere.remember(e);
        m_briefing.addToHistory(historyEntry(e.outcome));
        m_events.publish(IterationFinished { e.outcome });
    }
    if (m_best->outcome.index != incumbent)
        m_events.publish(
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

std::optional<std::string> RoundRunner::measureBaseline(
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
    Pending baseline;
    baseline.push_back(m_pipeline.begin(base, 0, m_best.get(), cancel));
    warmUp.get();
    lookAhead(proposer, 1, {}, baseline, 0); // while the baseline's job runs
    auto first = m_pipeline.complete(*baseline.front(), std::nullopt, nullptr);
    if (first.outcome.category == "cancelled") {
        summary.stopReason = "cancelled";
        return std::string("cancelled");
    }
    ++summary.evaluated;
    first.outcome.kept = first.outcome.category == "passed";
    m_baseline = first.outcome;
    m_briefing.setBaseline(first.outcome);
    m_briefing.addToHistory(historyEntry(first.outcome));
    m_events.publish(IterationFinished { first.outcome });
    if (!first.outcome.kept) {
        summary.stopReason = "the baseline did not pass: " + first.outcome.category + ": " + first.outcome.detail;
        return std::string("failed");
    }
    ++summary.passed;
    m_best = std::make_unique<Incumbent>(Incumbent { base, first.outcome, first.timings, first.statics });
    m_continueFromHere.remember(first);
    m_events.publish(IncumbentChanged { first.outcome, std::nullopt });
    return std::nullopt;
}

double RoundRunner::decide(std::vector<EvaluatedCandidate>& batch)
{
    const auto decision = decideRound(batch, bar(), m_config.noiseGain);
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (batch[i].outcome.index > 0) {
            m_recorder.recordDecision(batch[i].outcome.index, decision.decisions[i]);
            batch[i].outcome.decision = decision.decisions[i].kind;
        }
    if (!decision.kept)
        return 0.0;
    const auto& winner = batch[*decision.kept];
    m_best->proposal = winner.proposal;
    m_best->outcome = winner.outcome;
    m_best->timings = winner.timings;
    m_best->statics = winner.statics;
    return decision.gain;
}

void RoundRunner::lookAhead(const Proposer& proposer, int nextRound, const std::vector<EvaluatedCandidate>& arrived,
    const Pending& pending, std::size_t next)
{
    if (!m_lookAhead || next >= pending.size() || !pending[next]->job)
        return;
    if (pending[next]->job->wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        return; // its result is in: guess once it is read
    std::vector<const EvaluatedCandidate*> running;
    for (std::size_t i = next; i < pending.size(); ++i)
        running.push_back(&pending[i]->e);
    m_lookAhead->guess(proposer, nextRound, m_remainingAfter(nextRound - 1), m_best.get(), arrived, running);
}

} // namespace kl
