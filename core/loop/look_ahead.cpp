// Compiling the next round ahead: the context the next round would get if what has arrived is all
// there is, the proposer's guesses from it, and the compile each guess would get on time.
#include "core/loop/look_ahead.h"

#include "core/loop/pending_candidate.h"
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

LookAhead::LookAhead(const Problem& problem, const ProposerBriefing& briefing, CompileOptions options,
    DeviceLimits limits, int width, int candidatesPerRound)
    : m_problem(problem)
    , m_briefing(briefing)
    , m_options(std::move(options))
    , m_limits(limits)
    , m_candidatesPerRound(std::max(1, candidatesPerRound))
    , m_compiles(std::make_unique<CompileAhead>(width))
{
}

LookAhead::~LookAhead() = default;

CompiledAhead LookAhead::compile(const Proposal& proposal) const
{
    const auto start = Clock::now();
    CompiledAhead compiled;
    try {
        compiled.report = analyseCandidate(m_problem, proposal.candidate, proposal.tunables, m_options, m_limits);
    } catch (const Error& error) {
        compiled.errorCategory = error.category();
        compiled.errorDetail = error.what();
    }
    compiled.millis = msSince(start);
    return compiled;
}

ProposalContext LookAhead::anticipatedContext(int nextRound, int remaining, const Incumbent* incumbent,
    const std::vector<EvaluatedCandidate>& arrived, const std::vector<const EvaluatedCandidate*>& running) const
{
    // The round decision's choice among what has arrived: faster beyond the noise, by the highest lower bound.
    const EvaluatedCandidate* winner = nullptr;
    for (const auto& e : arrived)
        if (e.outcome.category == "passed" && e.vsIncumbent && e.vsIncumbent->faster
            && (!winner || e.vsIncumbent->low > winner->vsIncumbent->low))
            winner = &e;
    const bool baselineRound = !incumbent; // round 0: the baseline will be the incumbent (if it passes)
    ProposalContext ctx;
    if (winner)
        ctx = m_briefing.context(
            Incumbent { winner->proposal, winner->outcome, winner->timings, winner->statics }, nextRound, remaining);
    else if (incumbent)
        ctx = m_briefing.context(*incumbent, nextRound, remaining);
    else
        ctx = m_briefing.context(
            Incumbent { running.front()->proposal, running.front()->outcome, {}, {} }, nextRound, remaining);
    for (const auto& e : arrived) {
        auto h = historyEntry(e.outcome);
        h.kept = &e == winner;
        ctx.history.push_back(std::move(h));
    }
    for (const EvaluatedCandidate* e : running) {
        auto h = historyEntry(e->outcome);
        h.category = "pending";
        h.kept = baselineRound;
        ctx.history.push_back(std::move(h));
    }
    return ctx;
}

void LookAhead::guess(const Proposer& proposer, int nextRound, int remaining, const Incumbent* incumbent,
    const std::vector<EvaluatedCandidate>& arrived, const std::vector<const EvaluatedCandidate*>& running)
{
    if (remaining <= 0 || running.empty())
        return;
    const int k = m_candidatesPerRound;
    auto guesses = proposer.anticipate(
        anticipatedContext(nextRound, remaining, incumbent, arrived, running), k, kGuessesPerProposal * k);
    if (guesses.empty())
        return;
    std::vector<std::pair<std::string, CompileAhead::Work>> likely;
    likely.reserve(guesses.size());
    for (auto& guess : guesses) {
        auto key = compiledAheadKey(guess);
        likely.emplace_back(std::move(key), [this, guess = std::move(guess)] { return compile(guess); });
    }
    pool::trace("round " + std::to_string(nextRound) + ": " + std::to_string(likely.size())
        + " guesses to compile ahead, " + std::to_string(arrived.size()) + " of this round's results in");
    m_compiles->anticipate(std::move(likely));
}

std::optional<CompiledAhead> LookAhead::take(const Proposal& proposal)
{
    return m_compiles->take(compiledAheadKey(proposal));
}

void LookAhead::dropWaiting() { m_compiles->dropWaiting(); }

CompileAhead::Tally LookAhead::tally() const { return m_compiles->tally(); }

} // namespace kl
