#include "core/loop/session_append.h"

#include "core/loop/candidate_pipeline.h"
#include "core/loop/iteration_recorder.h"
#include "core/loop/measuring_setup.h"
#include "core/loop/pending_candidate.h"
#include "core/model/error.h"
#include "core/store/store.h"

#include <algorithm>

namespace kl {

namespace {

// The stored session's best passed iteration (highest speedup; ties: the earlier one).
std::optional<store::IterationRow> bestRow(const std::vector<store::IterationRow>& rows)
{
    std::optional<store::IterationRow> best;
    for (const auto& row : rows)
        if (row.category == "passed" && row.speedup && row.candidateId && (!best || *row.speedup > *best->speedup))
            best = row;
    return best;
}

// The session's summary with one more evaluated candidate; it names the candidate best when it is.
store::SessionSummary countedSummary(std::optional<store::SessionSummary> stored, const IterationOutcome& outcome,
    const std::optional<store::IterationRow>& best)
{
    auto summary = stored.value_or(store::SessionSummary {});
    summary.evaluated = summary.evaluated.value_or(0) + 1;
    if (outcome.category != "passed" || !outcome.speedup)
        return summary;
    summary.passed = summary.passed.value_or(0) + 1;
    const double bar = summary.bestSpeedup ? *summary.bestSpeedup : (best ? best->speedup.value_or(0.0) : 0.0);
    if (*outcome.speedup > bar) {
        summary.bestIteration = outcome.index;
        summary.bestSpeedup = *outcome.speedup;
        if (outcome.medianUs)
            summary.bestUs = *outcome.medianUs;
        if (outcome.pctOfCopy)
            summary.bestPctOfCopy = *outcome.pctOfCopy;
    }
    return summary;
}

} // namespace

SessionAppend::SessionAppend(const Problem& problem, store::Store& store, IterationRecorder& recorder,
    LoopEvents& events, std::function<CandidatePipeline&()> startRunners)
    : m_problem(problem)
    , m_store(store)
    , m_recorder(recorder)
    , m_events(events)
    , m_startRunners(std::move(startRunners))
{
}

LoopSummary SessionAppend::evaluateInto(
    std::int64_t sessionId, const Candidate& candidate, const TunableValues& tunables, const std::atomic<bool>* cancel)
{
    const auto start = Clock::now();
    const auto stored = m_store.session(sessionId);
    const std::string where = "session " + std::to_string(sessionId);
    if (!stored)
        throw Error("store.unknown-session", {}, where, "the store has no session " + std::to_string(sessionId));
    if (stored->status == "running")
        throw Error("session.running", {}, where,
            "the session is still running; its own loop records new candidates (evaluate from the window or "
            "process that runs it, or after it ends)");
    if (stored->problemHash != m_problem.contentHash)
        throw Error("session.other-problem", {}, where,
            "the session is of problem \"" + stored->problemName + "\", not of \"" + m_problem.name
                + "\" (or of another version of its file)");
    CandidatePipeline& pipeline = m_startRunners();
    const MeasuringSetup& setup = pipeline.setup();
    // Its speedup over the session's best would compare two GPU models: refused, never recorded.
    const std::string storedModel = stored->deviceInfo ? stored->deviceInfo->name : std::string();
    if (!storedModel.empty() && storedModel != setup.device.name)
        throw Error("session.other-gpu-model", {}, where,
            "the session was measured on a " + storedModel + ", this runner's GPU is a " + setup.device.name
                + ": two GPU models are never mixed in one comparison (start a new session on it)");
    m_recorder.beginSession(sessionId, setup.toolkit);

    const auto rows = m_store.listIterations(sessionId);
    int round = 0;
    for (const auto& row : rows)
        round = std::max(round, row.round.value_or(0));
    ++round;
    const auto best = bestRow(rows);
    m_events.publish(
        SessionStarted { sessionId, m_problem.name, stored->proposer, setup.device, LoopMode::Auto, 1, 1 });

    Proposal proposal { candidate, tunables, "human", "a hand-written candidate", {}, {}, {}, {} };
    auto e = pipeline.evaluate(proposal, round, best ? best->candidateId : std::nullopt, cancel);
    LoopSummary summary;
    summary.sessionId = sessionId;
    summary.candidatesPerRound = 1;
    summary.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (e.outcome.category == "cancelled") {
        summary.stopReason = "cancelled";
        summary.cancelled = true;
        m_events.publish(SessionFinished { "cancelled", summary });
        return summary;
    }
    summary.rounds = 1;
    summary.evaluated = 1;
    if (e.outcome.category == "passed") {
        summary.passed = 1;
        summary.best = e.outcome;
    }
    m_recorder.storeListings(true); // the engineer's candidate is shown whole: its listings are in the store first
    m_events.publish(IterationFinished { e.outcome });
    m_store.recordSessionSummary(sessionId, countedSummary(stored->summary, e.outcome, best));
    summary.stopReason
        = "evaluated into session " + std::to_string(sessionId) + " as iteration " + std::to_string(e.outcome.index);
    m_events.publish(PhaseChanged { round, LoopPhase::Finished, summary.stopReason });
    m_events.publish(SessionFinished { "finished", summary });
    return summary;
}

} // namespace kl
