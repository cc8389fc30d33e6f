// The rows of one iteration: candidate, iteration, result, findings, exchanges, decision, listings.
#include "core/loop/iteration_recorder.h"

#include "core/loop/pending_candidate.h"
#include "core/loop/store_records.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

namespace kl {

namespace {

// The row's times, for those who follow the loop without reading the store.
void stamp(IterationOutcome& o, const store::CommittedIteration& committed)
{
    o.startedMs = committed.startedMs;
    o.endedMs = committed.endedMs;
}

} // namespace

IterationRecorder::IterationRecorder(store::Store& store, std::string proposerDetail)
    : m_store(store)
    , m_proposerDetail(std::move(proposerDetail))
{
}

void IterationRecorder::beginSession(std::int64_t sessionId, std::string toolkit)
{
    m_sessionId = sessionId;
    m_toolkit = std::move(toolkit);
    m_candidateIds.clear();
}

void IterationRecorder::record(
    IterationOutcome& o, const Proposal& proposal, std::optional<std::int64_t> parentId, const EvaluationArtifacts& a)
{
    const auto key = candidateKey(o.sourceHash, proposal.tunables);
    if (auto it = m_candidateIds.find(key); it != m_candidateIds.end()) {
        o.candidateId = it->second;
    } else {
        auto c = candidateRecord(proposal, m_proposerDetail);
        c.parentId = parentId;
        o.candidateId = m_store.addCandidate(m_sessionId, c);
        m_candidateIds[key] = *o.candidateId;
    }
    const auto ref = m_store.beginIteration(m_sessionId, o.candidateId, o.round);
    o.index = ref.index;
    if (!o.category.empty()) {
        // The runner's typed reply as the store records it; the loop's own verdict and first-size figures
        // on top (the outcome also covers failures before the runner and results from the cache).
        store::ResultRecord r;
        if (a.result)
            r = store::resultFromEvaluateResult(*a.result, m_toolkit);
        else
            r.toolkit = m_toolkit;
        r.status = o.status;
        r.category = o.category;
        r.detail = o.detail;
        r.medianUs = o.medianUs;
        r.gbps = o.gbps;
        r.pctOfCopy = o.pctOfCopy;
        r.speedup = o.speedup;
        r.fromCache = o.fromCache;
        r.compile = a.compile;
        r.endpoint = o.endpoint;
        m_store.recordResult(ref, r);
        if (!o.findings.empty())
            m_store.recordFindings(ref, findingRecords(o.findings));
    }
    for (const auto& x : proposal.exchanges)
        m_store.recordExchange(ref, exchangeRecord(x));
    stamp(o, m_store.finishIteration(ref, "done"));
}

void IterationRecorder::recordRefusal(
    IterationOutcome& o, const Proposal& proposal, const store::DecisionRecord* decision)
{
    o.candidateId = m_store.addCandidate(m_sessionId, candidateRecord(proposal, m_proposerDetail));
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
    stamp(o, m_store.finishIteration(ref, proposal.failure.empty() ? "refused" : "proposer-error"));
}

void IterationRecorder::recordDecision(int index, const store::DecisionRecord& decision)
{
    m_store.recordDecision({ m_sessionId, index }, decision);
}

void IterationRecorder::cacheResult(const std::string& cacheKey, int index)
{
    if (auto detail = m_store.iteration(m_sessionId, index); detail && detail->result)
        m_store.cacheStore(cacheKey, detail->result->id);
}

void IterationRecorder::addListings(int index, std::future<store::StoredListings> listings)
{
    m_listings.emplace_back(index, std::move(listings));
}

void IterationRecorder::storeListings(bool all)
{
    for (auto it = m_listings.begin(); it != m_listings.end();) {
        if (!all && it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            ++it;
            continue;
        }
        try {
            m_store.addListings({ m_sessionId, it->first }, it->second.get());
        } catch (const std::bad_alloc&) {
            // Listings past memory: the iteration keeps its result without them.
        }
        it = m_listings.erase(it);
    }
}

} // namespace kl
