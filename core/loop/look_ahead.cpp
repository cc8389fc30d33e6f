// Compiling the next round ahead (core/loop/compile_ahead.h) for TuningSession: the context the next
// round would get if what has arrived is all there is, the proposer's guesses from it, and the
// compile each guess would get on time.
#include "core/loop/compile_ahead.h"
#include "core/loop/pending_candidate.h"
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/pool/pool_trace.h"

#include <algorithm>

namespace kl {

namespace {

// Guesses per proposal: the round's own k, and as many again twice over for the ties and hints that
// move once the pending results are in (layernorm_gelu's 1-step neighbourhood is ~10 candidates).
constexpr int kGuessesPerProposal = 3;

} // namespace

std::string compiledAheadKey(const Proposal& proposal)
{
    // Everything analyseCandidate reads of a proposal: the source, the name it compiles under (the
    // candidate's launches and tunables are parsed from the source) and the tunables asked for.
    return candidateKey(contentHash(proposal.candidate.fileName + '\n' + proposal.candidate.source), proposal.tunables);
}

CompileOptions TuningSession::compileOptions() const
{
    CompileOptions options;
    options.arch = m_problem.arch;
    options.includeDir = m_problem.dir;
    return options;
}

int TuningSession::remainingAfter(int rounds) const
{
    const StopPolicy stop = currentStop();
    return stop.maxIterations > 0 ? stop.maxIterations - rounds : 1000;
}

CompiledAhead TuningSession::compileAhead(const Proposal& proposal) const
{
    const auto start = Clock::now();
    CompiledAhead compiled;
    try {
        compiled.report
            = analyseCandidate(m_problem, proposal.candidate, proposal.tunables, compileOptions(), m_limits);
    } catch (const Error& error) {
        compiled.errorCategory = error.category();
        compiled.errorDetail = error.what();
    }
    compiled.millis = msSince(start);
    return compiled;
}

ProposalContext TuningSession::anticipatedContext(int nextRound, int remaining,
    const std::vector<EvaluatedCandidate>& arrived, const std::vector<std::unique_ptr<Pending>>& pending,
    std::size_t next) const
{
    // decide()'s choice among what has arrived: faster beyond the noise, by the highest lower bound.
    const EvaluatedCandidate* winner = nullptr;
    for (const auto& e : arrived)
        if (e.outcome.category == "passed" && e.vsIncumbent && e.vsIncumbent->faster
            && (!winner || e.vsIncumbent->low > winner->vsIncumbent->low))
            winner = &e;
    const bool baselineRound = !m_best; // round 0: the baseline will be the incumbent (if it passes)
    ProposalContext ctx;
    if (winner)
        ctx = m_briefing.context(
            Incumbent { winner->proposal, winner->outcome, winner->timings, winner->statics }, nextRound, remaining);
    else if (m_best)
        ctx = m_briefing.context(*m_best, nextRound, remaining);
    else
        ctx = m_briefing.context(
            Incumbent { pending[next]->e.proposal, pending[next]->e.outcome, {}, {} }, nextRound, remaining);
    for (const auto& e : arrived) {
        auto h = historyEntry(e.outcome);
        h.kept = &e == winner;
        ctx.history.push_back(std::move(h));
    }
    for (std::size_t i = next; i < pending.size(); ++i) {
        auto h = historyEntry(pending[i]->e.outcome);
        h.category = "pending";
        h.kept = baselineRound;
        ctx.history.push_back(std::move(h));
    }
    return ctx;
}

void TuningSession::lookAhead(const Proposer& proposer, int nextRound, const std::vector<EvaluatedCandidate>& arrived,
    const std::vector<std::unique_ptr<Pending>>& pending, std::size_t next)
{
    const int remaining = remainingAfter(nextRound - 1);
    if (!m_ahead || remaining <= 0 || next >= pending.size() || !pending[next]->job)
        return;
    if (pending[next]->job->wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        return; // its result is in: guess once it is read
    const int k = std::max(1, m_config.candidatesPerIteration);
    auto guesses = proposer.anticipate(
        anticipatedContext(nextRound, remaining, arrived, pending, next), k, kGuessesPerProposal * k);
    if (guesses.empty())
        return;
    std::vector<std::pair<std::string, CompileAhead::Work>> likely;
    likely.reserve(guesses.size());
    for (auto& guess : guesses) {
        auto key = compiledAheadKey(guess);
        likely.emplace_back(std::move(key), [this, guess = std::move(guess)] { return compileAhead(guess); });
    }
    pool::trace("round " + std::to_string(nextRound) + ": " + std::to_string(likely.size())
        + " guesses to compile ahead, " + std::to_string(arrived.size()) + " of this round's results in");
    m_ahead->anticipate(std::move(likely));
}

} // namespace kl
