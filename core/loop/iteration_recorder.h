#pragma once
// Recording an iteration: everything the loop writes about one candidate goes through here. Its
// candidate row (one per source and tunables in a session, so that a repeat is the same candidate),
// the iteration with the result, findings and LLM exchanges, a refusal (rejected, steered, a proposer
// that failed), the loop's decision, the result's cache entry, and the code listings once they are
// made (on threads of their own; stored as they finish, never waited for by a round).
#include "core/loop/evaluation.h"
#include "core/loop/loop_values.h"
#include "core/propose/proposer.h"

#include <cstdint>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kl {

namespace store {
class Store;
struct DecisionRecord;
} // namespace store

class IterationRecorder {
public:
    // `proposerDetail` is the loop's ("tuner:auto"), stored with each candidate it proposed.
    IterationRecorder(store::Store& store, std::string proposerDetail);

    // The session the next iterations go into (a new one, or a stored one the engineer adds to), and
    // the compiler's version every result records. Forgets the candidate rows of the one before.
    void beginSession(std::int64_t sessionId, std::string toolkit);
    std::int64_t sessionId() const { return m_sessionId; }

    // A candidate that reached the runner, the cache, or failed before either: sets `outcome`'s index
    // and candidate id. `parentId`: the candidate it was built on.
    void record(IterationOutcome& outcome, const Proposal& proposal, std::optional<std::int64_t> parentId,
        const EvaluationArtifacts& artifacts);
    // A proposal that never ran: the proposer failed (its category in `outcome`) or the engineer
    // refused it (`decision`).
    void recordRefusal(IterationOutcome& outcome, const Proposal& proposal, const store::DecisionRecord* decision);
    void recordDecision(int index, const store::DecisionRecord& decision);
    // The result of iteration `index` answers `cacheKey` from now on.
    void cacheResult(const std::string& cacheKey, int index);

    // Iteration `index`'s listings, once made, into its stored compile record.
    void addListings(int index, std::future<store::StoredListings> listings);
    // Those made by now; `all`: waits for every one.
    void storeListings(bool all);

private:
    store::Store& m_store;
    std::string m_proposerDetail;
    std::int64_t m_sessionId = 0;
    std::string m_toolkit;
    std::map<std::string, std::int64_t> m_candidateIds; // source hash + tunables → candidate row
    std::vector<std::pair<int, std::future<store::StoredListings>>> m_listings; // by iteration index
};

} // namespace kl
