#include "core/loop/store_records.h"

namespace kl {

store::CandidateRecord::Proposer storedProposer(const std::string& kind)
{
    if (kind == "llm")
        return store::CandidateRecord::Proposer::Llm;
    if (kind == "tuner")
        return store::CandidateRecord::Proposer::Tuner;
    return store::CandidateRecord::Proposer::Human; // human, baseline, inductor (written outside the loop)
}

std::vector<store::FindingRecord> findingRecords(const std::vector<Finding>& findings)
{
    std::vector<store::FindingRecord> out;
    for (const auto& f : findings) {
        store::FindingRecord r;
        r.ruleId = f.id;
        r.severity = std::string(severityName(f.severity));
        r.message = f.title;
        r.evidence = nlohmann::json(f.evidence);
        r.evidence["explanation"] = f.explanation;
        r.directions = f.directions;
        out.push_back(std::move(r));
    }
    return out;
}

store::ExchangeRecord exchangeRecord(const RoleExchange& exchange)
{
    return { std::string(promptRoleName(exchange.role)), exchange.exchange, 0, {} };
}

std::int64_t exchangeTokens(const std::vector<RoleExchange>& exchanges)
{
    std::int64_t tokens = 0;
    for (const auto& x : exchanges)
        tokens += x.exchange.usage.total();
    return tokens;
}

// What a candidate's record says about who proposed it: the session's detail ("tuner:auto",
// "llm:openai/gpt-4o") when that proposer ran the session, the matching half of a pair
// ("llm+tuner:openai/gpt-4o"), else the bare kind.
std::string proposerDetailFor(const std::string& proposer, const std::string& sessionDetail)
{
    if (proposer == "baseline" || proposer == "inductor")
        return proposer;
    const auto colon = sessionDetail.find(':');
    const auto kinds = sessionDetail.substr(0, colon);
    const auto rest = colon == std::string::npos ? std::string() : sessionDetail.substr(colon);
    if (kinds == proposer)
        return sessionDetail;
    if (proposer == "llm" && kinds.rfind("llm+", 0) == 0)
        return "llm" + rest;
    return proposer;
}

store::CandidateRecord candidateRecord(const Proposal& proposal, const std::string& sessionDetail)
{
    store::CandidateRecord c;
    c.source = proposal.candidate.source;
    c.fileName = proposal.candidate.fileName.empty() ? "candidate.cu" : proposal.candidate.fileName;
    c.proposer = storedProposer(proposal.proposer);
    c.proposerDetail = proposerDetailFor(proposal.proposer, sessionDetail);
    c.tunables = proposal.tunables;
    c.hypothesis = proposal.hypothesis;
    c.predictedSpeedup = proposal.predictedSpeedup;
    return c;
}

store::SessionSummary storedSummary(const LoopSummary& s)
{
    store::SessionSummary stored;
    stored.stopReason = s.stopReason;
    stored.rounds = s.rounds;
    stored.evaluated = s.evaluated;
    stored.passed = s.passed;
    stored.wallSeconds = s.wallSeconds;
    stored.candidatesPerMinute = s.candidatesPerMinute;
    stored.candidatesPerRound = s.candidatesPerRound;
    stored.tokens = s.tokens;
    stored.cancelled = s.cancelled;
    stored.compiledAhead = store::SessionSummary::CompiledAhead { s.compiledAhead, s.usedAhead };
    stored.passAtK = s.passAtK;
    stored.speedupAtK = s.speedupAtK;
    if (s.baseline)
        stored.baselineUs = s.baseline->medianUs;
    if (s.best) {
        stored.bestIteration = s.best->index;
        stored.bestUs = s.best->medianUs;
        stored.bestSpeedup = s.best->speedup;
        stored.bestPctOfCopy = s.best->pctOfCopy;
    }
    return stored;
}

std::optional<LoopSummary> loopSummary(const std::optional<store::SessionSummary>& stored)
{
    if (!stored || !stored->stopReason)
        return std::nullopt;
    const store::SessionSummary& j = *stored;
    LoopSummary s;
    s.stopReason = *j.stopReason;
    s.rounds = j.rounds.value_or(0);
    s.evaluated = j.evaluated.value_or(0);
    s.passed = j.passed.value_or(0);
    s.wallSeconds = j.wallSeconds.value_or(0.0);
    s.candidatesPerMinute = j.candidatesPerMinute.value_or(0.0);
    s.candidatesPerRound = j.candidatesPerRound.value_or(1);
    s.tokens = j.tokens.value_or(0);
    s.cancelled = j.cancelled.value_or(false);
    if (j.compiledAhead) {
        s.compiledAhead = j.compiledAhead->compiled;
        s.usedAhead = j.compiledAhead->used;
    }
    s.passAtK = j.passAtK;
    s.speedupAtK = j.speedupAtK;
    if (j.baselineUs) {
        s.baseline.emplace();
        s.baseline->medianUs = j.baselineUs;
    }
    if (j.bestIteration) {
        s.best.emplace();
        s.best->index = *j.bestIteration;
        s.best->medianUs = j.bestUs;
        s.best->speedup = j.bestSpeedup;
        s.best->pctOfCopy = j.bestPctOfCopy;
    }
    return s;
}

} // namespace kl
